"""``rmqlb dump``, ``explain -n``, ``serve`` and ``demo`` end to end over real TCP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from livehelpers import ROOT, received_view, snapshot_files, wire_view

from rmqlb.cli import run
from rmqlb.fake import FakeClusterThread
from rmqlb.model import Snapshot
from rmqlb.remoting.codes import READ_ONLY_CODES, request_code_name
from rmqlb.snapshot import load_snapshot, snapshot_to_json

pytestmark = pytest.mark.timeout(90)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
MIXED = ROOT / "tests" / "data" / "live" / "mixed.json"
FILES = snapshot_files()


@pytest.fixture(scope="module")
def demo() -> Snapshot:
    return load_snapshot(DEMO)


def _assert_allowlisted(lines: list[str]) -> None:
    assert lines
    for line in lines:
        code, name, target = line.split(" ")
        assert int(code) in READ_ONLY_CODES, line
        assert name == request_code_name(int(code))
        assert target == "ns" or target.startswith("broker-")


def test_dump_all_groups_round_trips_and_sends_only_allowlisted_codes(
    demo: Snapshot, tmp_path: Path
) -> None:
    out = tmp_path / "dump.json"
    log = tmp_path / "requests.log"
    with FakeClusterThread(demo, log_path=str(log)) as fake:
        code = run(["dump", "-n", fake.namesrv_addr, "--all-groups", "--out", str(out)])
        in_memory = [r.line() for r in fake.requests]
    assert code == 0
    got = load_snapshot(out)
    assert snapshot_to_json(received_view(got)) == snapshot_to_json(wire_view(demo))
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines == in_memory
    _assert_allowlisted(lines)
    assert {int(line.split()[0]) for line in lines} >= {106, 201, 203, 307, 208, 105}


def test_dump_to_stdout_with_redaction(demo: Snapshot, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeClusterThread(demo) as fake:
        assert run(["dump", "-n", fake.namesrv_addr, "OrderGroup", "--redact"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert list(doc["groups"]) == ["OrderGroup"]
    for consumer in demo.groups["OrderGroup"].consumers:
        assert consumer.client_id not in captured.out
    assert "1 group, 3 consumers" in captured.err


def test_dump_reads_namesrv_addr_from_the_environment(
    demo: Snapshot, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeClusterThread(demo) as fake:
        monkeypatch.setenv("NAMESRV_ADDR", f"{fake.namesrv_addr};")
        assert run(["dump", "InventoryGroup"]) == 0
    assert json.loads(capsys.readouterr().out)["source"]["namesrv"]


def test_dump_without_address_is_bad_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    assert run(["dump"]) == 2
    assert "NAMESRV_ADDR" in capsys.readouterr().err


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_explain_live_reports_like_explain_dump(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "snap.json"
    with FakeClusterThread(load_snapshot(path)) as fake:
        live_code = run(["explain", "-n", fake.namesrv_addr, "-o", "json"])
        live = json.loads(capsys.readouterr().out)
        dump_exit = run(["dump", "-n", fake.namesrv_addr, "--out", str(saved)])
        capsys.readouterr()
    dump_code = run(["explain", "--dump", str(saved), "-o", "json"])
    from_dump = json.loads(capsys.readouterr().out)
    assert dump_exit in (0, 4)  # 4: the snapshot has consumers served as silent clients
    assert live_code == dump_code
    assert live["groups"] == from_dump["groups"]
    assert live["findings"] == from_dump["findings"]


def test_serve_in_the_foreground_logs_requests_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    log = tmp_path / "requests.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rmqlb",
            "serve",
            str(MIXED),
            "--port",
            "0",
            "--dialect",
            "5",
            "--log-requests",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "NameServer 127.0.0.1:" in first, first
        addr = first.split("NameServer ", 1)[1].split()[0]
        out = tmp_path / "dump.json"
        assert run(["dump", "-n", addr, "--all-groups", "--out", str(out), "--timeout", "5"]) == 4
        got = load_snapshot(out)
        assert {e.target for e in got.errors} == {"10.2.0.9@gone"}  # served as a silent client
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, stderr
    assert "stopped" in stdout
    assert "Traceback" not in stderr
    _assert_allowlisted(log.read_text(encoding="utf-8").splitlines())


def test_serve_rejects_a_bad_fault_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["serve", str(DEMO), "--fault", "explode=broker-a"]) == 2
    assert "unknown kind 'explode'" in capsys.readouterr().err


def test_demo_runs_status_then_explains_the_worst_group_over_tcp(
    capsys: pytest.CaptureFixture[str],
) -> None:
    start = time.monotonic()
    code = run(["demo", "--no-color", "-o", "json"])
    captured = capsys.readouterr()
    decoder = json.JSONDecoder()
    overview, end = decoder.raw_decode(captured.out)
    report = json.loads(captured.out[end:])
    assert code == 1  # the demo cluster has errors to find (unconsumed RefundTopic queues)
    assert "fake cluster up" in captured.err and "running 'rmqlb explain" in captured.err
    assert overview["format"] == "rmqlb.status/1"
    assert [g["group"] for g in overview["groups"]] == [
        "OrderGroup",  # errors, most lag
        "ShipmentGroup",  # errors
        "AuditGroup",  # a warning: nobody online
        "NotifyGroup",  # info only: broadcasting
        "InventoryGroup",  # healthy
    ]
    assert [g["group"] for g in report["groups"]] == ["OrderGroup"]
    codes = {f["code"] for f in report["findings"]}
    assert {"IDLE_CONSUMER", "SUBSCRIPTION_INCONSISTENT", "UNCONSUMED_QUEUE"} <= codes
    healthy = overview["groups"][-1]
    assert healthy["worst"] is None and healthy["findings"] == {
        "error": 0,
        "warning": 0,
        "info": 0,
    }
    assert time.monotonic() - start < 30


def test_dump_records_the_inferred_count_and_explain_dump_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Clients report only CONSISTENT_HASH's class over the wire; dump infers the virtual node
    count from what they hold, records it (marked inferred), and keeps it through --redact."""
    example = ROOT / "examples" / "consistent-hash-vnodes.json"
    saved, redacted = tmp_path / "snap.json", tmp_path / "redacted.json"
    with FakeClusterThread(load_snapshot(example)) as fake:
        assert run(["explain", "-n", fake.namesrv_addr, "-o", "json"]) == 0
        live = json.loads(capsys.readouterr().out)
        assert run(["dump", "-n", fake.namesrv_addr, "--out", str(saved)]) == 0
        assert run(["dump", "-n", fake.namesrv_addr, "--redact", "--out", str(redacted)]) == 0
        capsys.readouterr()
    group = json.loads(saved.read_text(encoding="utf-8"))["groups"]["trade-consumer"]
    assert group["strategy"] == {"name": "CONSISTENT_HASH", "virtualNodeCnt": 5, "inferred": True}
    assert all(c["strategy"] == {"name": "CONSISTENT_HASH"} for c in group["consumers"])
    assert live["groups"][0]["inference"]["value"] == 5
    assert run(["explain", "--dump", str(saved), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"] == live["groups"]
    hidden = json.loads(redacted.read_text(encoding="utf-8"))["groups"]["trade-consumer"]
    assert hidden["strategy"]["virtualNodeCnt"] == 5
