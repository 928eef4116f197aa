"""Input discovery and the local engine's plumbing (with a scripted diagnoser)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rmqlb.errors import InputError
from rmqlb.model.snapshot import Snapshot
from rmqlb.pipeline.inputs import Layout, local_files, plan_inputs
from rmqlb.pipeline.local_engine import run_local
from rmqlb.pipeline.output import TABLE_COLUMNS, write_parquet_tables
from rmqlb.pipeline.result import AuditOptions


def test_walk_reads_json_and_jsonl_and_skips_hidden(tmp_path: Path) -> None:
    for name in (
        "a.json",
        "sub/b.jsonl",
        "sub/c.ndjson",
        "_manifest.json",
        ".hidden.json",
        "notes.txt",
        "_tmp/d.json",
        "sub/E.JSON",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    files = local_files(plan_inputs([str(tmp_path)]))
    found = {Path(p).relative_to(tmp_path).as_posix(): layout for p, layout in files}
    assert found == {
        "a.json": Layout.whole,
        "sub/b.jsonl": Layout.lines,
        "sub/c.ndjson": Layout.lines,
    }


def test_explicit_files_are_read_whatever_their_name(tmp_path: Path) -> None:
    (tmp_path / "dump.txt").write_text("{}")
    (tmp_path / "_x.jsonl").write_text("{}")
    plan = plan_inputs([str(tmp_path / "dump.txt"), str(tmp_path / "_x.jsonl")])
    assert [layout for _, layout in local_files(plan)] == [Layout.whole, Layout.lines]


def test_missing_path_and_uris(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        plan_inputs([str(tmp_path / "nope")])
    with pytest.raises(InputError, match="at least one PATH"):
        plan_inputs([])
    with pytest.raises(InputError, match="local engine"):
        local_files(plan_inputs(["s3a://bucket/dumps"]))


def test_local_engine_end_to_end_with_scripted_findings(
    tmp_path: Path,
    snap: Callable[..., dict[str, Any]],
    scripted: Callable[[Snapshot], Any],
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    lines = []
    for step in range(4):
        at = f"2026-11-22T00:{step}0:00Z"
        groups = {
            "STEADY": {"findings": "IDLE_CONSUMER:warning:T_STEADY"},
            "BLIP": {"findings": "DUPLICATE_ASSIGNMENT:error:T_BLIP" if step == 1 else ""},
            "FLAP": {"holders": ["c1", "c2"] if step % 2 else ["c2", "c1"]},
        }
        data = snap(at, groups, namesrv=["ns-a:9876"])
        (corpus / f"a-{step}.json").write_text(json.dumps(data, indent=2))
        lines.append(json.dumps(snap(at, {"OTHER": {}}, namesrv=["ns-b:9876"])))
    (corpus / "b.jsonl").write_text("\n".join(lines) + "\n\n")
    (corpus / "broken.json").write_text("{oops")

    result, tables = run_local(plan_inputs([str(corpus)]), AuditOptions(), diagnoser=scripted)
    assert (result.snapshots, result.groups) == (8, 4)
    got = {(f.cluster, f.group, f.code, f.persistence) for f in result.findings}
    assert got == {
        ("ns-a:9876", "STEADY", "IDLE_CONSUMER", "persistent"),
        ("ns-a:9876", "BLIP", "DUPLICATE_ASSIGNMENT", "transient"),
    }
    assert [(f.group, f.changes) for f in result.flapping] == [("FLAP", 3)]
    assert result.problem_count == 1
    assert result.problems[0].path == str(corpus / "broken.json")

    write_parquet_tables(tmp_path / "out", {"findings": tables.findings, "groups": tables.groups})
    table = pq.read_table(tmp_path / "out" / "findings")
    assert table.column_names == list(TABLE_COLUMNS["findings"])
    assert table.num_rows == 2


def test_cluster_from_path(
    tmp_path: Path, snap: Callable[..., dict[str, Any]], scripted: Callable[[Snapshot], Any]
) -> None:
    for cluster in ("prod-eu", "prod-us"):
        path = tmp_path / cluster / "1.json"
        path.parent.mkdir()
        path.write_text(json.dumps(snap("2026-11-22T00:00:00Z", {"G": {}})))
    result, tables = run_local(
        plan_inputs([str(tmp_path)]),
        AuditOptions(cluster_from=r"/(prod-[a-z]+)/"),
        diagnoser=scripted,
    )
    assert result.snapshots == 2
    assert sorted(g["cluster"] for g in tables.groups) == ["prod-eu", "prod-us"]
