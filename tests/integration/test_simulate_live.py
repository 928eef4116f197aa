"""``rmqlb simulate -n ADDR --group G`` over real TCP: the live collector captures the running
group, and the what-if starts from exactly what a dump of it gives, and from what its clients
hold."""

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

SNAPSHOT = ROOT / "examples" / "16-queues-2-consumers.json"


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = run(["simulate", *args, "-o", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 4), err
    return code, [json.loads(line) for line in out.splitlines()]


def test_live_what_if_starts_from_the_running_group(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    served = load_snapshot(SNAPSHOT)
    dump = tmp_path / "dump.json"
    with FakeClusterThread(served) as fake:
        code, live = simulate(
            capsys, "-n", fake.namesrv_addr, "-g", "order-consumer", "--add", "1", "--queues", "12"
        )
        assert code == 0
        assert run(["dump", "-n", fake.namesrv_addr, "order-consumer", "--out", str(dump)]) == 0
        capsys.readouterr()
    _, from_dump = simulate(
        capsys, "--dump", str(dump), "-g", "order-consumer", "--add", "1", "--queues", "12"
    )
    (doc,) = live
    assert doc["source"] == "live"
    assert doc["steps"] == from_dump[0]["steps"]
    # the start is what the served clients hold
    held = {
        c.client_id: sorted(
            (q.broker_name, q.queue_id) for q in c.assigned or () if q.topic == doc["topic"]
        )
        for c in served.groups["order-consumer"].consumers
    }
    start = {
        cid: sorted((q["brokerName"], q["queueId"]) for q in qs)
        for cid, qs in doc["assignments"].items()
    }
    assert start == held
    assert [s["step"] for s in doc["steps"]] == ["start", "consumers", "queues"]


def test_live_needs_a_group_it_can_find(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    with FakeClusterThread(load_snapshot(SNAPSHOT)) as fake:
        code = run(["simulate", "-n", fake.namesrv_addr, "-g", "order-consumr", "-o", "plain"])
    err = capsys.readouterr().err
    assert code == 2
    assert "did you mean 'order-consumer'?" in err
