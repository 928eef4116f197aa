"""``rmqlb status -n`` over real TCP against the fake cluster: the same overview as from a
dump, partial data marked on the lines it concerns, the capture time in the footer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from livehelpers import ROOT

from rmqlb.cli import run
from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(60)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
SILENT = "10.0.3.32@5188#1900217004444"  # a ShipmentGroup client


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict[str, Any]]:
    code = run(argv)
    return code, json.loads(capsys.readouterr().out)


def test_live_overview_equals_the_overview_of_its_dump(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "snap.json"
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        code, live = _json(capsys, ["status", "-n", fake.namesrv_addr, "-o", "json"])
        assert run(["dump", "-n", fake.namesrv_addr, "--out", str(saved)]) == 0
        capsys.readouterr()
    dump_code, offline = _json(capsys, ["status", "--dump", str(saved), "-o", "json"])
    assert code == dump_code == 1
    assert live["groups"] == offline["groups"]
    assert live["totals"] == offline["totals"]
    assert isinstance(live["captureSeconds"], float) and live["captureSeconds"] > 0
    assert offline["captureSeconds"] is None
    assert live["groups"][0]["consumeTps"] == pytest.approx(176.1)  # from running info
    # no consumer to report a rate: the brokers' consumeTps, read as 0, is 0, not unknown
    (audit,) = [g for g in live["groups"] if g["group"] == "AuditGroup"]
    assert audit["consumeTps"] == 0.0


def test_a_broker_down_marks_every_line_it_leaves_incomplete(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeClusterThread(load_snapshot(DEMO), faults=["broker-down=broker-b"]) as fake:
        argv = ["status", "-n", fake.namesrv_addr, "--timeout", "2", "--fail-on", "never"]
        code, doc = _json(capsys, [*argv, "-o", "json"])
        plain_code = run([*argv, "-o", "plain"])
        text = capsys.readouterr().out
    assert code == plain_code == 4  # partial data, nothing else counts with --fail-on never
    # every group's connection list and stats were asked of broker-b too
    assert all(g["partial"] for g in doc["groups"])
    for line in doc["groups"]:
        # its own requests, and the offsets of its topics broker-b could not give
        assert any(e["group"] == line["group"] for e in line["partial"])
        assert all(e["group"] in (line["group"], None) for e in line["partial"])
        assert all(e["topic"] for e in line["partial"] if e["group"] is None)
    assert "OrderGroup !" in text and "partial data:" in text


def test_a_silent_client_marks_only_its_group(capsys: pytest.CaptureFixture[str]) -> None:
    faults = [f"silent-client={SILENT}", "relay-delay=50"]
    with FakeClusterThread(load_snapshot(DEMO), faults=faults) as fake:
        code, doc = _json(capsys, ["status", "-n", fake.namesrv_addr, "-o", "json"])
    assert code == 1
    partial = {g["group"] for g in doc["groups"] if g["partial"]}
    assert partial == {"ShipmentGroup"}
    (line,) = [g for g in doc["groups"] if g["group"] == "ShipmentGroup"]
    assert line["partial"][0]["target"] == SILENT
    assert line["findings"]["warning"] >= 1  # CLIENT_UNREACHABLE among them


def test_topic_asks_the_brokers_who_consumes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "requests.log"
    with FakeClusterThread(load_snapshot(DEMO), log_path=str(log)) as fake:
        code, doc = _json(
            capsys, ["status", "-n", fake.namesrv_addr, "-t", "AuditTopic", "-o", "json"]
        )
    assert code == 0  # AuditGroup's NO_CONSUMERS is a warning
    assert [g["group"] for g in doc["groups"]] == ["AuditGroup"]
    requests = log.read_text(encoding="utf-8").splitlines()
    assert sum(1 for r in requests if r.startswith("300 QUERY_TOPIC_CONSUME_BY_WHO")) == 2
    # only AuditGroup was captured: no other group's connection list was asked for
    assert sum(1 for r in requests if r.startswith("203 ")) == 2


def _many_groups(n: int) -> Any:
    from rmqlb.snapshot import parse_snapshot

    return parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {"T": {"queues": 2}},
            "groups": {
                f"g{i:02d}": {
                    "consumers": [
                        {
                            "clientId": f"10.0.0.{i}@1",
                            "subscriptions": ["T"],
                            "assigned": [{"topic": "T", "brokerName": "broker-a", "queueId": 0}],
                        }
                    ]
                }
                for i in range(n)
            },
        }
    )


def test_a_deadline_too_short_marks_lines_partial_and_drops_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every request answers 150 ms late, the whole capture may take 0.5 s: the groups found
    are all listed, those whose requests were cut marked partial, and the exit code says so."""
    with FakeClusterThread(_many_groups(30), latency_ms=150) as fake:
        argv = ["status", "-n", fake.namesrv_addr, "--deadline", "0.5", "--fail-on", "never"]
        code, doc = _json(capsys, [*argv, "-o", "json"])
    assert code == 4
    assert len(doc["groups"]) == 30
    assert all(g["partial"] for g in doc["groups"])
    reasons = {e["message"] for g in doc["groups"] for e in g["partial"]}
    assert any("overall deadline of 0.5 s" in m or "timed out" in m for m in reasons)
