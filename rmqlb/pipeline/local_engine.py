"""``--engine local``: the audit in-process, for inputs that fit one machine comfortably.

The same steps as the Spark engine over the same functions: read records, split and
diagnose each (:func:`~rmqlb.pipeline.units.audit_record`, what the Spark engine's
``mapInArrow`` calls) and aggregate (:func:`~rmqlb.pipeline.aggregate.aggregate`; the
Spark engine's tasks run the same per partition).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

from rmqlb.pipeline.aggregate import Tables, aggregate
from rmqlb.pipeline.inputs import (
    InputPlan,
    Layout,
    chunk_files,
    file_records,
    file_size,
    local_files,
)
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

#: Fleets of at least this many bytes are audited by a pool of worker processes, one per
#: core; smaller ones in this process, where starting the workers would cost more than it
#: saves. (Workers are forked where possible: they start with the parent's imports.)
POOL_MIN_BYTES = 8_000_000
#: Runs of files per worker: enough to even out the workers' loads, few enough that each
#: run holds several captures of a cluster (a worker keeps its verdicts across its runs).
RUNS_PER_WORKER = 4

_Audited = list[tuple[str, int, list[Row]]]
"""A run's result: ``(path, characters, rows)`` per record, in input order."""


def audit_file(
    path: str,
    layout: Layout,
    pattern: re.Pattern[str] | None,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    verdicts: dict[str, list[Verdict]] | None = None,
) -> Iterator[tuple[int, list[Row]]]:
    """Steps 1 and 2 over one file: ``(characters, rows)`` per record, one
    :func:`~rmqlb.pipeline.units.audit_record` each; a file that cannot be read is one
    ``error`` row. ``verdicts``: the dedup cache (see :func:`read_rows`)."""
    for record, why in file_records(path, layout):
        if record is None:
            yield 0, list(diagnose_units([unreadable(path, why or "cannot read")]))
        else:
            rows = audit_record(
                record, path, pattern, parser=parser, diagnoser=diagnoser, verdicts=verdicts
            )
            yield len(record), rows


def read_rows(
    plan: InputPlan,
    cluster_from: str | None,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    dedup: bool = True,
    progress: ProgressSink | None = None,
    workers: int | None = None,
) -> Iterator[Row]:
    """Steps 1 and 2 over every input file: each record split into work units and
    diagnosed, one :func:`~rmqlb.pipeline.units.audit_record` per record (an unreadable
    file is one ``error`` row). With ``dedup`` each distinct
    group state (unit content) is diagnosed once and its verdict reused by every
    occurrence (same rows). ``progress`` hears after every record how far the read got.

    ``workers`` (default: one per core for fleets of :data:`POOL_MIN_BYTES` or more, else
    none) spreads the files over worker processes in runs of neighbouring files, each
    worker with its own dedup cache; the rows come back in input order, the same rows as
    in this process (a verdict depends only on the unit's content)."""
    files = local_files(plan)
    sizes = [file_size(path) for path, _ in files]
    counter = _Counter(files, sizes, progress) if progress is not None else None
    if workers is None:
        workers = default_workers(sum(sizes))
    injected = parser is not None or diagnoser is not None
    if workers > 1 and len(files) > 1 and dedup and not injected:
        audited = _pooled(files, sizes, cluster_from, workers)
    else:
        pattern = re.compile(cluster_from) if cluster_from else None
        verdicts: dict[str, list[Verdict]] | None = {} if dedup else None
        audited = (
            (path, chars, rows)
            for path, layout in files
            for chars, rows in audit_file(
                path, layout, pattern, parser=parser, diagnoser=diagnoser, verdicts=verdicts
            )
        )
    for path, chars, rows in audited:
        if counter is not None:
            counter.record(path, chars, rows)
        yield from rows
    if counter is not None:
        counter.done()


def default_workers(size: int) -> int:
    """Worker processes for a fleet of ``size`` bytes: the usable cores, or 1 (in this
    process) below :data:`POOL_MIN_BYTES`."""
    if size < POOL_MIN_BYTES:
        return 1
    return usable_cores()


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _pooled(
    files: list[tuple[str, Layout]], sizes: list[int], cluster_from: str | None, workers: int
) -> Iterator[tuple[str, int, list[Row]]]:
    """The records of ``files`` audited by ``workers`` processes, in input order."""
    import multiprocessing  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import threading  # noqa: PLC0415

    import rmqlb.diagnose  # noqa: PLC0415  (forked workers start with it imported)
    import rmqlb.snapshot  # noqa: F401, PLC0415

    # fork only where it is safe: Linux, and no other thread whose locks a child could inherit
    fork = sys.platform == "linux" and threading.active_count() == 1
    context = multiprocessing.get_context("fork" if fork else "spawn")
    runs = chunk_files(files, sizes, workers * RUNS_PER_WORKER)
    with context.Pool(workers, initializer=_start_worker, initargs=(cluster_from,)) as pool:
        for audited in pool.imap(_audit_run, runs):
            yield from audited


_worker_pattern: re.Pattern[str] | None = None
_worker_verdicts: dict[str, list[Verdict]] = {}


def _start_worker(cluster_from: str | None) -> None:
    """A pool worker's set-up: the ``--cluster-from`` pattern and an empty dedup cache.
    Ctrl-C is the parent's to handle (it stops the pool), and the pool's SIGTERM ends a
    worker quietly (not through a handler the CLI's process installed before the fork)."""
    import signal  # noqa: PLC0415

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    global _worker_pattern  # noqa: PLW0603  (one worker process, one audit)
    _worker_pattern = re.compile(cluster_from) if cluster_from else None
    _worker_verdicts.clear()


def _audit_run(run: list[tuple[str, Layout]]) -> _Audited:
    """In a pool worker: every record of a run of files, audited with the worker's cache."""
    return [
        (path, chars, rows)
        for path, layout in run
        for chars, rows in audit_file(path, layout, _worker_pattern, verdicts=_worker_verdicts)
    ]


class _Counter:
    """Counts files, bytes and snapshots as :func:`read_rows` goes, for a progress sink."""

    def __init__(
        self, files: list[tuple[str, Layout]], sizes: list[int], sink: ProgressSink
    ) -> None:
        self.sink = sink
        self.started = time.perf_counter()
        self.sizes = {path: size for (path, _), size in zip(files, sizes, strict=True)}
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


def run_local(
    plan: InputPlan,
    options: AuditOptions,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    dedup: bool = True,
    progress: ProgressSink | None = None,
    workers: int | None = None,
) -> tuple[AuditResult, Tables]:
    """Audit ``plan`` in this process (its per-record work spread over ``workers``
    processes, see :func:`read_rows`); returns the result and its Parquet tables."""
    started = time.perf_counter()
    rows = read_rows(
        plan,
        options.cluster_from,
        parser=parser,
        diagnoser=diagnoser,
        dedup=dedup,
        progress=progress,
        workers=workers,
    )
    result, tables = aggregate(rows, options)
    result.timings["audit"] = time.perf_counter() - started
    return result, tables
