"""A synthetic fleet with known problems: ``rmqlb audit --generate N --out DIR --seed S``.

Writes N snapshot files (``rmqlb.snapshot/1``) over several clusters and time steps, plus
``_manifest.json`` listing every injected problem (the leading underscore keeps the audit,
and Spark, from reading it as a snapshot). Healthy groups are really healthy: queue counts
divide evenly by the consumer count, every consumer subscribes the same topic, the actual
assignment is the one the Java clients compute (:func:`rmqlb.allocate.allocate`), lag is
small and even. Each injected group gets one problem:

- ``idle_consumers`` -> ``IDLE_CONSUMER``: 4 consumers on a 2-queue topic;
- ``split_subscription`` -> ``SUBSCRIPTION_INCONSISTENT``: one consumer subscribes another
  topic;
- ``duplicate_client_id`` -> ``DUPLICATE_CLIENT_ID``: two processes share one client id;
- ``write_exceeds_read`` -> ``WRITE_EXCEEDS_READ``: broker-a writes twice the queues it reads;
- ``transient_rebalance`` -> ``DUPLICATE_ASSIGNMENT``: one snapshot caught mid-rebalance, a
  queue held twice;
- ``flapping`` -> the flapping list (no finding): consumers alternate 3/4 every snapshot.

Problems are *persistent* (from some step to the last, in at least the last 3 snapshots) or
*transient* (gone before the last snapshot); the manifest lists the steps and
``capturedAt`` of every occurrence so tests can classify them for any window.
The actual assignment of a broken group is what its clients really end up holding: every
client allocates each topic it subscribes with the group's whole ``cidAll``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from rmqlb.allocate import allocate
from rmqlb.fileio import write_atomic
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import Avg, AvgByCircle, StrategySpec

MANIFEST: Final = "_manifest.json"
MANIFEST_FORMAT: Final = "rmqlb.fleet-manifest/1"
PROBLEM_CODES: Final = {
    "idle_consumers": "IDLE_CONSUMER",
    "split_subscription": "SUBSCRIPTION_INCONSISTENT",
    "duplicate_client_id": "DUPLICATE_CLIENT_ID",
    "write_exceeds_read": "WRITE_EXCEEDS_READ",
    "transient_rebalance": "DUPLICATE_ASSIGNMENT",
    "flapping": None,
}
REGIONS: Final = ("eu", "us", "ap", "sa", "af", "me", "cn", "in")
START: Final = datetime(2026, 11, 22, 0, 0, tzinfo=UTC)
INTERVAL: Final = timedelta(minutes=10)


@dataclass(slots=True)
class Injection:
    """One injected problem: where, which, and in which steps it is present."""

    cluster: str
    cluster_name: str
    group: str
    topic: str
    problem: str
    code: str | None
    steps: list[int]
    captured_at: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _GroupPlan:
    name: str
    topic: str
    strategy: StrategySpec
    consumers: int
    per_broker: int
    injection: Injection | None = None
    versions: list[int] = field(default_factory=list)  # per step: offsets moved this often


def _ts(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _client_id(cluster: int, group: int, index: int) -> str:
    return f"10.{cluster}.{group % 250}.{index + 10}@{1000 + group * 7 + index}#{91234567 + index}"


def _spec_json(spec: StrategySpec) -> dict[str, Any]:
    return {"name": spec.name}


class _Cluster:
    """One generated cluster: its groups (healthy or broken) over ``steps`` time steps."""

    def __init__(  # noqa: PLR0917
        self,
        index: int,
        steps: int,
        groups: int,
        rng: random.Random,
        problems: Sequence[str],
        change_rate: float | None = None,
    ) -> None:
        self.index = index
        self.name = f"prod-{REGIONS[index % len(REGIONS)]}{index // len(REGIONS) or ''}"
        self.namesrv = [f"10.{index}.0.1:9876", f"10.{index}.0.2:9876"]
        self.key = ";".join(sorted(self.namesrv))
        self.steps = steps
        self.offset = timedelta(seconds=7 * index)
        self.plans: list[_GroupPlan] = []
        for g in range(groups):
            consumers = rng.choice((2, 3, 4))
            self.plans.append(
                _GroupPlan(
                    name=f"GID_{self.name}_{g:05d}",
                    topic=f"TOPIC_{self.name}_{g:05d}",
                    strategy=rng.choice((Avg(), AvgByCircle())),
                    consumers=consumers,
                    per_broker=consumers * rng.choice((1, 2, 4)),
                )
            )
        order = list(range(groups))
        rng.shuffle(order)
        feasible = [p for p in problems if self._feasible(p)]
        budget = min(len(order), max(1, groups // 3)) if feasible else 0
        for n, g in enumerate(order[:budget]):
            plan = self.plans[g]
            problem = feasible[(n + index * budget) % len(feasible)]  # rotate over clusters
            plan.injection = Injection(
                cluster=self.key,
                cluster_name=self.name,
                group=plan.name,
                topic=plan.topic,
                problem=problem,
                code=PROBLEM_CODES[problem],
                steps=self._steps_for(problem, rng),
            )
            if problem == "idle_consumers":
                plan.consumers, plan.per_broker = 2, 1
            if problem == "flapping":
                plan.per_broker = 6
        # Offsets move between two captures in every group (change_rate None) or in about
        # that share of the groups; the others are captured exactly as before.
        moves = random.Random(rng.random() if change_rate is not None else 0)
        for plan in self.plans:
            version = 0
            for step in range(steps):
                if step and (change_rate is None or moves.random() < change_rate):
                    version += 1
                plan.versions.append(version)

    def _feasible(self, problem: str) -> bool:
        if problem == "flapping":
            return self.steps >= 4
        if problem == "transient_rebalance":
            return self.steps >= 2
        return True

    def _steps_for(self, problem: str, rng: random.Random) -> list[int]:
        last = self.steps - 1
        if problem == "flapping":
            return list(range(self.steps))
        if problem == "transient_rebalance":
            return [rng.randrange(0, last)]
        persistent = self.steps < 2 or rng.random() < 0.5
        if persistent:
            start = rng.randrange(0, max(1, self.steps - 2))
            return list(range(start, self.steps))
        start = rng.randrange(0, last)
        end = rng.randrange(start, last)
        return list(range(start, end + 1))

    def captured_at(self, step: int) -> str:
        return _ts(START + step * INTERVAL + self.offset)

    def snapshot(self, step: int) -> dict[str, Any]:
        topics: dict[str, Any] = {}
        groups: dict[str, Any] = {}
        for g, plan in enumerate(self.plans):
            self._add_group(g, plan, step, topics, groups)
        return {
            "format": "rmqlb.snapshot/1",
            "capturedAt": self.captured_at(step),
            "source": {"namesrv": self.namesrv, "rmqlb": "0.1.0"},
            "brokers": {
                "broker-a": {"cluster": self.name, "addrs": {"0": f"10.{self.index}.1.1:10911"}},
                "broker-b": {"cluster": self.name, "addrs": {"0": f"10.{self.index}.1.2:10911"}},
            },
            "topics": topics,
            "groups": groups,
        }

    def _add_group(
        self,
        g: int,
        plan: _GroupPlan,
        step: int,
        topics: dict[str, Any],
        groups: dict[str, Any],
    ) -> None:
        inj = plan.injection
        problem = inj.problem if inj is not None and step in inj.steps else None
        consumers = plan.consumers
        if problem == "idle_consumers":
            consumers = 4
        if inj is not None and inj.problem == "flapping":
            consumers = 3 if step % 2 == 0 else 4
        q = plan.per_broker
        write_a = 2 * q if problem == "write_exceeds_read" else q
        topics[plan.topic] = {
            "queueDatas": [
                {
                    "brokerName": "broker-a",
                    "readQueueNums": q,
                    "writeQueueNums": write_a,
                    "perm": 6,
                },
                {"brokerName": "broker-b", "readQueueNums": q, "writeQueueNums": q, "perm": 6},
            ]
        }
        alt_topic = plan.topic + "_ALT"
        if problem == "split_subscription":
            topics[alt_topic] = {
                "queueDatas": [
                    {"brokerName": "broker-a", "readQueueNums": q, "writeQueueNums": q, "perm": 6}
                ]
            }
        cids = [_client_id(self.index, g, i) for i in range(consumers)]
        if problem == "duplicate_client_id":
            cids[-1] = cids[0]
        subs: list[str] = [plan.topic] * consumers
        if problem == "split_subscription":
            subs[-1] = alt_topic
        queues = {
            t: [
                MessageQueue(t, qd["brokerName"], i)
                for qd in topics[t]["queueDatas"]
                for i in range(qd["readQueueNums"])
            ]
            for t in set(subs)
        }
        # what each client really holds: its share of every topic it subscribes, computed
        # with the whole group's cidAll (duplicates included), as RebalanceImpl does
        shares = {t: allocate(plan.strategy, qs, cids) for t, qs in queues.items()}
        assigned: list[list[MessageQueue]] = [
            list(shares[topic][cid]) for cid, topic in zip(cids, subs, strict=True)
        ]
        if problem == "transient_rebalance" and consumers >= 2:
            stolen = assigned[1][0]
            assigned[0].append(stolen)
        lag = 3 + g % 5
        offsets = []
        held = {mq for mqs in assigned for mq in mqs}
        version = plan.versions[step]
        base = 10_000 + version * 1_000
        for topic in sorted(set(subs)):
            for mq in queues[topic]:
                behind = lag if mq in held else 500 * (version + 1)
                offsets.append(
                    {
                        "topic": mq.topic,
                        "brokerName": mq.broker_name,
                        "queueId": mq.queue_id,
                        "brokerOffset": base,
                        "consumerOffset": base - behind,
                    }
                )
        groups[plan.name] = {
            "messageModel": "CLUSTERING",
            "consumeType": "CONSUME_PASSIVELY",
            "strategy": _spec_json(plan.strategy),
            "consumers": [
                {
                    "clientId": cid,
                    "clientAddr": f"{cid.split('@')[0]}:{40000 + i}",
                    "language": "JAVA",
                    "version": 413,
                    "strategy": _spec_json(plan.strategy),
                    "subscriptions": [
                        {
                            "topic": topic,
                            "expressionType": "TAG",
                            "subString": "*",
                            "subVersion": 1_700_000_000_000 + i,
                        }
                    ],
                    "assigned": [
                        {"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id}
                        for mq in mqs
                    ],
                }
                for i, (cid, topic, mqs) in enumerate(zip(cids, subs, assigned, strict=True))
            ],
            "offsets": offsets,
        }


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def generate_fleet(
    out: Path,
    files: int,
    *,
    seed: int = 0,
    clusters: int | None = None,
    groups: int = 12,
    jsonl: bool = False,
    problems: Sequence[str] = tuple(PROBLEM_CODES),
    first_cluster: int = 0,
    change_rate: float | None = None,
) -> dict[str, Any]:
    """Write ``files`` snapshots (one per cluster and time step) under ``out``; return the
    manifest (also written to ``out/_manifest.json``).

    ``clusters`` defaults to 3 (fewer when ``files`` < 12); steps are spread evenly, the
    first clusters get one more when ``files`` does not divide. With ``jsonl`` each cluster
    is one JSON Lines file (one snapshot per line) instead of one file per snapshot.
    ``first_cluster`` numbers the clusters from there (another fleet with distinct names).
    ``change_rate`` (0..1): the share of groups whose offsets move between two captures
    (the others are captured byte for byte as before, as in a real fleet where most groups
    are idle between two dumps); by default every group's offsets move every time.
    Injected problems change their groups whatever the rate.
    """
    if files < 1:
        raise ValueError("--generate needs at least one snapshot")
    if groups < 1:
        raise ValueError("a snapshot needs at least one group")
    if change_rate is not None and not 0 <= change_rate <= 1:
        raise ValueError("change_rate must be between 0 and 1")
    unknown = [p for p in problems if p not in PROBLEM_CODES]
    if unknown:
        raise ValueError(f"unknown problem {unknown[0]!r}")
    rng = random.Random(seed)
    count = clusters or max(1, min(3, files // 4))
    count = min(count, files)
    out.mkdir(parents=True, exist_ok=True)
    fleet = [
        _Cluster(first_cluster + i, steps, groups, rng, problems, change_rate)
        for i, steps in enumerate(_split(files, count))
    ]
    written = 0
    for cluster in fleet:
        lines: list[str] = []
        for step in range(cluster.steps):
            text = json.dumps(cluster.snapshot(step), separators=(",", ":"))
            written += 1
            if jsonl:
                lines.append(text)
                continue
            stamp = cluster.captured_at(step).replace("-", "").replace(":", "")
            target = out / cluster.name / f"{stamp}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text + "\n")
        if jsonl:
            write_atomic(out / f"{cluster.name}.jsonl", "\n".join(lines) + "\n")
    injections = []
    for cluster in fleet:
        for plan in cluster.plans:
            if plan.injection is not None:
                plan.injection.captured_at = [cluster.captured_at(s) for s in plan.injection.steps]
                injections.append(plan.injection)
    manifest = {
        "format": MANIFEST_FORMAT,
        "seed": seed,
        "snapshots": written,
        "groupsPerSnapshot": groups,
        "clusters": [
            {
                "cluster": c.key,
                "name": c.name,
                "steps": c.steps,
                "capturedAt": [c.captured_at(s) for s in range(c.steps)],
            }
            for c in fleet
        ],
        "injections": [
            {
                "cluster": i.cluster,
                "clusterName": i.cluster_name,
                "group": i.group,
                "topic": i.topic,
                "problem": i.problem,
                "code": i.code,
                "steps": i.steps,
                "capturedAt": i.captured_at,
            }
            for i in injections
        ],
    }
    write_atomic(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest
