"""``rmqlb exporter``'s memory over 1,000 captures of the fake cluster.

The exporter runs for weeks: each capture (a live capture over TCP, the status summary, a
scrape of ``/metrics``'s families) must leave nothing behind. The fake cluster runs as its own
process (``rmqlb serve``), so only the exporter's memory is traced. Python's traced memory is
measured after :data:`WARMUP` captures and again after :data:`CAPTURES`; the ratio of the
two is the row (target <= 1.05: flat, allowing the allocator's noise).
"""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

from bench._util import BenchResult
from rmqlb.cli.exporter import capture_live
from rmqlb.cli.live import LiveOptions
from rmqlb.diagnose.context import PollHistory
from rmqlb.exporter.server import CaptureCollector, Exporter, openmetrics

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "examples" / "split-subscriptions.json"
WARMUP = 100
CAPTURES = 1000


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def run() -> list[BenchResult]:
    """One row: traced memory after 1,000 captures over traced memory after 100."""
    serve = [sys.executable, "-m", "rmqlb", "serve", str(SNAPSHOT), "--port", "0"]
    fake = subprocess.Popen(serve, stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout is not None
        found = re.search(r"NameServer (\S+)", fake.stdout.readline())
        assert found, "rmqlb serve did not start"
        options = LiveOptions(namesrv=found.group(1), progress=False)
        history = PollHistory()  # as the command keeps it (QUEUE_STALLED)
        exporter = Exporter(lambda last: capture_live(options, [], last, history), interval=1.0)
        collector = CaptureCollector(exporter)
        tracemalloc.start()
        try:
            early = 0
            for n in range(1, CAPTURES + 1):
                exporter.run_once()
                assert openmetrics(collector.collect())  # a scrape
                if n == WARMUP:
                    early = _traced()
            late = _traced()
        finally:
            tracemalloc.stop()
    finally:
        fake.terminate()
        fake.wait()
    failed = exporter.results["failed"]
    return [
        BenchResult(
            "exporter memory, 1,000 captures",
            late / early,
            1.05,
            f"traced {early / 1024:.0f} KiB after {WARMUP} captures, {late / 1024:.0f} KiB "
            f"after {CAPTURES} ({failed} failed)",
        )
    ]
