"""The exporter compares each capture with one a minute older (QUEUE_STALLED)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from stalled_polls import poll_doc

from rmqlb.cli import live
from rmqlb.cli.exporter import capture_live
from rmqlb.cli.live import LiveOptions
from rmqlb.diagnose.context import PollHistory
from rmqlb.model import Snapshot
from rmqlb.snapshot import parse_snapshot


def test_a_capture_a_minute_after_another_names_the_queue_that_stood_still(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    captures: Iterator[Snapshot] = iter(
        parse_snapshot(poll_doc(s, c))
        for s, c in ((0, [10] * 4), (30, [30, 30, 10, 30]), (61, [50, 50, 10, 50]))
    )
    monkeypatch.setattr(live, "snapshot_from_cluster", lambda _: next(captures))
    history = PollHistory()
    options = LiveOptions(namesrv="10.0.0.9:9876")

    def stalled() -> list[str]:
        report = capture_live(options, [], None, history).report
        assert report is not None
        return [f.code.value for f in report.report.findings if f.code.value == "QUEUE_STALLED"]

    assert stalled() == [] and stalled() == []  # the first two: no capture a minute older
    assert stalled() == ["QUEUE_STALLED"]
