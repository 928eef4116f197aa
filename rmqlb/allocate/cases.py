"""Allocation cases: the ``simulate --input`` contract of design §3.

A case is ``{"id"?, "topic", "queues": [{"brokerName","queueId"}], "consumers": [cid],
"strategy": {...}}``; its answer is ``{"id", "assignments": {cid: [queue]}}`` listing every
consumer (:func:`assignment_to_json`), or ``{"id", "error": message}`` where Java would throw
(written by :mod:`rmqlb.render.simulate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmqlb.allocate import Assignment
from rmqlb.errors import InputError
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import Params, StrategySpec, strategy_from_json, with_params


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


def queue_to_json(mq: MessageQueue) -> dict[str, Any]:
    """``{"topic", "brokerName", "queueId"}``."""
    return {"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id}


def assignment_to_json(assignment: Assignment) -> dict[str, list[dict[str, Any]]]:
    """Every consumer with its queues in Java's order."""
    return {cid: [queue_to_json(q) for q in queues] for cid, queues in assignment.items()}
