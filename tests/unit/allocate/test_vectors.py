"""Every golden case produced by the real Java classes must pass, bit for bit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.allocate import allocate
from rmqlb.errors import AllocationError
from rmqlb.model.queue import MessageQueue
from rmqlb.whatif.cases import case_from_json

VECTORS = "vectors/allocation.jsonl"


def _load(shared_dir: Path) -> list[dict[str, Any]]:
    path = shared_dir / VECTORS
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _expected_queues(case: dict[str, Any], queues: list[dict[str, Any]]) -> list[MessageQueue]:
    return [
        MessageQueue(q.get("topic", case["topic"]), q["brokerName"], q["queueId"]) for q in queues
    ]


def test_every_golden_vector(shared_dir: Path) -> None:
    cases = _load(shared_dir)
    assert len(cases) >= 400
    failures: list[str] = []
    for raw in cases:
        case = case_from_json(raw)
        try:
            got = {
                cid: list(qs)
                for cid, qs in allocate(case.strategy, case.queues, case.consumers).items()
            }
        except AllocationError as exc:
            if "expected_error" not in raw:
                failures.append(f"{raw['id']}: unexpected error {exc.message}")
            elif exc.message != raw["expected_error"]["message"]:
                failures.append(
                    f"{raw['id']}: expected error {raw['expected_error']}, got {exc.message}"
                )
            continue
        if "expected_error" in raw:
            failures.append(f"{raw['id']}: expected error {raw['expected_error']}, got {got}")
            continue
        expected = {cid: _expected_queues(raw, qs) for cid, qs in raw["expected"].items()}
        # Java's answer lists clients that got nothing as empty lists; compare with them.
        for cid in set(got) | set(expected):
            if got.get(cid, []) != expected.get(cid, []):
                failures.append(
                    f"{raw['id']}: {cid}: expected {expected.get(cid)}, got {got.get(cid)}"
                )
                break
    assert not failures, "\n".join(failures[:20])
