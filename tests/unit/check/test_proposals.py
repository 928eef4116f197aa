"""Every proposal of ``rmqlb check`` is a promise: applied to the config, checking again
removes the finding it was made for (same group and topic), at every count of the range.

Proposals are applied the way a user would: to the declarations (queue counts of every
broker of the topic, the member's replicas, the strategy), through the YAML a user edits for
generated configs, and to the shipped examples (broker files included).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rmqlb.check import CheckConfig, CheckOptions, load_files, run_check
from rmqlb.check.rules import CheckFinding, CheckResult
from rmqlb.cli import app
from rmqlb.model.strategy import ConsistentHash, parse_strategy_spec

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples/check"
FIXABLE = {"IDLE_CONSUMER", "IMBALANCE", "UNCONSUMED_QUEUE"}


def replicas_of(value: int | str) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    low, high = value.split("..")
    return int(low), int(high)


def apply(config: CheckConfig, finding: CheckFinding, proposal: dict[str, Any]) -> CheckConfig:
    """The config with ``proposal`` made, as a user would edit the declarations."""
    topics = dict(config.topics)
    groups = dict(config.groups)
    group = groups[finding.group]
    if "queues" in proposal:
        assert finding.topic is not None
        decl = topics[finding.topic]
        q = proposal["queues"]
        topics[finding.topic] = replace(
            decl, brokers=tuple(replace(b, read=q, write=q) for b in decl.brokers)
        )
    if "replicas" in proposal:
        low, high = replicas_of(proposal["replicas"])
        members = tuple(
            replace(m, min_replicas=low, max_replicas=high) if m.name == proposal["member"] else m
            for m in group.members
        )
        group = replace(group, members=members)
    if "vnodes" in proposal or "strategy" in proposal:
        spec = (
            ConsistentHash(proposal["vnodes"])
            if "vnodes" in proposal
            else parse_strategy_spec(proposal["strategy"])
        )
        members = tuple(
            m if m.strategy is None else replace(m, strategy=spec) for m in group.members
        )
        group = replace(group, strategy=spec, members=members)
    groups[finding.group] = group
    return CheckConfig(topics, groups, config.files)


def keys(result: CheckResult) -> set[tuple[str, str, str | None]]:
    return {(f.code, f.group, f.topic) for f in result.findings}


def assert_every_proposal_holds(config: CheckConfig, options: CheckOptions) -> int:
    """Apply each proposal of each finding alone and check again; returns how many."""
    result = run_check(config, options)
    tried = 0
    for finding in result.findings:
        if finding.code not in FIXABLE:
            assert finding.proposals == ()
        for proposal in finding.proposals:
            raw = proposal.to_json()
            again = run_check(apply(config, finding, raw), options)
            key = (finding.code, finding.group, finding.topic)
            assert key not in keys(again), (raw, finding.message)
            idle = ("IDLE_CONSUMER", finding.group, finding.topic)
            assert idle not in keys(again), (raw, "a proposal never idles consumers")
            tried += 1
    return tried


EXAMPLE_SETS = [
    *[[p.name] for p in sorted(EXAMPLES.glob("*.yaml"))],
    ["broker/topics.json", "broker/subscriptionGroup.json", "broker/members.yaml"],
]


WITH_PROPOSALS = {"idle-consumers.yaml", "imbalance.yaml", "broker/topics.json"}


@pytest.mark.parametrize("names", EXAMPLE_SETS, ids=lambda names: names[0])
def test_every_proposal_of_every_example_removes_its_finding(names: list[str]) -> None:
    config = load_files([str(EXAMPLES / n) for n in names])
    tried = assert_every_proposal_holds(config, CheckOptions())
    assert (tried > 0) == (names[0] in WITH_PROPOSALS)


def test_the_idle_consumers_example_is_proven_over_the_whole_range() -> None:
    config = load_files([str(EXAMPLES / "idle-consumers.yaml")])
    (idle,) = run_check(config).findings
    # the smaller change first: capping the replicas at 16 (only idle consumers go)
    assert [p.to_json() for p in idle.proposals] == [
        {
            "replicas": 16,
            "member": "shipment-service",
            "proof": {"consumers": "16", "sampled": False, "minQueues": 1, "maxQueues": 1},
        },
        {
            "queues": 48,
            "proof": {"consumers": "16..24", "sampled": False, "minQueues": 2, "maxQueues": 3},
        },
    ]
    assert idle.hint == (
        "set replicas to 16: each gets 1 queue; or raise readQueueNums and writeQueueNums of "
        "ShipmentTopic to 48: with 48 queues at every count from 16 to 24 all consumers are "
        "busy, max/min at most 3/2"
    )
    # 17..24 queues are not offered: every consumer busy, but 2 vs 1 queues (IMBALANCE)
    assert assert_every_proposal_holds(config, CheckOptions()) == 2


def yaml_config(text: str, tmp_path: Path) -> CheckConfig:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return load_files([str(path)])


def test_consistent_hash_proposals_come_from_the_ring_not_divisibility(tmp_path: Path) -> None:
    config = yaml_config(
        """
topics:
  HashTopic: {queues: 16}
groups:
  HashGroup:
    strategy: CONSISTENT_HASH
    members:
      svc: {replicas: 4, subscriptions: {HashTopic: "*"}}
