"""Topic routes: GET_ROUTEINFO_BY_TOPIC from the NameServer, asked once per topic.

When the capture has read the NameServer's topic list (discovery does), a topic absent from
it is not asked: the NameServer lists every topic it has a route for (both come from its
``topicQueueTable``, 4.9 and 5.x), so the answer would be TOPIC_NOT_EXIST (17), normal for the
``%RETRY%`` topic of a group no push consumer ever joined. One request per group saved.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.client.errors import CALL_ERRORS
from rmqlb.errors import ClusterUnreachable
from rmqlb.model import TopicRoute
from rmqlb.remoting.errors import TopicNotExist

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


class Routes:
    """Every topic's route, fetched once; a topic the NameServer does not know is absent."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.tasks: dict[str, asyncio.Future[TopicRoute | None]] = {}
        #: The NameServer's topic list, when the capture reads it (``None`` inside: it could
        #: not be read, so every topic is asked).
        self.listed: asyncio.Future[frozenset[str] | None] | None = None

    def get(self, topic: str) -> asyncio.Future[TopicRoute | None]:
        """The route of ``topic`` (started on first use)."""
        task = self.tasks.get(topic)
        if task is None:
            loop = asyncio.get_running_loop()
            if self._unlisted(topic):  # no task to learn it is absent (most %RETRY% topics)
                task = loop.create_future()
                task.set_result(None)
            else:
                task = loop.create_task(self._fetch(topic))
            self.tasks[topic] = task
        return task

    def _unlisted(self, topic: str) -> bool:
        """Whether the NameServer's topic list, already read, lacks ``topic``."""
        listed = self.listed
        if listed is None or not listed.done() or listed.cancelled():
            return False
        if listed.exception() is not None:
            return False  # _fetch meets the same failure as before
        names = listed.result()
        return names is not None and topic not in names

    async def settled(self) -> None:
        """Wait for every route asked so far."""
        await asyncio.gather(*self.tasks.values())

    def known(self) -> dict[str, TopicRoute]:
        """Every route found, by topic name (call after :meth:`settled`)."""
        return {
            topic: route
            for topic in sorted(self.tasks)
            if (route := self.tasks[topic].result()) is not None
        }

    async def _fetch(self, topic: str) -> TopicRoute | None:
        c = self.collector
        if self.listed is not None:
            listed = await self.listed
            if listed is not None and topic not in listed:
                return None  # what the NameServer would answer: TOPIC_NOT_EXIST
        try:
            found = await c.namesrv_call(
                "GET_ROUTEINFO_BY_TOPIC", partial(c.admin.route, topic=topic)
            )
        except TopicNotExist:
            # Not a capture failure: the NameServer says the topic does not exist (normal for
            # a retry topic not created yet; a finding for a subscribed topic).
            return None
        except ClusterUnreachable as exc:
            where = ",".join(c.namesrv)
            c.error(where, "GET_ROUTEINFO_BY_TOPIC", f"{topic}: {exc}", topic=topic)
            return None
        except CALL_ERRORS as exc:
            c.error(c.namesrv[0], "GET_ROUTEINFO_BY_TOPIC", f"{topic}: {exc}", topic=topic)
            return None
        route, brokers = found
        for name, info in brokers.items():
            c.brokers.setdefault(name, info)
        return route
