"""Awaiting several requests at once with one task fewer than :func:`asyncio.gather`.

A capture of 1,000 groups awaits a pair of requests (one per broker) a few thousand times;
``gather`` wraps each in a task of its own, and a task (its creation, its first step, its
done callback, the gathering future) costs about as much as the request it waits on. Here
every awaitable but the last runs in a task and the last in the caller's own: the requests
are still in flight together, each under its own deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TypeVar

T = TypeVar("T")


async def together(awaitables: Sequence[Awaitable[T]]) -> list[T]:
    """The results of ``awaitables``, in order, run concurrently (``asyncio.gather``'s
    answer). The first exception raised is propagated and the others still running are
    cancelled (so is everything when the caller is cancelled)."""
    if not awaitables:
        return []
    *others, last = awaitables
    tasks = [asyncio.ensure_future(a) for a in others]
    try:
        result = await last
        return [*[await task for task in tasks], result]
    except BaseException:
        for task in tasks:
            task.cancel()
        raise
