"""``--engine spark``: the audit as a Spark job (pyspark is imported inside the functions).

Plan (the per-record and the aggregation steps are the local engine's own functions)::

    local snapshot files, cut in runs of neighbours           spark.range(runs)
      -> mapInArrow(audit_runs)        each task reads its files in Python, as the
                                       in-process engine does, and audits each snapshot
                                       (parsed and diagnosed once, whole, its report split
                                       into per-group rows; a group state its worker met
                                       before in this audit: its verdict reused)
    JSON Lines + remote URIs (one row per line / whole file)  spark.read.text
      -> mapInArrow(audit_batches)     the same per record
         (either, with fewer partitions than cores: split first -> repartition(cores)
          -> mapInArrow(diagnose_batches))
      each task hands its rows on packed: one pickled list per (cluster, group)
      -> repartition(cluster, group), persist and count: every row of a group in one
         partition, computed once (timings "diagnose")
      -> mapInArrow(aggregate_batches) each task aggregates its partition in Python
                                       (rmqlb.pipeline.aggregate.reduce_rows) to one
                                       partial, and returns its occurrences when --out
      -> Parquet occurrences/ (written by Spark)
      -> one collect of the partials, merged and finished on the driver
                                                                   (timings "aggregate")

Only aggregates reach the driver; :func:`rmqlb.pipeline.aggregate.finish` then classifies
and orders them exactly as for the local engine.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import partial, reduce
from pathlib import Path
from typing import Any

from rmqlb.pipeline.aggregate import Partial, Tables, finish_partial
from rmqlb.pipeline.batches import (
    AGGREGATE_DDL,
    PACKED_DDL,
    aggregate_batches,
    audit_batches,
    audit_runs,
    diagnose_batches,
    pack,
    pack_batches,
    split_batches,
    split_runs,
)
from rmqlb.pipeline.inputs import (
    LINES_GLOB,
    WHOLE_GLOB,
    InputPlan,
    Layout,
    chunk_files,
    file_size,
    spark_plan,
)
from rmqlb.pipeline.output import TABLE_COLUMNS, table_directory
from rmqlb.pipeline.progress import AuditProgress, ProgressSink
from rmqlb.pipeline.result import AuditOptions, AuditResult
from rmqlb.pipeline.units import UNIT_DDL, Row, diagnose_units, unreadable

MAX_PROBLEMS = 100


def read_records(spark: Any, plan: InputPlan) -> Any:
    """A DataFrame ``(path, text)``: one row per snapshot file or per JSON Lines line
    (``plan`` as :func:`~rmqlb.pipeline.inputs.spark_plan` made it: no special file)."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    def frame(reader: Any, paths: list[str]) -> Any:
        return reader.text(paths).select(
            F.col("_metadata.file_path").alias("path"), F.col("value").alias("text")
        )

    frames = []
    if plan.whole_files:
        frames.append(frame(spark.read.option("wholetext", "true"), list(plan.whole_files)))
    if plan.line_files:
        frames.append(frame(spark.read, list(plan.line_files)))
    dirs = list(plan.directories) + list(plan.uris)
    if dirs:
        recursive = spark.read.option("recursiveFileLookup", "true")
        whole = recursive.option("wholetext", "true").option("pathGlobFilter", WHOLE_GLOB)
        frames.append(frame(whole, dirs))
        lines = spark.read.option("recursiveFileLookup", "true")
        frames.append(frame(lines.option("pathGlobFilter", LINES_GLOB), dirs))
    if not frames:  # every input was skipped
        return spark.createDataFrame([], "path string, text string")
    records = frames[0]
    for other in frames[1:]:
        records = records.unionByName(other)
    return records


#: Tasks per core for the local snapshot files: enough to even out the cores' loads, few
#: enough that each task holds several captures of a cluster.
RUNS_PER_CORE = 4


