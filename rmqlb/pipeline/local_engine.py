"""``--engine local``: the audit in-process, for inputs that fit one machine comfortably.

The same steps as the Spark engine over the same functions: read records, split them into
per-group units (:func:`~rmqlb.pipeline.units.split_record`), diagnose each unit
(:func:`~rmqlb.pipeline.units.diagnose_units`) and aggregate
(:func:`~rmqlb.pipeline.aggregate.aggregate`, the Python twin of the Spark SQL plan).
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
    UnitRow,
    diagnose_units,
    split_record,
)

# Spark's text source splits lines on \r\n, \r and \n only (not on U+2028 & co.).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def read_units(plan: InputPlan, cluster_from: str | None) -> Iterator[UnitRow]:
    """Step 1 over every input file: records -> work units (errors as ``error`` rows)."""
    pattern = re.compile(cluster_from) if cluster_from else None
    for path, layout in local_files(plan):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            yield (KIND_ERROR, None, None, None, None, None, path, f"cannot read: {exc.strerror}")
            continue
        records = _LINE_BREAK.split(text) if layout is Layout.lines else [text]
        for record in records:
            yield from split_record(record, path, pattern, encode=False)


def run_local(
    plan: InputPlan,
    options: AuditOptions,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
) -> tuple[AuditResult, Tables]:
    """Audit ``plan`` in this process; returns the result and its Parquet tables."""
    started = time.perf_counter()
    units = read_units(plan, options.cluster_from)
    rows = diagnose_units(units, parser=parser, diagnoser=diagnoser)
    result, tables = aggregate(rows, options)
    result.timings["audit"] = time.perf_counter() - started
    return result, tables
