"""What a client id listed more than once in cidAll does to the allocation.

An id on several connections takes several slots of cidAll: the strategy hands out one slice
per slot and the id's own client takes only the first, so other consumers may go idle or the
split may grow uneven. What listing every id once would remove is re-run through the
allocator (:meth:`~rmqlb.diagnose.context.TopicContext.listed_once`), so IDLE_CONSUMER and
IMBALANCE can name DUPLICATE_CLIENT_ID as their cause instead of proposing queue counts.

Worked example: 4 queues, cidAll ``[h0, h0, h1]`` under AVG: slots of 2, 1 and 1 queues; h0
takes the first (2), h1 the third (1): max/min 2.0. Listed once, ``[h0, h1]`` get 2 each.
"""

from __future__ import annotations

from collections.abc import Callable

from rmqlb.diagnose.context import TopicContext

#: How the hint of an IDLE_CONSUMER or IMBALANCE that listing every id once removes begins:
#: :mod:`rmqlb.diagnose.causes` links exactly those to DUPLICATE_CLIENT_ID.
LIST_ONCE = "list every client id once (see DUPLICATE_CLIENT_ID)"


def loads(ctx: TopicContext, count: Callable[[str], int]) -> dict[str, int]:
    """Each distinct subscribing client id with queues -> how many (``count`` of it)."""
    out: dict[str, int] = {}
    for cid in dict.fromkeys(ctx.g.cid_all):
        if cid in ctx.subscribers and (n := count(cid)) > 0:
            out[cid] = n
    return out


def unbalanced(loaded: dict[str, int], limit: float) -> bool:
    """Whether the largest load exceeds ``limit`` times the smallest (two loads or more)."""
    return len(loaded) > 1 and max(loaded.values()) / min(loaded.values()) > limit


def idle_by_duplicates(ctx: TopicContext) -> list[str]:
    """The subscribers the strategy leaves without a queue only because an id is listed more
    than once: listed once each, they get queues."""
    once = ctx.listed_once()
    if once is None:
        return []
    return [
        c
        for c in dict.fromkeys(ctx.g.cid_all)
        if c in ctx.subscribers and ctx.expected_count(c) == 0 and once.get(c)
    ]


def imbalance_by_duplicates(ctx: TopicContext) -> list[str]:
    """The heaviest consumers of an imbalance that listing every id once removes ([] when
    there is none, or it stays)."""
    once = ctx.listed_once()
    if once is None:
        return []
    limit = ctx.g.options.max_imbalance
    now = loads(ctx, ctx.expected_count)
    if not unbalanced(now, limit) or unbalanced(loads(ctx, lambda c: len(once.get(c, ()))), limit):
        return []
    top = max(now.values())
    return [c for c, n in now.items() if n == top]
