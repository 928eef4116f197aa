"""The whole audit on Spark: same summary as the local engine on a generated fleet, read from
directories, explicit files and JSON Lines, and on a multi-process ``local-cluster``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rmqlb.pipeline import AuditOptions, Engine, run_audit, summary_json
from rmqlb.pipeline.generate import generate_fleet
from rmqlb.pipeline.output import TABLE_COLUMNS

pytestmark = pytest.mark.spark


def _flapping(manifest: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (i["cluster"], i["group"]) for i in manifest["injections"] if i["problem"] == "flapping"
    }


def test_spark_and_local_agree_on_a_generated_fleet(spark: Any, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    manifest = generate_fleet(corpus, 12, seed=5, groups=10)
    extra = generate_fleet(
        tmp_path / "lines", 4, seed=6, groups=5, clusters=1, jsonl=True, first_cluster=5
    )
    (corpus / "broken.json").write_text("{ not json")
    inputs = [str(corpus), str(tmp_path / "lines" / "prod-me.jsonl")]
    options = AuditOptions(persistent_window=3, flap_threshold=2)

    local = run_audit(inputs, engine=Engine.local, options=options, out=tmp_path / "local")
    remote = run_audit(inputs, engine=Engine.spark, options=options, out=tmp_path / "spark")

    assert remote.engine == "spark"
    assert (tmp_path / "spark" / "summary.json").read_text() == (
        tmp_path / "local" / "summary.json"
    ).read_text()
    summary = summary_json(remote)
    assert summary["snapshots"] == manifest["snapshots"] + extra["snapshots"]
    assert {(f["cluster"], f["group"]) for f in summary["flapping"]} == _flapping(
        manifest
    ) | _flapping(extra)
    assert {f["persistence"] for f in summary["findings"]} == {"persistent", "transient"}
    assert (remote.problem_count, local.problem_count) == (1, 1)
    assert remote.problems[0].path == str(corpus / "broken.json")
    for name in TABLE_COLUMNS:
        table = pq.read_table(tmp_path / "spark" / name)
        assert table.column_names == list(TABLE_COLUMNS[name])
        assert table.num_rows == pq.read_table(tmp_path / "local" / name).num_rows


def test_local_cluster_master_runs_the_cli(tmp_path: Path) -> None:
    """Separate executor JVMs and Python workers: ``--master local-cluster[2,1,1024]``."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime")
    corpus = tmp_path / "corpus"
    manifest = generate_fleet(corpus, 8, seed=9, groups=8)
    local = summary_json(run_audit([str(corpus)], engine=Engine.local))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rmqlb",
            "audit",
            str(corpus),
            "--master",
            "local-cluster[2,1,1024]",
            "--out",
            str(tmp_path / "out"),
            "--output",
            "json",
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=280,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == local
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == local
    assert {(f["cluster"], f["group"]) for f in local["flapping"]} == _flapping(manifest)


def test_another_master_while_a_session_runs_is_refused(spark: Any, tmp_path: Path) -> None:
    from rmqlb.errors import InputError

    generate_fleet(tmp_path / "c", 2, seed=1, groups=2)
    with pytest.raises(InputError, match="already running"):
        run_audit([str(tmp_path / "c")], engine=Engine.spark, master="local[1]")


def test_one_big_input_is_spread_over_the_cores(spark: Any, tmp_path: Path) -> None:
    """A single small JSON Lines file is one partition, a single snapshot file one run:
    units are repartitioned (two-stage path) and the result is still the local engine's."""
    manifest = generate_fleet(tmp_path / "one", 6, seed=3, groups=9, clusters=1, jsonl=True)
    path = str(tmp_path / "one" / "prod-eu.jsonl")
    assert spark.read.text(path).rdd.getNumPartitions() < spark.sparkContext.defaultParallelism
    remote = summary_json(run_audit([path], engine=Engine.spark))
    assert remote == summary_json(run_audit([path], engine=Engine.local))
    assert remote["snapshots"] == manifest["snapshots"]
    # one snapshot file: one run, read and split in Python, its units spread the same way
    generate_fleet(tmp_path / "whole", 1, seed=3, groups=9, clusters=1)
    [single] = [str(p) for p in (tmp_path / "whole").rglob("[!_]*.json")]
    remote = summary_json(run_audit([single], engine=Engine.spark))
    assert remote == summary_json(run_audit([single], engine=Engine.local))
    assert remote["groups"] == 9


def test_dedup_changes_nothing_on_spark_and_matches_local(spark: Any, tmp_path: Path) -> None:
    """A slowly changing fleet (5 % of groups move between captures) with one bad group
    repeated in every capture: Spark (whose tasks reuse the verdicts of group states they
    met before) gives the summary and tables of the local engine without dedup, and each
    error names its own occurrence."""
    from rmqlb.pipeline.inputs import plan_inputs
    from rmqlb.pipeline.local_engine import run_local
    from rmqlb.pipeline.spark_engine import run_spark

    root = tmp_path / "f"
    generate_fleet(root, 12, seed=4, groups=15, clusters=2, change_rate=0.05)
    for file in sorted((root / "prod-eu").glob("*.json"))[:3]:
        data = json.loads(file.read_text())
        data["groups"]["BROKEN"] = {"consumers": "nope"}
        file.write_text(json.dumps(data))
    plan = plan_inputs([str(root)])
    options = AuditOptions()
    remote, tables = run_spark(spark, plan, options, None)
    local, local_tables = run_local(plan, options, dedup=False)
    assert summary_json(remote) == summary_json(local)
    for name in ("findings", "groups", "flapping"):
        assert getattr(tables, name) == getattr(local_tables, name)
    assert sorted(p.message for p in remote.problems) == sorted(p.message for p in local.problems)
    assert len({p.message for p in remote.problems}) == 3  # one per occurrence, own path
    assert summary_json(remote)["findings"]


def test_progress_hears_the_phases_and_tasks_of_the_spark_job(spark: Any, tmp_path: Path) -> None:
    """The Spark engine reports its running tasks a few times a second and says when the
    aggregation starts; the progress line changes nothing in the result."""
    from rmqlb.pipeline.inputs import plan_inputs
    from rmqlb.pipeline.progress import AuditProgress
    from rmqlb.pipeline.spark_engine import run_spark

    generate_fleet(tmp_path / "f", 6, seed=5, groups=6)
    plan = plan_inputs([str(tmp_path / "f")])
    reports: list[AuditProgress] = []
    heard, _ = run_spark(spark, plan, AuditOptions(), None, progress=reports.append)
    silent, _ = run_spark(spark, plan, AuditOptions(), None)
    assert summary_json(heard) == summary_json(silent)
    phases = [r.phase for r in reports]
    start = phases.index("aggregate (Spark)")
    assert set(phases[:start]) <= {"read + diagnose (Spark)"}
    assert set(phases[start:]) == {"aggregate (Spark)"}
    assert all(r.tasks_total is None or 0 <= r.tasks_done <= r.tasks_total for r in reports)
    assert [r.elapsed for r in reports] == sorted(r.elapsed for r in reports)
