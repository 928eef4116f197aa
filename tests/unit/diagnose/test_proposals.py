"""Proven proposals of ``explain`` findings: each one, applied to the snapshot (the topic's
queue counts, the consumers, the strategy), removes the finding it was made for.

The snapshots are JSON documents, edited the way the cluster would change: ``mqadmin
updateTopic`` on every broker, consumers joining (with ids the proof never saw) or leaving,
a redeploy with another strategy.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from diagnose_builders import FORMAT, consumer, group, route
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rmqlb.diagnose.proposals as proposals_module
from rmqlb.diagnose import DiagnoseOptions, Report, diagnose
from rmqlb.diagnose.proposals import (
    Population,
    Problem,
    evaluate,
    find_proposals,
    uniform_subject,
)
from rmqlb.model import MessageQueue
from rmqlb.model.strategy import Avg, ConsistentHash
from rmqlb.snapshot import parse_snapshot

FIXABLE = {"IDLE_CONSUMER", "IMBALANCE", "UNCONSUMED_QUEUE"}


def diagnosed(doc: dict[str, Any]) -> Report:
    return diagnose(parse_snapshot(doc))


def document(
    topic: str,
    brokers: list[str],
    per_broker: int,
    consumers: int,
    *,
    strategy: dict[str, Any] | None = None,
    ids: str = "10.0.0.{i}@{i}",
) -> dict[str, Any]:
    cids = [ids.format(i=i) for i in range(consumers)]
    extra = {} if strategy is None else {"strategy": strategy}
    return {
        "format": FORMAT,
        "topics": {topic: route(*((b, per_broker, per_broker, 6) for b in brokers))},
        "groups": {"G": group(*(consumer(c, topic) for c in cids), **extra)},
    }


def apply(doc: dict[str, Any], topic: str, proposal: dict[str, Any]) -> dict[str, Any]:
    """The snapshot after the change ``proposal`` names."""
    out = copy.deepcopy(doc)
    g = out["groups"]["G"]
    if "queues" in proposal:
        for qd in out["topics"][topic]["queueDatas"]:
            qd["readQueueNums"] = qd["writeQueueNums"] = proposal["queues"]
    if "replicas" in proposal:
        want = int(proposal["replicas"])
        members = g["consumers"]
        if want < len(members):  # the newest leave: not the ones the proof dropped
            g["consumers"] = members[len(members) - want :]
        else:
            subs = members[0]["subscriptions"]
            g["consumers"] = members + [
                {"clientId": f"172.16.0.{i}@joined", "subscriptions": subs}
                for i in range(want - len(members))
            ]
    if "vnodes" in proposal:
        g["strategy"] = {"name": "CONSISTENT_HASH", "virtualNodeCnt": proposal["vnodes"]}
    if "strategy" in proposal:
        g["strategy"] = {"name": proposal["strategy"]}
    return out


def assert_proposals_hold(doc: dict[str, Any]) -> int:
    """Apply each proposal alone; its finding must be gone and no consumer idle."""
    tried = 0
    for f in diagnosed(doc).findings:
        if f.code.value not in FIXABLE:
            assert f.proposals == ()
        for p in f.proposals:
            assert f.topic is not None
            raw = p.to_json()
            after = diagnosed(apply(doc, f.topic, raw))
            left = {(g.code.value, g.topic) for g in after.findings}
            assert (f.code.value, f.topic) not in left, (raw, f.message)
            assert ("IDLE_CONSUMER", f.topic) not in left, raw
            tried += 1
    return tried


def test_avg_8_queues_5_consumers_says_which_way() -> None:
    doc = document("T", ["broker-a"], 8, 5)
    (f,) = diagnosed(doc).findings
    assert f.code.value == "IMBALANCE"
    assert [{k: v for k, v in p.to_json().items() if k != "proof"} for p in f.proposals] == [
        {"queues": 10},
        {"replicas": 8},
        {"replicas": 4},
        {"queues": 5},
    ]
    assert "raise readQueueNums and writeQueueNums of T to 10: with 10 queues 5 consumers" in f.hint
    assert "run 4 consumers in G (1 consumer fewer than today: less consuming capacity)" in f.hint
    assert "lower readQueueNums and writeQueueNums of T to 5, fewer than today's 8" in f.hint
    assert "divisible" not in f.hint
    assert assert_proposals_hold(doc) == 4


def test_consistent_hash_16_queues_4_consumers_uses_the_ring() -> None:
    doc = document(
        "OrderTopic",
        ["broker-a"],
        16,
        4,
        strategy={"name": "CONSISTENT_HASH", "virtualNodeCnt": 10},
        ids="127.0.0.1@c{i}",
    )
    f = next(f for f in diagnosed(doc).findings if f.code.value == "IMBALANCE")
    assert "divisible" not in f.hint
    assert f.hint.startswith("CONSISTENT_HASH places queues by hash")
    kinds = {k for p in f.proposals for k in p.to_json() if k != "proof"}
    assert "replicas" not in kinds  # which ids join or leave decides: not provable
    assert "strategy" in kinds
    assert assert_proposals_hold(doc) == len(f.proposals)


def test_idle_consumers_two_brokers() -> None:
    doc = document("T", ["broker-a", "broker-b"], 2, 6)
    (f,) = diagnosed(doc).findings
    assert f.code.value == "IDLE_CONSUMER"
    (fewer, grow) = f.proposals  # dropping 2 idle consumers changes less than 50 % more queues
    assert grow.queues == 3 and grow.proof.low == grow.proof.high == 1
    assert "to 3 on each of its 2 brokers: with 6 queues" in f.hint
    assert fewer.replicas == (4, 4)
    assert "run 4 consumers in G (2 consumers fewer: they were idle)" in f.hint
    assert assert_proposals_hold(doc) == 2


def test_an_empty_ring_gets_a_virtual_node_count() -> None:
    doc = document(
        "T", ["broker-a"], 4, 2, strategy={"name": "CONSISTENT_HASH", "virtualNodeCnt": 0}
    )
    unconsumed = next(f for f in diagnosed(doc).findings if f.code.value == "UNCONSUMED_QUEUE")
    assert unconsumed.proposals
    assert assert_proposals_hold(doc) >= len(unconsumed.proposals)


def test_no_proposal_without_a_count_fix() -> None:
    # queues that fall to a non-subscriber: no count changes that
    doc = {
        "format": FORMAT,
        "topics": {"A": {"queues": 4}, "B": {"queues": 4}},
        "groups": {"G": group(consumer("c1", "A"), consumer("c2", "B"))},
    }
    found = {(f.code.value, f.topic) for f in diagnosed(doc).findings}
    assert {("UNCONSUMED_QUEUE", "A"), ("UNCONSUMED_QUEUE", "B")} <= found
    assert assert_proposals_hold(doc) == 0  # no finding, fixable or not, carries one


def test_proposals_can_be_turned_off() -> None:
    snap = parse_snapshot(document("T", ["broker-a"], 8, 5))
    (f,) = diagnose(snap, options=DiagnoseOptions(proposals=False)).findings
    assert f.proposals == ()
    assert "queue count must divide evenly" in f.hint


def test_evaluate_matches_the_rules() -> None:
    qs = [MessageQueue("T", "b", i) for i in range(4)]
    five = tuple(f"c{i}" for i in range(5))
    outcome = evaluate(Avg(), qs, Population(five, frozenset(five)), 1.5)
    assert outcome is not None and outcome.problems == {Problem.IDLE}
    half = evaluate(Avg(), qs, Population(five[:2], frozenset(five[:1])), 1.5)
    assert half is not None and half.problems == {Problem.NON_SUBSCRIBER}
    empty = evaluate(ConsistentHash(0), qs, Population(five[:2], frozenset(five[:2])), 1.5)
    assert empty is not None and empty.problems == {Problem.IDLE, Problem.NOBODY}


def _spent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record every cost the search spends (work units, not seconds: deterministic)."""
    costs: list[int] = []
    spend = proposals_module._Search.spend

    def recording(self: Any, cost: int) -> None:
        costs.append(cost)
        spend(self, cost)

    monkeypatch.setattr(proposals_module._Search, "spend", recording)
    return costs


