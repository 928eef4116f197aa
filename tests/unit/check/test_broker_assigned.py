"""``rebalance: broker`` (5.x ``clientRebalance=false``) and ``popShareQueueNum`` in a check
config: the group is checked against what the brokers' QueryAssignmentProcessor assigns."""

from __future__ import annotations

import pytest

from rmqlb.check.loader import read_one
from rmqlb.check.rules import run_check
from rmqlb.check.synth import Scenario, build_snapshot
from rmqlb.errors import InputError
from rmqlb.model import MessageRequestMode, Rebalance, RequestMode


def config(group: str) -> str:
    return (
        "topics:\n  T: {queues: 4}\ngroups:\n  G:\n"
        + "".join(f"    {line}\n" for line in group.splitlines())
        + "    members:\n      app: {replicas: 2..3, subscriptions: {T: '*'}}\n"
    )


def codes(text: str) -> set[str]:
    result = run_check(read_one(text, "c.yaml")[0])
    return {str(f.code) for f in result.findings}


def test_a_broker_assigned_pop_group_declares_its_mode_on_every_broker() -> None:
    cfg = read_one(config("rebalance: broker\npopShareQueueNum: 1"), "c.yaml")[0]
    snapshot, _ = build_snapshot(cfg, cfg.groups["G"], Scenario(3, (3,)))
    group = snapshot.groups["G"]
    assert {c.rebalance for c in group.consumers} == {Rebalance.BROKER}
    modes = group.on_brokers["broker-a"].request_modes
    assert modes == {"T": MessageRequestMode(RequestMode.POP, 1)}


def test_a_strategy_the_broker_does_not_know_is_found_by_check() -> None:
    found = codes(config("strategy: CONSISTENT_HASH\nrebalance: broker"))
    assert "BROKER_STRATEGY_UNKNOWN" in found
    assert "STALE_ALLOCATION" not in found


def test_pop_share_that_makes_every_client_pop_every_queue() -> None:
    assert "POP_SHARE_ALL" in codes(config("rebalance: broker\npopShareQueueNum: -1"))
    assert "POP_SHARE_ALL" not in codes(config("rebalance: broker"))


def test_pop_share_needs_broker_rebalance() -> None:
    with pytest.raises(InputError, match="add rebalance: broker"):
        read_one(config("popShareQueueNum: 1"), "c.yaml")
    with pytest.raises(InputError, match="expected client or broker"):
        read_one(config("rebalance: proxy"), "c.yaml")


LEGACY = """\
topics:
  T: {queues: 4}
groups:
  G:
    rebalance: broker
    popShareQueueNum: 0
    members:
      app: {replicas: 2, subscriptions: {T: '*'}}
      legacy:
        replicas: 1
        rebalance: client
        subscriptions: {T: '*'}
"""


def test_a_member_that_balances_itself_in_a_pop_group_is_found_where_it_is_declared() -> None:
    """A 4.x deployment left in a group the brokers serve by POP pulls its share, which the
    others pop too: CI says so at the member, before the deploy."""
    cfg = read_one(LEGACY, "c.yaml")[0]
    snapshot, owners = build_snapshot(cfg, cfg.groups["G"], Scenario(3, (2, 1)))
    balance = {owners[c.client_id].name: c.rebalance for c in snapshot.groups["G"].consumers}
    assert balance == {"app": Rebalance.BROKER, "legacy": Rebalance.CLIENT}
    result = run_check(cfg)
    (mixed,) = [f for f in result.findings if str(f.code) == "MIXED_REBALANCE"]
    assert "pulled by a client and popped by others" in mixed.message
    assert str(mixed.loc) == "c.yaml:9"  # the legacy member's line


def test_a_member_rebalance_must_be_client_or_broker() -> None:
    with pytest.raises(InputError, match=r"members\.legacy\.rebalance: expected client or broker"):
        read_one(LEGACY.replace("rebalance: client", "rebalance: proxy"), "c.yaml")
