"""snapshot -> fake cluster -> collector over real TCP gives the snapshot back.

Every example snapshot, the test snapshots and the demo's, in both wire dialects (4.9.x and
5.x bodies). What may legitimately differ on the way is spelled out in ``livehelpers``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from livehelpers import broker_shape, received_view, snapshot_files, wire_view

from rmqlb.client.collector import CollectOptions, collect
from rmqlb.fake import FakeCluster, broker_names
from rmqlb.model import Snapshot
from rmqlb.snapshot import load_snapshot, snapshot_to_json

pytestmark = pytest.mark.timeout(60)

FILES = snapshot_files()


async def _capture(snapshot: Snapshot, dialect: int, **fake: object) -> tuple[Snapshot, str]:
    async with FakeCluster(snapshot, dialect=dialect, **fake) as cluster:  # type: ignore[arg-type]
        got = await collect(
            CollectOptions(namesrv=(cluster.namesrv_addr,), groups=tuple(snapshot.groups))
        )
        return got, cluster.namesrv_addr


@pytest.mark.parametrize("dialect", [4, 5])
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_served_snapshot_comes_back(path: Path, dialect: int) -> None:
    original = load_snapshot(path)
    got, namesrv = asyncio.run(_capture(original, dialect))

    assert snapshot_to_json(received_view(got)) == snapshot_to_json(wire_view(original, dialect))
    assert got.source is not None and got.source.namesrv == (namesrv,)
    assert got.captured_at is not None and got.captured_at.endswith("Z")
    # Brokers keep their names, clusters and ids; only addresses become the fake's.
    expected_brokers = broker_shape(original, broker_names(original))
    assert broker_shape(got, []) == expected_brokers
    # Only consumers whose actual assignment is unknown may fail (they are served silent).
    silent = {
        c.client_id for g in original.groups.values() for c in g.consumers if c.assigned is None
    }
    assert {e.target for e in got.errors} == silent
    assert all(e.request == "GET_CONSUMER_RUNNING_INFO" for e in got.errors)


def test_binary_headers_and_plain_route_encoding_are_read_too() -> None:
    original = load_snapshot(FILES[-1])
    got, _ = asyncio.run(_capture(original, 4, binary_headers=True))
    assert snapshot_to_json(received_view(got)) == snapshot_to_json(wire_view(original, 4))


def test_all_groups_skips_system_groups_and_finds_offline_ones() -> None:
    original = load_snapshot(FILES[-1])

    async def run() -> Snapshot:
        async with FakeCluster(original) as cluster:
            return await collect(CollectOptions(namesrv=(cluster.namesrv_addr,)))

    got = asyncio.run(run())
    assert set(got.groups) == set(original.groups)  # TOOLS_CONSUMER etc. are served but skipped
