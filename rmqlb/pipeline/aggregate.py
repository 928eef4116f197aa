"""The audit's aggregation in plain Python, for both engines.

The local engine runs it over the whole fleet; each Spark task runs it over one partition
of the rows hash-partitioned by (cluster, group), and the driver merges the partials
(:class:`Partial`). So the two engines agree by construction, and tests check that they do:

1. group snapshots: ``group`` rows by (cluster, group, ts) — duplicates of a snapshot merge
   (min fingerprint, max unconsumed, max lag);
2. per group: snapshot count, first/last seen, rank from the newest (``row_number``), and
   fingerprint changes between consecutive snapshots (``lag`` over ``ts``);
3. occurrences: ``finding`` rows by (cluster, group, ts, topic, code), worst severity;
4. per (cluster, group, topic, code): snapshots, first/last seen, occurrences among the
   group's last N snapshots -> persistent/transient, share.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from rmqlb.pipeline.result import (
    AuditOptions,
    AuditResult,
    FindingSummary,
    Flapping,
    GroupSummary,
    InputProblem,
    classify,
    finding_order,
    flapping_order,
    worst,
)
from rmqlb.pipeline.units import (
    KIND_ERROR,
    KIND_FINDING,
    KIND_GROUP,
    KIND_SNAPSHOT,
    RANK_SEVERITY,
    SEVERITY_RANK,
    Row,
)

MAX_PROBLEMS = 100
#: The timeline counts findings per minute, so clusters dumped a few seconds apart line up.
TIMELINE_BUCKET_MS = 60_000


def bucket_text(millis: int) -> str:
    """Epoch milliseconds of a minute -> ``2026-11-22T00:10Z``."""
    moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%MZ")


@dataclass(slots=True)
class _GroupSnap:
    captured_at: str
    fingerprint: str | None
    unconsumed: int
    lag: int | None


@dataclass(slots=True)
class _Occurrence:
    captured_at: str
    rank: int
    unconsumed: int
    lag: int | None


@dataclass(slots=True)
class Tables:
    """The Parquet tables as rows (dicts keyed by column name)."""

    findings: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    flapping: list[dict[str, Any]]
    occurrences: list[dict[str, Any]]


def _max_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _min_opt(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


@dataclass(slots=True)
class Partial:
    """Steps 1-4 over rows holding every row of each (cluster, group) they name: a whole
    fleet, or one hash partition of it (the Spark engine's tasks). Partials of disjoint
    groups :meth:`merge` into the partial of their union; :func:`finish_partial` ends it."""

    snapshots: set[tuple[str, int]]
    groups: list[GroupRecord]
    findings: list[FindingRecord]
    timeline: dict[tuple[int, str], int]
    problems: list[InputProblem]
    problem_count: int
    occurrences: list[dict[str, Any]]

    @classmethod
    def empty(cls) -> Partial:
        """The partial of no rows."""
        return cls(set(), [], [], {}, [], 0, [])

    def merge(self, other: Partial) -> None:
        """Add ``other`` (a partial of other groups) to this one."""
        self.snapshots |= other.snapshots
        self.groups.extend(other.groups)
        self.findings.extend(other.findings)
        for key, n in other.timeline.items():
            self.timeline[key] = self.timeline.get(key, 0) + n
        self.problems.extend(other.problems[: max(0, MAX_PROBLEMS - len(self.problems))])
        self.problem_count += other.problem_count
        self.occurrences.extend(other.occurrences)


def aggregate(rows: Iterable[Row], options: AuditOptions) -> tuple[AuditResult, Tables]:
    """Rows of :func:`rmqlb.pipeline.units.diagnose_units` -> the result and its tables."""
    partial = reduce_rows(rows, options)
    result, tables = finish_partial(partial, options, engine="local")
    tables.occurrences = sorted(
        partial.occurrences,
        key=lambda r: (r["cluster"], r["group"], r["ts"], r["topic"] or "", r["code"]),
    )
    return result, tables


def finish_partial(
    partial: Partial, options: AuditOptions, *, engine: str
) -> tuple[AuditResult, Tables]:
    """:func:`finish` on the partial of a whole fleet (its occurrences left to the caller)."""
    return finish(
        snapshots=len(partial.snapshots),
        groups=partial.groups,
        findings=partial.findings,
        timeline=[(bucket, code, n) for (bucket, code), n in sorted(partial.timeline.items())],
        problems=partial.problems,
        problem_count=partial.problem_count,
        options=options,
        engine=engine,
    )


def reduce_rows(
    rows: Iterable[Row], options: AuditOptions, *, with_occurrences: bool = True
) -> Partial:
    """Steps 1-4 over ``rows`` (every row of each of their groups); ``with_occurrences``:
    also keep the per-snapshot rows of the ``occurrences/`` table."""
    snapshots: set[tuple[str, int]] = set()
    group_snaps: dict[tuple[str, str], dict[int, _GroupSnap]] = defaultdict(dict)
    occurrences: dict[tuple[str, str, str | None, str], dict[int, _Occurrence]] = defaultdict(dict)
    problems: list[InputProblem] = []
    problem_count = 0
    for row in rows:
        kind, cluster, ts, captured_at, group, topic, code, severity = row[:8]
        unconsumed, lag, fingerprint, path, error = row[8:]
        if kind == KIND_ERROR:
            problem_count += 1
            if len(problems) < MAX_PROBLEMS:
                problems.append(InputProblem(path, group, error or "unusable input"))
            continue
        assert cluster is not None and ts is not None and captured_at is not None
        if kind == KIND_SNAPSHOT:
            snapshots.add((cluster, ts))
        elif kind == KIND_GROUP:  # step 1: group snapshots
            assert group is not None
            seen = group_snaps[(cluster, group)]
            prev = seen.get(ts)
            if prev is None:
                seen[ts] = _GroupSnap(captured_at, fingerprint, unconsumed or 0, lag)
            else:
                prev.captured_at = min(prev.captured_at, captured_at)
                prev.fingerprint = _min_opt(prev.fingerprint, fingerprint)
                prev.unconsumed = max(prev.unconsumed, unconsumed or 0)
                prev.lag = _max_opt(prev.lag, lag)
        elif kind == KIND_FINDING:  # step 3: occurrences
            assert group is not None and code is not None and severity is not None
            occ = occurrences[(cluster, group, topic, code)]
            rank = SEVERITY_RANK[severity]
            prev_occ = occ.get(ts)
            if prev_occ is None:
                occ[ts] = _Occurrence(captured_at, rank, unconsumed or 0, lag)
            else:
                prev_occ.captured_at = min(prev_occ.captured_at, captured_at)
                prev_occ.rank = max(prev_occ.rank, rank)
                prev_occ.unconsumed = max(prev_occ.unconsumed, unconsumed or 0)
                prev_occ.lag = _max_opt(prev_occ.lag, lag)

    # step 2: per group
    group_rows: list[GroupRecord] = []
    recent_ts: dict[tuple[str, str], set[int]] = {}
    latest_ts: dict[tuple[str, str], int] = {}
    for key, seen in group_snaps.items():
        order = sorted(seen)
        recent_ts[key] = set(order[::-1][: options.persistent_window])
        latest_ts[key] = order[-1]
        changes = 0
        for before, after in pairwise(order):
            fp_before, fp_after = seen[before].fingerprint, seen[after].fingerprint
            if fp_before is not None and fp_after is not None and fp_before != fp_after:
                changes += 1
        latest = seen[order[-1]]
        lags = [s.lag for s in seen.values() if s.lag is not None]
        group_rows.append(
            GroupRecord(
                cluster=key[0],
                group=key[1],
                snapshots=len(order),
                first_seen=seen[order[0]].captured_at,
                last_seen=latest.captured_at,
                unconsumed=latest.unconsumed,
                lag=latest.lag,
                max_unconsumed=max(s.unconsumed for s in seen.values()),
                max_lag=max(lags) if lags else None,
                changes=changes,
                findings=0,
                worst_rank=None,
            )
        )
    by_key = {(g.cluster, g.group): g for g in group_rows}

    # step 4: per finding
    finding_rows: list[FindingRecord] = []
    occurrence_rows: list[dict[str, Any]] = []
    timeline: dict[tuple[int, str], int] = defaultdict(int)
    for (cluster, group, topic, code), occ in occurrences.items():
        key = (cluster, group)
        order = sorted(occ)
        finding_rows.append(
            FindingRecord(
                cluster=cluster,
                group=group,
                topic=topic,
                code=code,
                rank=max(o.rank for o in occ.values()),
                first_seen=occ[order[0]].captured_at,
                last_seen=occ[order[-1]].captured_at,
                snapshots=len(order),
                recent=sum(1 for ts in order if ts in recent_ts[key]),
            )
        )
        latest_occ = occ.get(latest_ts[key])
        if latest_occ is not None:
            record = by_key[key]
            record.findings += 1
            record.worst_rank = max(record.worst_rank or 0, latest_occ.rank)
        for ts in order:
            o = occ[ts]
            timeline[(ts // TIMELINE_BUCKET_MS * TIMELINE_BUCKET_MS, code)] += 1
            if not with_occurrences:
                continue
            occurrence_rows.append(
                {
                    "cluster": cluster,
                    "capturedAt": o.captured_at,
                    "ts": ts,
                    "group": group,
                    "topic": topic,
                    "code": code,
                    "severity": RANK_SEVERITY[o.rank],
                    "unconsumed": o.unconsumed,
                    "lag": o.lag,
                }
            )
    return Partial(
        snapshots=snapshots,
        groups=group_rows,
        findings=finding_rows,
        timeline=dict(timeline),
        problems=problems,
        problem_count=problem_count,
        occurrences=occurrence_rows,
    )


@dataclass(slots=True)
class GroupRecord:
    """Step 2's output for one (cluster, group), as either engine computes it."""

    cluster: str
    group: str
    snapshots: int
    first_seen: str
    last_seen: str
    unconsumed: int
    lag: int | None
    max_unconsumed: int
    max_lag: int | None
    changes: int
    findings: int  # (topic, code) findings in the latest snapshot
    worst_rank: int | None  # their worst severity rank


@dataclass(frozen=True, slots=True)
class FindingRecord:
    """Step 4's output for one (cluster, group, topic, code), before classification."""

    cluster: str
    group: str
    topic: str | None
    code: str
    rank: int
    first_seen: str
    last_seen: str
    snapshots: int
    recent: int  # occurrences among the group's last N snapshots


def finish(
    *,
    snapshots: int,
    groups: list[GroupRecord],
    findings: list[FindingRecord],
    timeline: list[tuple[int, str, int]],
    problems: list[InputProblem],
    problem_count: int,
    options: AuditOptions,
    engine: str,
) -> tuple[AuditResult, Tables]:
    """Shared last step of both engines: classify, order, pick offenders, build the tables."""
    group_count = {(g.cluster, g.group): g.snapshots for g in groups}
    summaries = [
        FindingSummary(
            cluster=f.cluster,
            group=f.group,
            topic=f.topic,
            code=f.code,
            severity=RANK_SEVERITY[f.rank],
            first_seen=f.first_seen,
            last_seen=f.last_seen,
            snapshots=f.snapshots,
            share=f.snapshots / group_count[(f.cluster, f.group)],
            persistence=classify(
                f.recent, group_count[(f.cluster, f.group)], options.persistent_window
            ),
        )
        for f in findings
    ]
    summaries.sort(key=finding_order)
    group_summaries = sorted(
        (
            GroupSummary(
                cluster=g.cluster,
                group=g.group,
                snapshots=g.snapshots,
                first_seen=g.first_seen,
                last_seen=g.last_seen,
                unconsumed=g.unconsumed,
                lag=g.lag,
                max_unconsumed=g.max_unconsumed,
                max_lag=g.max_lag,
                changes=g.changes,
                findings=g.findings,
                worst=RANK_SEVERITY[g.worst_rank] if g.worst_rank is not None else None,
            )
            for g in groups
        ),
        key=lambda g: (g.cluster, g.group),
    )
    flapping = sorted(
        (
            Flapping(g.cluster, g.group, g.changes)
            for g in group_summaries
            if g.changes > options.flap_threshold
        ),
        key=flapping_order,
    )
    result = AuditResult(
        snapshots=snapshots,
        groups=len(groups),
        findings=summaries,
        flapping=flapping,
        worst_by_unconsumed=worst(group_summaries, "unconsumed", options.top),
        worst_by_lag=worst(group_summaries, "lag", options.top),
        timeline=[(bucket_text(b), code, n) for b, code, n in timeline],
        problems=problems,
        problem_count=problem_count,
        engine=engine,
    )
    tables = Tables(
        findings=[finding_table_row(f, group_count[(f.cluster, f.group)]) for f in summaries],
        groups=[group_table_row(g, options.flap_threshold) for g in group_summaries],
        flapping=[f.to_json() for f in flapping],
        occurrences=[],
    )
    return result, tables


def finding_table_row(f: FindingSummary, group_snapshots: int) -> dict[str, Any]:
    """A ``findings/`` Parquet row."""
    return {
        "cluster": f.cluster,
        "group": f.group,
        "topic": f.topic,
        "code": f.code,
        "severity": f.severity,
        "firstSeen": f.first_seen,
        "lastSeen": f.last_seen,
        "snapshots": f.snapshots,
        "groupSnapshots": group_snapshots,
        "share": f.share,
        "persistence": f.persistence,
    }


def group_table_row(g: GroupSummary, flap_threshold: int) -> dict[str, Any]:
    """A ``groups/`` Parquet row."""
    return {
        "cluster": g.cluster,
        "group": g.group,
        "snapshots": g.snapshots,
        "firstSeen": g.first_seen,
        "lastSeen": g.last_seen,
        "unconsumed": g.unconsumed,
        "lag": g.lag,
        "maxUnconsumed": g.max_unconsumed,
        "maxLag": g.max_lag,
        "changes": g.changes,
        "flapping": g.changes > flap_threshold,
        "findings": g.findings,
        "worst": g.worst,
    }
