"""``--engine spark``: the audit as a Spark job (pyspark is imported inside the functions).

Plan (each step has a twin in :mod:`rmqlb.pipeline.aggregate`)::

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
      -> repartition(cluster, group), persist and count: snapshot markers, group rows,
         finding rows, error rows, computed once (timings "diagnose")
      -> group snapshots (groupBy) -> row_number / lag over capturedAt -> groups, flapping
      -> occurrences (groupBy) join group ranks -> findings (persistent / transient)
      -> Parquet occurrences/ (written by Spark)
      -> one collect of the JSON-encoded aggregates (totals, groups, findings, timeline,
         up to 100 input problems)                                 (timings "aggregate")

Only aggregates reach the driver; :func:`rmqlb.pipeline.aggregate.finish` then classifies
and orders them exactly as for the local engine.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import partial, reduce
from pathlib import Path
from typing import Any

from rmqlb.pipeline.aggregate import (
    TIMELINE_BUCKET_MS,
    FindingRecord,
    GroupRecord,
    Tables,
    finish,
)
from rmqlb.pipeline.batches import (
    audit_batches,
    audit_runs,
    diagnose_batches,
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
from rmqlb.pipeline.result import AuditOptions, AuditResult, InputProblem
from rmqlb.pipeline.units import (
    KIND_ERROR,
    KIND_FINDING,
    KIND_GROUP,
    KIND_SNAPSHOT,
    ROW_DDL,
    UNIT_DDL,
    diagnose_units,
    unreadable,
)

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
    """Steps 1-2: records -> units -> group/finding/snapshot/error rows (not yet computed).

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
            frames.append(ids.mapInArrow(fused, ROW_DDL))
        else:
            split = partial(split_runs, runs=runs, cluster_from=options.cluster_from)
            units = ids.mapInArrow(split, UNIT_DDL)
            frames.append(units.repartition(cores).mapInArrow(diagnose_batches, ROW_DDL))
    if plan.line_files or plan.uris:
        records = read_records(spark, replace(plan, whole_files=()))
        if records.rdd.getNumPartitions() >= cores:
            fused = partial(audit_batches, cluster_from=options.cluster_from, token=token)
            frames.append(records.mapInArrow(fused, ROW_DDL))
        else:
            split = partial(split_batches, cluster_from=options.cluster_from)
            units = records.mapInArrow(split, UNIT_DDL)
            frames.append(units.repartition(cores).mapInArrow(diagnose_batches, ROW_DDL))
    if skipped:
        errors = list(diagnose_units(unreadable(path, why) for path, why in skipped))
        frames.append(spark.createDataFrame(errors, ROW_DDL))
    if not frames:  # every input was skipped
        return spark.createDataFrame([], ROW_DDL)
    return reduce(lambda a, b: a.unionByName(b), frames)


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
        result, tables = aggregate_frame(rows, options, out, on_phase=poller.phase)
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
    rows_df: Any,
    options: AuditOptions,
    out: Path | None,
    *,
    on_phase: Callable[[str], None] | None = None,
) -> tuple[AuditResult, Tables]:
    """Steps 3-4 on a DataFrame of rows (``ROW_DDL``): the Spark twin of
    :func:`rmqlb.pipeline.aggregate.aggregate`, same result and same tables. ``on_phase``
    hears when the diagnosed rows are done and the aggregation starts."""
    from pyspark import StorageLevel  # noqa: PLC0415
    from pyspark.sql import Window  # noqa: PLC0415
    from pyspark.sql import functions as F  # noqa: PLC0415

    window = options.persistent_window
    cached: list[Any] = []

    def keep(df: Any) -> Any:
        cached.append(df.persist(StorageLevel.MEMORY_AND_DISK))
        return df

    sev_rank = (
        F.when(F.col("severity") == "error", 2).when(F.col("severity") == "warning", 1).otherwise(0)
    )
    timings: dict[str, float] = {}
    started = time.perf_counter()
    # The diagnosed rows feed every aggregate below: they are computed exactly once, by
    # this first job (read + split + parse + diagnose in mapInArrow), and kept. Without the
    # persist each branch of the final query would re-run the Python step (measured: 8
    # times). Hash-partitioning them by (cluster, group) on the way halves the number of
    # stages after it (every aggregate is keyed by cluster and group).
    rows = keep(rows_df.repartition("cluster", "group"))
    try:
        rows.count()
        timings["diagnose"] = time.perf_counter() - started
        if on_phase is not None:
            on_phase("aggregate (Spark SQL)")
        # step 1: group snapshots (duplicates of one snapshot merge)
        gs = (
            rows.filter(F.col("kind") == KIND_GROUP)
            .groupBy("cluster", "group", "ts")
            .agg(
                F.min("captured_at").alias("captured_at"),
                F.min("fingerprint").alias("fingerprint"),
                F.max("unconsumed").alias("unconsumed"),
                F.max("lag").alias("lag"),
            )
        )
        # step 2: rank from the newest, fingerprint changes between consecutive snapshots
        by_group = Window.partitionBy("cluster", "group")
        prev_fp = F.lag("fingerprint").over(by_group.orderBy("ts"))
        gs = keep(
            gs.withColumn("rn", F.row_number().over(by_group.orderBy(F.desc("ts")))).withColumn(
                "changed",
                F.when(
                    F.col("fingerprint").isNotNull()
                    & prev_fp.isNotNull()
                    & (F.col("fingerprint") != prev_fp),
                    1,
                ).otherwise(0),
            )
        )
        # step 3: occurrences of (cluster, group, topic, code) per snapshot, with the rank
        occ = keep(
            rows.filter(F.col("kind") == KIND_FINDING)
            .withColumn("rank", sev_rank)
            .groupBy("cluster", "group", "ts", "topic", "code")
            .agg(
                F.min("captured_at").alias("capturedAt"),
                F.max("rank").alias("rank"),
                F.max("unconsumed").alias("unconsumed"),
                F.max("lag").alias("lag"),
            )
            .join(gs.select("cluster", "group", "ts", "rn"), ["cluster", "group", "ts"])
        )
        latest = (
            occ.filter(F.col("rn") == 1)
            .groupBy("cluster", "group")
            .agg(F.count(F.lit(1)).alias("findings"), F.max("rank").alias("worstRank"))
        )
        groups = gs.groupBy("cluster", "group").agg(
            F.count(F.lit(1)).alias("snapshots"),
            F.min_by("captured_at", "ts").alias("firstSeen"),
            F.max_by("captured_at", "ts").alias("lastSeen"),
            F.max_by("unconsumed", "ts").alias("unconsumed"),
            F.max_by("lag", "ts").alias("lag"),
            F.max("unconsumed").alias("maxUnconsumed"),
            F.max("lag").alias("maxLag"),
            F.sum("changed").alias("changes"),
        )
        groups = groups.join(latest, ["cluster", "group"], "left")
        # step 4: per (cluster, group, topic, code)
        findings = occ.groupBy("cluster", "group", "topic", "code").agg(
            F.count(F.lit(1)).alias("snapshots"),
            F.min_by("capturedAt", "ts").alias("firstSeen"),
            F.max_by("capturedAt", "ts").alias("lastSeen"),
            F.sum(F.when(F.col("rn") <= window, 1).otherwise(0)).alias("recent"),
            F.max("rank").alias("rank"),
        )

        if out is not None:  # the one big table: written where it is computed
            occurrences = occ.withColumn(
                "severity",
                F.when(F.col("rank") == 2, "error")
                .when(F.col("rank") == 1, "warning")
                .otherwise("info"),
            )
            with table_directory(out, "occurrences") as directory:
                _table(occurrences, "occurrences").write.mode("overwrite").parquet(str(directory))

        # collect the aggregates in one job: each table JSON-encoded under a tag
        totals = rows.agg(
            F.count_distinct(
                F.when(F.col("kind") == KIND_SNAPSHOT, F.struct("cluster", "ts"))
            ).alias("snapshots"),
            F.sum(F.when(F.col("kind") == KIND_ERROR, 1).otherwise(0)).alias("problems"),
        )
        bucket = (F.floor(F.col("ts") / TIMELINE_BUCKET_MS) * TIMELINE_BUCKET_MS).cast("long")
        timeline_df = occ.groupBy(bucket.alias("bucket"), "code").agg(F.count(F.lit(1)).alias("n"))
        problems_df = (
            rows.filter(F.col("kind") == KIND_ERROR)
            .select("path", "group", "error")
            .limit(MAX_PROBLEMS)
        )
        parts = [
            df.select(F.lit(tag).alias("tag"), F.to_json(F.struct("*")).alias("row"))
            for tag, df in (
                ("totals", totals),
                ("group", groups),
                ("finding", findings),
                ("timeline", timeline_df),
                ("problem", problems_df),
            )
        ]
        collected: dict[str, list[dict[str, Any]]] = {}
        for r in reduce(lambda a, b: a.unionAll(b), parts).collect():
            collected.setdefault(r["tag"], []).append(json.loads(r["row"]))
    finally:
        for df in cached:
            df.unpersist()
    [total] = collected.get("totals", [{}])
    group_rows = [
        GroupRecord(
            cluster=r["cluster"],
            group=r["group"],
            snapshots=r["snapshots"],
            first_seen=r["firstSeen"],
            last_seen=r["lastSeen"],
            unconsumed=r["unconsumed"],
            lag=r.get("lag"),
            max_unconsumed=r["maxUnconsumed"],
            max_lag=r.get("maxLag"),
            changes=r["changes"],
            findings=r.get("findings") or 0,
            worst_rank=r.get("worstRank"),
        )
        for r in collected.get("group", [])
    ]
    finding_rows = [
        FindingRecord(
            cluster=r["cluster"],
            group=r["group"],
            topic=r.get("topic"),
            code=r["code"],
            rank=r["rank"],
            first_seen=r["firstSeen"],
            last_seen=r["lastSeen"],
            snapshots=r["snapshots"],
            recent=r["recent"],
        )
        for r in collected.get("finding", [])
    ]
    timeline = sorted((r["bucket"], r["code"], r["n"]) for r in collected.get("timeline", []))
    problems = [
        InputProblem(r.get("path"), r.get("group"), r.get("error") or "unusable input")
        for r in collected.get("problem", [])
    ]
    problem_count = int(total.get("problems") or 0)
    result, tables = finish(
        snapshots=int(total.get("snapshots") or 0),
        groups=group_rows,
        findings=finding_rows,
        timeline=timeline,
        problems=problems,
        problem_count=problem_count,
        options=options,
        engine="spark",
    )
    timings["aggregate"] = time.perf_counter() - started - timings["diagnose"]
    result.timings.update(timings)
    return result, tables


def count_records(spark: Any, plan: InputPlan) -> int:
    """Baseline for the bench: read the same inputs with Spark and count the records."""
    return int(read_records(spark, plan).count())
