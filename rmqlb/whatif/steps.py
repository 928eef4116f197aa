"""A running group step by step: as it is, then consumers joining or leaving, a new queue
count, another strategy, each step allocated for the whole group and compared with the one
before it. Pure: ``simulate --dump/-n/--check-config`` finds the group, this plans.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rmqlb.allocate import Assignment, allocate
from rmqlb.errors import AllocationError, InputError
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import is_logical_broker
from rmqlb.model.strategy import StrategySpec, describe
from rmqlb.whatif.inputs import DEFAULT_TOPIC, make_queues
from rmqlb.whatif.measure import Balance, Moves, balance, diff, without

__all__ = ["Step", "overall", "plan"]


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

        >>> from rmqlb.model.strategy import Avg
        >>> qs = make_queues("T", ["broker-a"], 8)
        >>> steps = plan(Avg(), qs, ["c1", "c2", "c3"], add=["c4"], per_broker=16)
        >>> [(s.kind, s.moves.count if s.moves else None, s.new_queues) for s in steps]
        [('start', None, 0), ('consumers', 5, 0), ('queues', 6, 8)]
    """
    remaining = without(consumers, remove)
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
        if all(map(is_logical_broker, names)):
            if per_broker < len(queues):
                raise InputError(
                    f"{topic} is a static topic: its {len(queues)} logical queues can be "
                    f"raised (mqadmin updateStaticTopic -qn N), never lowered to {per_broker}"
                )
            change = f"{per_broker} logical queues (mqadmin updateStaticTopic -qn {per_broker})"
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
