"""The local aggregation: persistence, share, flapping, duplicates, contract order."""

from __future__ import annotations

import zlib
from typing import Any

from rmqlb.pipeline.aggregate import aggregate
from rmqlb.pipeline.result import AuditOptions, classify, summary_json
from rmqlb.pipeline.units import Row

MINUTE = 60_000


def ts(step: int) -> tuple[int, str]:
    return step * 10 * MINUTE, f"2026-11-22T00:{step * 10:02d}:00Z"


def group_row(  # noqa: PLR0917
    cluster: str,
    group: str,
    step: int,
    fp: str | None = "f",
    unconsumed: int = 0,
    lag: int | None = None,
) -> Row:
    t, c = ts(step)
    return ("group", cluster, t, c, group, None, None, None, unconsumed, lag, fp, "/p", None)


def finding_row(  # noqa: PLR0917
    cluster: str, group: str, step: int, code: str, severity: str = "error", topic: str | None = "T"
) -> Row:
    t, c = ts(step)
    return ("finding", cluster, t, c, group, topic, code, severity, 0, None, None, "/p", None)


def snapshot_row(cluster: str, step: int) -> Row:
    t, c = ts(step)
    return ("snapshot", cluster, t, c, None, None, None, None, None, None, None, "/p", None)


def fleet(
    steps: int, findings: dict[int, list[Row]], fps: list[str | None] | None = None
) -> list[Row]:
    rows: list[Row] = []
    for s in range(steps):
        rows.append(snapshot_row("c", s))
        rows.append(group_row("c", "G", s, fp=(fps[s] if fps else "f")))
        rows.extend(findings.get(s, []))
    return rows


def test_present_in_last_three_is_persistent() -> None:
    rows = fleet(5, {s: [finding_row("c", "G", s, "IDLE_CONSUMER", "warning")] for s in (2, 3, 4)})
    result, tables = aggregate(rows, AuditOptions())
    [f] = result.findings
    assert f.persistence == "persistent"
    assert (f.snapshots, f.share) == (3, 3 / 5)
    assert (f.first_seen, f.last_seen) == (ts(2)[1], ts(4)[1])
    assert tables.findings[0]["groupSnapshots"] == 5


def test_gap_in_the_window_makes_it_transient() -> None:
    rows = fleet(5, {s: [finding_row("c", "G", s, "IDLE_CONSUMER")] for s in (0, 1, 2, 4)})
    [f] = aggregate(rows, AuditOptions())[0].findings
    assert f.persistence == "transient"
    assert f.snapshots == 4
    # a window of 1 only looks at the newest snapshot
    [f1] = aggregate(rows, AuditOptions(persistent_window=1))[0].findings
    assert f1.persistence == "persistent"


def test_short_history_needs_the_finding_in_every_snapshot() -> None:
    always = fleet(2, {s: [finding_row("c", "G", s, "X_CODE")] for s in (0, 1)})
    assert aggregate(always, AuditOptions())[0].findings[0].persistence == "persistent"
    once = fleet(2, {1: [finding_row("c", "G", 1, "X_CODE")]})
    assert aggregate(once, AuditOptions())[0].findings[0].persistence == "transient"
    assert classify(1, 1, 3) == "persistent"


def test_duplicate_snapshots_merge() -> None:
    rows = fleet(3, {s: [finding_row("c", "G", s, "A")] for s in range(3)})
    rows += fleet(3, {s: [finding_row("c", "G", s, "A", "warning")] for s in range(3)})
    result, _ = aggregate(rows, AuditOptions())
    assert (result.snapshots, result.groups) == (3, 1)
    [f] = result.findings
    assert (f.snapshots, f.severity, f.share) == (3, "error", 1.0)


def test_flapping_counts_changes_between_known_fingerprints() -> None:
    fps: list[str | None] = ["a", "b", "a", None, "b", "a"]  # a->b, b->a, (unknown), b->a
    rows = fleet(6, {}, fps)
    result, tables = aggregate(rows, AuditOptions(flap_threshold=2))
    assert [(f.group, f.changes) for f in result.flapping] == [("G", 3)]
    assert tables.groups[0]["changes"] == 3 and tables.groups[0]["flapping"] is True
    assert aggregate(rows, AuditOptions(flap_threshold=3))[0].flapping == []


def test_two_changes_are_not_flapping_by_default() -> None:
    rows = fleet(4, {}, ["a", "b", "a", "a"])
    assert aggregate(rows, AuditOptions())[0].flapping == []


def test_worst_groups_use_the_latest_snapshot() -> None:
    rows = [
        snapshot_row("c", 0),
        snapshot_row("c", 1),
        group_row("c", "A", 0, unconsumed=9, lag=900),
        group_row("c", "A", 1, unconsumed=0, lag=0),
        group_row("c", "B", 0, unconsumed=1, lag=5),
        group_row("c", "B", 1, unconsumed=2, lag=50),
    ]
    result, tables = aggregate(rows, AuditOptions())
    assert [g.group for g in result.worst_by_unconsumed] == ["B"]
    assert [g.group for g in result.worst_by_lag] == ["B"]
    a = next(t for t in tables.groups if t["group"] == "A")
    assert (a["unconsumed"], a["maxUnconsumed"], a["lag"], a["maxLag"]) == (0, 9, 0, 900)


