"""A served snapshot's ages are the file's: timestamps move with the time since capture."""

from __future__ import annotations

from pathlib import Path

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
