"""The recorded 5.0.0 and 5.1.4 clusters (``tests/data/real-5.0.0``, ``real-5.1.4``) replayed
through the collector: every request answered, and the 5.x data read as the scenario set it
up (broker config and version, request modes, each broker's consumer list and assignments,
the gRPC clients a 5.1 Proxy lists)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from real_recording import PROXY, Recorded, Replay, load

from rmqlb.client.admin import ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.model import MessageQueue, Rebalance, RequestMode, Snapshot
from rmqlb.remoting import assignment, bodies
from rmqlb.remoting.codes import READ_ONLY_CODES

DATA = Path(__file__).resolve().parents[2] / "data"
V500 = load(DATA / "real-5.0.0")
V514 = load(DATA / "real-5.1.4")


def _capture(recorded: list[Recorded], proxy: bool = False) -> tuple[Snapshot, list[str], str]:
    async def run() -> tuple[Snapshot, list[str], str]:
        async with Replay(recorded) as replay:
            proxies = (replay.addrs[PROXY],) if proxy else ()
            options = CollectOptions(
                namesrv=(replay.namesrv_addr,), client=ClientOptions(5.0), proxies=proxies
            )
            return await collect(options), replay.unanswered, replay.addrs.get(PROXY, "")

    return asyncio.run(run())


@pytest.fixture(scope="module")
def v500() -> Snapshot:
    snapshot, unanswered, _ = _capture(V500)
    assert unanswered == []
    return snapshot


def test_every_recorded_code_is_allowlisted() -> None:
    assert {r.code for r in [*V500, *V514]} <= READ_ONLY_CODES
    assert {26, 38, 400, 402} <= {r.code for r in V500 if r.by == "collector"}


def test_broker_config_and_version(v500: Snapshot) -> None:
    for info in v500.brokers.values():
        assert info.version == 413  # V5_0_0
        assert info.config is not None
        assert info.config.server_load_balancer_enable is True
        assert info.config.default_message_request_mode is RequestMode.PULL
        assert info.config.default_pop_share_queue_num == -1
        assert info.config.load_balance_poll_name_server_interval == 30_000
        assert info.config.channel_expired_timeout is None  # a 5.1 setting


def test_a_5_1_broker_says_how_long_it_keeps_a_connection_listed() -> None:
    (config,) = [r for r in V514 if r.code == 26 and r.target == "broker-a"]
    assert bodies.decode_broker_config(config.response.body)["channelExpiredTimeout"] == "120000"


def test_pop_group_modes_lists_and_assignments(v500: Snapshot) -> None:
    group = v500.groups["RecPopGroup"]
    assert sorted(group.on_brokers) == ["broker-a", "broker-b"]
    clients = sorted(c.client_id for c in group.consumers)
    assert all(c.rebalance is Rebalance.BROKER for c in group.consumers)
    for on in group.on_brokers.values():
        assert on.request_modes is not None
        assert {t: (m.mode, m.pop_share_queue_num) for t, m in on.request_modes.items()} == {
            "RecTopic": (RequestMode.POP, 1)
        }
        assert sorted(on.client_ids or ()) == clients
        pop = [a for a in on.assignments if a.topic == "RecTopic"]
        assert sorted(a.client_id for a in pop) == clients
        # share 1 with 3 clients and 8 queues: its own AVG share plus the next client's
        for a in pop:
            assert a.mode is RequestMode.POP and a.queues is not None
            assert len(set(a.queues)) in (5, 6)


def test_a_strategy_the_broker_does_not_know_gets_no_assignment(v500: Snapshot) -> None:
    group = v500.groups["RecHashBrokerGroup"]
    for on in group.on_brokers.values():
        assert on.assignments
        for a in on.assignments:
            assert a.strategy_name == "CONSISTENT_HASH"
            assert a.queues is None  # "{}": no messageQueueAssignments


def test_broker_assigned_pull_group(v500: Snapshot) -> None:
    group = v500.groups["RecBrokerPullGroup"]
    held = {c.client_id: set(c.assigned or ()) for c in group.consumers}
    for on in group.on_brokers.values():
        for a in on.assignments:
            assert a.mode is RequestMode.PULL
            if a.topic == "RecTopic":
                # what the broker answers is what the client holds (settled when recorded)
                assert set(a.queues or ()) == {q for q in held[a.client_id] if q.topic == a.topic}


def test_groups_without_broker_assigned_clients_cost_no_5x_request(v500: Snapshot) -> None:
    for name in ("RecClusterGroup", "RecGrpcGroup"):
        # at most the rate GET_CONSUME_STATS gave: no consumer list, mode or assignment
        for view in v500.groups[name].on_brokers.values():
            assert view.client_ids is None and view.request_modes is None
            assert view.assignments == ()
    asked = {
        r.ext_fields.get("consumerGroup") for r in V500 if r.code == 38 and r.by == "collector"
    }
    assert asked == {"RecBrokerPullGroup", "RecPopGroup", "RecHashBrokerGroup"}


def test_mixed_versions_are_shown(v500: Snapshot) -> None:
    versions = sorted(c.version for c in v500.groups["RecClusterGroup"].consumers)
    assert versions == [409, 413]  # a 4.9.8 and a 5.0.0 client


def test_grpc_group_on_5_0_0_has_offsets_but_no_listed_consumer(v500: Snapshot) -> None:
    group = v500.groups["RecGrpcGroup"]
    assert group.consumers == ()
    committed = [o for o in group.offsets if o.queue.topic == "RecTopic" and o.committed]
    assert len(committed) == 8
    assert all(o.consumer_offset > 0 for o in committed)


def test_the_5_1_4_proxy_lists_the_grpc_clients() -> None:
    snapshot, unanswered, proxy = _capture(V514, proxy=True)
    assert unanswered == []
    assert snapshot.source is not None and snapshot.source.proxies == (proxy,)
    clients = snapshot.groups["RecGrpcGroup"].consumers
    assert sorted(c.client_id for c in clients) == ["127.0.0.1@grpc1", "127.0.0.1@grpc2"]
    for c in clients:
        assert c.rebalance is Rebalance.PROXY and c.proxy == proxy
        assert c.version == 441  # V5_1_4
        assert [s.topic for s in c.subscriptions] == ["RecTopic"]
        assert c.assigned is None  # the Proxy pops any queue for it
    # the brokers still say the group is not online
    brokers = [r for r in V514 if r.code == 203 and r.target.startswith("broker")]
    assert {r.response.code for r in brokers if "Grpc" in r.label} == {206}


def test_without_the_proxy_the_grpc_clients_stay_invisible() -> None:
    snapshot, unanswered, _ = _capture(V514)
    assert unanswered == []
    assert snapshot.groups["RecGrpcGroup"].consumers == ()


def test_assignment_bodies_round_trip() -> None:
    for rec in V500:
        if rec.code == 400 and rec.response.code == 0:
            answer = assignment.decode_query_assignment(rec.response.body)
            if answer is None:
                assert rec.response.body == b"{}"
                continue
            assert all(isinstance(a.queue, MessageQueue) for a in answer)
