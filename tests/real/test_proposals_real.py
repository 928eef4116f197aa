"""Proven proposals and what-ifs against real Java consumers.

A proposal is a promise: each one rmqlb makes for a real group is applied to the real cluster
(``mqadmin updateTopic``, consumers started or stopped, a redeploy with another strategy), the
group settles, and ``rmqlb explain`` must no longer report the finding, while every real
client's own allocation is what rmqlb computes and spreads the queues as the proof said.

``rmqlb simulate --dump`` of a real dump must predict what the real clients hold after each
step once the step is made for real.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conftest import Names
from realkit import (
    Jvm,
    Kit,
    assert_actual_is_truth,
    assert_expected_is_truth,
    findings,
    truth_held,
)


def stop(kit: Kit, jvm: Jvm) -> None:
    """Stop one consumer JVM cleanly (its clients unregister) and forget it."""
    kit.halt(jvm.name)
    kit.jvms.pop(jvm.name, None)


def spread(states: Mapping[str, Mapping[str, Any]], topic: str) -> tuple[int, int]:
    """The fewest and most queues of ``topic`` a real client holds."""
    counts = [sum(1 for q in s.get("held", []) if q["topic"] == topic) for s in states.values()]
    return min(counts), max(counts)


def about(report: Mapping[str, Any], code: str, topic: str) -> list[dict[str, Any]]:
    return [f for f in findings(report, code) if f["topic"] == topic]


def settled_report(
    kit: Kit, g: str, t: str, *jvms: Jvm, consumers: int, queues: int
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Wait until the real clients hold what they allocate, then explain: rmqlb's expected and
    actual are the clients' own."""
    states = kit.wait_steady(g, *jvms, consumers=consumers, queues={t: queues})
    report = kit.explain(g)
    assert_expected_is_truth(report, states, g, t)
    assert_actual_is_truth(report, states, g, t)
    return report, states


def assert_kept(
    report: Mapping[str, Any], states: Mapping[str, Mapping[str, Any]], t: str, p: dict[str, Any]
) -> None:
    """The finding is gone, no consumer is idle, and the real spread is the proof's."""
    assert about(report, "IMBALANCE", t) == [], p
    assert about(report, "IDLE_CONSUMER", t) == [], p
    proof = p["proof"]
    assert spread(states, t) == (proof["minQueues"], proof["maxQueues"]), p


def test_consistent_hash_proposals_hold_on_real_clients(kit: Kit, names: Names) -> None:
    """16 queues, 4 CONSISTENT_HASH clients: rmqlb computes the real clients' ring, so what it
    proposes is not a divisor but what that ring needs; each proposal, made for real, removes
    the IMBALANCE."""
    g, t = names.group, names.topic
    kit.topic(t, read=16, brokers=("broker-a",))
    instances = [f"h{i}" for i in range(4)]

    def deploy(name: str, strategy: str) -> Jvm:
        return kit.consumer(
            name, *(f"group={g};sub={t}:*;instance={i};{strategy}" for i in instances)
        )

    jvm = deploy("hash-10", "strategy=CONSISTENT_HASH;vnodes=10")
    report, states = settled_report(kit, g, t, jvm, consumers=4, queues=16)
    (imbalance,) = about(report, "IMBALANCE", t)
    proposals = imbalance["proposals"]
    assert "divisible" not in imbalance["hint"]
    assert imbalance["hint"].startswith("CONSISTENT_HASH places queues by hash")
    kinds = [next(k for k in p if k != "proof") for p in proposals]
    assert "strategy" in kinds and ("queues" in kinds or "vnodes" in kinds), proposals
    assert "replicas" not in kinds  # who would join or leave decides: not provable

    for p in sorted(proposals, key=lambda p: "queues" in p):  # the topic change last
        if "queues" in p:
            kit.topic(t, read=p["queues"], brokers=("broker-a",))
            report, states = settled_report(kit, g, t, jvm, consumers=4, queues=p["queues"])
        else:
            stop(kit, jvm)
            spec = (
                f"strategy=CONSISTENT_HASH;vnodes={p['vnodes']}"
                if "vnodes" in p
                else f"strategy={p['strategy']}"
            )
            changed = deploy(f"hash-{next(iter(p.values()))}", spec)
            report, states = settled_report(kit, g, t, changed, consumers=4, queues=16)
            assert_kept(report, states, t, p)
            stop(kit, changed)
            jvm = deploy(f"hash-10-again-{len(kit.jvms)}", "strategy=CONSISTENT_HASH;vnodes=10")
            settled_report(kit, g, t, jvm, consumers=4, queues=16)
            continue
        assert_kept(report, states, t, p)


