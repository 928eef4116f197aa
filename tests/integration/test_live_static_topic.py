"""A 5.x static topic over the wire: the fake answers like the recorded 5.1.4 brokers (the
route with its mappings, consume stats of the physical queues), and the capture gives the
logical queues' offsets back, as ``mqadmin consumerProgress`` lists them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rmqlb.client.collector import CollectOptions, collect
from rmqlb.diagnose import diagnose
from rmqlb.fake import FakeCluster
from rmqlb.model import Snapshot
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(60)

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "static-topic-5.1.4" / "snapshot.json"


async def _capture(snapshot: Snapshot) -> Snapshot:
    async with FakeCluster(snapshot, dialect=5) as cluster:
        return await collect(CollectOptions(namesrv=(cluster.namesrv_addr,), groups=("G",)))


def test_a_static_topic_is_captured_with_its_mappings_and_logical_offsets() -> None:
    original = load_snapshot(SNAPSHOT)
    got = asyncio.run(_capture(original))

    assert got.topics["ST"].queue_mappings == original.topics["ST"].queue_mappings
    want = {o.queue: (o.broker_offset, o.consumer_offset) for o in original.groups["G"].offsets}
    have = {o.queue: (o.broker_offset, o.consumer_offset) for o in got.groups["G"].offsets}
    assert {q: v for q, v in have.items() if q.topic == "ST"} == want
    assert [c.assigned for c in got.groups["G"].consumers] == [
        c.assigned for c in original.groups["G"].consumers
    ]
    live, dumped = diagnose(got), diagnose(original)
    assert live.findings == dumped.findings == ()
    rows = [
        [(r.queue, r.expected, r.actual, r.status, r.lag) for r in t.queues]
        for report in (live, dumped)
        for t in report.groups[0].topics
        if t.topic == "ST"
    ]
    assert rows[0] == rows[1]
    assert [r[-1] for r in rows[0]] == [0, 0, 0, 0, 7, 0]
