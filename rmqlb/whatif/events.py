"""One what-if for one group: its allocation, a scale event (consumers joining and
leaving) and a comparison of the strategies. Pure.

Worked example: 16 queues on ``broker-a`` and 3 default consumers under AVG hold 6, 5 and 5
queues; adding a fourth consumer (4 + 4 + 4 + 4) moves 9 of the 16 queues (56.2 %)::

    >>> from rmqlb.model.queue import queue_ranges
    >>> from rmqlb.whatif.inputs import broker_names, default_consumer_ids, make_queues
    >>> qs = make_queues("TopicTest", broker_names(1), 16)
    >>> cids = default_consumer_ids(3)
    >>> [queue_ranges(q) for q in allocate(Avg(), qs, cids).values()]
    ['broker-a:0..5', 'broker-a:6..10', 'broker-a:11..15']
    >>> event = scale(Avg(), qs, cids, add=default_consumer_ids(1, start=3))
    >>> event.moves.count, event.moves.percent
    (9, 56.2)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rmqlb.allocate import Assignment, allocate
from rmqlb.allocate.broker import broker_allocate
from rmqlb.errors import AllocationError
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import MessageRequestMode, RequestMode
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    MachineRoom,
    MachineRoomNearby,
    RoomRule,
    StrategySpec,
)
from rmqlb.whatif.inputs import new_consumer_ids
from rmqlb.whatif.measure import Balance, Moves, balance, diff, without

__all__ = [
    "CompareRow",
    "ScaleResult",
    "WhatIf",
    "compare",
    "compare_candidates",
    "leaver",
    "scale",
    "what_if",
]

#: Allocates a whole group: (strategy, queues, client ids) -> client id -> queues.
Allocator = Callable[[StrategySpec, Sequence[MessageQueue], Sequence[str]], Assignment]


@dataclass(frozen=True, slots=True)
class ScaleResult:
    """A scale event: the allocation before and after consumers join or leave."""

    before: Assignment
    after: Assignment
    consumers_after: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    moves: Moves


def allocator(broker: MessageRequestMode | None) -> Allocator:
    """How a group is allocated: by the clients (``None``), or by a 5.x broker in ``broker``
    mode (:func:`rmqlb.allocate.broker.broker_allocate`, POP queue id -1 written out)."""
    if broker is None:
        return allocate

    def by_broker(
        strategy: StrategySpec, queues: Sequence[MessageQueue], consumers: Sequence[str]
    ) -> Assignment:
        return broker_allocate(strategy.name, queues, consumers, broker)

    return by_broker


def scale(
    strategy: StrategySpec,
    queues: Sequence[MessageQueue],
    consumers: Sequence[str],
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    *,
    broker: MessageRequestMode | None = None,
) -> ScaleResult:
    """Allocate before and after ``add`` join and ``remove`` leave, and what moves.

    Each id in ``remove`` takes one entry out of the group (a client id listed twice needs
    to be removed twice); an id that is not in the group is an :class:`InputError`. An id in
    ``add`` that is already in the group joins as a duplicate, as a second process with the
    same client id would.
    """
    remaining = [*without(consumers, remove), *add]
    run = allocator(broker)
    before = run(strategy, queues, consumers)
    after = run(strategy, queues, remaining)
    return ScaleResult(
        before=before,
        after=after,
        consumers_after=tuple(remaining),
        added=tuple(add),
        removed=tuple(remove),
        moves=diff(before, after, queues),
    )


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One strategy of ``--compare``: its balance and the cost of one consumer more or less.

    A field is ``None`` when Java would throw for that input; the ``*_error`` field then
    holds Java's message.
    """

    strategy: StrategySpec
    balance: Balance | None
    error: str | None
    moved_on_add: Moves | None
    add_error: str | None
    moved_on_remove: Moves | None
    remove_error: str | None


