"""Every JSON document rmqlb writes names its ``format``, and its top-level keys do not
come and go with the flags (absent data is null): one test per command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.cli import run

ROOT = Path(__file__).resolve().parents[3]
DEMO = str(ROOT / "rmqlb" / "data" / "demo-snapshot.json")
CHECK = ROOT / "examples" / "check"
CLIENT = "10.0.1.11@2101#1900214562211"  # an OrderGroup client of the demo

Capsys = pytest.CaptureFixture[str]


def documents(capsys: Capsys, *argv: str) -> list[dict[str, Any]]:
    """The JSON objects a command writes on stdout (one, or one per line)."""
    run([*argv, "-o", "json"])
    out = capsys.readouterr().out
    try:
        return [json.loads(out)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in out.splitlines() if line.strip()]


def keys(capsys: Capsys, fmt: str, *runs: tuple[str, ...]) -> list[str]:
    """The top-level keys of every run's documents: all the same, with ``format`` ``fmt``."""
    seen = [doc for argv in runs for doc in documents(capsys, *argv)]
    assert seen and all(doc["format"] == fmt for doc in seen)
    assert all(list(doc) == list(seen[0]) for doc in seen)
    return list(seen[0])


def test_explain(capsys: Capsys) -> None:
    assert keys(
        capsys,
        "rmqlb.report/1",
        ("explain", "-d", DEMO),
        ("explain", "-d", DEMO, "OrderGroup", "-t", "RefundTopic", "--fail-on", "never"),
        ("explain", "-d", DEMO, "AuditGroup", "--explain-strategy"),
    ) == ["format", "groups", "findings", "errors", "exitCode"]


def test_status(capsys: Capsys) -> None:
    assert keys(
        capsys,
        "rmqlb.status/1",
        ("status", "-d", DEMO),
        ("status", "-d", DEMO, "--problems", "--sort-by", "name"),
        ("status", "-d", DEMO, "nothing-*"),
    ) == ["format", "capturedAt", "captureSeconds", "groups", "totals", "errors", "exitCode"]


def test_offsets(capsys: Capsys) -> None:
    assert keys(
        capsys,
        "rmqlb.offsets/1",
        ("offsets", "OrderGroup", "-d", DEMO),
        ("offsets", "AuditGroup", "-d", DEMO, "-t", "AuditTopic", "--sort-by", "lag"),
    ) == ["format", "group", "capturedAt", "consumers", "messageModel", "queues", "totals"]


def test_client(capsys: Capsys) -> None:
    assert keys(capsys, "rmqlb.client/1", ("client", CLIENT, "-d", DEMO)) == [
        "format",
        "capturedAt",
        "clients",
    ]


def test_check(capsys: Capsys) -> None:
    assert keys(
        capsys,
        "rmqlb.check/1",
        ("check", str(CHECK / "clean.yaml")),
        ("check", str(CHECK / "idle-consumers.yaml"), "--explain-counts"),
    ) == ["format", "files", "findings", "cases", "exitCode", "allocations"]


def test_simulate(capsys: Capsys) -> None:
    assert keys(
        capsys,
        "rmqlb.simulate/1",
        ("simulate", "--queues", "8", "--consumers", "3"),
        ("simulate", "--queues", "8", "--consumers", "3", "--add", "1", "--compare"),
    ) == ["format", "id", "assignments", "error", "moves", "compare"]


def test_simulate_plan(capsys: Capsys) -> None:
    dump = str(ROOT / "examples" / "16-queues-3-consumers-rebalancing.json")
    start = ("simulate", "--dump", dump, "--group", "order-consumer")
    assert keys(capsys, "rmqlb.simulate-plan/1", start, (*start, "--add", "1", "--compare"))[
        -4:
    ] == ["error", "steps", "moved", "compare"]


def test_watch_ndjson(capsys: Capsys) -> None:
    explain = documents(capsys, "explain", "-d", DEMO, "--watch", "0.1", "--count", "3")
    status = documents(capsys, "status", "-d", DEMO, "--watch", "0.1", "--count", "3")
    for polls, fmt, first in (
        (explain, "rmqlb.changes/1", "rmqlb.report/1"),
        (status, "rmqlb.status-changes/1", "rmqlb.status/1"),
    ):
        assert len(polls) == 3 and polls[0]["format"] == first
        assert all(p["format"] == fmt for p in polls[1:])
        assert list(polls[1]) == list(polls[2]) and {"time", "error"} <= set(polls[1])
