"""``--engine local``: the audit in-process, for inputs that fit one machine comfortably.

The same steps as the Spark engine over the same functions: read records, split and
diagnose each (:func:`~rmqlb.pipeline.units.audit_record`, what the Spark engine's
``mapInArrow`` calls) and aggregate (:func:`~rmqlb.pipeline.aggregate.aggregate`, the Python
twin of the Spark SQL plan).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

from rmqlb.errors import InputError
from rmqlb.fileio import InputKind, decode_text, read_input
from rmqlb.pipeline.aggregate import Tables, aggregate
from rmqlb.pipeline.inputs import InputPlan, Layout, local_files
from rmqlb.pipeline.progress import AuditProgress, ProgressSink
from rmqlb.pipeline.result import AuditOptions, AuditResult
from rmqlb.pipeline.units import (
    KIND_GROUP,
    KIND_SNAPSHOT,
    Diagnoser,
    Parser,
    Row,
    Verdict,
    audit_record,
    diagnose_units,
    unreadable,
)

# Spark's text source splits lines on \r\n, \r and \n only (not on U+2028 & co.).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _records(
    files: list[tuple[str, Layout]],
) -> Iterator[tuple[str, str | None, str | None]]:
    """``(path, record, None)`` per record of every input file, ``(path, None, why)`` for a
    file that cannot be read; records are split as Spark's text source splits them."""
    for path, layout in files:
        try:
            text = decode_text(read_input(path, InputKind.AUDIT), path)
        except InputError as exc:  # "<path>: <why>": the row names the path already
            yield path, None, str(exc).removeprefix(f"{path}: ")
            continue
        for record in _LINE_BREAK.split(text) if layout is Layout.lines else [text]:
            yield path, record, None


def read_rows(
    plan: InputPlan,
    cluster_from: str | None,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    dedup: bool = True,
    progress: ProgressSink | None = None,
) -> Iterator[Row]:
    """Steps 1 and 2 over every input file: each record split into work units and
    diagnosed, one :func:`~rmqlb.pipeline.units.audit_record` per record (an unreadable
    file is one ``error`` row). With ``dedup`` each distinct
    group state (unit content) is diagnosed once and its verdict reused by every
    occurrence (same rows). ``progress`` hears after every record how far the read got."""
    pattern = re.compile(cluster_from) if cluster_from else None
    verdicts: dict[str, list[Verdict]] | None = {} if dedup else None
    files = local_files(plan)
    counter = _Counter(files, progress) if progress is not None else None
    for path, record, why in _records(files):
        if record is None:
            rows = list(diagnose_units([unreadable(path, why or "cannot read")]))
        else:
            rows = audit_record(
                record, path, pattern, parser=parser, diagnoser=diagnoser, verdicts=verdicts
            )
        if counter is not None:
            counter.record(path, len(record or ""), rows)
        yield from rows
    if counter is not None:
        counter.done()


class _Counter:
    """Counts files, bytes and snapshots as :func:`read_rows` goes, for a progress sink."""

    def __init__(self, files: list[tuple[str, Layout]], sink: ProgressSink) -> None:
        self.sink = sink
        self.started = time.perf_counter()
        self.sizes = {path: _size(path) for path, _ in files}
        self.bytes_total = sum(self.sizes.values())
        self.seen: set[str] = set()
        self.bytes_read = self.snapshots = self.group_snapshots = 0

    def record(self, path: str, chars: int, rows: list[Row]) -> None:
        """One record of ``path`` read and diagnosed into ``rows``."""
        self.seen.add(path)
        # characters (+1 for the line break), not bytes: close enough for a share done
        self.bytes_read += chars + 1
        for row in rows:
            if row[0] == KIND_SNAPSHOT:
                self.snapshots += 1
            elif row[0] == KIND_GROUP:
                self.group_snapshots += 1
        self.report("reading")

    def done(self) -> None:
        """Every file read: the reading phase is complete."""
        self.bytes_read = self.bytes_total
        self.report("aggregating")

    def report(self, phase: str) -> None:
        """Tell the sink where the read is."""
        self.sink(
            AuditProgress(
                phase,
                time.perf_counter() - self.started,
                files_read=len(self.seen),
                files_total=len(self.sizes),
                bytes_read=min(self.bytes_read, self.bytes_total),
                bytes_total=self.bytes_total,
                snapshots=self.snapshots,
                group_snapshots=self.group_snapshots,
            )
        )


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run_local(
    plan: InputPlan,
    options: AuditOptions,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    dedup: bool = True,
    progress: ProgressSink | None = None,
) -> tuple[AuditResult, Tables]:
    """Audit ``plan`` in this process; returns the result and its Parquet tables."""
    started = time.perf_counter()
    rows = read_rows(
        plan,
        options.cluster_from,
        parser=parser,
        diagnoser=diagnoser,
        dedup=dedup,
        progress=progress,
    )
    result, tables = aggregate(rows, options)
    result.timings["audit"] = time.perf_counter() - started
    return result, tables
