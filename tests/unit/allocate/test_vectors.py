"""Every golden case produced by the real Java classes must pass, bit for bit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.allocate.cases import case_from_json, run_case

VECTORS = "vectors/allocation.jsonl"


def _load(shared_dir: Path) -> list[dict[str, Any]]:
    path = shared_dir / VECTORS
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _expected_queues(case: dict[str, Any], queues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "topic": q.get("topic", case["topic"]),
            "brokerName": q["brokerName"],
            "queueId": q["queueId"],
        }
        for q in queues
    ]


def test_every_golden_vector(shared_dir: Path) -> None:
    cases = _load(shared_dir)
    assert len(cases) >= 400
    failures: list[str] = []
    for raw in cases:
        answer = run_case(case_from_json(raw))
        if "expected_error" in raw:
            if answer.get("error") != raw["expected_error"]["message"]:
                failures.append(
                    f"{raw['id']}: expected error {raw['expected_error']}, got {answer}"
                )
            continue
        expected = {cid: _expected_queues(raw, qs) for cid, qs in raw["expected"].items()}
        got = answer.get("assignments")
        if got is None:
            failures.append(f"{raw['id']}: unexpected error {answer.get('error')}")
            continue
        # Java's answer lists clients that got nothing as empty lists; compare with them.
        for cid in set(got) | set(expected):
            if got.get(cid, []) != expected.get(cid, []):
                failures.append(
                    f"{raw['id']}: {cid}: expected {expected.get(cid)}, got {got.get(cid)}"
                )
                break
    assert not failures, "\n".join(failures[:20])
