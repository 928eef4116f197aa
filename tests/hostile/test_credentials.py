"""Credentials every broker refuses: one line naming why (from the broker's answer), exit 3,
no report built from the NameServer alone; the secret never appears anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner import ROOT, rmqlb_child

from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(180)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
SECRET = "monitor-secret-7f3a"
ACL = {"rmqmonitor": SECRET}


@pytest.mark.parametrize(
    ("keys", "why"),
    [
        ({"ROCKETMQ_ACCESS_KEY": "rmqmonitor", "ROCKETMQ_SECRET_KEY": "wrong"}, "wrong secret"),
        ({"ROCKETMQ_ACCESS_KEY": "nobody", "ROCKETMQ_SECRET_KEY": "x"}, "unknown access key"),
        ({}, "no access key given"),
    ],
)
@pytest.mark.parametrize("command", [["explain", "OrderGroup"], ["status"], ["dump"]])
def test_refused_credentials_are_one_line_and_exit_3(
    command: list[str], keys: dict[str, str], why: str
) -> None:
    with FakeClusterThread(load_snapshot(DEMO), acl=ACL) as fake:
        env = {"ROCKETMQ_ACCESS_KEY": "", "ROCKETMQ_SECRET_KEY": "", **keys}
        outcome = rmqlb_child([*command, "-n", fake.namesrv_addr, "--timeout", "5"], env=env)
    assert outcome.code == 3, outcome
    assert outcome.out == ""
    assert len(outcome.err_lines) == 1, outcome.err
    assert "every broker refused the credentials" in outcome.err and why in outcome.err


def test_the_secret_never_appears_in_output_snapshot_or_log(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    log = tmp_path / "requests.log"
    env = {"ROCKETMQ_ACCESS_KEY": "rmqmonitor", "ROCKETMQ_SECRET_KEY": SECRET}
    with FakeClusterThread(load_snapshot(DEMO), acl=ACL, log_path=str(log)) as fake:
        outputs = [
            rmqlb_child(["dump", "-n", fake.namesrv_addr, "--out", str(snap)], env=env),
            rmqlb_child(["status", "-n", fake.namesrv_addr, "-o", "json"], env=env),
            rmqlb_child(["explain", "OrderGroup", "-n", fake.namesrv_addr], env=env),
        ]
    assert all(o.code in (0, 1) for o in outputs), outputs
    for outcome in outputs:
        assert SECRET not in outcome.out + outcome.err
    assert SECRET not in snap.read_text()
    assert SECRET not in log.read_text()
