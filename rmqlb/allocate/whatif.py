"""What-if allocation: synthetic groups, scale events and strategy comparisons. Pure.

This is the engine behind ``rmqlb simulate``; it builds inputs, calls
:func:`rmqlb.allocate.allocate` and measures the result, but never prints.

Worked example: 16 queues on ``broker-a`` and 3 default consumers under AVG hold 6, 5 and 5
queues; adding a fourth consumer (4 + 4 + 4 + 4) moves 9 of the 16 queues (56.2 %)::

    >>> from rmqlb.model.queue import queue_ranges
    >>> from rmqlb.model.strategy import Avg
    >>> qs = make_queues("TopicTest", broker_names(1), 16)
    >>> cids = default_consumer_ids(3)
    >>> [queue_ranges(q) for q in allocate(Avg(), qs, cids).values()]
    ['broker-a:0..5', 'broker-a:6..10', 'broker-a:11..15']
    >>> event = scale(Avg(), qs, cids, add=default_consumer_ids(1, start=3))
    >>> event.moves.count, event.moves.percent
    (9, 56.2)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rmqlb.allocate import Assignment, allocate
from rmqlb.allocate.cases import assignment_to_json, queue_to_json
from rmqlb.errors import AllocationError, InputError
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    MachineRoom,
    MachineRoomNearby,
    RoomRule,
    StrategySpec,
    describe,
    strategy_to_json,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_TOPIC",
    "Balance",
    "CompareRow",
    "Move",
    "Moves",
    "ScaleResult",
    "Step",
    "WhatIf",
    "balance",
    "broker_names",
    "compare",
    "compare_candidates",
    "default_consumer_ids",
    "diff",
    "id_width",
    "leaver",
    "make_queues",
    "new_consumer_ids",
    "overall",
    "plan",
    "plan_to_json",
    "scale",
    "what_if",
    "what_if_to_json",
]

DEFAULT_TOPIC = "TopicTest"
DEFAULT_HOST = "10.0.0.1"
"""Default client ids look like ``10.0.0.1@consumer-0`` (``IP@instanceName``)."""


# --------------------------------------------------------------------------- building inputs


def broker_names(count: int) -> list[str]:
    """``broker-a``, ``broker-b`` ... (``broker-00`` ... beyond 26, zero padded).

    >>> broker_names(3)
    ['broker-a', 'broker-b', 'broker-c']
    """
    if count < 1:
        raise InputError(f"need at least one broker, got {count}")
    if count <= 26:
        return [f"broker-{chr(ord('a') + i)}" for i in range(count)]
    width = len(str(count - 1))
    return [f"broker-{i:0{width}d}" for i in range(count)]


def make_queues(topic: str, brokers: Sequence[str], per_broker: int) -> list[MessageQueue]:
    """Queues ``0 .. per_broker-1`` on every broker, like a route with equal readQueueNums."""
    if per_broker < 1:
        raise InputError(f"need at least one queue per broker, got {per_broker}")
    if len(set(brokers)) != len(brokers):
        dup = next(b for b in brokers if brokers.count(b) > 1)
        raise InputError(f"broker {dup!r} given twice")
    return [MessageQueue(topic, b, q) for b in brokers for q in range(per_broker)]


def id_width(largest_index: int) -> int:
    """Digits needed for consumer numbers up to ``largest_index`` (at least 1)."""
    return len(str(max(largest_index, 0)))


def default_consumer_ids(
    count: int, start: int = 0, width: int | None = None, host: str = DEFAULT_HOST
) -> list[str]:
    """Realistic client ids ``10.0.0.1@consumer-N``, zero padded so Java order = numeric order.

    ``width`` defaults to the digits of the largest number generated; pass the width of the
    largest number a whole run needs (including consumers added later) to keep every id of
    the run the same length.

    >>> default_consumer_ids(3)
    ['10.0.0.1@consumer-0', '10.0.0.1@consumer-1', '10.0.0.1@consumer-2']
    >>> default_consumer_ids(2, start=9, width=2)
    ['10.0.0.1@consumer-09', '10.0.0.1@consumer-10']
    """
    if count < 0:
        raise InputError(f"consumer count cannot be negative, got {count}")
    w = id_width(start + count - 1) if width is None else width
    return [f"{host}@consumer-{i:0{w}d}" for i in range(start, start + count)]


def new_consumer_ids(existing: Sequence[str], count: int, width: int | None = None) -> list[str]:
    """``count`` default-style ids for consumers joining, numbered after ``existing``.

    Ids already in the group are skipped, so joining never creates a duplicate by accident.

    >>> new_consumer_ids(["10.0.0.1@consumer-0", "10.0.0.1@consumer-1"], 1)
    ['10.0.0.1@consumer-2']
    """
    taken = set(existing)
    out: list[str] = []
    number = len(existing)
    w = id_width(len(existing) + count - 1) if width is None else width
    while len(out) < count:
        cid = f"{DEFAULT_HOST}@consumer-{number:0{w}d}"
        if cid not in taken:
            out.append(cid)
            taken.add(cid)
        number += 1
    return out


# --------------------------------------------------------------------------- measuring


@dataclass(frozen=True, slots=True)
class Balance:
    """How evenly an allocation spreads the queues.

    ``queues`` counts every distinct queue (the route's plus any a CONFIG list names);
    ``unassigned`` are the route's queues nobody holds, ``duplicated`` those held by more
    than one consumer.
    """

    queues: int
    consumers: int
    min: int
    max: int
    idle: tuple[str, ...]
    unassigned: tuple[MessageQueue, ...]
    duplicated: tuple[MessageQueue, ...]


def _holders(assignment: Assignment) -> dict[MessageQueue, tuple[str, ...]]:
    """Queue -> the consumers holding it, in Java order (one pass when nobody shares)."""
    held: dict[MessageQueue, tuple[str, ...]] = {
        mq: (cid,) for cid, queues in assignment.items() for mq in queues
    }
    if len(held) == sum(map(len, assignment.values())):
        return held  # every queue listed once: the usual case, kept cheap for big groups
    shared: dict[MessageQueue, list[str]] = {}
    for cid, queues in assignment.items():
        for mq in queues:
            owners = shared.setdefault(mq, [])
            if cid not in owners:
                owners.append(cid)
    return {mq: tuple(sorted(owners, key=java_key)) for mq, owners in shared.items()}


def balance(assignment: Assignment, queues: Sequence[MessageQueue]) -> Balance:
    """Min/max queues per consumer, idle consumers, unassigned and doubly held queues.

    >>> from rmqlb.model.strategy import Avg
    >>> qs = [MessageQueue("T", "b", 0)]
    >>> b = balance(allocate(Avg(), qs, ["c1", "c2"]), qs)
    >>> b.min, b.max, b.idle
    (0, 1, ('c2',))
    """
    held = _holders(assignment)
    route = dict.fromkeys(queues)
    every = set(route)
    every.update(held)
    counts = [len(qs) for qs in assignment.values()]
    return Balance(
        queues=len(every),
        consumers=len(assignment),
        min=min(counts, default=0),
        max=max(counts, default=0),
        idle=tuple(cid for cid, qs in assignment.items() if not qs),
        unassigned=tuple(mq for mq in route if mq not in held),
        duplicated=tuple(
            sorted((mq for mq, owners in held.items() if len(owners) > 1), key=queue_sort_key)
        ),
    )


@dataclass(frozen=True, slots=True)
class Move:
    """One queue whose holders change (``()`` = nobody holds it)."""

    queue: MessageQueue
    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Moves:
    """The queues that change hands in a scale event, out of ``total`` queues."""

    moved: tuple[Move, ...]
    total: int

    @property
    def count(self) -> int:
        """How many queues change hands."""
        return len(self.moved)

    @property
    def percent(self) -> float:
        """``count`` as a percentage of all queues, rounded to one decimal."""
        return round(100.0 * self.count / self.total, 1) if self.total else 0.0


def diff(before: Assignment, after: Assignment, queues: Sequence[MessageQueue]) -> Moves:
    """Which queues change holders between two allocations (Java order).

    A queue moves when the set of consumers holding it changes: a queue of a consumer that
    left moves to its new holder, or to nobody.
    """
    held_before, held_after = _holders(before), _holders(after)
    every = dict.fromkeys(queues).keys() | held_before.keys() | held_after.keys()
    nobody: tuple[str, ...] = ()
    changed = [mq for mq in every if held_before.get(mq, nobody) != held_after.get(mq, nobody)]
    changed.sort(key=queue_sort_key)
    moved = tuple(
        Move(mq, held_before.get(mq, nobody), held_after.get(mq, nobody)) for mq in changed
    )
    return Moves(moved, len(every))


@dataclass(frozen=True, slots=True)
class ScaleResult:
    """A scale event: the allocation before and after consumers join or leave."""

    before: Assignment
    after: Assignment
    consumers_after: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    moves: Moves


def scale(
    strategy: StrategySpec,
    queues: Sequence[MessageQueue],
    consumers: Sequence[str],
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
) -> ScaleResult:
    """Allocate before and after ``add`` join and ``remove`` leave, and what moves.

    Each id in ``remove`` takes one entry out of the group (a client id listed twice needs
    to be removed twice); an id that is not in the group is an :class:`InputError`. An id in
    ``add`` that is already in the group joins as a duplicate, as a second process with the
    same client id would.
    """
    remaining = list(consumers)
    for cid in remove:
        if cid not in remaining:
            known = ", ".join(sorted(set(consumers), key=java_key)[:5])
            more = ", ..." if len(set(consumers)) > 5 else ""
            raise InputError(f"cannot remove {cid!r}: not a consumer of the group ({known}{more})")
        remaining.remove(cid)
    remaining.extend(add)
    before = allocate(strategy, queues, consumers)
    after = allocate(strategy, queues, remaining)
    return ScaleResult(
        before=before,
        after=after,
        consumers_after=tuple(remaining),
        added=tuple(add),
        removed=tuple(remove),
        moves=diff(before, after, queues),
    )


# --------------------------------------------------------------------------- comparing


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


# --------------------------------------------------------------------------- one what-if


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
) -> WhatIf:
    """Allocate, then scale when ``add``/``remove`` are given and compare when
    ``compare_with`` is. Raises :class:`AllocationError` where Java would throw for the
    group itself, :class:`InputError` for a ``remove`` that is not in the group."""
    assignment = allocate(strategy, queues, consumers)
    event = scale(strategy, queues, consumers, add, remove) if add or remove else None
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
        balance(assignment, queues),
        event,
        rows,
    )


def _moves_to_json(moves: Moves) -> dict[str, Any]:
    return {
        "count": moves.count,
        "total": moves.total,
        "percent": moves.percent,
        "queues": [
            {**queue_to_json(m.queue), "from": list(m.before), "to": list(m.after)}
            for m in moves.moved
        ],
    }


def what_if_to_json(case_id: str | None, result: WhatIf) -> dict[str, Any]:
    """The ``simulate --output json`` object: design §3's ``{"id", "assignments"}``, plus
    ``"moves"`` after a scale event and ``"compare"`` for a comparison."""
    out: dict[str, Any] = {"id": case_id, "assignments": assignment_to_json(result.assignment)}
    if result.scale is not None:
        event = result.scale
        out["moves"] = {
            "added": list(event.added),
            "removed": list(event.removed),
            "assignments": assignment_to_json(event.after),
            **_moves_to_json(event.moves),
        }
    if result.compare is not None:
        rows = []
        for row in result.compare:
            item: dict[str, Any] = {
                "strategy": strategy_to_json(row.strategy),
                "label": describe(row.strategy),
            }
            if row.balance is None:
                item["error"] = row.error
            else:
                item.update(
                    {
                        "min": row.balance.min,
                        "max": row.balance.max,
                        "idle": len(row.balance.idle),
                        "unassigned": len(row.balance.unassigned),
                        "duplicated": len(row.balance.duplicated),
                        "movedOnAdd": _count_or_error(row.moved_on_add, row.add_error),
                        "movedOnRemove": _count_or_error(row.moved_on_remove, row.remove_error),
                    }
                )
            rows.append(item)
        out["compare"] = rows
    return out


def _count_or_error(moves: Moves | None, error: str | None) -> dict[str, Any] | None:
    if moves is not None:
        return {"count": moves.count, "percent": moves.percent}
    if error is not None:
        return {"error": error}
    return None


# --------------------------------------------------------------------------- step by step


@dataclass(frozen=True, slots=True)
class Step:
    """One change of a what-if and the allocation after it.

    ``kind`` is ``start``, ``consumers``, ``queues`` or ``strategy``; ``moves`` are the
    queues that change owner since the previous step, among those that exist before and
    after it (``None`` for the start, or when either side throws); a queue count change also
    counts the queues it creates (``new_queues``) and removes (``gone_queues``).
    ``error`` is Java's message when the strategy throws for this step's inputs.
    """

    kind: str
    change: str
    strategy: StrategySpec
    queues: tuple[MessageQueue, ...]
    consumers: tuple[str, ...]
    assignment: Assignment | None
    balance: Balance | None
    moves: Moves | None = None
    new_queues: int = 0
    gone_queues: int = 0
    error: str | None = None


def _restricted(assignment: Assignment, keep: set[MessageQueue]) -> Assignment:
    return {cid: [mq for mq in qs if mq in keep] for cid, qs in assignment.items()}


def _step(
    kind: str,
    change: str,
    *,
    strategy: StrategySpec,
    queues: Sequence[MessageQueue],
    consumers: Sequence[str],
    previous: Step | None,
) -> Step:
    try:
        assignment: Assignment | None = allocate(strategy, queues, consumers)
        error = None
    except AllocationError as exc:
        assignment, error = None, exc.message
    moves: Moves | None = None
    new = gone = 0
    if previous is not None:
        before, after = set(previous.queues), set(queues)
        new, gone = len(after - before), len(before - after)
        if previous.assignment is not None and assignment is not None:
            common = before & after
            ordered = [mq for mq in queues if mq in common]
            moves = diff(
                _restricted(previous.assignment, common), _restricted(assignment, common), ordered
            )
    return Step(
        kind,
        change,
        strategy,
        tuple(queues),
        tuple(consumers),
        assignment,
        None if assignment is None else balance(assignment, queues),
        moves,
        new,
        gone,
        error,
    )


def plan(
    strategy: StrategySpec,
    queues: Sequence[MessageQueue],
    consumers: Sequence[str],
    *,
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    per_broker: int | None = None,
    brokers: Sequence[str] = (),
    to_strategy: StrategySpec | None = None,
) -> list[Step]:
    """A group as it is, then each change applied in turn: consumers joining (``add``) and
    leaving (``remove``), every broker of ``brokers`` (default: those of ``queues``) at
    ``per_broker`` queues, then ``to_strategy``. Each step is allocated for the whole group
    and compared with the one before it.

    Worked example: 8 queues, three AVG consumers (3, 3, 2); a fourth joins (2 each: 5 queues
    change owner), then 16 queues (4 each: 6 of the 8 old ones change owner, 8 are new)::

        >>> qs = make_queues("T", ["broker-a"], 8)
        >>> steps = plan(Avg(), qs, ["c1", "c2", "c3"], add=["c4"], per_broker=16)
        >>> [(s.kind, s.moves.count if s.moves else None, s.new_queues) for s in steps]
        [('start', None, 0), ('consumers', 5, 0), ('queues', 6, 8)]
    """
    remaining = list(consumers)
    for cid in remove:
        if cid not in remaining:
            known = ", ".join(sorted(set(consumers), key=java_key)[:5])
            more = ", ..." if len(set(consumers)) > 5 else ""
            raise InputError(f"cannot remove {cid!r}: not a consumer of the group ({known}{more})")
        remaining.remove(cid)
    label = describe(strategy)
    steps = [
        _step(
            "start",
            f"as it is: {label}",
            strategy=strategy,
            queues=queues,
            consumers=consumers,
            previous=None,
        )
    ]
    if add or remove:
        parts = []
        if add:
            parts.append(f"+{len(add)} ({', '.join(add)})")
        if remove:
            parts.append(f"-{len(remove)} ({', '.join(remove)})")
        change = f"consumers {' and '.join(parts)}"
        steps.append(
            _step(
                "consumers",
                change,
                strategy=strategy,
                queues=queues,
                consumers=[*remaining, *add],
                previous=steps[-1],
            )
        )
    current = steps[-1]
    if per_broker is not None:
        if per_broker < 1:
            raise InputError(f"need at least one queue per broker, got {per_broker}")
        names = list(dict.fromkeys(brokers or [mq.broker_name for mq in queues]))
        if not names:
            raise InputError("the topic has no readable broker to give queues to")
        topic = queues[0].topic if queues else DEFAULT_TOPIC
        resized = make_queues(topic, names, per_broker)
        where = names[0] if len(names) == 1 else f"each of {len(names)} brokers"
        change = f"{per_broker} queues on {where} (read = write)"
        steps.append(
            _step(
                "queues",
                change,
                strategy=strategy,
                queues=resized,
                consumers=current.consumers,
                previous=current,
            )
        )
    current = steps[-1]
    if to_strategy is not None:
        change = f"strategy {describe(to_strategy)}"
        steps.append(
            _step(
                "strategy",
                change,
                strategy=to_strategy,
                queues=current.queues,
                consumers=current.consumers,
                previous=current,
            )
        )
    return steps


def overall(steps: Sequence[Step]) -> Moves | None:
    """What changes owner from the first step to the last, among the queues both have
    (``None`` when either allocation fails)."""
    first, last = steps[0], steps[-1]
    if first.assignment is None or last.assignment is None:
        return None
    common = set(first.queues) & set(last.queues)
    ordered = [mq for mq in last.queues if mq in common]
    return diff(
        _restricted(first.assignment, common), _restricted(last.assignment, common), ordered
    )


def _step_json(step: Step) -> dict[str, Any]:
    out: dict[str, Any] = {
        "step": step.kind,
        "change": step.change,
        "strategy": strategy_to_json(step.strategy),
        "queues": len(step.queues),
        "consumers": len(step.consumers),
    }
    if step.error is not None:
        out["error"] = step.error
    else:
        assert step.assignment is not None and step.balance is not None
        b = step.balance
        out["assignments"] = assignment_to_json(step.assignment)
        out["balance"] = {
            "min": b.min,
            "max": b.max,
            "idle": len(b.idle),
            "unassigned": len(b.unassigned),
            "duplicated": len(b.duplicated),
        }
    if step.kind != "start":
        out["moves"] = None if step.moves is None else _moves_to_json(step.moves)
        out["newQueues"] = step.new_queues
        out["goneQueues"] = step.gone_queues
    return out


def plan_to_json(
    case_id: str | None, steps: Sequence[Step], extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``simulate --dump/-n/--check-config --output json``: the start's ``assignments`` (as
    in the ``--input`` contract) and every step with its allocation and what moved."""
    start = steps[0]
    out: dict[str, Any] = {"id": case_id, **(extra or {})}
    if start.assignment is not None:
        out["assignments"] = assignment_to_json(start.assignment)
    else:
        out["error"] = start.error
    out["steps"] = [_step_json(s) for s in steps]
    return out
