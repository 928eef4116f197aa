"""Fleet audit at the scale Spark is for: both engines against the Python floor, and where
``--engine auto`` should switch.

The fleet: 320 generated snapshots of 500 groups (8 clusters x 40 captures, 160,000 group
snapshots, ~565 MB; 5 % of the groups change between two captures, the others are
captured byte for byte as before), generated once and kept in a cache outside the
repository (``bench/_fleet.py``).

1. The **Python floor**: the per-record work of the audit and nothing else — read each file,
   decode, split by group, parse and diagnose each group state not met before, build the
   rows (:func:`rmqlb.pipeline.local_engine.audit_file`, what both engines run per file) —
   spread over one worker process per core, runs of neighbouring files handed out as the
   workers free up, each worker with its own dedup cache; workers started (imports done)
   before the clock starts; the rows are counted, not returned.
2. ``audit local/floor``: ``run_local`` (its worker pool started inside the clock, the rows
   returned and aggregated) over the floor, alternately, best of each (target 1.2).
3. ``audit Spark/floor``: ``run_spark`` on a warm local SparkSession (session start printed
   apart; one untimed audit of a few files first starts the Python workers) over the floor,
   alternately (target 1.5). The detail gives Spark reading the same files and counting the
   records (the raw read), and the audit over it, for reference.
4. ``auto`` (run first): ``rmqlb audit --engine local`` and ``--engine spark`` from the
   shell (fresh processes: JVM and session start included) on 1, 2, 4 and 8 of the
   clusters; each row
   is the time of the engine ``--engine auto`` picks there over the faster of the two
   (target 1: it picked the faster). The last row gives the crossover of straight lines
   through the points (``AUTO_LOCAL_MAX_BYTES`` in ``rmqlb/pipeline/__init__.py`` is set
   from it).

``RMQLB_BENCH_QUICK=1`` uses a fleet of 32 snapshots of 100 groups (~11 MB). Each row is
also printed to stderr as soon as it is measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._fleet import cached_fleet, fleet_bytes
from bench._util import BenchResult

#: Rounds of each alternating pair (``RMQLB_BENCH_ROUNDS``; each round of the full fleet
#: takes minutes on 2 cores).
ROUNDS = int(os.environ.get("RMQLB_BENCH_ROUNDS", "2"))
FLEET = {"files": 320, "groups": 500, "clusters": 8, "change_rate": 0.05}
QUICK_FLEET = {"files": 32, "groups": 100, "clusters": 4, "change_rate": 0.05}


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


# -- the Python floor ------------------------------------------------------------------------

_floor_round: str | None = None
_floor_verdicts: dict[str, Any] = {}


def _floor_run(task: tuple[str, list[tuple[str, Any]]]) -> int:
    """In a floor worker: audit a run of files with this worker's cache for the round."""
    from rmqlb.pipeline.local_engine import audit_file  # noqa: PLC0415

    global _floor_round  # noqa: PLW0603  (one cache per worker and round)
    token, run = task
    if token != _floor_round:
        _floor_round = token
        _floor_verdicts.clear()
    return sum(
        len(rows)
        for path, layout in run
        for _, rows in audit_file(path, layout, None, verdicts=_floor_verdicts)
    )


def _ready(_: int) -> int:
    return os.getpid()