def test_avg_8_queues_5_consumers_proposals_hold_on_real_clients(kit: Kit, names: Names) -> None:
    """4 + 4 queues, 5 AVG clients (2 or 1 queues each): more queues, fewer or more consumers,
    each made for real, end the IMBALANCE with the spread the proof gave."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*"
    four = kit.consumer("avg-four", *(f"{spec};instance=a{i}" for i in range(4)))
    fifth = kit.consumer("avg-fifth", f"{spec};instance=a4")
    report, _ = settled_report(kit, g, t, four, fifth, consumers=5, queues=8)
    (imbalance,) = about(report, "IMBALANCE", t)
    shown = {k: p[k] for p in imbalance["proposals"] for k in p if k != "proof"}
    by_kind = {(k, p[k]): p for p in imbalance["proposals"] for k in p if k != "proof"}
    assert shown.get("queues") == 5  # per broker: 10 queues, 2 each
    assert ("replicas", 4) in by_kind and ("replicas", 8) in by_kind

    stop(kit, fifth)  # 4 consumers
    report, states = settled_report(kit, g, t, four, consumers=4, queues=8)
    assert_kept(report, states, t, by_kind[("replicas", 4)])

    more = kit.consumer("avg-more", *(f"{spec};instance=b{i}" for i in range(4)))  # 8
    report, states = settled_report(kit, g, t, four, more, consumers=8, queues=8)
    assert_kept(report, states, t, by_kind[("replicas", 8)])

    stop(kit, more)
    fifth = kit.consumer("avg-fifth-again", f"{spec};instance=a4")  # 5 again
    settled_report(kit, g, t, four, fifth, consumers=5, queues=8)
    kit.topic(t, read=5)
    report, states = settled_report(kit, g, t, four, fifth, consumers=5, queues=10)
    assert_kept(report, states, t, by_kind[("queues", 5)])


def test_idle_consumer_proposals_hold_on_real_clients(kit: Kit, names: Names) -> None:
    """1 + 1 queues, 3 clients: one is idle; 3 queues per broker, or 2 consumers, end it."""
    g, t = names.group, names.topic
    kit.topic(t, read=1)
    spec = f"group={g};sub={t}:*"
    two = kit.consumer("idle-two", f"{spec};instance=i0", f"{spec};instance=i1")
    third = kit.consumer("idle-third", f"{spec};instance=i2")
    report, _ = settled_report(kit, g, t, two, third, consumers=3, queues=2)
    (idle,) = about(report, "IDLE_CONSUMER", t)
    by_kind = {(k, p[k]): p for p in idle["proposals"] for k in p if k != "proof"}
    assert set(by_kind) == {("queues", 3), ("replicas", 2)}, idle["proposals"]
    # 2 queues per broker would end idleness but give 2 and 1: not proposed (IMBALANCE)
    assert "to 3 on each of its 2 brokers: with 6 queues" in idle["hint"]

    stop(kit, third)
    report, states = settled_report(kit, g, t, two, consumers=2, queues=2)
    assert_kept(report, states, t, by_kind[("replicas", 2)])

    third = kit.consumer("idle-third-again", f"{spec};instance=i2")
    settled_report(kit, g, t, two, third, consumers=3, queues=2)
    kit.topic(t, read=3)
    report, states = settled_report(kit, g, t, two, third, consumers=3, queues=6)
    assert_kept(report, states, t, by_kind[("queues", 3)])


def _held(states: Mapping[str, Mapping[str, Any]], topic: str) -> dict[tuple[str, int], str]:
    out = {}
    for (_, broker, qid), holders in truth_held(states, topic).items():
        (holder,) = holders
        out[(broker, qid)] = holder
    return out


def _step(step: Mapping[str, Any]) -> dict[tuple[str, int], str]:
    return {
        (q["brokerName"], q["queueId"]): cid for cid, qs in step["assignments"].items() for q in qs
    }


def test_simulate_from_a_real_dump_predicts_the_real_clients(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    """dump a real group, simulate a consumer joining and 6 queues per broker from the dump,
    then do both for real: the real clients hold what each step said."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*"
    jvm = kit.consumer("sim-three", *(f"{spec};instance=s{i}" for i in range(3)))
    states = kit.wait_steady(g, jvm, consumers=3, queues={t: 8})
    dump = tmp_path / "dump.json"
    kit.rmqlb("dump", "-n", kit.namesrv, g, "--out", str(dump), expect=(0,))
    done = kit.rmqlb(
        "simulate", "--dump", str(dump), "--group", g, "--topic", t,
        "--add-id", "127.0.0.1@s3", "--queues", "6", "-o", "json", expect=(0,),
    )  # fmt: skip
    (doc,) = [json.loads(line) for line in done.stdout.splitlines()]
    start, joined, grown = doc["steps"]
    assert [s["step"] for s in doc["steps"]] == ["start", "consumers", "queues"]
    assert _step(start) == _held(states, t)

    fourth = kit.consumer("sim-fourth", f"{spec};instance=s3")
    states = kit.wait_steady(g, jvm, fourth, consumers=4, queues={t: 8})
    assert _step(joined) == _held(states, t)
    moved = {(q["brokerName"], q["queueId"]) for q in joined["moves"]["queues"]}
    assert moved == {q for q, cid in _step(joined).items() if _step(start)[q] != cid}

    kit.topic(t, read=6)
    states = kit.wait_steady(g, jvm, fourth, consumers=4, queues={t: 12})
    assert _step(grown) == _held(states, t)
    assert grown["newQueues"] == 4
