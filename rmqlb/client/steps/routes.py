"""Topic routes: GET_ROUTEINFO_BY_TOPIC from the NameServer, asked once per topic."""

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
        self.tasks: dict[str, asyncio.Task[TopicRoute | None]] = {}

    def get(self, topic: str) -> asyncio.Task[TopicRoute | None]:
        """The route of ``topic`` (started on first use)."""
        task = self.tasks.get(topic)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._fetch(topic))
            self.tasks[topic] = task
        return task

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