def diagnosed_rows(
    spark: Any, plan: InputPlan, options: AuditOptions, token: str | None = None
) -> Any:
    """Steps 1-2: records -> units -> group/finding/snapshot/error rows, packed
    (``PACKED_DDL``, see :func:`~rmqlb.pipeline.batches.pack`; not yet computed).

    Local snapshot files (one snapshot each) are cut into runs of neighbouring files of
    about equal bytes, a few per core, and each task reads its run in Python and audits it
    as the in-process engine does: no text crosses from the JVM, and a worker meets the
    captures of a cluster in a row (its verdicts, kept per ``token``, are reused). JSON
    Lines files and remote URIs are read by Spark's text source (which splits big files).
    When the records already fill every core, split and diagnose run fused in one
    ``mapInArrow``; otherwise (a few big dumps) the units are spread over the cores first.
    A local file Spark must not open (a FIFO, a device, a symlink loop) is one ``error`` row
    with its reason, as in the local engine.
    """
    plan, skipped = spark_plan(plan)
    cores = spark.sparkContext.defaultParallelism
    frames = []
    if plan.whole_files:
        files = [(path, Layout.whole) for path in plan.whole_files]
        runs = chunk_files(files, [file_size(p) for p in plan.whole_files], cores * RUNS_PER_CORE)
        ids = spark.range(len(runs), numPartitions=len(runs))
        if len(runs) >= cores:
            fused = partial(audit_runs, runs=runs, cluster_from=options.cluster_from, token=token)
            frames.append(ids.mapInArrow(fused, PACKED_DDL))
        else:
            split = partial(split_runs, runs=runs, cluster_from=options.cluster_from)
            units = ids.mapInArrow(split, UNIT_DDL)
            frames.append(units.repartition(cores).mapInArrow(diagnose_batches, PACKED_DDL))
    if plan.line_files or plan.uris:
        records = read_records(spark, replace(plan, whole_files=()))
        if records.rdd.getNumPartitions() >= cores:
            fused = partial(audit_batches, cluster_from=options.cluster_from, token=token)
            frames.append(records.mapInArrow(fused, PACKED_DDL))
        else:
            split = partial(split_batches, cluster_from=options.cluster_from)
            units = records.mapInArrow(split, UNIT_DDL)
            frames.append(units.repartition(cores).mapInArrow(diagnose_batches, PACKED_DDL))
    if skipped:
        errors = list(diagnose_units(unreadable(path, why) for path, why in skipped))
        frames.append(_packed_frame(spark, errors))
    if not frames:  # every input was skipped
        return _packed_frame(spark, [])
    return reduce(lambda a, b: a.unionByName(b), frames)


def _packed_frame(spark: Any, rows: list[Row]) -> Any:
    """A DataFrame of ``rows`` made on the driver, packed."""
    import pyarrow as pa  # noqa: PLC0415

    schema = pa.schema([("cluster", pa.string()), ("group", pa.string()), ("rows", pa.binary())])
    table = pa.Table.from_batches(list(pack([rows])), schema=schema)
    return spark.createDataFrame(table, PACKED_DDL)


