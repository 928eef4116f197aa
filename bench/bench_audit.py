"""Fleet audit: how much the audit costs over merely reading the snapshots with Spark, and
where the Spark engine overtakes the in-process one.

1. ``audit/read``: a generated fleet of 20,000 group snapshots (40 files x 500 groups).
   Audit wall time on a warm local SparkSession divided by the time the same session takes
   to read the same files and count the records. Target <= 3.
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
from pathlib import Path

from bench._util import BenchResult


def _fleet(root: Path, files: int, groups: int) -> Path:
    from rmqlb.pipeline.generate import generate_fleet  # noqa: PLC0415

    out = root / f"fleet-{files}x{groups}"
    generate_fleet(out, files, seed=42, groups=groups, clusters=4)
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


def run() -> list[BenchResult]:
    """Measure and return the ratios (see the module docstring)."""
    from rmqlb.pipeline import AuditOptions  # noqa: PLC0415
    from rmqlb.pipeline.inputs import plan_inputs  # noqa: PLC0415
    from rmqlb.pipeline.session import spark_session  # noqa: PLC0415
    from rmqlb.pipeline.spark_engine import count_records, run_spark  # noqa: PLC0415

    quick = bool(os.environ.get("RMQLB_BENCH_QUICK"))
    big_files, big_groups = (8, 125) if quick else (40, 500)
    small_files, small_groups = (4, 63) if quick else (8, 125)
    results: list[BenchResult] = []
    options = AuditOptions()
    with tempfile.TemporaryDirectory(prefix="rmqlb-bench-audit-") as tmp:
        root = Path(tmp)
        big = _fleet(root, big_files, big_groups)
        small = _fleet(root, small_files, small_groups)
        big_units = big_files * big_groups
        small_units = small_files * small_groups

        # 1. audit vs read+count on one warm session
        started = time.perf_counter()
        with spark_session() as spark:
            start_s = time.perf_counter() - started
            plan = plan_inputs([str(big)])
            read_s = min(_timed(lambda: count_records(spark, plan)) for _ in range(3))
            audit_s = min(_timed(lambda: run_spark(spark, plan, options, None)) for _ in range(2))
        results.append(
            BenchResult(
                f"audit/read ({big_units} group snapshots)",
                audit_s / read_s,
                3.0,
                f"audit {audit_s:.1f} s vs Spark read+count {read_s:.2f} s "
                f"(session start {start_s:.1f} s, not counted)",
            )
        )

        # 2. crossover: what `rmqlb audit` costs from the shell (fresh process, JVM start)
        points: dict[str, list[tuple[int, float]]] = {"local": [], "spark": []}
        for fleet, units in ((small, small_units), (big, big_units)):
            local_s = _timed(lambda fleet=fleet: _cli(fleet, "local"))
            spark_s = _timed(lambda fleet=fleet: _cli(fleet, "spark"))
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
