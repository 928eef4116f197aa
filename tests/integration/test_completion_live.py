"""Shell completion of group and topic names from a (fake) cluster: through the completion
environment variables, as a shell asks; silent when no cluster answers in time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(60)

DEMO = Path(__file__).resolve().parents[2] / "rmqlb" / "data" / "demo-snapshot.json"
GROUPS = ["AuditGroup", "InventoryGroup", "NotifyGroup", "OrderGroup", "ShipmentGroup"]


def complete(words: str, namesrv: str | None = None) -> tuple[list[str], str]:
    """What bash completion offers for the last word of ``words``, and stderr."""
    env = {k: v for k, v in os.environ.items() if k != "NAMESRV_ADDR"}
    env |= {"_RMQLB_COMPLETE": "complete_bash", "COMP_WORDS": words}
    env["COMP_CWORD"] = str(len(words.split(" ")) - 1)
    if namesrv is not None:
        env["NAMESRV_ADDR"] = namesrv
    done = subprocess.run(
        [sys.executable, "-m", "rmqlb"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    return done.stdout.split(), done.stderr


def test_group_and_topic_names_complete_from_the_cluster() -> None:
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        addr = fake.namesrv_addr
        assert complete(f"rmqlb status -n {addr} ") == (GROUPS, "")
        assert complete(f"rmqlb explain -n {addr} -g O") == (["OrderGroup"], "")
        assert complete("rmqlb offsets S", namesrv=addr) == (["ShipmentGroup"], "")
        assert complete(f"rmqlb dump --namesrv {addr} I") == (["InventoryGroup"], "")
        topics, err = complete(f"rmqlb status -n {addr} -t ")
        # no cluster or broker name, no system topic
        assert err == "" and "PaymentTopic" in topics and "AuditTopic" in topics
        assert not {"DefaultCluster", "broker-a", "broker-b", "TBW102"} & set(topics)
        assert complete(f"rmqlb offsets OrderGroup -n {addr} -t Ref") == (["RefundTopic"], "")


def test_no_address_or_no_answer_completes_nothing_silently() -> None:
    assert complete("rmqlb status ") == ([], "")
    with FakeClusterThread(load_snapshot(DEMO), latency_ms=5000) as slow:
        assert complete(f"rmqlb status -n {slow.namesrv_addr} ") == ([], "")
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        addr = fake.namesrv_addr
    assert complete(f"rmqlb explain -n {addr} -t ") == ([], "")  # stopped: refused
