"""How an allocation spreads queues, and which queues move between two allocations. Pure.

4 queues, 2 AVG consumers: 2 each. A third joins (2, 1, 1): one queue moves, c2's last::

>>> from rmqlb.allocate import allocate
>>> from rmqlb.model.strategy import Avg
>>> qs = [MessageQueue("T", "broker-a", i) for i in range(4)]
>>> before, after = allocate(Avg(), qs, ["c1", "c2"]), allocate(Avg(), qs, ["c1", "c2", "c3"])
>>> b = balance(after, qs)
>>> (b.min, b.max, b.idle), diff(before, after, qs).count
((1, 2, ()), 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rmqlb.allocate import Assignment
from rmqlb.errors import InputError
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key

__all__ = ["Balance", "Move", "Moves", "balance", "diff", "without"]


@dataclass(frozen=True, slots=True)
class Balance:
    """How evenly an allocation spreads the queues.

    ``queues`` counts every distinct queue (the route's plus any a CONFIG list names);
    ``unassigned`` are the route's queues nobody holds, ``duplicated`` those held by more
    than one consumer: under POP (``popped``), the queues several clients pop, as POP does.
    """

    queues: int
    consumers: int
    min: int
    max: int
    idle: tuple[str, ...]
    unassigned: tuple[MessageQueue, ...]
    duplicated: tuple[MessageQueue, ...]
    popped: bool = False


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


def balance(
    assignment: Assignment, queues: Sequence[MessageQueue], *, popped: bool = False
) -> Balance:
    """Min/max queues per consumer, idle consumers, unassigned and doubly held queues
    (``popped``: a broker serves them by POP).

    >>> from rmqlb.allocate import allocate
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
        popped=popped,
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


def without(consumers: Sequence[str], remove: Sequence[str]) -> list[str]:
    """``consumers`` less one entry per id of ``remove`` (an id listed twice in the group
    must be removed twice); an id that is not in the group is an :class:`InputError`.

    >>> without(["c1", "c2", "c1"], ["c1"])
    ['c2', 'c1']
    """
    remaining = list(consumers)
    for cid in remove:
        if cid not in remaining:
            known = ", ".join(sorted(set(consumers), key=java_key)[:5])
            more = ", ..." if len(set(consumers)) > 5 else ""
            raise InputError(f"cannot remove {cid!r}: not a consumer of the group ({known}{more})")
        remaining.remove(cid)
    return remaining
