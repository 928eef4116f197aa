"""The what-if of a group that is running: ``simulate --dump``, ``-n`` with ``--group``, or
``--check-config`` (:func:`rmqlb.check.synth.declared_snapshot`). The snapshot (read by the
CLI) gives the start, as
:func:`rmqlb.diagnose.running.running` finds it; :func:`~rmqlb.whatif.steps.plan` applies
the changes in turn. Pure.

>>> from rmqlb.snapshot import parse_snapshot
>>> snap = parse_snapshot({"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": 4}},
...     "groups": {"G": {"consumers": [{"clientId": "c1", "subscriptions": ["T"]},
...                                    {"clientId": "c2", "subscriptions": ["T"]}]}}})
>>> (sim,) = simulate_running(snap, "dump", [], None, Changes(add_id=("c3",)))
>>> [(s.kind, s.moves.count if s.moves else None) for s in sim.steps]
[('start', None), ('consumers', 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rmqlb.diagnose.running import Running, running
from rmqlb.errors import InputError
from rmqlb.model.snapshot import Snapshot
from rmqlb.model.strategy import Config, StrategySpec
from rmqlb.whatif.events import WhatIf, compare_candidates, what_if
from rmqlb.whatif.inputs import new_consumer_ids
from rmqlb.whatif.steps import Step, plan

__all__ = ["Changes", "RunningSimulation", "simulate_running"]


@dataclass(frozen=True, slots=True)
class Changes:
    """The what-if's steps, applied in this order: consumers joining (``add`` default-style
    ids, then ``add_id``) and leaving (``remove``), ``queues`` per broker, ``strategy``;
    ``compare`` adds the strategy comparison of the start."""

    add: int = 0
    add_id: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    queues: int | None = None
    strategy: StrategySpec | None = None
    compare: bool = False


@dataclass(frozen=True, slots=True)
class RunningSimulation:
    """A what-if started from a running group: where it comes from, its steps, and the
    strategy comparison when asked."""

    start: Running
    source: str
    steps: tuple[Step, ...]
    compare: WhatIf | None = None
    joiner: str | None = None


def simulate_running(
    snapshot: Snapshot,
    source: str,
    groups: Sequence[str],
    topic: str | None,
    changes: Changes,
) -> list[RunningSimulation]:
    """Every (group, topic) of ``snapshot`` that was asked for (``groups``: all, when the
    snapshot has one group), with its steps; ``source`` names where the snapshot came from."""
    names = list(groups)
    if not names:
        if len(snapshot.groups) != 1:
            known = ", ".join(sorted(snapshot.groups)[:10]) or "none"
            raise InputError(f"name the group to simulate with --group (groups: {known})")
        names = list(snapshot.groups)
    if isinstance(changes.strategy, Config):
        raise InputError("CONFIG lists are per client: simulate them with --input cases")
    out: list[RunningSimulation] = []
    for name in names:
        for start in running(snapshot, name, topic):
            joining = [*new_consumer_ids(start.consumers, changes.add), *changes.add_id]
            steps = plan(
                start.strategy,
                start.queues,
                start.consumers,
                add=joining,
                remove=changes.remove,
                per_broker=changes.queues,
                brokers=start.brokers,
                to_strategy=changes.strategy,
            )
            compared = joiner = None
            if changes.compare and steps[0].assignment is not None:
                joiner = new_consumer_ids(start.consumers, 1)[0]
                compared = what_if(
                    start.strategy,
                    start.queues,
                    start.consumers,
                    compare_with=compare_candidates(start.strategy),
                    joiner=joiner,
                )
            out.append(RunningSimulation(start, source, tuple(steps), compared, joiner))
    return out
