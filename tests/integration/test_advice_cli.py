"""The commands agree: one way to report capture failures (stderr, one line per broker and
reason; all of them in JSON), one way to reject an unknown topic (exit 2, did you mean),
ids shown wherever a finding refers to one, and check lists a symptom under its cause."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from livehelpers import ROOT

from rmqlb.cli import run
from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(120)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
SPLIT = """\
version: 1
topics:
  RefundTopic:
    queues: 16
  PaymentTopic:
    queues: 16
groups:
  OrderGroup:
    members:
      refund-app:
        replicas: 4
        subscriptions:
          RefundTopic: "*"
      payment-app:
        replicas: 16
        subscriptions:
          PaymentTopic: "*"
"""


def test_broker_down_failures_go_to_stderr_once_per_broker_and_advice_stays_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "snap.json"
    with FakeClusterThread(load_snapshot(DEMO), faults=["broker-down=broker-b"]) as fake:
        assert run(["dump", "-n", fake.namesrv_addr, "--timeout", "2", "--out", str(saved)]) == 4
    capsys.readouterr()
    code = run(["status", "--dump", str(saved), "-o", "plain", "--fail-on", "never"])
    out, err = capsys.readouterr()
    assert code == 4
    assert "connection refused" not in out  # no panel of failed requests on stdout
    failures = [line for line in err.splitlines() if "connection refused" in line]
    assert len(failures) == 1 and "broker-b" in failures[0]
    row = next(line for line in out.splitlines() if line.startswith("AuditGroup"))
    assert " ? " in row  # lag and stranded unknown, not 0
    assert run(["status", "--dump", str(saved), "-o", "json"]) in (1, 4)
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["errors"]) > 1  # the full list, in JSON
    code = run(["explain", "--dump", str(saved), "AuditGroup", "-o", "plain"])
    out, err = capsys.readouterr()
    assert code == 4
    assert "deleteSubGroup" not in out and "no committed offsets" not in out
    assert len([line for line in err.splitlines() if "connection refused" in line]) == 1


@pytest.mark.parametrize("command", ["status", "explain", "dump", "simulate"])
def test_a_topic_that_exists_nowhere_is_exit_2_with_did_you_mean(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command]
    if command == "dump":
        with FakeClusterThread(load_snapshot(DEMO)) as fake:
            code = run(["dump", "-n", fake.namesrv_addr, "-t", "RefundTopc", "--out", "-"])
    else:
        if command == "simulate":
            argv += ["-g", "OrderGroup"]
        code = run([*argv, "--dump", str(DEMO), "-t", "RefundTopc"])
    err = capsys.readouterr().err
    assert code == 2
    assert "did you mean 'RefundTopic'" in err


def test_status_and_explain_show_the_same_ids(capsys: pytest.CaptureFixture[str]) -> None:
    run(["status", "--dump", str(DEMO), "-o", "json"])
    status_doc = json.loads(capsys.readouterr().out)
    run(["explain", "--dump", str(DEMO), "-o", "json"])
    explain_doc = json.loads(capsys.readouterr().out)
    by_id = {f["id"]: f for f in explain_doc["findings"]}
    for line in status_doc["groups"]:
        if line["worst"] is not None:
            assert by_id[line["worst"]["id"]] == line["worst"]
    run(["explain", "--dump", str(DEMO), "ShipmentGroup", "-o", "plain"])
    text = capsys.readouterr().out
    for ref in re.findall(r"caused by [A-Z_]+ \(([^)]+)\)", text):
        assert f"({ref})" in text or f"({ref}," in text


def test_check_lists_idle_consumers_under_the_split_that_causes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "split.yaml"
    config.write_text(SPLIT)
    run(["check", str(config), "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    findings = doc["findings"]
    idle = [f for f in findings if f["code"] == "IDLE_CONSUMER"]
    assert idle and all(f["causedBy"] for f in idle)
    causes = {f["id"]: f for f in findings}
    assert all(causes[f["causedBy"]]["code"] == "SUBSCRIPTION_INCONSISTENT" for f in idle)
    # no proposal of its own: raising the queues would hand the new ones to non-subscribers
    assert all(f["proposals"] == [] and "raise" not in f["hint"] for f in idle)
    for f in findings:
        assert "set replicas of payment-app to 1" not in f["hint"]
    run(["check", str(config), "-o", "plain"])
    text = capsys.readouterr().out
    for ref in re.findall(r"caused by [A-Z_]+ \(([^)]+)\)", text):
        assert f"({ref})" in text  # the cause's id is printed on its own line
