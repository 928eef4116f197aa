"""Live collection against the fake cluster: concurrency versus one request at a time.

A fake cluster answers every request 50 ms late (4 brokers, one group of 200 consumers on a
64-queue topic). ``rmqlb explain -n`` runs end to end over TCP; its wall time is divided by
what a one-request-at-a-time tool (like ``mqadmin``) needs for the same requests:
``requests x 50 ms``. Target <= 0.05 (at least 20x faster than sequential).
"""

from __future__ import annotations

import contextlib
import io
import time

from bench._util import BenchResult, ms
from rmqlb.allocate import allocate
from rmqlb.cli import run as cli_run
from rmqlb.fake import FakeClusterThread
from rmqlb.model import (
    BrokerInfo,
    Consumer,
    Group,
    MessageQueue,
    QueueData,
    QueueOffset,
    Snapshot,
    Subscription,
    TopicRoute,
)
from rmqlb.model.strategy import Avg

LATENCY_MS = 50.0
BROKERS = 4
QUEUES_PER_BROKER = 16
CONSUMERS = 200
TARGET = 0.05
REPEAT = 3


def bench_snapshot() -> Snapshot:
    """4 brokers, ``BenchTopic`` with 64 queues, one AVG group of 200 consumers."""
    names = [f"broker-{i}" for i in range(BROKERS)]
    topic, retry = "BenchTopic", "%RETRY%BenchGroup"
    routes = {
        topic: TopicRoute(
            topic, tuple(QueueData(n, QUEUES_PER_BROKER, QUEUES_PER_BROKER) for n in names)
        ),
        retry: TopicRoute(retry, (QueueData(names[0], 1, 1),)),
    }
    cids = [f"10.9.{i // 250}.{i % 250}@{1000 + i}#{7_000_000 + i}" for i in range(CONSUMERS)]
    subs = (Subscription(topic, sub_version=1), Subscription(retry, sub_version=1))
    shares = {t: allocate(Avg(), r.readable_queues(), cids) for t, r in routes.items()}
    consumers = tuple(
        Consumer(
            client_id=cid,
            subscriptions=subs,
            client_addr=cid.split("@")[0] + ":40000",
            language="JAVA",
            version=409,
            strategy=Avg(),
            consume_orderly=False,
            consume_type="CONSUME_PASSIVELY",
            assigned=tuple(q for t in routes for q in shares[t][cid]),
        )
        for cid in cids
    )
    offsets = tuple(
        QueueOffset(MessageQueue(topic, n, q), 1000 + q, 990 + q)
        for n in names
        for q in range(QUEUES_PER_BROKER)
    )
    group = Group(
        "BenchGroup", consume_type="CONSUME_PASSIVELY", consumers=consumers, offsets=offsets
    )
    brokers = {
        n: BrokerInfo(n, "BenchCluster", {0: f"10.9.100.{i}:10911"}) for i, n in enumerate(names)
    }
    return Snapshot(topics=routes, groups={group.name: group}, brokers=brokers)


def run() -> list[BenchResult]:
    """Explain over TCP against the slow fake; the ratio to sequential time.

    One warm-up run first (module imports are measured by the start-up bench, not here),
    then the best of :data:`REPEAT` measured runs; requests are counted per run.
    """
    snapshot = bench_snapshot()
    argv = ["explain", "-n", "", "-o", "json"]
    with FakeClusterThread(snapshot, latency_ms=LATENCY_MS) as fake:
        argv[2] = fake.namesrv_addr
        with contextlib.redirect_stdout(io.StringIO()):
            cli_run(argv)
            walls: list[float] = []
            for _ in range(REPEAT):  # the fastest run: noise on a shared machine only adds
                before = len(fake.requests)
                start = time.perf_counter()
                code = cli_run(argv)
                walls.append(time.perf_counter() - start)
                requests = len(fake.requests) - before
        wall = min(walls)
    sequential = requests * LATENCY_MS / 1000.0
    return [
        BenchResult(
            "live: explain -n, 200 consumers, 50 ms/request",
            wall / sequential,
            TARGET,
            f"{ms(wall)} for {requests} requests (sequential {sequential:.1f} s), exit {code}",
        )
    ]


if __name__ == "__main__":
    for result in run():
        print(f"{result.name}: ratio {result.ratio:.3f} (target {result.target}) {result.detail}")
