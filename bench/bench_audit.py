"""Fleet audit: how much the audit costs over merely reading the snapshots with Spark, and
where the Spark engine overtakes the in-process one.

1. ``audit/read``: a generated fleet of 20,000 group snapshots (40 files x 500 groups, 4
   clusters of 10 captures), realistic (5 % of the groups change between two captures, the
   others are captured byte for byte as before) and worst case (every group changes).
   On one local SparkSession (its start-up is excluded from both sides and printed apart),
   after one untimed warm-up of each side (JVM JIT, code generation, Python workers started
   with ``rmqlb`` imported), the audit (``run_spark``, no ``--out``) and "read the same files
   with Spark and count the records" run alternately three times; the ratio is
   best audit / best read (target <= 3). The detail splits the best audit into its two
   jobs (read + split + parse + diagnose in ``mapInArrow``; the Spark SQL aggregation and
   the collect of the aggregates) and gives the floor set by Python: the same records
   audited in this process on one core (``audit_record``), divided by the cores.
2. ``spark/local CLI`` at 1,000 and 20,000 group snapshots: ``rmqlb audit --engine spark``
   wall time in a fresh process (JVM and session start included: what it costs from the
   shell) divided by ``--engine local``. Below 1 means Spark wins; the last row estimates the
   crossover from the two sizes. Printed, never asserted.

``RMQLB_BENCH_QUICK=1`` shrinks the fleets twentyfold (1,000 and 250 group snapshots).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench._util import BenchResult

ROUNDS = 3


#: Share of groups whose state changes between two captures of the realistic fleet (most
#: groups of a cluster are captured exactly as before); the worst case changes them all.
CHANGE_RATE = 0.05


def _fleet(root: Path, files: int, groups: int, change_rate: float | None = CHANGE_RATE) -> Path:
    from rmqlb.pipeline.generate import generate_fleet  # noqa: PLC0415

    tag = "all" if change_rate is None else f"{change_rate:g}"
    out = root / f"fleet-{files}x{groups}-{tag}"
    generate_fleet(out, files, seed=42, groups=groups, clusters=4, change_rate=change_rate)
    return out


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _cli(fleet: Path, engine: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "rmqlb",
            "audit",
            str(fleet),
            "--engine",
            engine,
            "--output",
            "json",
            "--fail-on",
            "never",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")},
    )


def _crossover(points: dict[str, list[tuple[int, float]]]) -> str:
    """Where two straight lines through the measured points cross (an estimate)."""
    (n1, l1), (n2, l2) = points["local"]
    (_, s1), (_, s2) = points["spark"]
    local_slope, spark_slope = (l2 - l1) / (n2 - n1), (s2 - s1) / (n2 - n1)
    if spark_slope >= local_slope:
        return "no crossover: Spark is not faster per group here"
    at = (s1 - spark_slope * n1 - (l1 - local_slope * n1)) / (local_slope - spark_slope)
    return f"estimated crossover ~{max(at, 0):,.0f} group snapshots"


def _python_floor(fleet: Path) -> float:
    """Seconds of one core to split, parse and diagnose every record of ``fleet`` in this
    process (the per-record work of the ``mapInArrow`` step, without Spark or Arrow)."""
    from rmqlb.pipeline.inputs import local_files, plan_inputs  # noqa: PLC0415
    from rmqlb.pipeline.units import Verdict, audit_record  # noqa: PLC0415

    records = [
        (p, Path(p).read_text(encoding="utf-8")) for p, _ in local_files(plan_inputs([str(fleet)]))
    ]
    verdicts: dict[str, list[Verdict]] = {}
    start = time.perf_counter()
    for path, text in records:
        audit_record(text, path, verdicts=verdicts)
    return time.perf_counter() - start


def _audit_vs_read(fleets: dict[str, Path], units: int) -> list[BenchResult]:
    from rmqlb.pipeline import AuditOptions  # noqa: PLC0415
    from rmqlb.pipeline.inputs import plan_inputs  # noqa: PLC0415
    from rmqlb.pipeline.session import spark_session  # noqa: PLC0415
    from rmqlb.pipeline.spark_engine import count_records, run_spark  # noqa: PLC0415

    options = AuditOptions()
    results: list[BenchResult] = []
    started = time.perf_counter()
    with spark_session() as spark:
        start_s = time.perf_counter() - started
        cores = spark.sparkContext.defaultParallelism
        for label, fleet in fleets.items():
            plan = plan_inputs([str(fleet)])
            count_records(spark, plan)  # warm-up, untimed
            run_spark(spark, plan, options, None)
            best_read = best_audit = float("inf")
            best_timings: dict[str, float] = {}
            for _ in range(ROUNDS):  # alternate: a noisy neighbour slows both sides alike
                best_read = min(best_read, _timed(partial(count_records, spark, plan)))
                result, _ = run_spark(spark, plan, options, None)
                if result.timings["audit"] < best_audit:
                    best_audit, best_timings = result.timings["audit"], dict(result.timings)
            floor = _python_floor(fleet)
            diagnose_s = best_timings.get("diagnose", float("nan"))
            aggregate_s = best_timings.get("aggregate", float("nan"))
            results.append(
                BenchResult(
                    f"audit/read ({units} group snapshots, {label})",
                    best_audit / best_read,
                    3.0,
                    f"audit {best_audit:.2f} s = read+diagnose {diagnose_s:.2f} s + Spark SQL "
                    f"aggregation {aggregate_s:.2f} s, vs Spark read+count {best_read:.2f} s "
                    f"(best of {ROUNDS}, warm); Python floor: {floor:.2f} s on one core "
                    f"in-process (dedup) = {floor / cores:.2f} s on {cores} cores "
                    f"({floor / cores / best_read:.1f}x the read); "
                    f"session start {start_s:.1f} s excluded",
                )
            )
    return results


def run() -> list[BenchResult]:
    """Measure and return the ratios (see the module docstring)."""
    quick = bool(os.environ.get("RMQLB_BENCH_QUICK"))
    big_files, big_groups = (8, 125) if quick else (40, 500)
    small_files, small_groups = (4, 63) if quick else (8, 125)
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory(prefix="rmqlb-bench-audit-") as tmp:
        root = Path(tmp)
        big = _fleet(root, big_files, big_groups)
        big_all = _fleet(root, big_files, big_groups, None)
        small = _fleet(root, small_files, small_groups)
        big_units = big_files * big_groups
        small_units = small_files * small_groups

        # 1. audit vs read+count on one warm session
        results.extend(
            _audit_vs_read(
                {f"{CHANGE_RATE:.0%} of groups change per capture": big, "all change": big_all},
                big_units,
            )
        )

        # 2. crossover: what `rmqlb audit` costs from the shell (fresh process, JVM start)
        points: dict[str, list[tuple[int, float]]] = {"local": [], "spark": []}
        for fleet, units in ((small, small_units), (big, big_units)):
            local_s = _timed(partial(_cli, fleet, "local"))
            spark_s = _timed(partial(_cli, fleet, "spark"))
            points["local"].append((units, local_s))
            points["spark"].append((units, spark_s))
            results.append(
                BenchResult(
                    f"spark/local CLI ({units} group snapshots)",
                    spark_s / local_s,
                    1.0,
                    f"rmqlb audit --engine spark {spark_s:.1f} s vs --engine local "
                    f"{local_s:.1f} s (fresh processes); below 1: Spark wins",
                )
            )
        results[-1].detail += f"; {_crossover(points)}"
    return results


if __name__ == "__main__":
    for row in run():
        print(f"{row.name:45s} {row.ratio:6.2f} (target {row.target}) {row.detail}")