def test_a_big_group_stays_cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    costs = _spent(monkeypatch)
    subject = uniform_subject("T", ["broker-a", "broker-b"], 7_500, Avg(), (10_000, 10_000))
    found = find_proposals(subject, Problem.IMBALANCE)
    # bounded by the work budget, not the group: the search stops within one step of it
    assert costs and sum(costs) - max(costs) <= proposals_module.BUDGET
    assert all(p.proof.high / p.proof.low <= 1.5 for p in found)


def test_a_big_hash_ring_stays_cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    costs = _spent(monkeypatch)
    subject = uniform_subject("T", ["broker-a"], 20_000, ConsistentHash(10), (2_000, 2_000))
    find_proposals(subject, Problem.IMBALANCE)
    assert costs and sum(costs) - max(costs) <= proposals_module.BUDGET


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 20),
    st.sampled_from([["broker-a"], ["broker-a", "broker-b"]]),
    st.integers(1, 24),
    st.sampled_from(
        [None, {"name": "AVG_BY_CIRCLE"}, {"name": "CONSISTENT_HASH", "virtualNodeCnt": 5}]
    ),
)
def test_every_proposal_of_random_groups_holds(
    per_broker: int, brokers: list[str], consumers: int, strategy: dict[str, Any] | None
) -> None:
    assert_proposals_hold(document("T", brokers, per_broker, consumers, strategy=strategy))


def test_an_assumed_virtual_node_count_only_gets_changes_that_set_it() -> None:
    # the clients report CONSISTENT_HASH without virtualNodeCnt and hold nothing known:
    # expected assumes Java's 10, so a queue count proven under 10 would prove nothing
    doc = document("ClickTopic", ["broker-a"], 16, 4, ids="10.0.4.2{i}@1#1")
    for c in doc["groups"]["G"]["consumers"]:
        c["strategy"] = {"name": "CONSISTENT_HASH"}
    report = diagnosed(doc)
    (f,) = [f for f in report.findings if f.code.value == "IMBALANCE"]
    assert "assuming the Java default" in f.message
    kinds = {k for p in f.proposals for k in p.to_json() if k != "proof"}
    assert kinds <= {"vnodes", "strategy"} and "strategy" in kinds
    assert "(now unknown)" in f.hint or "vnodes" not in kinds
    assert assert_proposals_hold(doc) == len(f.proposals)
