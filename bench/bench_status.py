"""``rmqlb status`` of a 1,000-group cluster in one capture versus one group at a time.

A fake cluster of 4 brokers answers every request :data:`LATENCY_MS` late. It holds 1,000
consumer groups (2 AVG consumers each, 250 topics of 8 queues shared by 4 groups, offsets
everywhere). ``rmqlb status -n`` discovers and captures them all in one run, with bounded
concurrency (``--max-in-flight``) under the overall deadline. The floor it is compared with
is what an on-call engineer's loop over the groups costs, ``rmqlb explain -n ADDR GROUP``
one group after the other: measured on :data:`SAMPLE` groups, scaled to all of them.
Target <= 0.1 (at least 10x faster than one group at a time).
"""

from __future__ import annotations

import contextlib
import io
import json
import time

from bench._util import BenchResult
from rmqlb.allocate import allocate
from rmqlb.cli import run as cli_run
from rmqlb.fake import FakeClusterThread
from rmqlb.model import (
    BrokerInfo,
    Consumer,
    ConsumeStatus,
    Group,
    MessageQueue,
    QueueData,
    QueueOffset,
    Snapshot,
    Subscription,
    TopicRoute,
)
from rmqlb.model.strategy import Avg

LATENCY_MS = 20.0
BROKERS = 4
GROUPS = 1000
GROUPS_PER_TOPIC = 4
QUEUES_PER_BROKER = 2
CONSUMERS = 2
SAMPLE = 20
TARGET = 0.1


def bench_snapshot() -> Snapshot:
    """4 brokers, 1,000 groups of 2 consumers, 250 topics of 8 queues (4 groups each)."""
    brokers = [f"broker-{i}" for i in range(BROKERS)]
    topics: dict[str, TopicRoute] = {}
    groups: dict[str, Group] = {}
    for g in range(GROUPS):
        name = f"group-{g:04d}"
        topic = f"topic-{g // GROUPS_PER_TOPIC:03d}"
        retry = "%RETRY%" + name
        topics.setdefault(
            topic,
            TopicRoute(
                topic, tuple(QueueData(b, QUEUES_PER_BROKER, QUEUES_PER_BROKER) for b in brokers)
            ),
        )
        topics[retry] = TopicRoute(retry, (QueueData(brokers[0], 1, 1),))
        cids = [f"10.{g // 250}.{g % 250}.{c}@{4000 + c}#{9_000_000 + g}" for c in range(CONSUMERS)]
        shares = {t: allocate(Avg(), topics[t].readable_queues(), cids) for t in (topic, retry)}
        subs = (Subscription(topic, sub_version=1), Subscription(retry, sub_version=1))
        consumers = tuple(
            Consumer(
                client_id=cid,
                subscriptions=subs,
                client_addr=cid.split("@")[0] + ":40000",
                language="JAVA",
                version=409,
                strategy=Avg(),
                consume_type="CONSUME_PASSIVELY",
                assigned=tuple(q for t in (topic, retry) for q in shares[t][cid]),
                status={topic: ConsumeStatus(consume_ok_tps=10.0)},
            )
            for cid in cids
        )
        offsets = tuple(
            QueueOffset(MessageQueue(topic, b, q), 1000 + g, 990 + g)
            for b in brokers
            for q in range(QUEUES_PER_BROKER)
        )
        groups[name] = Group(
            name, consume_type="CONSUME_PASSIVELY", consumers=consumers, offsets=offsets
        )
    infos = {
        b: BrokerInfo(b, "BenchCluster", {0: f"10.9.100.{i}:10911"}) for i, b in enumerate(brokers)
    }
    return Snapshot(topics=topics, groups=groups, brokers=infos)


def _quiet(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_run(argv)
    return code, out.getvalue()


def run() -> list[BenchResult]:
    """One ``status`` capture of every group against ``explain`` of a sample, one by one."""
    snapshot = bench_snapshot()
    with FakeClusterThread(snapshot, latency_ms=LATENCY_MS) as fake:
        addr = fake.namesrv_addr
        _quiet(["explain", "-n", addr, "group-0000", "-o", "json"])  # warm imports up
        before = len(fake.requests)
        start = time.perf_counter()
        code, out = _quiet(["status", "-n", addr, "-o", "json", "--fail-on", "never"])
        wall = time.perf_counter() - start
        requests = len(fake.requests) - before
        doc = json.loads(out)
        partial = sum(1 for g in doc["groups"] if g["partial"])
        names = [f"group-{g:04d}" for g in range(0, GROUPS, GROUPS // SAMPLE)][:SAMPLE]
        start = time.perf_counter()
        for name in names:
            _quiet(["explain", "-n", addr, name, "-o", "json", "--fail-on", "never"])
        one_by_one = (time.perf_counter() - start) / len(names) * GROUPS
    return [
        BenchResult(
            f"status -n: {GROUPS} groups, {BROKERS} brokers, {LATENCY_MS:g} ms/request vs one "
            "group at a time",
            wall / one_by_one,
            TARGET,
            f"{wall:.1f} s for {len(doc['groups'])} groups ({requests} requests, {partial} "
            f"partial lines, exit {code}); one at a time {one_by_one:.0f} s "
            f"(explain of {len(names)} groups, scaled)",
        )
    ]


if __name__ == "__main__":
    for result in run():
        print(f"{result.name}: ratio {result.ratio:.3f} (target {result.target}) {result.detail}")
