"""Bit-exact reimplementations of the Java client's allocation strategies.

:func:`allocate` takes a whole group at once and returns every distinct client id, mapped to
the queues Java would give it (an empty list when it gets nothing), in the order Java returns
them. Queues and client ids are sorted with Java's order first, as ``RebalanceImpl`` does.
Where Java throws, :class:`~rmqlb.errors.AllocationError` carries Java's message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rmqlb.allocate._common import Assignment
from rmqlb.allocate.avg import allocate_avg
from rmqlb.allocate.circle import allocate_avg_by_circle
from rmqlb.allocate.config import allocate_config
from rmqlb.allocate.consistent_hash import allocate_consistent_hash, check_virtual_node_cnt
from rmqlb.allocate.machine_room import allocate_machine_room
from rmqlb.allocate.nearby import allocate_nearby
from rmqlb.errors import InputError
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    MachineRoom,
    MachineRoomNearby,
    StrategySpec,
    Unknown,
)

__all__ = [
    "Assignment",
    "UnknownStrategyError",
    "allocate",
    "allocate_for",
    "allocate_sorted",
    "validate",
]


class UnknownStrategyError(InputError):
    """The strategy is a custom class rmqlb cannot reproduce."""


def validate(strategy: StrategySpec) -> None:
    """Raise what the Java constructors raise (``illegal virtualNodeCnt :-1``)."""
    match strategy:
        case ConsistentHash(virtual_node_cnt=n):
            check_virtual_node_cnt(n)
        case MachineRoomNearby(inner=inner):
            validate(inner)
        case Unknown(class_name=name):
            raise UnknownStrategyError(f"cannot reproduce custom allocation strategy {name}")
        case _:
            pass


def allocate_sorted(
    strategy: StrategySpec, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
) -> Assignment:
    """Allocate with inputs already in Java order (``mqAll`` and ``cidAll`` as Java sees them)."""
    match strategy:
        case Avg():
            return allocate_avg(mq_all, cid_all)
        case AvgByCircle():
            return allocate_avg_by_circle(mq_all, cid_all)
        case ConsistentHash(virtual_node_cnt=n, charset=charset):
            return allocate_consistent_hash(mq_all, cid_all, n, charset=charset)
        case MachineRoom(consumeridcs=idcs):
            return allocate_machine_room(mq_all, cid_all, idcs)
        case MachineRoomNearby(inner=inner, broker_rooms=brokers, consumer_rooms=consumers):

            def inner_allocate(
                queues: Sequence[MessageQueue], clients: Sequence[str]
            ) -> Assignment:
                return allocate_sorted(inner, queues, clients)

            return allocate_nearby(mq_all, cid_all, inner_allocate, brokers, consumers)
        case Config(config=config):
            return allocate_config(cid_all, config)
        case Unknown(class_name=name):
            raise UnknownStrategyError(f"cannot reproduce custom allocation strategy {name}")


def allocate_for(
    strategy: StrategySpec,
    mq_all: Sequence[MessageQueue],
    cid_all: Sequence[str],
    clients: Iterable[str],
) -> Assignment:
    """What :func:`allocate_sorted` gives those of ``clients`` that ``cid_all`` lists, and
    raises the same: AVG computes just their blocks, other strategies the whole group."""
    if isinstance(strategy, Avg):
        return allocate_avg(mq_all, cid_all, only=clients)
    whole = allocate_sorted(strategy, mq_all, cid_all)
    return {cid: whole[cid] for cid in clients if cid in whole}


def allocate(
    strategy: StrategySpec, queues: Iterable[MessageQueue], consumers: Iterable[str]
) -> Assignment:
    """Allocate ``queues`` among ``consumers`` exactly as every Java client would.

    >>> qs = [MessageQueue("T", "broker-a", i) for i in range(16)]
    >>> sizes = {c: len(q) for c, q in allocate(Avg(), qs, ["c1", "c2", "c3"]).items()}
    >>> sizes
    {'c1': 6, 'c2': 5, 'c3': 5}
    """
    validate(strategy)
    mq_all = sorted(queues, key=queue_sort_key)
    cid_all = sorted(consumers, key=java_key)
    return allocate_sorted(strategy, mq_all, cid_all)
