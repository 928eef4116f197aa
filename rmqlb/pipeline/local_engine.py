"""``--engine local``: the audit in-process, for inputs that fit one machine comfortably.

The same steps as the Spark engine over the same functions: read records, split and
diagnose each (:func:`~rmqlb.pipeline.units.audit_record`, what the Spark engine's
``mapInArrow`` calls) and aggregate (:func:`~rmqlb.pipeline.aggregate.aggregate`, the Python
twin of the Spark SQL plan).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

from rmqlb.pipeline.aggregate import Tables, aggregate
from rmqlb.pipeline.inputs import InputPlan, Layout, local_files
from rmqlb.pipeline.result import AuditOptions, AuditResult
from rmqlb.pipeline.units import (
    KIND_ERROR,
    Diagnoser,
    Parser,
    Row,
    UnitRow,
    Verdict,
    audit_record,
    diagnose_units,
)

# Spark's text source splits lines on \r\n, \r and \n only (not on U+2028 & co.).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _records(plan: InputPlan) -> Iterator[tuple[str, str | None, str | None]]:
    """``(path, record, None)`` per record of every input file, ``(path, None, why)`` for a
    file that cannot be read; records are split as Spark's text source splits them."""
    for path, layout in local_files(plan):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            yield path, None, f"cannot read: {exc.strerror}"
            continue
        for record in _LINE_BREAK.split(text) if layout is Layout.lines else [text]:
            yield path, record, None


def _unreadable(path: str, why: str) -> UnitRow:
    return (KIND_ERROR, None, None, None, None, None, path, why)


def read_rows(
    plan: InputPlan,
    cluster_from: str | None,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    dedup: bool = True,
) -> Iterator[Row]:
    """Steps 1 and 2 over every input file: each record split into work units and
    diagnosed, one :func:`~rmqlb.pipeline.units.audit_record` per record (an unreadable
    file is one ``error`` row). With ``dedup`` each distinct
    group state (unit content) is diagnosed once and its verdict reused by every
    occurrence (same rows)."""
    pattern = re.compile(cluster_from) if cluster_from else None
    verdicts: dict[str, list[Verdict]] | None = {} if dedup else None
    for path, record, why in _records(plan):
        if record is None:
            yield from diagnose_units([_unreadable(path, why or "cannot read")])
        else:
            yield from audit_record(
                record, path, pattern, parser=parser, diagnoser=diagnoser, verdicts=verdicts
            )


def run_local(
    plan: InputPlan,
    options: AuditOptions,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    dedup: bool = True,
) -> tuple[AuditResult, Tables]:
    """Audit ``plan`` in this process; returns the result and its Parquet tables."""
    started = time.perf_counter()
    rows = read_rows(plan, options.cluster_from, parser=parser, diagnoser=diagnoser, dedup=dedup)
    result, tables = aggregate(rows, options)
    result.timings["audit"] = time.perf_counter() - started
    return result, tables
