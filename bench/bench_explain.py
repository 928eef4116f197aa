"""Explain on a big snapshot: one group, 100,000 queues, 5,000 consumers (explain issue, item 7).

Measures the core of ``explain --output json`` (``load_snapshot`` + ``diagnose`` +
``report_to_text``, the serializer ``--output json`` uses) against the floor it cannot beat,
``json.load`` of the same file plus ``allocate`` alone (target <= 2); the whole command as a
process (``rmqlb explain --dump FILE --output json``: interpreter start, imports, writing)
against that core (target <= 2: the CLI adds at most as much again); and the peak RSS of
the core path, measured in a fresh subprocess (under 300 MB).

Run alone with ``python -m bench.bench_explain``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._util import BenchResult, ms, user_env
from rmqlb.allocate import allocate
from rmqlb.model import MessageQueue
from rmqlb.model.strategy import Avg

QUEUES = 100_000
CONSUMERS = 5_000
BROKERS = 10
TOPIC = "BenchTopic"
GROUP = "BenchGroup"
RSS_TARGET_MB = 300.0

# Each measurement runs in a fresh interpreter: in the bench process the big heap left by
# generating the file makes json.load's garbage collections (and so the floor) far slower.
# CPU time (process_time), not wall time: on a shared machine other processes' load moved the
# wall-clock ratio between 1.7 and 3.4 for the same code.
_CHILD = """
import json, sys, time
mode, path = sys.argv[1], sys.argv[2]
if mode == "floor":
    from rmqlb.allocate import allocate
    from rmqlb.model import MessageQueue
    from rmqlb.model.strategy import Avg
    start = time.process_time()
    with open(path, "rb") as fh:
        doc = json.load(fh)
    t_json = time.process_time() - start
    group = next(iter(doc["groups"].values()))
    cids = [c["clientId"] for c in group["consumers"]]
    queues = [MessageQueue(topic, qd["brokerName"], i)
              for topic, route in doc["topics"].items()
              for qd in route["queueDatas"] for i in range(qd["readQueueNums"])]
    del doc, group
    start = time.process_time()
    allocate(Avg(), queues, cids)
    print(t_json, time.process_time() - start)
elif mode == "core":
    from rmqlb.diagnose import diagnose
    from rmqlb.diagnose.report import report_to_text
    from rmqlb.snapshot import load_snapshot
    start = time.process_time()
    text = report_to_text(diagnose(load_snapshot(path)))
    elapsed = time.process_time() - start
    with open("/proc/self/status") as status:  # VmHWM: ru_maxrss keeps the parent's peak
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    print(elapsed, int(hwm.split()[1]) * 1024)
"""


def _child(mode: str, path: Path) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(path)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
        env=user_env(),
    )
    return [float(v) for v in out.stdout.split()]


def _cli_process(path: Path) -> float:
    """CPU seconds (user + system) of ``rmqlb explain --dump FILE --output json`` as a whole
    process: interpreter start, imports, load, diagnose and writing the JSON to a pipe."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rmqlb", "explain", "--dump", str(path), "--output", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=user_env(),
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in {0, 1}:  # 1: the report has findings
        raise RuntimeError(f"rmqlb explain exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def _client_id(i: int) -> str:
    return f"10.{i // 250}.{i % 250}.7@{1000 + i}#{1738000000000 + i}"


def build_snapshot() -> dict[str, Any]:
    """The synthetic document: AVG, everyone subscribed, actual = expected except for a
    handful of moved queues, offsets (lag) on every queue."""
    per_broker = QUEUES // BROKERS
    brokers = [f"broker-{b:02d}" for b in range(BROKERS)]
    queues = [MessageQueue(TOPIC, b, q) for b in brokers for q in range(per_broker)]
    cids = [_client_id(i) for i in range(CONSUMERS)]
    expected = allocate(Avg(), queues, cids)
    moved = {cids[0]: cids[1], cids[2]: cids[3]}
    consumers = []
    for cid in cids:
        held = list(expected[moved.get(cid, cid)])
        consumers.append(
            {
                "clientId": cid,
                "clientAddr": cid.split("@")[0] + ":50000",
                "language": "JAVA",
                "version": 413,
                "strategy": {"name": "AVG"},
                "subscriptions": [
                    {"topic": TOPIC, "expressionType": "TAG", "subString": "*", "subVersion": 1}
                ],
                "assigned": [
                    {"topic": q.topic, "brokerName": q.broker_name, "queueId": q.queue_id}
                    for q in held
                ],
            }
        )
    offsets = [
        {
            "topic": q.topic,
            "brokerName": q.broker_name,
            "queueId": q.queue_id,
            "brokerOffset": 10_000 + q.queue_id,
            "consumerOffset": 9_990 + q.queue_id,
            "lastTimestamp": 1_738_000_000_000,
        }
        for q in queues
    ]
    return {
        "format": "rmqlb.snapshot/1",
        "topics": {
            TOPIC: {
                "queueDatas": [
                    {
                        "brokerName": b,
                        "readQueueNums": per_broker,
                        "writeQueueNums": per_broker,
                        "perm": 6,
                    }
                    for b in brokers
                ]
            }
        },
        "groups": {
            GROUP: {
                "messageModel": "CLUSTERING",
                "strategy": {"name": "AVG"},
                "consumers": consumers,
                "offsets": offsets,
            }
        },
    }


def run() -> list[BenchResult]:
    """Time the explain path against json.load + allocate, each in a fresh interpreter."""
    with tempfile.TemporaryDirectory(prefix="rmqlb-bench-") as tmp:
        path = Path(tmp) / "big.json"
        with path.open("w", encoding="utf-8") as fh:
            json.dump(build_snapshot(), fh)
        size_mb = path.stat().st_size / 1e6
        _cli_process(path)  # as after an install: bytecode and dataclass methods compiled
        floors = [_child("floor", path) for _ in range(3)]
        cores = [_child("core", path) for _ in range(3)]
        clis = [_cli_process(path) for _ in range(3)]
    t_json = min(f[0] for f in floors)
    t_alloc = min(f[1] for f in floors)
    t_core = min(c[0] for c in cores)
    rss = min(c[1] for c in cores) / (1024 * 1024)
    t_cli = min(clis)
    floor = t_json + t_alloc
    detail = (
        f"load+diagnose+report_to_text {ms(t_core)} vs json.load {ms(t_json)} + "
        f"allocate {ms(t_alloc)} ({size_mb:.1f} MB, {QUEUES:,} queues, {CONSUMERS:,} consumers; "
        "CPU time, best of 3 fresh interpreters)"
    )
    return [
        BenchResult("explain 100k queues / 5k consumers (time)", t_core / floor, 2.0, detail),
        BenchResult(
            "explain --output json CLI process / core",
            t_cli / t_core,
            2.0,
            f"rmqlb explain --dump FILE --output json as a process {ms(t_cli)} (interpreter "
            f"start, imports and writing included; CPU time, best of 3) vs the core {ms(t_core)}",
        ),
        BenchResult(
            "explain 100k queues / 5k consumers (peak RSS)",
            rss / RSS_TARGET_MB,
            1.0,
            f"peak RSS {rss:.0f} MB (VmHWM; target < {RSS_TARGET_MB:.0f} MB)",
        ),
    ]


if __name__ == "__main__":
    for result in run():
        flag = "ok" if result.ok else "MISS"
        print(f"{result.name}: {result.ratio:.2f} (target {result.target:g}) {flag}")
        print(f"    {result.detail}")
