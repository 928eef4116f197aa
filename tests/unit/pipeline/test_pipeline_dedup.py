"""Dedup: each distinct group state is diagnosed once and its verdict placed at every
occurrence. Nothing the audit outputs may change: rows, summary.json, Parquet, HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rmqlb.pipeline import AuditOptions
from rmqlb.pipeline.generate import generate_fleet
from rmqlb.pipeline.inputs import plan_inputs
from rmqlb.pipeline.local_engine import run_local
from rmqlb.pipeline.output import write_parquet_tables, write_summary
from rmqlb.pipeline.units import (
    KIND_ERROR,
    Verdict,
    audit_record,
    diagnose_units,
    split_record,
    sub_snapshot,
    unit_key,
)
from rmqlb.render.html import render_html_report


def _per_group(text: str, path: str) -> list[Any]:
    return list(diagnose_units(split_record(text, path, encode=False)))


def _by_key(rows: list[Any]) -> dict[tuple[Any, Any], list[Any]]:
    """Rows by their (cluster, group), each key's in order: what packing keeps."""
    out: dict[tuple[Any, Any], list[Any]] = {}
    for row in rows:
        out.setdefault((row[1], row[4]), []).append(tuple(row))
    return out


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("[!_]*.json"))


@pytest.fixture
def diagnose_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many groups each whole-snapshot diagnosis was asked for, in call order."""
    from rmqlb.pipeline import units

    calls: list[int] = []
    real = units._diagnose_whole

    def counted(data: dict[str, Any], names: Any) -> Any:
        names = list(names)
        calls.append(len(names))
        return real(data, names)

    monkeypatch.setattr(units, "_diagnose_whole", counted)
    return calls


def test_most_groups_repeat_in_a_slowly_changing_fleet(tmp_path: Path) -> None:
    generate_fleet(tmp_path / "f", 12, seed=5, groups=30, clusters=2, change_rate=0.05)
    keys: list[str] = []
    for file in _files(tmp_path / "f"):
        data = json.loads(file.read_text())
        keys.extend(unit_key(sub_snapshot(data, n)) for n in data["groups"])
    assert len(set(keys)) < len(keys) / 2
    generate_fleet(tmp_path / "all", 12, seed=5, groups=30, clusters=2)
    keys = []
    for file in _files(tmp_path / "all"):
        data = json.loads(file.read_text())
        keys.extend(unit_key(sub_snapshot(data, n)) for n in data["groups"])
    assert len(set(keys)) == len(keys)  # by default every group changes every capture


def test_cached_verdicts_give_the_rows_of_the_per_group_path(tmp_path: Path) -> None:
    generate_fleet(tmp_path / "f", 12, seed=5, groups=24, clusters=3, change_rate=0.05)
    verdicts: dict[str, list[Verdict]] = {}
    units = 0
    kinds: set[str] = set()
    for file in _files(tmp_path / "f"):
        text = file.read_text()
        rows = audit_record(text, str(file), verdicts=verdicts)
        assert rows == _per_group(text, str(file))
        units += len(json.loads(text)["groups"])
        kinds.update(r[0] for r in rows)
    assert len(verdicts) < units / 2  # most occurrences came from the cache
    assert {"snapshot", "group", "finding"} <= kinds


def test_a_repeated_bad_group_names_each_occurrence(tmp_path: Path) -> None:
    generate_fleet(tmp_path / "one", 1, seed=3, groups=4, clusters=1)
    [file] = _files(tmp_path / "one")
    data = json.loads(file.read_text())
    bad = next(iter(data["groups"]))
    data["groups"][bad] = {"consumers": "nope"}
    verdicts: dict[str, list[Verdict]] = {}
    for n, path in enumerate(["/d/a.json", "/d/b.json"]):
        data["capturedAt"] = f"2026-11-22T00:0{n}:00Z"
        text = json.dumps(data)
        rows = audit_record(text, path, verdicts=verdicts)
        assert rows == _per_group(text, path)
        [error] = [r for r in rows if r[0] == KIND_ERROR]
        assert path in (error[12] or "") and data["capturedAt"] in (error[12] or "")
    assert len(verdicts) == len(data["groups"])  # the second record was all cache hits


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _outputs(root: Path, out: Path, *, dedup: bool, workers: int = 1) -> dict[str, Any]:
    result, tables = run_local(
        plan_inputs([str(root)]), AuditOptions(), dedup=dedup, workers=workers
    )
    out.mkdir()
    write_summary(out, result)
    write_parquet_tables(
        out,
        {
            "findings": tables.findings,
            "groups": tables.groups,
            "flapping": tables.flapping,
            "occurrences": tables.occurrences,
        },
    )
    return {
        "summary": (out / "summary.json").read_text(),
        # plotly names each chart's div with a random UUID: the rest must be identical
        "html": _UUID.sub("<uuid>", render_html_report(result)),
        **{
            name: pq.read_table(out / name).to_pylist()
            for name in ("findings", "groups", "flapping", "occurrences")
        },
        "problems": result.problems,
    }


def test_dedup_changes_no_output(tmp_path: Path) -> None:
    generate_fleet(tmp_path / "f", 16, seed=9, groups=20, clusters=2, change_rate=0.05)
    (tmp_path / "f" / "broken.json").write_text("{ not json")
    with_dedup = _outputs(tmp_path / "f", tmp_path / "dedup", dedup=True)
    without = _outputs(tmp_path / "f", tmp_path / "plain", dedup=False)
    assert with_dedup == without
    assert json.loads(with_dedup["summary"])["findings"]  # the fleet has problems to report


def test_worker_processes_change_no_output(tmp_path: Path) -> None:
    """The fleet spread over two worker processes (each with its own verdicts) gives what
    one process gives, bad inputs reported in the same order."""
    generate_fleet(tmp_path / "f", 12, seed=8, groups=12, clusters=3, change_rate=0.05)
    (tmp_path / "f" / "a-broken.json").write_text("{ not json")
    (tmp_path / "f" / "z-not-utf8.json").write_bytes(b"\xff{}")
    pooled = _outputs(tmp_path / "f", tmp_path / "pooled", dedup=True, workers=2)
    alone = _outputs(tmp_path / "f", tmp_path / "alone", dedup=True, workers=1)
    assert pooled == alone
    assert [Path(p.path or "").name for p in pooled["problems"]] == [
        "a-broken.json",
        "z-not-utf8.json",
    ]


def test_unit_keys_tell_apart_what_json_tells_apart() -> None:
    """NaN, null and a lone surrogate (all decodable from a snapshot) keep distinct keys;
    ``capturedAt`` plays no part."""
    base = {"format": "rmqlb.snapshot/1", "topics": {}, "groups": {"G": {"x": None}}}
    variants = [
        {**base, "groups": {"G": {"x": value}}}
        for value in (None, float("nan"), float("inf"), "\ud800", "\ud801", 1)
    ]
    keys = [unit_key(v) for v in variants]
    assert len(set(keys)) == len(keys)
    assert unit_key({**base, "capturedAt": "2026-01-01T00:00:00Z"}) == unit_key(base)


def test_a_spark_task_reuses_verdicts_across_its_batches(
    tmp_path: Path, diagnose_calls: list[int]
) -> None:
    """``audit_batches`` (Spark's fused step, called here as a Python worker would, on Arrow
    batches) gives the per-group rows, packed by (cluster, group), while diagnosing each
    group state once per task, across its batches; the next task (another audit, say)
    starts with no verdicts."""
    import pyarrow as pa

    from rmqlb.pipeline import batches

    generate_fleet(tmp_path / "f", 8, seed=6, groups=10, clusters=1, change_rate=0.05)
    files = _files(tmp_path / "f")
    calls = diagnose_calls

    def task(paths: list[Path]) -> list[Any]:
        arrow = [
            pa.RecordBatch.from_pydict({"path": [str(p)], "text": [p.read_text()]}) for p in paths
        ]
        return list(batches.unpack(batches.audit_batches(iter(arrow))))

    rows = task(files)  # one task, one batch per file
    expected = [r for f in files for r in _per_group(f.read_text(), str(f))]
    assert len(rows) == len(expected)
    assert _by_key(rows) == _by_key(expected)
    assert calls[0] == 10
    assert sum(calls) < 8 * 10 / 2  # most group states were diagnosed once only
    calls.clear()
    task(files[:1])
    assert calls == [10]  # a new task diagnoses afresh


def test_a_spark_worker_keeps_an_audits_verdicts_across_its_tasks(
    tmp_path: Path, diagnose_calls: list[int]
) -> None:
    """``audit_runs`` (each task reads a run of local files in Python, called here as a
    Python worker would) gives the per-group rows, packed; a worker keeps the verdicts of one
    audit (its token) across tasks, and another audit starts afresh."""
    import pyarrow as pa

    from rmqlb.pipeline import batches
    from rmqlb.pipeline.inputs import Layout, chunk_files

    generate_fleet(tmp_path / "f", 8, seed=6, groups=10, clusters=1, change_rate=0.05)
    files = _files(tmp_path / "f")
    runs = chunk_files([(str(f), Layout.whole) for f in files], [1] * len(files), 2)
    calls = diagnose_calls

    def task(run: int, token: str) -> list[Any]:
        ids = pa.RecordBatch.from_pydict({"id": [run]})
        return list(batches.unpack(batches.audit_runs(iter([ids]), runs=runs, token=token)))

    first, second = task(0, "audit-1"), task(1, "audit-1")
    expected = [r for f in files for r in _per_group(f.read_text(), str(f))]
    assert len(first) + len(second) == len(expected)
    assert all(
        _by_key(first).get(key, []) + _by_key(second).get(key, []) == rows
        for key, rows in _by_key(expected).items()
    )
    assert calls[0] == 10
    assert sum(calls) < 8 * 10 / 2  # the second task reused the first one's verdicts
    calls.clear()
    task(1, "audit-2")
    assert calls[0] == 10  # another audit diagnoses afresh
