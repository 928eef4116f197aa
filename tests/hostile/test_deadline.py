"""One deadline per run: a black-hole broker (accepts, reads, never answers) is waited on
once, not once per stage; later requests to it fail at once."""

from __future__ import annotations

import pytest
from runner import ROOT, rmqlb_child

from rmqlb.fake import FakeClusterThread
from rmqlb.model import Snapshot
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(180)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
TIMEOUT = 4.0

COMMANDS = {
    "explain": ["explain", "OrderGroup", "--fail-on", "never"],
    "explain --all-groups": ["explain", "--all-groups", "--fail-on", "never"],
    "status": ["status", "--fail-on", "never"],
    "dump": ["dump"],
}


@pytest.fixture(scope="module")
def demo() -> Snapshot:
    return load_snapshot(DEMO)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_black_hole_broker_costs_one_timeout(command: str, demo: Snapshot) -> None:
    with FakeClusterThread(demo) as healthy:
        args = [*COMMANDS[command], "-n", healthy.namesrv_addr, "--timeout", str(TIMEOUT)]
        start_up = rmqlb_child(args).seconds  # the whole run against a healthy cluster
    with FakeClusterThread(demo, faults=["blackhole=broker-a"]) as fake:
        args = [*COMMANDS[command], "-n", fake.namesrv_addr, "--timeout", str(TIMEOUT)]
        outcome = rmqlb_child(args, timeout=120)
    assert outcome.code in (3, 4), outcome
    assert "Traceback" not in outcome.err
    assert outcome.seconds < 1.5 * TIMEOUT + start_up, (outcome.seconds, start_up, outcome.err)
    assert "timed out" in outcome.err + outcome.out, outcome.err
