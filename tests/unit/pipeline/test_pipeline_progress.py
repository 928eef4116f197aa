"""The audit's progress reports (in-process engine) and the line that shows them."""

from __future__ import annotations

import io
from itertools import pairwise
from pathlib import Path

import pytest

from rmqlb.cli import run
from rmqlb.pipeline import AuditOptions
from rmqlb.pipeline.generate import generate_fleet
from rmqlb.pipeline.inputs import plan_inputs
from rmqlb.pipeline.local_engine import run_local
from rmqlb.pipeline.progress import AuditProgress
from rmqlb.render.progress import ProgressLine, progress_text


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    generate_fleet(tmp_path / "fleet", 6, seed=3, groups=5)
    (tmp_path / "fleet" / "broken.json").write_text("{not json", encoding="utf-8")
    return tmp_path / "fleet"


def test_local_engine_reports_every_file_and_snapshot(fleet: Path) -> None:
    reports: list[AuditProgress] = []
    result, _ = run_local(plan_inputs([str(fleet)]), AuditOptions(), progress=reports.append)

    reading = [r for r in reports if r.phase == "reading"]
    assert [r.files_read for r in reading] == list(range(1, 8))  # 6 snapshots + broken.json
    assert {r.files_total for r in reports} == {7}
    assert reading[-1].snapshots == result.snapshots == 6
    assert reading[-1].group_snapshots == 6 * 5
    assert all(a.bytes_read <= b.bytes_read for a, b in pairwise(reports))
    final = reports[-1]
    assert final.phase == "aggregating"
    assert final.fraction == 1.0
    read = [p for p in fleet.rglob("*.json") if not p.name.startswith("_")]
    assert final.bytes_total == sum(p.stat().st_size for p in read)


def test_line_redraws_in_place_throttled_and_is_erased() -> None:
    stream = io.StringIO()
    line = ProgressLine(stream, interval=3600)
    first = AuditProgress("reading", 1.0, files_read=1, files_total=2, bytes_read=1, bytes_total=2)
    line(first)
    line(AuditProgress("reading", 2.0, files_read=2, files_total=2, bytes_read=2, bytes_total=2))
    line.close()
    assert stream.getvalue() == "\r\x1b[2K" + progress_text(first) + "\r\x1b[2K"


def test_no_eta_until_enough_is_done() -> None:
    early = AuditProgress("reading", 1.0, bytes_read=1, bytes_total=1000)
    assert early.eta is None
    assert "ETA" not in progress_text(early)
    assert AuditProgress("reading", 1.0, bytes_read=500, bytes_total=1000).eta == 1.0


def test_cli_shows_progress_only_when_asked_or_on_a_terminal(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["audit", str(fleet), "--engine", "local", "--output", "json", "--fail-on", "never"]
    run(base)  # stderr is not a terminal here: no progress line
    assert "audit: reading" not in capsys.readouterr().err
    run([*base, "--progress"])
    err = capsys.readouterr().err
    assert "\r\x1b[2Kaudit: reading 1/7 files" in err
    assert "\r\x1b[2Krmqlb: skipped" in err  # the line is erased before anything else
    run([*base, "--no-progress"])
    assert "audit:" not in capsys.readouterr().err
