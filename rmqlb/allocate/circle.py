"""AVG_BY_CIRCLE — ``AllocateMessageQueueAveragelyByCircle``: deal queues like cards.

Client ``i`` of ``m`` takes queues ``i, i + m, i + 2m, ...``. Worked example, 5 queues and
2 clients: ``c0 -> q0 q2 q4``, ``c1 -> q1 q3``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rmqlb.allocate._common import Assignment, first_indexes, java_check
from rmqlb.model.queue import MessageQueue


def allocate_avg_by_circle(mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> Assignment:
    """Allocate a whole group at once; inputs already in Java order."""
    java_check(mq_all, cid_all)
    m = len(cid_all)
    return {cid: list(mq_all[index::m]) for cid, index in first_indexes(cid_all).items()}