class Floor:
    """A pool of one worker per core, forked while this process has no other thread;
    each :meth:`measure` is one round with fresh caches. (The pool's own threads would make
    ``run_local`` spawn its workers instead of forking them: close it before that runs.)"""

    def __init__(self, fleet: Path) -> None:
        import multiprocessing  # noqa: PLC0415

        import rmqlb.diagnose  # noqa: PLC0415  (the workers start with it imported)
        import rmqlb.snapshot  # noqa: F401, PLC0415
        from rmqlb.pipeline.inputs import chunk_files, file_size, local_files, plan_inputs  # noqa: PLC0415
        from rmqlb.pipeline.local_engine import RUNS_PER_WORKER, usable_cores  # noqa: PLC0415

        self.cores = usable_cores()
        self.pool = multiprocessing.get_context("fork").Pool(self.cores)
        while len(set(self.pool.map(_ready, range(self.cores * 4), chunksize=1))) < self.cores:
            pass  # every worker up
        files = local_files(plan_inputs([str(fleet)]))
        self.runs = chunk_files(
            files, [file_size(p) for p, _ in files], self.cores * RUNS_PER_WORKER
        )

    def measure(self) -> float:
        """Seconds for one round of the per-record work over the pool."""
        token = uuid.uuid4().hex
        start = time.perf_counter()
        rows = sum(
            self.pool.imap_unordered(_floor_run, [(token, run) for run in self.runs], chunksize=1)
        )
        elapsed = time.perf_counter() - start
        assert rows > 0
        return elapsed

    def close(self) -> None:
        """Stop the workers."""
        self.pool.close()
        self.pool.join()


# -- the engines -------------------------------------------------------------------------------


def _local_vs_floor(fleet: Path, label: str) -> BenchResult:
    from rmqlb.pipeline import AuditOptions  # noqa: PLC0415
    from rmqlb.pipeline.inputs import plan_inputs  # noqa: PLC0415
    from rmqlb.pipeline.local_engine import run_local  # noqa: PLC0415

    plan = plan_inputs([str(fleet)])
    best_local = best_floor = float("inf")
    cores = 0
    for _ in range(ROUNDS):  # alternate: a noisy neighbour slows both sides alike
        floor = Floor(fleet)
        try:
            best_floor, cores = min(best_floor, floor.measure()), floor.cores
        finally:
            floor.close()
        best_local = min(best_local, _timed(lambda: run_local(plan, AuditOptions())))
    return BenchResult(
        f"audit local/floor ({label})",
        best_local / best_floor,
        1.2,
        f"rmqlb.pipeline run_local {best_local:.1f} s (worker pool started, rows "
        f"aggregated) vs Python floor {best_floor:.1f} s ({cores} worker processes, "
        f"same per-record work, rows counted); best of {ROUNDS}; {_load()}",
    )


def _spark_vs_floor(fleet: Path, floor: Floor, label: str) -> BenchResult:
    from rmqlb.pipeline import AuditOptions  # noqa: PLC0415
    from rmqlb.pipeline.inputs import plan_inputs  # noqa: PLC0415
    from rmqlb.pipeline.session import spark_session  # noqa: PLC0415
    from rmqlb.pipeline.spark_engine import count_records, run_spark  # noqa: PLC0415

    plan = plan_inputs([str(fleet)])
    few = sorted(str(p) for p in fleet.rglob("[!_]*.json"))[:4]
    options = AuditOptions()
    started = time.perf_counter()
    with spark_session() as spark:
        start_s = time.perf_counter() - started
        run_spark(spark, plan_inputs(few), options, None)  # untimed: workers, JIT
        count_records(spark, plan_inputs(few))
        best_spark = best_floor = best_read = float("inf")
        timings: dict[str, float] = {}
        for _ in range(ROUNDS):
            best_floor = min(best_floor, floor.measure())
            result, _ = run_spark(spark, plan, options, None)
            if result.timings["audit"] < best_spark:
                best_spark, timings = result.timings["audit"], dict(result.timings)
            best_read = min(best_read, _timed(lambda: count_records(spark, plan)))
    return BenchResult(
        f"audit Spark/floor ({label})",
        best_spark / best_floor,
        1.5,
        f"run_spark {best_spark:.1f} s on a warm local[*] session = read+diagnose "
        f"{timings.get('diagnose', float('nan')):.1f} s + aggregation per partition "
        f"{timings.get('aggregate', float('nan')):.1f} s, vs Python floor {best_floor:.1f} s; "
        f"best of {ROUNDS}; session start {start_s:.0f} s apart; for reference Spark reads "
        f"and counts the records in {best_read:.1f} s (audit/read "
        f"{best_spark / best_read:.1f}x); {_load()}",
    )


# -- where --engine auto switches -------------------------------------------------------------


_QUIET = ("--output", "json", "--fail-on", "never")


