"""Fleet audit: many snapshots -> which groups are broken, persistently or briefly, and which
flap. Runs on Spark (``--engine spark``) or in-process (``--engine local``) over the same
per-group code (:mod:`rmqlb.pipeline.units`, which calls :func:`rmqlb.diagnose.diagnose`).

Importing this package imports neither pyspark nor pyarrow; the engines import them when
they run.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path

from rmqlb.pipeline.inputs import plan_inputs
from rmqlb.pipeline.result import AUDIT_FORMAT, AuditOptions, AuditResult, summary_json

__all__ = [
    "AUDIT_FORMAT",
    "AuditOptions",
    "AuditResult",
    "Engine",
    "run_audit",
    "summary_json",
]


class Engine(StrEnum):
    """``--engine``: where the audit runs."""

    spark = "spark"
    local = "local"


def run_audit(
    paths: Sequence[str],
    *,
    engine: Engine = Engine.spark,
    options: AuditOptions | None = None,
    out: Path | None = None,
    master: str | None = None,
) -> AuditResult:
    """Audit the snapshots under ``paths``; write ``summary.json`` and Parquet under ``out``.

    Raises :class:`~rmqlb.errors.InputError` for missing paths, a bad ``--cluster-from``
    pattern, or (spark engine) when pyspark is not installed.
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
    if out is not None:
        prepare_out(out)
    if engine is Engine.local:
        from rmqlb.pipeline.local_engine import run_local  # noqa: PLC0415

        result, tables = run_local(plan, options)
    else:
        from rmqlb.pipeline.session import require_pyspark, spark_session  # noqa: PLC0415

        require_pyspark()
        from rmqlb.pipeline.spark_engine import run_spark  # noqa: PLC0415

        with spark_session(master) as spark:
            result, tables = run_spark(spark, plan, options, out)
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