def compare_candidates(
    strategy: StrategySpec | None = None,
    broker_rooms: RoomRule | None = None,
    consumer_rooms: RoomRule | None = None,
    config: Mapping[str, tuple[MessageQueue, ...]] | None = None,
) -> list[StrategySpec]:
    """The strategies ``--compare`` shows.

    Always AVG, AVG_BY_CIRCLE and CONSISTENT_HASH (with the chosen strategy's vnodes, else
    10); MACHINE_ROOM when the chosen strategy is one (it carries the idcs);
    MACHINE_ROOM_NEARBY when rooms are known for brokers and consumers (inner strategy from
    the chosen one, else AVG); CONFIG when per-client lists are given.

    >>> from rmqlb.model.strategy import describe
    >>> [describe(s) for s in compare_candidates(ConsistentHash(20))]
    ['AVG', 'AVG_BY_CIRCLE', 'CONSISTENT_HASH(vnodes=20)']
    """
    vnodes = 10
    if isinstance(strategy, ConsistentHash):
        vnodes = strategy.virtual_node_cnt
    elif isinstance(strategy, MachineRoomNearby) and isinstance(strategy.inner, ConsistentHash):
        vnodes = strategy.inner.virtual_node_cnt
    out: list[StrategySpec] = [Avg(), AvgByCircle(), ConsistentHash(vnodes)]
    if isinstance(strategy, MachineRoom):
        out.append(strategy)
    if isinstance(strategy, MachineRoomNearby):
        out.append(strategy)
    elif broker_rooms is not None and consumer_rooms is not None:
        inner = strategy if strategy is not None and not isinstance(strategy, Config) else Avg()
        if isinstance(inner, MachineRoom):
            inner = Avg()
        out.append(MachineRoomNearby(inner, broker_rooms, consumer_rooms))
    if isinstance(strategy, Config):
        out.append(strategy)
    elif config is not None:
        out.append(Config(dict(config)))
    return out


def leaver(consumers: Sequence[str]) -> str | None:
    """The consumer ``--compare``'s "-1" removes: the last in Java order (``None`` if none)."""
    return max(consumers, key=java_key) if consumers else None


def compare(
    strategies: Sequence[StrategySpec],
    queues: Sequence[MessageQueue],
    consumers: Sequence[str],
    joiner: str | None = None,
) -> list[CompareRow]:
    """Balance of every strategy, and the queues moved on +1 and -1 consumer.

    +1 adds ``joiner`` (default: the next default-style id, see :func:`new_consumer_ids`);
    -1 removes the last consumer in Java order, undoing a scale-out of the newest member.
    With a single consumer, -1 leaves every queue unconsumed.
    """
    if joiner is None:
        joiner = new_consumer_ids(consumers, 1)[0]
    gone = leaver(consumers)
    rows = []
    for spec in strategies:
        try:
            base = allocate(spec, queues, consumers)
        except AllocationError as exc:
            rows.append(CompareRow(spec, None, exc.message, None, None, None, None))
            continue
        moved_add: Moves | None = None
        add_error: str | None = None
        try:
            moved_add = diff(base, allocate(spec, queues, [*consumers, joiner]), queues)
        except AllocationError as exc:
            add_error = exc.message
        moved_remove: Moves | None = None
        remove_error: str | None = None
        if gone is not None:
            rest = list(consumers)
            rest.remove(gone)
            try:
                moved_remove = diff(base, allocate(spec, queues, rest), queues)
            except AllocationError as exc:
                remove_error = exc.message
        rows.append(
            CompareRow(
                spec,
                balance(base, queues),
                None,
                moved_add,
                add_error,
                moved_remove,
                remove_error,
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class WhatIf:
    """Everything ``simulate`` shows for one group: the allocation, and optionally a scale
    event and a strategy comparison."""

    strategy: StrategySpec
    queues: tuple[MessageQueue, ...]
    consumers: tuple[str, ...]
    assignment: Assignment
    balance: Balance
    scale: ScaleResult | None = None
    compare: tuple[CompareRow, ...] | None = None


def what_if(
    strategy: StrategySpec,
    queues: Sequence[MessageQueue],
    consumers: Sequence[str],
    *,
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    compare_with: Sequence[StrategySpec] | None = None,
    joiner: str | None = None,
    broker: MessageRequestMode | None = None,
) -> WhatIf:
    """Allocate, then scale when ``add``/``remove`` are given and compare when
    ``compare_with`` is. Raises :class:`AllocationError` where Java would throw for the
    group itself, :class:`InputError` for a ``remove`` that is not in the group. ``broker``:
    the group lets a 5.x broker assign in that mode (see :func:`allocator`)."""
    assignment = allocator(broker)(strategy, queues, consumers)
    event = (
        scale(strategy, queues, consumers, add, remove, broker=broker) if add or remove else None
    )
    rows = (
        tuple(compare(compare_with, queues, consumers, joiner))
        if compare_with is not None
        else None
    )
    return WhatIf(
        strategy,
        tuple(queues),
        tuple(consumers),
        assignment,
        balance(assignment, queues, popped=broker is not None and broker.mode is RequestMode.POP),
        event,
        rows,
    )