def _table(df: Any, name: str) -> Any:
    """Select and cast the columns of a Parquet table in contract order."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    return df.select(*[F.col(c).cast(t).alias(c) for c, t in TABLE_COLUMNS[name].items()])


def run_spark(
    spark: Any,
    plan: InputPlan,
    options: AuditOptions,
    out: Path | None,
    *,
    progress: ProgressSink | None = None,
) -> tuple[AuditResult, Tables]:
    """Run the audit on ``spark``; Spark writes ``occurrences/`` under ``out`` when given.

    The other tables are small aggregates the driver holds anyway (they make
    ``summary.json``); the caller writes them with pyarrow, exactly as the local engine does.
    Each task diagnoses a group state once however often its records repeat it
    (:func:`~rmqlb.pipeline.batches.audit_batches`). ``progress`` hears the tasks done of
    the running phase a few times a second.
    """
    started = time.perf_counter()
    with _TaskPoller(spark, progress) as poller:
        rows = diagnosed_rows(spark, plan, options, token=uuid.uuid4().hex)
        result, tables = aggregate_packed(rows, options, out, on_phase=poller.phase)
    result.timings["audit"] = time.perf_counter() - started
    return result, tables


class _TaskPoller:
    """Polls Spark's status tracker and reports the running stages' tasks to a sink.

    A daemon thread asks every ``interval`` seconds; with no sink it does nothing at all.
    """

    def __init__(self, spark: Any, sink: ProgressSink | None, interval: float = 0.25) -> None:
        self.sink = sink
        self.tracker = spark.sparkContext.statusTracker() if sink is not None else None
        self.interval = interval
        self.label = "read + diagnose (Spark)"
        self.started = time.perf_counter()
        self.stop = threading.Event()
        self.lock = threading.Lock()  # the poller and phase() must not draw at once
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _TaskPoller:
        if self.sink is not None:
            self.thread = threading.Thread(target=self._run, name="rmqlb-progress", daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()

    def phase(self, label: str) -> None:
        """The engine moved on to ``label``."""
        self.label = label
        self._report()

    def _run(self) -> None:
        while not self.stop.wait(self.interval):
            self._report()

    def _report(self) -> None:
        if self.sink is None or self.tracker is None:
            return
        done = total = 0
        for stage_id in self.tracker.getActiveStageIds():
            info = self.tracker.getStageInfo(stage_id)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        with self.lock:
            self.sink(
                AuditProgress(
                    self.label,
                    time.perf_counter() - self.started,
                    tasks_done=done,
                    tasks_total=total or None,
                )
            )


def aggregate_frame(
    rows_df: Any, options: AuditOptions, out: Path | None
) -> tuple[AuditResult, Tables]:
    """Steps 3-4 on a DataFrame of rows (``ROW_DDL``): :func:`aggregate_packed` on them
    packed."""
    return aggregate_packed(rows_df.mapInArrow(pack_batches, PACKED_DDL), options, out)


def aggregate_packed(
    packed: Any,
    options: AuditOptions,
    out: Path | None,
    *,
    on_phase: Callable[[str], None] | None = None,
) -> tuple[AuditResult, Tables]:
    """Steps 3-4 on a DataFrame of packed rows (``PACKED_DDL``): the same result and tables
    as :func:`rmqlb.pipeline.aggregate.aggregate`, by the same code. ``on_phase`` hears when
    the diagnosed rows are done and the aggregation starts.

    The packed rows are hash-partitioned by (cluster, group), so each partition holds every
    row of its groups; each task reduces its partition in Python
    (:func:`~rmqlb.pipeline.batches.aggregate_batches`) to one small partial aggregate, and
    the driver merges the partials (one per partition) and finishes them as the local
    engine does. With ``out`` the tasks also return the ``occurrences/`` rows, which Spark
    writes where they are computed."""
    import pickle  # noqa: PLC0415

    from pyspark import StorageLevel  # noqa: PLC0415
    from pyspark.sql import functions as F  # noqa: PLC0415

    timings: dict[str, float] = {}
    started = time.perf_counter()
    # The diagnosed rows are computed once, by this first job (read + split + parse +
    # diagnose in mapInArrow), hash-partitioned on the way by (cluster, group) and kept.
    rows = packed.repartition("cluster", "group").persist(StorageLevel.MEMORY_AND_DISK)
    try:
        rows.count()
        timings["diagnose"] = time.perf_counter() - started
        if on_phase is not None:
            on_phase("aggregate (Spark)")
        reduce = partial(aggregate_batches, options=options, occurrences=out is not None)
        aggregated = rows.mapInArrow(reduce, AGGREGATE_DDL)
        if out is not None:
            aggregated = aggregated.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if out is not None:  # the one big table: written where it is computed
                with table_directory(out, "occurrences") as directory:
                    _table(aggregated.filter(F.col("partial").isNull()), "occurrences").write.mode(
                        "overwrite"
                    ).parquet(str(directory))
            parts = [
                pickle.loads(r[0])  # written by aggregate_batches in this audit
                for r in aggregated.filter(F.col("partial").isNotNull()).select("partial").collect()
            ]
        finally:
            if out is not None:
                aggregated.unpersist()
    finally:
        rows.unpersist()
    whole = Partial.empty()
    for part in parts:
        whole.merge(part)
    result, tables = finish_partial(whole, options, engine="spark")
    timings["aggregate"] = time.perf_counter() - started - timings["diagnose"]
    result.timings.update(timings)
    return result, tables


def count_records(spark: Any, plan: InputPlan) -> int:
    """Baseline for the bench: read the same inputs with Spark and count the records."""
    return int(read_records(spark, plan).count())