def _cli(paths: list[str], engine: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "rmqlb", "audit", *paths, "--engine", engine, *_QUIET],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")},
    )
    return time.perf_counter() - start


def _line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares ``(intercept, slope)`` through ``(x, y)`` points."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread
    return mean_y - slope * mean_x, slope


def crossover(local: list[tuple[float, float]], spark: list[tuple[float, float]]) -> str:
    """Where straight lines through the (MB, seconds) points of the two engines cross.

    >>> crossover([(100, 10), (200, 20)], [(100, 30), (200, 35)])
    'Spark overtakes in-process at ~400 MB (straight lines through 2 sizes)'
    >>> crossover([(100, 10), (200, 20)], [(100, 30), (200, 45)])
    'no crossover: Spark costs 0.150 s/MB here, in-process 0.100 s/MB'
    """
    (local_0, local_k), (spark_0, spark_k) = _line(local), _line(spark)
    if spark_k >= local_k:
        return f"no crossover: Spark costs {spark_k:.3f} s/MB here, in-process {local_k:.3f} s/MB"
    at = (spark_0 - local_0) / (local_k - spark_k)
    return (
        f"Spark overtakes in-process at ~{at:,.0f} MB (straight lines through {len(local)} sizes)"
    )


def _auto_rows(fleet: Path) -> list[BenchResult]:
    from rmqlb.pipeline import choose_engine  # noqa: PLC0415
    from rmqlb.pipeline.inputs import plan_inputs  # noqa: PLC0415

    clusters = sorted(str(p) for p in fleet.iterdir() if p.is_dir())
    results: list[BenchResult] = []
    points: dict[str, list[tuple[float, float]]] = {"local": [], "spark": []}
    count = 1
    while count <= len(clusters):
        paths = clusters[:count]
        mb = sum(fleet_bytes(Path(p)) for p in paths) / 1e6
        local_s, spark_s = _cli(paths, "local"), _cli(paths, "spark")
        points["local"].append((mb, local_s))
        points["spark"].append((mb, spark_s))
        picked, _ = choose_engine(plan_inputs(paths), None)
        took = local_s if picked.value == "local" else spark_s
        results.append(
            BenchResult(
                f"audit auto's pick/faster ({mb:,.0f} MB)",
                took / min(local_s, spark_s),
                1.0,
                f"--engine auto picks {picked.value}; from the shell --engine local "
                f"{local_s:.1f} s, --engine spark {spark_s:.1f} s (JVM start included); "
                f"{_load()}",
            )
        )
        _shown(results[-1:])
        count *= 2
    if len(points["local"]) >= 2:
        results[-1].detail += f"; {crossover(points['local'], points['spark'])}"
    return results


def run() -> list[BenchResult]:
    """Measure and return the ratios (see the module docstring)."""
    quick = bool(os.environ.get("RMQLB_BENCH_QUICK"))
    params = QUICK_FLEET if quick else FLEET
    started = time.perf_counter()
    fleet, hit = cached_fleet(**params)  # type: ignore[arg-type]
    made = "cached" if hit else f"generated in {time.perf_counter() - started:.0f} s"
    mb = fleet_bytes(fleet) / 1e6
    units = int(params["files"]) * int(params["groups"])
    label = f"{units:,} group snapshots, {mb:,.0f} MB, {made}"
    # the shell runs first: the bench's own JVM outlives its session and would slow them
    rows = _auto_rows(fleet)
    rows += _shown([_local_vs_floor(fleet, label)])
    floor = Floor(fleet)  # forked before the JVM's threads start
    try:
        rows += _shown([_spark_vs_floor(fleet, floor, label)])
    finally:
        floor.close()
    return rows


def _shown(rows: list[BenchResult]) -> list[BenchResult]:
    """``rows``, also printed to stderr at once (a full run takes many minutes)."""
    for row in rows:
        print(
            f"  {row.name}: {row.ratio:.2f} (target {row.target:g}) {row.detail}", file=sys.stderr
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row.name:45s} {row.ratio:6.2f} (target {row.target}) {row.detail}")
