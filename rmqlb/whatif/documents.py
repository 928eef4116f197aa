"""The JSON documents of ``simulate --output json`` (``docs/simulate.md``): the
``--input`` contract's answer (``{"id", "assignments"}``), plus the moves of a scale event,
the comparison, or the steps from a running group. Plain dicts; the renderer writes them.

>>> queue_to_json(MessageQueue("T", "broker-a", 3))
{'topic': 'T', 'brokerName': 'broker-a', 'queueId': 3}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rmqlb.allocate import Assignment
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import describe, strategy_to_json
from rmqlb.whatif.events import WhatIf
from rmqlb.whatif.measure import Moves
from rmqlb.whatif.steps import Step

__all__ = [
    "PLAN_FORMAT",
    "SIMULATE_FORMAT",
    "assignment_to_json",
    "plan_to_json",
    "queue_to_json",
    "simulate_document",
    "what_if_to_json",
]

SIMULATE_FORMAT = "rmqlb.simulate/1"
"""A flag-driven ``simulate --output json`` answer (the ``--input`` answers carry none)."""
PLAN_FORMAT = "rmqlb.simulate-plan/1"
"""``simulate --dump/-n/--check-config --output json``: a running group's steps."""


def queue_to_json(mq: MessageQueue) -> dict[str, Any]:
    """``{"topic", "brokerName", "queueId"}``."""
    return {"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id}


def assignment_to_json(assignment: Assignment) -> dict[str, list[dict[str, Any]]]:
    """Every consumer with its queues in Java's order."""
    return {cid: [queue_to_json(q) for q in queues] for cid, queues in assignment.items()}


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


def simulate_document(
    case_id: str | None, result: WhatIf | None, error: str | None
) -> dict[str, Any]:
    """A flag-driven answer: the ``--input`` contract's keys, every one always present
    (``null`` when absent), after ``format``."""
    doc: dict[str, Any] = {
        "format": SIMULATE_FORMAT,
        "id": case_id,
        "assignments": None,
        "error": error,
        "moves": None,
        "compare": None,
    }
    if result is not None:
        doc.update(what_if_to_json(case_id, result))
    return doc


def _count_or_error(moves: Moves | None, error: str | None) -> dict[str, Any] | None:
    if moves is not None:
        return {"count": moves.count, "percent": moves.percent}
    if error is not None:
        return {"error": error}
    return None


def _step_json(step: Step) -> dict[str, Any]:
    out: dict[str, Any] = {
        "step": step.kind,
        "change": step.change,
        "strategy": strategy_to_json(step.strategy),
        "queues": len(step.queues),
        "consumers": len(step.consumers),
    }
    out |= {"error": step.error, "assignments": None, "balance": None}
    if step.error is None:
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
    first = step.kind == "start"  # nothing moved yet: null
    out["moves"] = None if first or step.moves is None else _moves_to_json(step.moves)
    out["newQueues"] = None if first else step.new_queues
    out["goneQueues"] = None if first else step.gone_queues
    return out


def plan_to_json(
    case_id: str | None, steps: Sequence[Step], extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``simulate --dump/-n/--check-config --output json``: the start's ``assignments`` (as
    in the ``--input`` contract) and every step with its allocation and what moved."""
    start = steps[0]
    out: dict[str, Any] = {"format": PLAN_FORMAT, "id": case_id, **(extra or {})}
    out["assignments"] = (
        assignment_to_json(start.assignment) if start.assignment is not None else None
    )
    out["error"] = start.error
    out["steps"] = [_step_json(s) for s in steps]
    return out
