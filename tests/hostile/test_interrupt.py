"""Ctrl-C and SIGTERM during a live capture of a big cluster: one line, ``rmqlb:
interrupted``, exit 130 / 143, within a short bound, no traceback and no "exception was
never retrieved" flood."""

from __future__ import annotations

import signal
import time

import pytest
from runner import rmqlb_child

from rmqlb.fake import FakeClusterThread
from rmqlb.model import Snapshot
from rmqlb.snapshot import parse_snapshot

pytestmark = pytest.mark.timeout(180)

GROUPS = 2000


@pytest.fixture(scope="module")
def big_cluster() -> Snapshot:
    """2,000 groups, each with one consumer on its own 4-queue topic."""
    return parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {f"Topic{i}": {"queues": 4} for i in range(GROUPS)},
            "groups": {
                f"Group{i}": {
                    "consumers": [
                        {
                            "clientId": f"10.1.{i // 250}.{i % 250}@1#{i}",
                            "subscriptions": [f"Topic{i}"],
                        }
                    ]
                }
                for i in range(GROUPS)
            },
        }
    )


COMMANDS = {
    "dump": ["dump"],
    "status": ["status"],
    "explain": ["explain", "--all-groups"],
}


@pytest.mark.parametrize(
    ("command", "signum"),
    [
        ("dump", signal.SIGINT),
        ("status", signal.SIGINT),
        ("explain", signal.SIGINT),
        ("dump", signal.SIGTERM),
    ],
)
def test_an_interrupted_capture_ends_with_one_line(
    command: str, signum: int, big_cluster: Snapshot
) -> None:
    with FakeClusterThread(big_cluster, latency_ms=30) as fake:
        args = [*COMMANDS[command], "-n", fake.namesrv_addr, "--timeout", "30"]
        # the signal comes once the capture is under way (after start-up on a busy machine)
        start = time.monotonic()
        started = rmqlb_child(["--version"]).seconds
        outcome = rmqlb_child(args, signal_after=(started * 3 + 1.0, signum), timeout=120)
    assert outcome.err == "rmqlb: interrupted\n", outcome.err[:3000]
    assert outcome.code == 128 + signum, outcome
    assert outcome.out == ""
    # connections closed and the process gone within a short bound of the signal
    assert outcome.seconds - (started * 3 + 1.0) < 5.0 + started, (outcome.seconds, started)
    assert time.monotonic() - start < 120
