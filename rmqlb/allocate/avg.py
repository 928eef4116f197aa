"""AVG — ``AllocateMessageQueueAveragely``: each client takes one contiguous block.

With ``n`` queues and ``m`` clients the first ``n % m`` clients take ``n // m + 1`` queues
and the rest ``n // m``; when ``n <= m`` the first ``n`` clients take one queue each.

Worked example, 8 queues ``q0..q7`` and 3 clients ``c0 < c1 < c2``::

    c0 -> q0 q1 q2      (index 0 < mod 2: 8 // 3 + 1 = 3 queues from 0)
    c1 -> q3 q4 q5      (index 1 < mod 2: 3 queues from 3)
    c2 -> q6 q7         (index 2: 2 queues from 2 * 2 + 2 = 6)

A client id listed twice (two processes with one id) makes both take the block of its first
index: the block of the second index goes to nobody.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rmqlb.allocate._common import Assignment, first_indexes, java_check
from rmqlb.model.queue import MessageQueue


def avg_block(n: int, m: int, index: int) -> tuple[int, int]:
    """The block (start, size) the client at ``index`` of ``m`` takes of ``n`` queues.

    >>> [avg_block(8, 3, i) for i in range(3)]
    [(0, 3), (3, 3), (6, 2)]
    """
    mod = n % m
    if n <= m:
        average = 1
    elif mod > 0 and index < mod:
        average = n // m + 1
    else:
        average = n // m
    start = index * average if (mod > 0 and index < mod) else index * average + mod
    return start, max(0, min(average, n - start))


def allocate_avg(
    mq_all: Sequence[MessageQueue], cid_all: Sequence[str], only: Iterable[str] | None = None
) -> Assignment:
    """Allocate a whole group at once; inputs already in Java order. ``only``: the blocks of
    just these clients (those listed in ``cid_all``), each a function of its index alone."""
    java_check(mq_all, cid_all)
    n, m = len(mq_all), len(cid_all)
    result: Assignment = {}
    if m == 0:
        return result
    index = first_indexes(cid_all)
    if only is not None:
        index = {cid: index[cid] for cid in only if cid in index}
    for cid, at in index.items():
        start, size = avg_block(n, m, at)
        result[cid] = list(mq_all[start : start + size])
    return result
