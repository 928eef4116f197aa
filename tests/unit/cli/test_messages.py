"""Lines on stderr: the failed requests of a capture, listed once each and bounded."""

from __future__ import annotations

import pytest

from rmqlb.cli.messages import FAILURE_LINES, report_failures
from rmqlb.model.snapshot import CaptureError


def _silent(n: int) -> list[CaptureError]:
    return [
        CaptureError(f"10.0.0.{i}@1#1", "GET_CONSUMER_RUNNING_INFO", "not sent (deadline)")
        for i in range(n)
    ]


def test_every_distinct_failure_is_listed_up_to_the_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report_failures(_silent(FAILURE_LINES))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"rmqlb: partial data: {FAILURE_LINES} requests failed while capturing:"
    assert len(lines) == 1 + FAILURE_LINES
    assert "more distinct" not in lines[-1]


def test_thousands_of_silent_clients_are_a_screenful_not_thousands_of_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report_failures([*_silent(2500), *_silent(2500)])
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "rmqlb: partial data: 5,000 requests failed while capturing:"
    assert lines[1] == "  10.0.0.0@1#1: not sent (deadline) (GET_CONSUMER_RUNNING_INFO x2)"
    assert len(lines) == 2 + FAILURE_LINES
    assert lines[-1] == (
        f"  ... and {2500 - FAILURE_LINES:,} more distinct failures "
        "(JSON output and dumped snapshots list them all)"
    )
