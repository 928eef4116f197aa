"""Which groups: the named ones, and (discovering) every group the brokers know.

Discovery unites each master's subscription-group configs with, for every topic of the
NameServer's list (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), the groups each master says consume
it (QUERY_TOPIC_CONSUME_BY_WHO). A group's capture (:mod:`~rmqlb.client.steps.group`) starts
as soon as its name is known.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from fnmatch import fnmatchcase
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.client.errors import CALL_ERRORS
from rmqlb.client.steps.group import capture_group
from rmqlb.client.together import together
from rmqlb.diagnose.lookup import not_found, topic_not_found
from rmqlb.errors import ClusterUnreachable
from rmqlb.model import Group
from rmqlb.model.snapshot import DLQ_PREFIX, RETRY_PREFIX
from rmqlb.model.system import SYSTEM_TOPICS, is_system_group

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector

Masters = Sequence[tuple[str, str]]
TOPIC_LIST = "GET_ALL_TOPIC_LIST_FROM_NAMESERVER"


async def _names(listing: Awaitable[list[str] | Exception]) -> frozenset[str] | None:
    """The topic names listed, ``None`` when the list could not be read."""
    listed = await listing
    return None if isinstance(listed, Exception) else frozenset(listed)


class Discovery:
    """The groups to capture, each one's capture started once (``tasks``, by name)."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.tasks: dict[str, asyncio.Task[Group]] = {}

    def want(self, name: str, masters: Masters) -> None:
        """Start capturing ``name`` (once)."""
        if name not in self.tasks:
            task = asyncio.get_running_loop().create_task(
                capture_group(self.collector, name, masters)
            )
            self.tasks[name] = task

    def found(self, name: str, masters: Masters) -> None:
        """A discovered group: captured when the options select it."""
        opts = self.collector.options
        if not name or (not opts.system and is_system_group(name)):
            return
        if opts.patterns and not any(fnmatchcase(name, p) for p in opts.patterns):
            return
        self.want(name, masters)

    async def discover(self, masters: Masters) -> None:
        """Every group the brokers know (or, with ``topic``, every group consuming it)."""
        listing = asyncio.ensure_future(self._topic_list())
        self.collector.routes.listed = asyncio.ensure_future(_names(listing))
        topic = self.collector.options.topic
        if topic is not None:
            await asyncio.gather(
                self._check_topic(topic, listing), self._consumers_of(masters, [topic])
            )
            return

        async def configured(addr: str) -> None:
            for name in await self.collector.configs.table(addr) or ():
                self.found(name, masters)

        await asyncio.gather(
            *(configured(addr) for _, addr in masters), self._sweep(masters, listing)
        )

    async def _topic_list(self) -> list[str] | Exception:
        """The NameServer's topic list, or why it could not be read."""
        c = self.collector
        try:
            listed: list[str] = await c.namesrv_call(TOPIC_LIST, c.admin.topic_list)
        except ClusterUnreachable as exc:
            return exc
        except CALL_ERRORS as exc:
            return exc
        return listed

    async def _check_topic(self, topic: str, listing: Awaitable[list[str] | Exception]) -> None:
        """A ``topic`` the NameServer does not list exists nowhere: an
        :class:`~rmqlb.errors.InputError` (exit 2) naming the closest listed topic. When the
        list cannot be read, the capture goes on."""
        listed = await listing
        if isinstance(listed, Exception):
            return
        if topic not in listed:
            raise topic_not_found(topic, listed, where="on this cluster")

    async def _sweep(self, masters: Masters, listing: Awaitable[list[str] | Exception]) -> None:
        """Groups with online subscribers or committed offsets but no subscription config
        (deleted, or never created with ``autoCreateSubscriptionGroup=false``): ask every
        master who consumes each topic of the NameServer's list."""
        c = self.collector
        listed = await listing
        if isinstance(listed, ClusterUnreachable):
            c.error(",".join(c.namesrv), TOPIC_LIST, str(listed))
            return
        if isinstance(listed, Exception):
            c.error(c.namesrv[0], TOPIC_LIST, str(listed))
            return
        clusters = {b.cluster for b in c.brokers.values() if b.cluster}
        # broker and cluster names are topics too, and so is each cluster's reply topic
        skip = set(c.brokers) | clusters | {f"{n}_REPLY_TOPIC" for n in clusters}
        topics = [
            t
            for t in dict.fromkeys(listed)
            if t not in skip
            and t not in SYSTEM_TOPICS
            and not t.startswith((RETRY_PREFIX, DLQ_PREFIX, "rmq_sys_"))
        ]
        await self._consumers_of(masters, topics)

    async def _consumers_of(self, masters: Masters, topics: Sequence[str]) -> None:
        """QUERY_TOPIC_CONSUME_BY_WHO for each topic on each master; groups found are
        captured as they arrive."""
        c = self.collector

        async def one(addr: str, topic: str) -> None:
            found = await c.try_request(
                c.label(addr),
                "QUERY_TOPIC_CONSUME_BY_WHO",
                partial(c.admin.topic_consumers, addr, topic=topic),
                broker=True,
                topic=topic,
            )
            for name in found or ():
                self.found(name, masters)

        await together([one(addr, t) for t in topics for _, addr in masters])

    async def check_named(self, masters: Masters, captured: Sequence[Group]) -> None:
        """A named group with no config, no connection and no offset, while every broker
        answered, exists nowhere: :class:`GroupNotFound` (exit 2) with the closest name."""
        c = self.collector
        seen = {g.name for g in captured if g.consumers or g.offsets or g.configs}
        doubtful = {
            e.group
            for e in c.errors
            if e.request in ("GET_CONSUMER_CONNECTION_LIST", "GET_CONSUME_STATS")
        }
        missing = [n for n in c.options.groups if n not in seen and n not in doubtful]
        if not missing:
            return
        # every configured group, for the closest name (the only reason to decode the tables)
        tables = await asyncio.gather(*(c.configs.table(addr) for _, addr in masters))
        if any(table is None for table in tables):
            return  # a broker did not answer: the group may live there
        configured = {name for table in tables for name in table or ()}
        known = configured | seen
        for name in missing:
            if name not in known:
                raise not_found(name, known - set(c.options.groups))