def test_summary_contract_and_order() -> None:
    rows = fleet(
        4,
        {
            0: [finding_row("c", "G", 0, "B_WARN", "warning")],
            1: [finding_row("c", "G", 1, "A_ERR", "error", topic=None)],
            2: [
                finding_row("c", "G", 2, "A_ERR", "error", topic=None),
                finding_row("c", "G", 2, "C_INFO", "info"),
            ],
            3: [
                finding_row("c", "G", 3, "A_ERR", "error", topic=None),
                finding_row("c", "G", 3, "C_INFO", "info"),
            ],
        },
    )
    bad: Row = ("error", *(None,) * 10, "/bad", "not JSON")  # type: ignore[assignment]
    result, _ = aggregate([*rows, bad], AuditOptions())
    doc = summary_json(result)
    assert set(doc) == {"format", "snapshots", "groups", "findings", "flapping"}
    assert doc["format"] == "rmqlb.audit/1"
    assert (doc["snapshots"], doc["groups"]) == (4, 1)
    assert [(f["code"], f["persistence"]) for f in doc["findings"]] == [
        ("A_ERR", "persistent"),
        ("B_WARN", "transient"),  # warning before info
        ("C_INFO", "transient"),  # steps 2-3 only: missing from step 1 of the last three
    ]
    first = doc["findings"][0]
    assert set(first) == {
        "cluster",
        "group",
        "topic",
        "code",
        "severity",
        "firstSeen",
        "lastSeen",
        "snapshots",
        "share",
        "persistence",
    }
    assert first["topic"] is None and first["share"] == 0.75
    assert result.problem_count == 1 and result.problems[0].message == "not JSON"
    assert result.by_code()["A_ERR"] == {"persistent": 1, "transient": 0}
    assert result.timeline[0] == ("1970-01-01T00:00Z", "B_WARN", 1)
    assert result.timeline[-1] == ("1970-01-01T00:30Z", "C_INFO", 1)


def test_partials_of_disjoint_groups_merge_into_the_whole() -> None:
    """What each Spark task does with its partition: the rows cut by (cluster, group) into
    parts, each part reduced on its own (snapshot rows and errors land wherever their key
    sends them), and the partials merged give the whole fleet's result and tables."""
    from audit_rows import random_rows

    from rmqlb.pipeline.aggregate import Partial, finish_partial, reduce_rows

    options = AuditOptions(persistent_window=3, flap_threshold=1, top=5)
    for seed in range(4):
        rows = random_rows(seed)
        local, tables = aggregate(rows, options)
        assert local.findings and local.problem_count
        for parts in (1, 2, 5):
            cut: list[list[Row]] = [[] for _ in range(parts)]
            for row in rows:
                cut[zlib.crc32(repr((row[1], row[4])).encode()) % parts].append(row)
            whole = Partial.empty()
            for part in cut:
                whole.merge(reduce_rows(part, options))
            merged, merged_tables = finish_partial(whole, options, engine="local")
            assert merged == local
            assert (merged_tables.findings, merged_tables.groups) == (
                tables.findings,
                tables.groups,
            )
            assert merged_tables.flapping == tables.flapping
            key = sorted(tables.occurrences, key=repr)
            assert sorted(whole.occurrences, key=repr) == key


def test_partials_keep_the_first_problems_and_count_them_all() -> None:
    from rmqlb.pipeline.aggregate import MAX_PROBLEMS, Partial, reduce_rows

    def bad(n: int) -> Row:
        return ("error", *(None,) * 10, f"/bad{n}", "not JSON")  # type: ignore[return-value]

    whole = Partial.empty()
    for start in (0, 80, 160):
        whole.merge(reduce_rows([bad(n) for n in range(start, start + 80)], AuditOptions()))
    assert whole.problem_count == 240
    assert [p.path for p in whole.problems] == [f"/bad{n}" for n in range(MAX_PROBLEMS)]


def test_packed_rows_keep_each_groups_rows_in_order(monkeypatch: Any) -> None:
    """How rows cross Spark: pickled per (cluster, group) and task, a batch every
    ``PACK_ROWS`` rows; unpacked, each key's rows come back whole and in order."""
    from audit_rows import random_rows

    from rmqlb.pipeline import batches

    rows = random_rows(2)
    monkeypatch.setattr(batches, "PACK_ROWS", 40)
    packed = list(batches.pack(rows[i : i + 7] for i in range(0, len(rows), 7)))
    assert len(packed) == -(-len(rows) // 42)  # a batch per 6 chunks of 7 rows, and the rest
    for batch in packed:
        clusters, groups = batch.column("cluster").to_pylist(), batch.column("group").to_pylist()
        keys = list(zip(clusters, groups, strict=True))
        assert len(keys) == len(set(keys))

    def by_key(rows: Any) -> dict[Any, list[Any]]:
        out: dict[Any, list[Any]] = {}
        for row in rows:
            out.setdefault((row[1], row[4]), []).append(row)
        return out

    assert by_key(batches.unpack(packed)) == by_key(rows)
