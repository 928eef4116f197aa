"""A live capture of one big group: 5,000 consumers on 100,000 queues over 10 brokers.

The fake cluster (``rmqlb serve``, its own process, no added latency) serves the snapshot of
:mod:`bench.bench_explain`; ``rmqlb explain -n ADDR GROUP -o json`` runs as a user runs it,
:data:`RUNS` times. It must capture everything (no failed request: every client's running
info, every broker's tables) and finish well inside the capture's default deadline: the row
is the median wall time over that deadline (30 s), target <= 0.5. Before this row existed
the same run took 40 s and lost 2,700 requests to the deadline (quadratic steps and every
client asked through every broker); its detail says how many requests failed.

Run alone with ``python -m bench.bench_live_big``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._util import BenchResult, ms, user_env
from bench.bench_explain import GROUP, build_snapshot
from rmqlb.client.collector import CollectOptions

RUNS = 3
TARGET = 0.5
READY_S = 120.0  # loading the 23 MB snapshot into the fake


def _serve(path: Path) -> tuple[subprocess.Popen[str], str]:
    """Start the fake cluster on a free port; its NameServer address once it listens."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rmqlb", "serve", str(path), "-p", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=user_env(),
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if "NameServer" in line:
            return proc, line.split("NameServer", 1)[1].split()[0]
    proc.kill()
    raise RuntimeError("rmqlb serve did not start")


def _explain(namesrv: str) -> tuple[float, int, int]:
    """Wall seconds of one ``explain`` process, its exit code and its capture errors."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rmqlb", "explain", "-n", namesrv, GROUP, "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
        env=user_env(),
    )
    took = time.perf_counter() - start
    if done.returncode not in {0, 1, 4}:
        raise RuntimeError(f"rmqlb explain exited {done.returncode}: {done.stderr[:500]}")
    return took, done.returncode, len(json.loads(done.stdout).get("errors", []))


def run() -> list[BenchResult]:
    """Serve the big snapshot, explain its group live :data:`RUNS` times."""
    deadline = CollectOptions(namesrv=("-",)).overall_deadline()
    with tempfile.TemporaryDirectory(prefix="rmqlb-bench-") as tmp:
        path = Path(tmp) / "big.json"
        path.write_text(json.dumps(build_snapshot()), encoding="utf-8")
        proc, namesrv = _serve(path)
        try:
            runs = [_explain(namesrv) for _ in range(RUNS)]
        finally:
            proc.kill()
            proc.wait()
    took = statistics.median(t for t, _, _ in runs)
    failed = max(n for _, _, n in runs)
    codes = sorted({code for _, code, _ in runs})
    ratio = took / deadline if failed == 0 else float("inf")
    return [
        BenchResult(
            "live explain of 5k consumers / 100k queues / 10 brokers / default deadline",
            ratio,
            TARGET,
            f"{ms(took)} (median of {RUNS} processes; exit {codes}; {failed} failed requests at "
            f"most) vs the default deadline {deadline:g} s; the fake cluster in its own process",
        )
    ]


if __name__ == "__main__":
    for row in run():
        print(f"{row.name:70s} {row.ratio:6.2f} (target {row.target}) {row.detail}")
