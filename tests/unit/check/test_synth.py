"""Synthetic snapshots: the consumer counts walked, the ids, the members' subscriptions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rmqlb.check.loader import read_one
from rmqlb.check.rules import run_check
from rmqlb.check.synth import (
    FULL_WALK,
    Scenario,
    build_snapshot,
    considered_totals,
    distribute,
    scenarios,
)
from rmqlb.model.strategy import Avg, AvgByCircle, MachineRoomNearby, RoomTable

CONFIG = """\
topics:
  T: {queues: 4, brokers: [broker-a, broker-b]}
  U: {read: 2, write: 3, perm: 4}
groups:
  G:
    strategy: AVG_BY_CIRCLE
    members:
      api:
        replicas: 1..3
        subscriptions: {T: "TagA || TagB", U: "*", Undeclared: "*"}
      worker:
        replicas: 2
        strategy: AVG
        subscriptions: {T: "*"}
"""


@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)).map(sorted), min_size=1, max_size=5),
    st.data(),
)
def test_distribute_respects_bounds_and_total(bounds: list[list[int]], data: st.DataObject) -> None:
    mins = tuple(b[0] for b in bounds)
    maxs = tuple(b[1] for b in bounds)
    total = data.draw(st.integers(sum(mins), sum(maxs)))
    replicas = distribute(mins, maxs, total)
    assert sum(replicas) == total
    assert all(lo <= r <= hi for lo, r, hi in zip(mins, replicas, maxs, strict=True))
    if total < sum(maxs):  # growing by one adds exactly one replica to one member
        bigger = distribute(mins, maxs, total + 1)
        assert sum(b - r for b, r in zip(bigger, replicas, strict=True)) == 1
        assert all(b >= r for b, r in zip(bigger, replicas, strict=True))


def test_walk_is_complete_up_to_the_limit_then_sampled() -> None:
    assert considered_totals(3, 12) == list(range(3, 13))
    sampled = considered_totals(1, 1000, [16, 100])
    assert sampled[:FULL_WALK] == list(range(1, FULL_WALK + 1))
    assert {99, 100, 101, 200, 1000} <= set(sampled)
    assert len(sampled) < 100
    assert sampled == sorted(set(sampled))


def test_scenarios_grow_members_round_robin() -> None:
    group = read_one(CONFIG, "c.yaml")[0].groups["G"]
    assert scenarios(group) == [Scenario(3, (1, 2)), Scenario(4, (2, 2)), Scenario(5, (3, 2))]


def test_snapshot_of_a_scenario() -> None:
    config = read_one(CONFIG, "c.yaml")[0]
    group = config.groups["G"]
    snapshot, owners = build_snapshot(config, group, Scenario(4, (2, 2)))
    assert set(snapshot.topics) == {"T", "U"}  # Undeclared has no route
    assert [q.broker_name for q in snapshot.topics["T"].queue_datas] == ["broker-a", "broker-b"]
    u = snapshot.topics["U"].queue_datas[0]
    assert (u.read_queue_nums, u.write_queue_nums, u.perm) == (2, 3, 4)
    g = snapshot.groups["G"]
    assert g.strategy == AvgByCircle()
    ids = [c.client_id for c in g.consumers]
    assert ids == [
        "10.1.0.0@api-0",
        "10.1.0.1@api-1",
        "10.2.0.0@worker-0",
        "10.2.0.1@worker-1",
    ]
    assert {owners[i].name for i in ids} == {"api", "worker"}
    api, worker = g.consumers[0], g.consumers[2]
    assert api.strategy == AvgByCircle() and worker.strategy == Avg()
    assert [(s.topic, s.sub_string) for s in api.subscriptions] == [
        ("T", "TagA || TagB"),
        ("U", "*"),
        ("Undeclared", "*"),
    ]
    assert api.subscriptions[0].sub_version < worker.subscriptions[0].sub_version
    assert all(c.assigned is None for c in g.consumers)


def test_nearby_rooms_come_from_members() -> None:
    config, _ = read_one(
        """\
        groups:
          G:
            strategy: MACHINE_ROOM_NEARBY:inner=AVG
            members:
              a: {replicas: 2, room: az1, subscriptions: {T: "*"}}
              b: {replicas: 1, room: az2, subscriptions: {T: "*"}}
        """.replace("        ", ""),
        "c.yaml",
    )
    snapshot, _ = build_snapshot(config, config.groups["G"], Scenario(3, (2, 1)))
    strategy = snapshot.groups["G"].strategy
    assert isinstance(strategy, MachineRoomNearby)
    assert strategy.consumer_rooms == RoomTable(
        {"10.1.0.0@a-0": "az1", "10.1.0.1@a-1": "az1", "10.2.0.0@b-0": "az2"}
    )


def test_a_finding_of_one_replica_count_names_that_count() -> None:
    """``replicas: 0..3`` and no consumer only at 0: "with 0 consumers" (was "<= 0"); a
    finding of the range's highest count alone is not "with >= 3" either."""
    text = "topics:\n  T: {queues: 4}\ngroups:\n  G:\n    members:\n"
    text += "      app: {replicas: 0..3, subscriptions: {T: '*'}}\n"
    result = run_check(read_one(text, "c.yaml")[0])
    (none,) = (f for f in result.findings if str(f.code) == "NO_CONSUMERS")
    assert none.message.startswith("with 0 consumers: group G has no online consumer")
    result = run_check(read_one(text.replace("0..3", "2..5"), "c.yaml")[0])
    (idle,) = (f for f in result.findings if str(f.code) == "IDLE_CONSUMER")
    assert idle.message.startswith("with 5 consumers: ")
