"""The proven-proposal search on big imbalanced groups (hints issue).

A hint's numbers are proven by allocating the whole group again for each candidate, so the
search must stay cheap where a group is big. The unit of its work is one whole-group
allocation (the floor); the ratio is what one search adds to the diagnosis (with it minus
``DiagnoseOptions(proposals=False)``, per finding searched) in such allocations. The work
budget caps it whatever the group's size.

- AVG, 100,000 queues on 10 brokers, 60,000 consumers (2 or 1 queues each: IMBALANCE);
  candidates the arithmetic rules out are never allocated;
- CONSISTENT_HASH, 20,000 queues on 4 brokers, 2,000 consumers x 10 virtual nodes
  (IMBALANCE and idle consumers); every candidate is an allocation.

Target: ratio <= 25. Run alone with ``python -m bench.bench_proposals``.
"""

from __future__ import annotations

import time
from typing import Any

from bench._util import BenchResult, best_of, best_of_pair, ms
from rmqlb.allocate import allocate
from rmqlb.diagnose import DiagnoseOptions, diagnose
from rmqlb.diagnose.context import readable_queues
from rmqlb.model.snapshot import Snapshot
from rmqlb.model.strategy import StrategySpec, strategy_from_json
from rmqlb.snapshot import parse_snapshot

CASES = (
    ("AVG, 100k queues / 60k consumers", {"name": "AVG"}, 10, 10_000, 60_000),
    (
        "CONSISTENT_HASH, 20k queues / 2k consumers",
        {"name": "CONSISTENT_HASH", "virtualNodeCnt": 10},
        4,
        5_000,
        2_000,
    ),
)
TARGET = 25.0
SEARCHED = {"IDLE_CONSUMER", "IMBALANCE", "UNCONSUMED_QUEUE"}


def build(strategy: dict[str, Any], brokers: int, per_broker: int, consumers: int) -> Snapshot:
    """One group, everyone subscribed, actual unknown: only the expected side is diagnosed."""
    return parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {
                "BenchTopic": {
                    "queueDatas": [
                        {
                            "brokerName": f"broker-{b:02d}",
                            "readQueueNums": per_broker,
                            "writeQueueNums": per_broker,
                            "perm": 6,
                        }
                        for b in range(brokers)
                    ]
                }
            },
            "groups": {
                "BenchGroup": {
                    "strategy": strategy,
                    "consumers": [
                        {
                            "clientId": f"10.{i // 250}.{i % 250}.7@{i}",
                            "subscriptions": ["BenchTopic"],
                        }
                        for i in range(consumers)
                    ],
                }
            },
        }
    )


def run() -> list[BenchResult]:
    """Diagnose each big group with and without the search, and allocate it once (best of
    3, CPU time)."""
    out = []
    off = DiagnoseOptions(proposals=False)
    for label, strategy, brokers, per_broker, consumers in CASES:
        snapshot = build(strategy, brokers, per_broker, consumers)
        group = snapshot.groups["BenchGroup"]
        queues = readable_queues(snapshot.topics["BenchTopic"])
        cids = [c.client_id for c in group.consumers]
        spec = strategy_from_json(strategy)
        report = diagnose(snapshot)
        searched = sum(1 for f in report.findings if f.code.value in SEARCHED)
        proposals = sum(len(f.proposals) for f in report.findings)

        def with_search(snapshot: Snapshot = snapshot) -> None:
            diagnose(snapshot)

        def without(snapshot: Snapshot = snapshot) -> None:
            diagnose(snapshot, options=off)

        t_with, t_without = best_of_pair(with_search, without, repeat=3, clock=time.process_time)

        def once(
            spec: StrategySpec = spec, queues: list[Any] = queues, cids: list[str] = cids
        ) -> None:
            allocate(spec, queues, cids)

        t_alloc = best_of(once, 3, time.process_time)
        per_search = max(t_with - t_without, 0.0) / max(searched, 1)
        out.append(
            BenchResult(
                f"proposal search: {label}",
                per_search / t_alloc,
                TARGET,
                f"{ms(per_search)} per finding searched ({searched} searched, {proposals} "
                f"proven proposals) vs one allocation {ms(t_alloc)}; diagnose {ms(t_with)} "
                f"with the search, {ms(t_without)} without (CPU time, best of 3)",
            )
        )
    return out


if __name__ == "__main__":
    for result in run():
        flag = "ok" if result.ok else "MISS"
        print(f"{result.name}: {result.ratio:.2f} (target {result.target:g}) {flag}")
        print(f"    {result.detail}")
