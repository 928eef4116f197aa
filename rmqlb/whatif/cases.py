"""``simulate``'s cases: a group given by flags or by an ``--input`` JSON case, and what
simulating it gives. Pure: the CLI parses the flags and reads the files.

An ``--input`` case is ``{"id"?, "topic", "queues": [{"brokerName","queueId"}],
"consumers": [cid], "strategy": {...}}`` (design §3, ``docs/simulate.md``); its answer is
``{"id", "assignments": {cid: [queue]}}`` listing every consumer
(:mod:`rmqlb.whatif.documents`), or ``{"id", "error": message}`` where Java would throw.

>>> case = input_case({"id": "c", "queues": [{"brokerName": "b", "queueId": 0}],
...     "consumers": ["x", "y"], "strategy": {"name": "AVG"}}, "$")
>>> case.label
'case c: TopicTest: 1 queue on 1 broker, 2 consumers, AVG'
>>> sim = simulate_case(case, add=1)
>>> sim.result.balance.idle, sim.result.scale.added
(('y',), ('10.0.0.1@consumer-2',))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rmqlb.errors import AllocationError, InputError
from rmqlb.fileio import JsonError, parse_json
from rmqlb.humanize import plural
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import (
    Config,
    MachineRoomNearby,
    Params,
    RoomRule,
    StrategySpec,
    describe,
    strategy_from_json,
    with_params,
)
from rmqlb.ranges import QUEUE_ID
from rmqlb.whatif.events import WhatIf, compare_candidates, what_if
from rmqlb.whatif.inputs import default_consumer_ids, id_width, make_queues, new_consumer_ids

__all__ = [
    "AllocationCase",
    "Case",
    "Simulation",
    "case_from_json",
    "flag_case",
    "input_case",
    "input_cases",
    "simulate_case",
]


@dataclass(frozen=True, slots=True)
class AllocationCase:
    """One what-if: queues, consumers and a strategy."""

    id: str | None
    topic: str
    queues: tuple[MessageQueue, ...]
    consumers: tuple[str, ...]
    strategy: StrategySpec


def case_from_json(raw: Any, where: str = "$") -> AllocationCase:
    """Validate and read one case; errors name the JSON path."""
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a JSON object")
    case_id = raw.get("id")
    if case_id is not None and not isinstance(case_id, str | int):
        raise InputError(f"{where}.id: expected a string")
    topic = raw.get("topic", "TopicTest")
    if not isinstance(topic, str):
        raise InputError(f"{where}.topic: expected a string")
    queues_raw = raw.get("queues")
    if not isinstance(queues_raw, list):
        raise InputError(f"{where}.queues: expected a list of {{brokerName, queueId}}")
    queues: list[MessageQueue] = []
    for i, q in enumerate(queues_raw):
        if not isinstance(q, Mapping):
            raise InputError(f"{where}.queues[{i}]: expected an object")
        broker, qid = q.get("brokerName"), q.get("queueId")
        if not isinstance(broker, str):
            raise InputError(f"{where}.queues[{i}].brokerName: expected a string")
        if isinstance(qid, bool) or not isinstance(qid, int):
            raise InputError(f"{where}.queues[{i}].queueId: expected an integer")
        QUEUE_ID.check(qid, f"{where}.queues[{i}].queueId")
        queue_topic = q.get("topic", topic)
        if not isinstance(queue_topic, str):
            raise InputError(f"{where}.queues[{i}].topic: expected a string")
        queues.append(MessageQueue(queue_topic, broker, qid))
    consumers = raw.get("consumers")
    if not isinstance(consumers, list) or not all(isinstance(c, str) for c in consumers):
        raise InputError(f"{where}.consumers: expected a list of client id strings")
    if "strategy" not in raw:
        raise InputError(f"{where}.strategy: missing")
    # A case states the strategy as constructed: a parameter left out is Java's default.
    strategy = with_params(
        strategy_from_json(raw["strategy"], f"{where}.strategy", topic), Params.GIVEN
    )
    return AllocationCase(
        str(case_id) if case_id is not None else None,
        topic,
        tuple(queues),
        tuple(consumers),
        strategy,
    )


@dataclass(frozen=True, slots=True)
class Case:
    """One group to simulate, or the reason it cannot be read (``error``).

    ``id_width`` is the width of generated client ids, so that consumers joining later get
    ids of the same length (Java order stays numeric order).
    """

    id: str | None
    label: str
    strategy: StrategySpec | None = None
    queues: tuple[MessageQueue, ...] = ()
    consumers: tuple[str, ...] = ()
    id_width: int | None = None
    compare_with: tuple[StrategySpec, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Simulation:
    """One simulated case: its label and id, and its result or the error Java would throw;
    ``invalid`` when the case itself is bad input (exit 2) rather than a Java exception."""

    label: str
    id: str | None = None
    result: WhatIf | None = None
    error: str | None = None
    joiner: str | None = None  # the id --compare adds for "+1"
    invalid: bool = False


def _label(
    prefix: str, topic: str, queues: Sequence[MessageQueue], consumers: int, spec: StrategySpec
) -> str:
    brokers = len({q.broker_name for q in queues})
    return (
        f"{prefix}{topic}: {plural(len(queues), 'queue')} on {plural(brokers, 'broker')}, "
        f"{plural(consumers, 'consumer')}, {describe(spec)}"
    )


def flag_case(
    spec: StrategySpec,
    *,
    topic: str,
    brokers: Sequence[str],
    per_broker: int,
    consumer_ids: Sequence[str] | None,
    consumer_count: int,
    add: int = 0,
    compare: bool = False,
    broker_rooms: RoomRule | None = None,
    consumer_rooms: RoomRule | None = None,
    config: Mapping[str, tuple[MessageQueue, ...]] | None = None,
) -> Case:
    """The group ``simulate``'s flags describe: ``per_broker`` queues on every broker, the
    ``consumer_ids`` given, else ``consumer_count`` default ids wide enough for every id the
    run generates (the ``add`` joiners and ``--compare``'s "+1")."""
    queues = make_queues(topic, brokers, per_broker)
    width: int | None = None
    if consumer_ids is not None:
        consumers = list(consumer_ids)
    else:
        width = id_width(consumer_count + add + int(compare) - 1)
        consumers = default_consumer_ids(consumer_count, width=width)
    compare_with = (
        tuple(compare_candidates(spec, broker_rooms, consumer_rooms, config)) if compare else ()
    )
    label = _label("", topic, queues, len(consumers), spec)
    return Case(None, label, spec, tuple(queues), tuple(consumers), width, compare_with)


def input_case(raw: Any, where: str) -> Case:
    """One ``--input`` case (``where``: its place in the file, for messages); a case that is
    not valid input comes back with its ``error``."""
    raw_id = raw.get("id") if isinstance(raw, Mapping) else None
    case_id = (
        str(raw_id) if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    )
    try:
        case = case_from_json(raw, where)
    except InputError as exc:
        return Case(case_id, f"case {case_id}" if case_id else where, error=str(exc))
    spec = case.strategy
    nearby = spec if isinstance(spec, MachineRoomNearby) else None
    compare_with = compare_candidates(
        spec,
        nearby.broker_rooms if nearby else None,
        nearby.consumer_rooms if nearby else None,
        spec.config if isinstance(spec, Config) else None,
    )
    prefix = f"case {case.id}: " if case.id is not None else ""
    label = _label(prefix, case.topic, case.queues, len(case.consumers), spec)
    return Case(case.id, label, spec, case.queues, case.consumers, None, tuple(compare_with))


def input_cases(text: str, source: str) -> tuple[list[Case], bool]:
    """The cases of an ``--input`` text: a JSON object (one case), a JSON array or JSON
    Lines (several: then the second value is True). Messages start with ``source``."""
    if not text.strip():
        raise InputError(f"{source}: empty file")
    items: list[tuple[str, Any]]
    try:
        doc = parse_json(text)
    except JsonError as exc:
        if not exc.syntax:
            raise InputError(f"{source}: invalid JSON: {exc}") from None
        items = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"line {number}: $", parse_json(line)))
            except JsonError as exc:
                raise InputError(f"{source}: line {number}: invalid JSON: {exc}") from None
        multi = True
    else:
        if isinstance(doc, list):
            items = [(f"$[{i}]", raw) for i, raw in enumerate(doc)]
            multi = True
        else:
            items = [("$", doc)]
            multi = False
    if not items:
        raise InputError(f"{source}: no cases")
    return [input_case(raw, where) for where, raw in items], multi


def simulate_case(
    case: Case,
    *,
    add: int = 0,
    add_id: Sequence[str] = (),
    remove: Sequence[str] = (),
    compare: bool = False,
) -> Simulation:
    """Allocate ``case``, with ``add`` default-style joiners and ``add_id`` joining and
    ``remove`` leaving, and the comparison when ``compare``; a Java exception or bad input
    is kept as the simulation's error."""
    if case.error is not None or case.strategy is None:
        return Simulation(case.label, case.id, error=case.error, invalid=True)
    try:
        joining = new_consumer_ids(case.consumers, add, case.id_width) + list(add_id)
        joiner = new_consumer_ids(case.consumers, 1, case.id_width)[0]
        result = what_if(
            case.strategy,
            case.queues,
            case.consumers,
            add=joining,
            remove=remove,
            compare_with=case.compare_with if compare else None,
            joiner=joiner,
        )
    except AllocationError as exc:
        return Simulation(case.label, case.id, error=exc.message)
    except InputError as exc:
        return Simulation(case.label, case.id, error=str(exc), invalid=True)
    return Simulation(case.label, case.id, result, joiner=joiner)
