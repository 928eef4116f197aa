"""Run a :class:`~rmqlb.fake.server.FakeCluster` on its own event loop in a daemon thread.

Synchronous callers (the CLI's ``asyncio.run`` collector, tests, ``rmqlb demo``) cannot share
an event loop with the fake, so the fake gets its own::

    with FakeClusterThread(snapshot, latency_ms=5) as fake:
        run(["dump", "-n", fake.namesrv_addr])
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

from rmqlb.fake.server import FakeCluster
from rmqlb.model import Snapshot

_START_TIMEOUT = 30.0


class FakeClusterThread:
    """Context manager: starts the fake in a thread, yields it, stops it on exit."""

    def __init__(self, snapshot: Snapshot, **kwargs: Any) -> None:
        self._snapshot = snapshot
        self._kwargs = kwargs
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="rmqlb-fake", daemon=True)
        self.cluster: FakeCluster | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def __enter__(self) -> FakeCluster:
        self._thread.start()

        async def start() -> FakeCluster:
            cluster = FakeCluster(self._snapshot, **self._kwargs)
            await cluster.start()
            return cluster

        try:
            future = asyncio.run_coroutine_threadsafe(start(), self._loop)
            self.cluster = future.result(_START_TIMEOUT)
        except BaseException:
            self._shutdown()
            raise
        return self.cluster

    def __exit__(self, *exc: object) -> None:
        self._shutdown()

    def _shutdown(self) -> None:
        if self.cluster is not None and self._loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self.cluster.stop(), self._loop)
            with contextlib.suppress(Exception):  # best effort on the way out
                future.result(_START_TIMEOUT)
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_START_TIMEOUT)
        if not self._loop.is_running() and not self._loop.is_closed():
            self._loop.close()
