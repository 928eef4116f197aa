"""A served snapshot's ages are the file's: timestamps move with the time since capture."""

from __future__ import annotations

from pathlib import Path

import pytest

from rmqlb.diagnose import diagnose
from rmqlb.fake.clock import capture_delta_ms, shifted
from rmqlb.model import Snapshot
from rmqlb.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[3]
STUCK = ROOT / "examples" / "slow-and-stuck-consumers.json"


def _codes(snapshot: Snapshot) -> list[tuple[str, str, tuple[str, ...]]]:
    return sorted((f.code.value, f.topic or "", f.consumers) for f in diagnose(snapshot).findings)


def test_delta_is_the_time_since_capture() -> None:
    snap = Snapshot(topics={}, groups={}, captured_at="2026-11-22T12:00:00Z")
    assert capture_delta_ms(snap, now_ms=1_795_348_800_000 + 90_000) == 90_000
    assert capture_delta_ms(Snapshot(topics={}, groups={})) == 0


def test_shifted_snapshot_as_of_now_diagnoses_like_the_file() -> None:
    snap = load_snapshot(STUCK)
    delta = 3_600_000  # served an hour after the capture
    later = Snapshot(
        topics=snap.topics,
        groups=snap.groups,
        brokers=snap.brokers,
        captured_at=_plus_an_hour(snap.captured_at),
        source=snap.source,
    )
    # unshifted, an hour older: the same, since every client that holds queues reports a
    # consume rate and its stall is judged on its own clock
    assert _codes(later) == _codes(snap)
    assert _codes(shifted(later, delta)) == _codes(snap)


def _plus_an_hour(stamp: str | None) -> str:
    from datetime import datetime, timedelta

    assert stamp is not None
    moved = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(hours=1)
    return moved.isoformat().replace("+00:00", "Z")


def test_a_fake_served_for_an_hour_answers_with_the_ages_of_each_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``as_of_now``: every request sees the snapshot moved to its own second, so an hour
    of serving changes no age (a one-time shift at start would age every client by it)."""
    from rmqlb.fake import FakeCluster, clock

    snap = load_snapshot(STUCK)
    captured = 1_795_348_800_000  # its capturedAt, 2026-11-22T12:00:00Z
    now = [captured + 5_000.4]
    monkeypatch.setattr(clock.time, "time", lambda: now[0] / 1000)
    fake = FakeCluster(snap, as_of_now=True)
    first = fake.snapshot
    assert _codes(shifted(first, -5_000)) == _codes(snap)
    now[0] += 3_600_000  # an hour later
    later = fake.snapshot
    assert later is not first
    assert _codes(shifted(later, -3_605_000)) == _codes(snap)
    assert FakeCluster(snap).snapshot is snap  # without as_of_now: as captured
