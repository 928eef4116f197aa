"""Subscription-group configs: GET_ALL_SUBSCRIPTIONGROUP_CONFIG, once per broker."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.errors import ProtocolError
from rmqlb.remoting import bodies

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector

REQUEST = "GET_ALL_SUBSCRIPTIONGROUP_CONFIG"


class GroupConfigs:
    """Each broker's subscription-group configs, asked once per capture.

    The body is decoded whole only where every group is wanted (:meth:`table`); one group's
    config is read from its text (:meth:`config`). Either way a body that does not decode is
    recorded as the request's error, once, and the broker's configs are unknown (``None``).
    """

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.texts: dict[str, asyncio.Task[str | None]] = {}
        self.tables: dict[str, bodies.ConfigTable | None] = {}

    def ask(self, addr: str) -> asyncio.Task[str | None]:
        """The broker's answer as text, asked once per capture."""
        task = self.texts.get(addr)
        if task is None:
            c = self.collector
            task = asyncio.ensure_future(
                c.try_request(
                    c.label(addr),
                    REQUEST,
                    partial(c.admin.subscription_group_text, addr),
                    broker=True,
                )
            )
            self.texts[addr] = task
        return task

    async def table(self, addr: str) -> bodies.ConfigTable | None:
        """Every subscription-group config of one broker."""
        text = await self.ask(addr)
        if addr not in self.tables:
            self.tables[addr] = None
            if text is not None:
                try:
                    self.tables[addr] = bodies.decode_subscription_group_table(text)
                except ProtocolError as exc:
                    self.collector.failed(self.collector.label(addr), REQUEST, exc)
        return self.tables[addr]

    async def config(self, addr: str, name: str) -> bodies.SubscriptionGroupConfig | None:
        """Group ``name``'s config on one broker (``None``: it has none, or it is unknown)."""
        text = await self.ask(addr)
        if text is None:
            return None
        if addr not in self.tables:  # not decoded whole (yet): look for the one entry
            try:
                found = bodies.find_group_config(text, name)
            except ProtocolError as exc:
                self.tables[addr] = None
                self.collector.failed(self.collector.label(addr), REQUEST, exc)
                return None
            if found is not None:
                return found
        table = await self.table(addr)
        return table.get(name) if table is not None else None
