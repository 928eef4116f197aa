"""MACHINE_ROOM — ``AllocateMessageQueueByMachineRoom``: only brokers of the consumer's rooms.

A queue counts when its broker name, split on ``@`` with Java ``String.split`` semantics,
gives exactly two parts and the first is in ``consumeridcs``. The ``p`` counted queues are
dealt to ``m`` clients: client ``i`` takes the block ``[i*(p//m), (i+1)*(p//m))`` and, when
``i < p % m``, one more queue at ``i + (p//m)*m``.

Worked example, brokers ``hz@b1`` (3 queues) and ``sh@b2`` (2 queues), idcs ``{hz}``, two
clients: ``c0 -> hz@b1:0 hz@b1:2``, ``c1 -> hz@b1:1``; ``sh@b2`` is consumed by nobody.
"""

from __future__ import annotations

from collections.abc import Sequence

from rmqlb.allocate._common import Assignment, first_indexes, java_check
from rmqlb.model.javaorder import java_split
from rmqlb.model.queue import MessageQueue


def broker_room(broker_name: str) -> str | None:
    """The room MACHINE_ROOM reads from a broker name: the part before ``@`` when it splits
    into exactly two parts (``None``: a broker without a room, never allocated).

    >>> broker_room("hz@broker-a"), broker_room("broker-a"), broker_room("a@b@c")
    ('hz', None, None)
    """
    parts = java_split(broker_name, "@")
    return parts[0] if len(parts) == 2 else None


def in_rooms(broker_name: str, consumeridcs: frozenset[str]) -> bool:
    """Whether MACHINE_ROOM counts a queue of ``broker_name`` for these rooms."""
    room = broker_room(broker_name)
    return room is not None and room in consumeridcs


def allocate_machine_room(
    mq_all: Sequence[MessageQueue], cid_all: Sequence[str], consumeridcs: frozenset[str]
) -> Assignment:
    """Allocate a whole group at once; inputs already in Java order."""
    java_check(mq_all, cid_all)
    m = len(cid_all)
    result: Assignment = {}
    if m == 0:
        return result
    pre = [mq for mq in mq_all if in_rooms(mq.broker_name, consumeridcs)]
    mod, rem = divmod(len(pre), m)
    for cid, index in first_indexes(cid_all).items():
        start = mod * index
        queues = pre[start : start + mod]
        if rem > index:
            queues.append(pre[index + mod * m])
        result[cid] = queues
    return result