""",
        tmp_path,
    )
    (imbalance,) = run_check(config).findings
    assert imbalance.code == "IMBALANCE"
    shown = [p.to_json() for p in imbalance.proposals]
    assert shown, imbalance.hint
    assert "divisible" not in imbalance.hint
    assert "ring of the client ids check models" in imbalance.hint
    assert {"strategy": "AVG"}.items() <= next(p for p in shown if "strategy" in p).items()
    assert assert_every_proposal_holds(config, CheckOptions()) == len(shown)


def test_a_smaller_queue_count_says_so(tmp_path: Path) -> None:
    config = yaml_config(
        """
topics:
  T: {queues: 8}
groups:
  G:
    members:
      svc: {replicas: 5, subscriptions: {T: "*"}}
""",
        tmp_path,
    )
    (imbalance,) = run_check(config).findings
    # what takes capacity away comes last and says so
    assert [p.to_json().get("queues") for p in imbalance.proposals] == [10, None, None, 5]
    assert "set replicas to 4 (1 consumer fewer than today: less consuming capacity)" in (
        imbalance.hint
    )
    assert "lower readQueueNums and writeQueueNums of T to 5, fewer than today's 8" in (
        imbalance.hint
    )
    assert assert_every_proposal_holds(config, CheckOptions()) == 4


def test_sampled_ranges_are_proven_at_the_counts_check_considers(tmp_path: Path) -> None:
    config = yaml_config(
        """
topics:
  T: {queues: 100}
groups:
  G:
    members:
      svc: {replicas: "40..150", subscriptions: {T: "*"}}
""",
        tmp_path,
    )
    findings = run_check(config).findings
    proofs = [p.proof for f in findings for p in f.proposals]
    assert proofs and any(not p.every for p in proofs)
    assert assert_every_proposal_holds(config, CheckOptions()) == len(proofs)


def test_json_carries_the_proposals(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app, ["check", "-o", "json", str(EXAMPLES / "imbalance.yaml")], catch_exceptions=False
    )
    doc = json.loads(done.stdout)
    (finding,) = doc["findings"]
    assert [
        {k: v for k, v in p.items() if k in ("queues", "replicas")} for p in finding["proposals"]
    ] == [{"queues": 20}, {"replicas": 16}, {"replicas": 8}, {"queues": 10}]


# --------------------------------------------------------------------------- generated


def yaml_apply(raw: dict[str, Any], finding: dict[str, Any], proposal: dict[str, Any]) -> None:
    """Edit the YAML document as a user would."""
    group = raw["groups"][finding["group"]]
    if "queues" in proposal:
        topic = raw["topics"][finding["topic"]]
        topic.pop("read", None)
        topic.pop("write", None)
        topic["queues"] = proposal["queues"]
    if "replicas" in proposal:
        group["members"][proposal["member"]]["replicas"] = proposal["replicas"]
    if "vnodes" in proposal:
        group["strategy"] = f"CONSISTENT_HASH:vnodes={proposal['vnodes']}"
    if "strategy" in proposal:
        group["strategy"] = proposal["strategy"]
    for member in group["members"].values():
        if "strategy" in member and "strategy" in group:
            member["strategy"] = group["strategy"]


def run_yaml(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    done = CliRunner().invoke(app, ["check", "-o", "json", str(path)], catch_exceptions=False)
    assert done.exit_code in (0, 1), done.output
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


topic = st.fixed_dictionaries(
    {"queues": st.integers(1, 24)},
    optional={"brokers": st.sampled_from([["broker-a"], ["broker-a", "broker-b"]])},
)
member = st.fixed_dictionaries(
    {
        "replicas": st.one_of(
            st.integers(1, 30),
            st.tuples(st.integers(1, 20), st.integers(1, 40)).map(lambda t: f"{min(t)}..{max(t)}"),
        ),
        "subscriptions": st.just({"T": "*"}),
    }
)
configs = st.fixed_dictionaries(
    {
        "topics": st.fixed_dictionaries({"T": topic}),
        "groups": st.fixed_dictionaries(
            {
                "G": st.fixed_dictionaries(
                    {
                        "strategy": st.sampled_from(
                            ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "CONSISTENT_HASH:vnodes=3"]
                        ),
                        "members": st.dictionaries(
                            st.sampled_from(["api", "worker"]), member, min_size=1, max_size=2
                        ),
                    }
                )
            }
        ),
    }
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_every_proposal_of_generated_configs_removes_its_finding(
    tmp_path_factory: Any, raw: dict[str, Any]
) -> None:
    path = Path(tmp_path_factory.mktemp("p")) / "c.yaml"
    doc = run_yaml(raw, path)
    for finding in doc["findings"]:
        for proposal in finding["proposals"]:
            edited = json.loads(json.dumps(raw))
            yaml_apply(edited, finding, proposal)
            again = run_yaml(edited, path)
            left = {(f["code"], f["group"], f["topic"]) for f in again["findings"]}
            assert (finding["code"], finding["group"], finding["topic"]) not in left, (
                proposal,
                finding["message"],
            )
            assert ("IDLE_CONSUMER", finding["group"], finding["topic"]) not in left
