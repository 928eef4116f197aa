"""Fleet audit: many snapshots -> which groups are broken, persistently or briefly, and which
flap. Runs on Spark (``--engine spark``) or in-process (``--engine local``) over the same
per-group code (:mod:`rmqlb.pipeline.units`, which calls :func:`rmqlb.diagnose.diagnose`).

Importing this package imports neither pyspark nor pyarrow; the engines import them when
they run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path

from rmqlb.pipeline.inputs import InputPlan, plan_inputs
from rmqlb.pipeline.progress import AuditProgress, ProgressSink
from rmqlb.pipeline.result import AUDIT_FORMAT, AuditOptions, AuditResult, summary_json

__all__ = [
    "AUDIT_FORMAT",
    "AuditOptions",
    "AuditProgress",
    "AuditResult",
    "Engine",
    "ProgressSink",
    "choose_engine",
    "run_audit",
    "summary_json",
]


class Engine(StrEnum):
    """``--engine``: where the audit runs."""

    auto = "auto"
    spark = "spark"
    local = "local"


#: ``--engine auto`` sends local snapshots beyond this many bytes to Spark; ``None``: never.
#: Measured by ``make bench`` (bench/bench_audit.py) on a 2-core machine (AMD EPYC under
#: KVM, 23 GB, load average 7-14 from other jobs), one run: from the shell the in-process
#: engine took 27 / 59 / 93 s for 70 / 143 / 285 MB of snapshots and Spark (local[*], JVM
#: start included) 242 / 210 / 330 s; at 565 MB, 144 s in-process against 212 s for Spark
#: on a warm session (plus 46 s to start it). Straight lines through the shell runs: 10 s +
#: 0.30 s/MB in-process, 183 s + 0.47 s/MB on Spark: they never cross. Since the in-process
#: engine spreads a big fleet over one worker per core, Spark's ``local[*]`` runs the same
#: Python on the same cores plus a JVM, so no size makes it the faster one on one machine.
AUTO_LOCAL_MAX_BYTES: int | None = None


def choose_engine(
    plan: InputPlan, master: str | None, *, max_bytes: int | None = AUTO_LOCAL_MAX_BYTES
) -> tuple[Engine, str]:
    """``--engine auto``: the engine for ``plan`` and one line saying why.

    Spark when a master is given, a Spark session is already there (``spark-submit``, a
    notebook), the input is remote (``s3a://``...) or the local snapshots exceed
    ``max_bytes``; otherwise the in-process engine (no JVM start).
    """
    import os  # noqa: PLC0415

    from rmqlb.pipeline.inputs import local_files  # noqa: PLC0415

    if master is not None:
        return Engine.spark, f"--master {master} given"
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return Engine.spark, "running inside a Spark driver"
    if plan.uris:
        return Engine.spark, f"remote input ({plan.uris[0]})"
    size = 0
    for path, _ in local_files(plan):
        try:
            size += os.stat(path).st_size
        except OSError:
            continue
    mb = size / 1e6
    if max_bytes is not None and size > max_bytes:
        return Engine.spark, f"{mb:,.0f} MB of snapshots (> {max_bytes / 1e6:,.0f} MB)"
    return Engine.local, f"{mb:,.1f} MB of snapshots: faster in-process on one machine"


def run_audit(
    paths: Sequence[str],
    *,
    engine: Engine = Engine.auto,
    options: AuditOptions | None = None,
    out: Path | None = None,
    master: str | None = None,
    on_choice: Callable[[Engine, str], None] | None = None,
    progress: ProgressSink | None = None,
) -> AuditResult:
    """Audit the snapshots under ``paths``; write ``summary.json`` and Parquet under ``out``.

    ``Engine.auto`` picks one with :func:`choose_engine` and tells ``on_choice`` which and
    why; ``progress`` hears how far the engine got (files, snapshots, tasks). Raises
    :class:`~rmqlb.errors.InputError` for missing paths, a bad ``--cluster-from`` pattern,
    or (spark engine) when pyspark is not installed.
    """
    import re  # noqa: PLC0415

    from rmqlb.errors import InputError  # noqa: PLC0415
    from rmqlb.pipeline.output import prepare_out, write_parquet_tables, write_summary  # noqa: PLC0415

    options = options or AuditOptions()
    if options.persistent_window < 1:
        raise InputError("--persistent-window must be at least 1")
    if options.flap_threshold < 0:
        raise InputError("--flap-threshold must not be negative")
    if options.cluster_from is not None:
        try:
            groups = re.compile(options.cluster_from).groups
        except re.error as exc:
            raise InputError(f"--cluster-from {options.cluster_from!r}: {exc}") from None
        if groups != 1:
            raise InputError(
                f"--cluster-from {options.cluster_from!r} must have exactly one group (...)"
            )
    plan = plan_inputs(paths)
    if engine is Engine.auto:
        engine, why = choose_engine(plan, master)
        if on_choice is not None:
            on_choice(engine, why)
    if out is not None:
        prepare_out(out)
    if engine is Engine.local:
        from rmqlb.pipeline.local_engine import run_local  # noqa: PLC0415

        result, tables = run_local(plan, options, progress=progress)
    else:
        from rmqlb.pipeline.session import require_pyspark, spark_session  # noqa: PLC0415

        require_pyspark()
        from rmqlb.pipeline.spark_engine import run_spark  # noqa: PLC0415

        with spark_session(master) as spark:
            result, tables = run_spark(spark, plan, options, out, progress=progress)
    if out is not None:
        written = {
            "findings": tables.findings,
            "groups": tables.groups,
            "flapping": tables.flapping,
        }
        if engine is Engine.local:
            written["occurrences"] = tables.occurrences
        write_parquet_tables(out, written)
    if out is not None:
        write_summary(out, result)
    return result
