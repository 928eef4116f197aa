"""Allocator speed against its irreducible floor.

* CONSISTENT_HASH, 10,000 consumers x 10 virtual nodes, 100,000 queues, whole group, vs the
  MD5 of the same 200,000 keys with hashlib (the work no implementation can skip). Target 3.
* AVG, 1,000,000 queues, 10,000 consumers, vs ``sorted()`` of the same queues with the Java
  key (RebalanceImpl sorts mqAll first, so sorting is the floor). Target 3.
"""

from __future__ import annotations

import time
from hashlib import md5

from bench._util import BenchResult, best_of_pair, ms
from rmqlb.allocate import allocate
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.strategy import Avg, ConsistentHash


def _consumers(count: int) -> list[str]:
    return [
        f"10.{i // 65536}.{i // 256 % 256}.{i % 256}@{4000 + i}#{7_000_000 + i}"
        for i in range(count)
    ]


def _queues(count: int, per_broker: int) -> list[MessageQueue]:
    """Queues in route order: broker by broker (brokers in the NameServer's, not Java's,
    order; here reversed), ids ascending within a broker, as ``readable_queues`` yields them."""
    brokers = count // per_broker
    width = len(str(brokers))
    return [
        MessageQueue("TopicTest", f"broker-{b:0{width}d}", q)
        for b in reversed(range(brokers))
        for q in range(per_broker)
    ]


def bench_consistent_hash() -> BenchResult:
    """Whole-group CONSISTENT_HASH vs hashing its 200,000 keys."""
    consumers, vnodes = _consumers(10_000), 10
    queues = _queues(100_000, 1_000)
    keys = [f"{c}-{i}" for c in consumers for i in range(vnodes)] + [
        q.java_string() for q in queues
    ]

    def floor() -> None:
        for key in keys:
            md5(key.encode()).digest()

    strategy = ConsistentHash(vnodes)
    took, base = best_of_pair(lambda: allocate(strategy, queues, consumers), floor, 7)
    cpu, cpu_base = best_of_pair(
        lambda: allocate(strategy, queues, consumers), floor, 3, time.process_time
    )
    return BenchResult(
        "CONSISTENT_HASH 10k x 10 vnodes, 100k queues",
        took / base,
        3.0,
        f"{ms(took)} vs md5 of {len(keys):,} keys {ms(base)} (CPU-time ratio {cpu / cpu_base:.2f})",
    )


def bench_avg() -> BenchResult:
    """Whole-group AVG vs sorting mqAll with the Java key."""
    consumers = _consumers(10_000)
    queues = _queues(1_000_000, 10_000)
    strategy = Avg()
    took, base = best_of_pair(
        lambda: allocate(strategy, queues, consumers), lambda: sorted(queues, key=queue_sort_key), 3
    )
    return BenchResult(
        "AVG 1M queues, 10k consumers",
        took / base,
        3.0,
        f"{ms(took)} vs sorted() {ms(base)}",
    )


def run() -> list[BenchResult]:
    """Both allocator benchmarks."""
    return [bench_consistent_hash(), bench_avg()]
