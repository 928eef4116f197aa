"""Subscription-group configs: GET_ALL_SUBSCRIPTIONGROUP_CONFIG, once per broker."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.remoting.bodies import ConfigTable

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


class GroupConfigs:
    """Each broker's table of subscription-group configs (``None``: it did not answer)."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.tasks: dict[str, asyncio.Task[ConfigTable | None]] = {}

    def of(self, addr: str) -> asyncio.Task[ConfigTable | None]:
        """Every subscription-group config of one broker, asked once per capture."""
        task = self.tasks.get(addr)
        if task is None:
            c = self.collector
            task = asyncio.ensure_future(
                c.try_request(
                    c.label(addr),
                    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
                    partial(c.admin.subscription_group_configs, addr),
                    broker=True,
                )
            )
            self.tasks[addr] = task
        return task
