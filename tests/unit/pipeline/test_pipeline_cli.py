"""``rmqlb audit`` in-process with the local engine: outputs, exit codes, errors, report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rmqlb.cli import run
from rmqlb.pipeline.generate import generate_fleet


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    generate_fleet(tmp_path / "corpus", 12, seed=1)
    return tmp_path / "corpus"


def test_audit_writes_summary_tables_and_report(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, html = tmp_path / "out", tmp_path / "report.html"
    code = run(
        [
            "audit",
            str(corpus),
            "--engine",
            "local",
            "--out",
            str(out),
            "--report",
            str(html),
            "--output",
            "plain",
        ]
    )
    stdout = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["format"] == "rmqlb.audit/1"
    persistent_errors = [
        f
        for f in summary["findings"]
        if f["persistence"] == "persistent" and f["severity"] == "error"
    ]
    assert code == (1 if persistent_errors else 0)
    assert f"Audited {summary['snapshots']} snapshots" in stdout
    assert "Findings by code" in stdout and "Flapping groups" in stdout
    for f in summary["findings"][:3]:
        assert f["group"] in stdout
    for name in ("findings", "groups", "flapping", "occurrences"):
        assert pq.read_table(out / name).num_rows > 0
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "plotly" in page and '<script src="http' not in page  # plotly.js inline
    assert summary["findings"][0]["group"] in page


def test_json_output_and_fail_on(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(["audit", str(corpus), "--engine", "local", "--output", "json", "--fail-on", "never"])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"format", "snapshots", "groups", "findings", "flapping"}
    assert run(["audit", str(corpus), "--engine", "local", "--output", "json"]) == 1


def test_healthy_fleet_exits_0_and_skipped_input_exits_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generate_fleet(tmp_path / "ok", 4, seed=2, problems=())
    assert run(["audit", str(tmp_path / "ok"), "--engine", "local"]) == 0
    assert "No problems found." in capsys.readouterr().out
    (tmp_path / "ok" / "junk.json").write_text("[]")
    assert run(["audit", str(tmp_path / "ok"), "--engine", "local"]) == 4
    err = capsys.readouterr().err
    assert "junk.json" in err and "not a JSON object" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit", "/definitely/not/here", "--engine", "local"], "no such file"),
        (["audit", "--generate", "3"], "needs --out"),
        (["audit", ".", "--engine", "local", "--cluster-from", "no-group"], "exactly one group"),
        (["audit", ".", "--engine", "local", "--cluster-from", "(("], "--cluster-from"),
        (["audit", ".", "--engine", "local", "--persistent-window", "0"], "at least 1"),
        (["audit", ".", "--engine", "warp"], "warp"),
    ],
)
def test_bad_usage_is_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_empty_directory_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", str(tmp_path), "--engine", "local"]) == 2
    assert "no usable snapshot" in capsys.readouterr().err


def test_generate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(
            [
                "audit",
                "--generate",
                "6",
                "--out",
                str(tmp_path / "g"),
                "--seed",
                "3",
                "--groups",
                "5",
                "--clusters",
                "2",
            ]
        )
        == 0
    )
    assert "wrote 6 snapshots (2 clusters, 5 groups each)" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "g" / "_manifest.json").read_text())
    assert [c["steps"] for c in manifest["clusters"]] == [3, 3]
    assert run(["audit", str(tmp_path), "--generate", "2", "--out", str(tmp_path / "h")]) == 2


def test_spark_engine_without_pyspark_says_how_to_install(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark -> ImportError
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    assert run(["audit", str(corpus), "--engine", "spark"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "rmqlb: error: pyspark is not installed: pip install 'rmqlb[spark]' (or use --engine local)"
    )


def test_auto_engine_audits_a_small_fleet_in_process_and_says_so(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # auto must not need it here
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    assert run(["audit", str(corpus), "--output", "json", "--fail-on", "never"]) == 0
    captured = capsys.readouterr()
    [line] = [x for x in captured.err.splitlines() if "engine" in x]
    assert line.startswith("rmqlb: engine local: ") and "MB of snapshots" in line
    assert json.loads(captured.out)["snapshots"] > 0
    assert run(["audit", str(corpus), "--master", "local[1]"]) == 2  # --master: Spark
    assert "rmqlb: engine spark: --master local[1] given" in capsys.readouterr().err


def test_help_does_not_import_heavy_modules() -> None:
    import subprocess

    code = (
        "import sys\n"
        "from rmqlb.cli import run\n"
        "run(['audit', '--help'])\n"
        "heavy = [m for m in ('pyspark', 'pyarrow', 'plotly', 'pandas') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_out_inside_the_audited_directory_is_not_read_back(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "audit",
        str(corpus),
        "--engine",
        "local",
        "--out",
        str(corpus / "audit"),
        "--fail-on",
        "never",
    ]
    assert run(argv) == 0
    first = (corpus / "audit" / "summary.json").read_text()
    assert run(argv) == 0  # not 4: summary.json is not mistaken for a broken snapshot
    assert (corpus / "audit" / "summary.json").read_text() == first
    assert "skipped" not in capsys.readouterr().err


def test_top_offenders_are_groups_with_their_codes(corpus: Path) -> None:
    from rmqlb.pipeline import Engine, run_audit
    from rmqlb.pipeline.result import top_offenders

    result = run_audit([str(corpus)], engine=Engine.local)
    offenders = top_offenders(result, 3)
    assert len(offenders) == 3
    assert len({(o.cluster, o.group) for o in offenders}) == 3
    first = result.findings[0]
    assert (offenders[0].cluster, offenders[0].group) == (first.cluster, first.group)
    for o in offenders:
        codes = {
            (f.code, f.persistence)
            for f in result.findings
            if (f.cluster, f.group) == (o.cluster, o.group)
        }
        assert {(c, "persistent") for c in o.persistent} | {
            (c, "transient") for c in o.transient
        } == codes
