"""snapshot -> fake cluster -> collector over real TCP gives the snapshot back.

Every example snapshot, the test snapshots and the demo's, in both wire dialects (4.9.x and
5.x bodies). What may legitimately differ on the way is spelled out in ``livehelpers``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from livehelpers import broker_shape, received_view, snapshot_files, wire_view

from rmqlb.client.collector import CollectOptions, collect
from rmqlb.diagnose import Code, diagnose
from rmqlb.fake import FakeCluster, broker_names
from rmqlb.model import Snapshot
from rmqlb.snapshot import load_snapshot, parse_snapshot, snapshot_to_json

pytestmark = pytest.mark.timeout(60)

FILES = snapshot_files()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


async def _capture(snapshot: Snapshot, dialect: int, **fake: object) -> tuple[Snapshot, str]:
    async with FakeCluster(snapshot, dialect=dialect, **fake) as cluster:  # type: ignore[arg-type]
        got = await collect(
            CollectOptions(namesrv=(cluster.namesrv_addr,), groups=tuple(snapshot.groups))
        )
        return got, cluster.namesrv_addr


@pytest.mark.parametrize("dialect", [4, 5])
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_served_snapshot_comes_back(path: Path, dialect: int) -> None:
    original = load_snapshot(path)
    got, namesrv = asyncio.run(_capture(original, dialect))

    assert snapshot_to_json(received_view(got)) == snapshot_to_json(wire_view(original, dialect))
    assert got.source is not None and got.source.namesrv == (namesrv,)
    assert got.captured_at is not None and got.captured_at.endswith("Z")
    # Brokers keep their names, clusters and ids; only addresses become the fake's.
    expected_brokers = broker_shape(original, broker_names(original))
    assert broker_shape(got, []) == expected_brokers
    # Only consumers whose actual assignment is unknown may fail (they are served silent,
    # but a pull consumer that never lists its queues, which answers an empty table);
    # a Proxy's gRPC clients are not asked (nor collected: no Proxy is asked here).
    silent = {
        c.client_id
        for g in original.groups.values()
        for c in g.consumers
        if c.assigned is None and c.proxy is None and not c.queues_unreported
    }
    assert {e.target for e in got.errors} == silent
    assert all(e.request == "GET_CONSUMER_RUNNING_INFO" for e in got.errors)


def test_binary_headers_and_plain_route_encoding_are_read_too() -> None:
    original = load_snapshot(FILES[-1])
    got, _ = asyncio.run(_capture(original, 4, binary_headers=True))
    assert snapshot_to_json(received_view(got)) == snapshot_to_json(wire_view(original, 4))


def test_all_groups_skips_system_groups_and_finds_offline_ones() -> None:
    original = load_snapshot(FILES[-1])

    async def run() -> Snapshot:
        async with FakeCluster(original) as cluster:
            return await collect(CollectOptions(namesrv=(cluster.namesrv_addr,)))

    got = asyncio.run(run())
    assert set(got.groups) == set(original.groups)  # TOOLS_CONSUMER etc. are served but skipped


@pytest.mark.parametrize(("dialect", "expiry"), [(4, 120), (5, 90)])
def test_each_brokers_list_is_captured_when_one_lists_an_id_twice(
    dialect: int, expiry: int
) -> None:
    """broker-a lists 10.0.7.90@1 twice, broker-b once: the capture keeps each broker's own
    list, and the finding reads it as one client whose closed connection broker-a still lists
    (a client heartbeats to every broker of its topics), for as long as broker-a's config says
    (a 5.1+ broker's channelExpiredTimeout; a 4.9 broker has none: 120 s)."""
    doc = json.loads((EXAMPLES / "duplicate-client-id.json").read_text(encoding="utf-8"))
    doc["brokers"]["broker-a"]["config"] = {"channelExpiredTimeout": 90_000}
    doc["brokers"]["broker-b"] = {"cluster": "DefaultCluster", "addrs": {"0": "10.0.0.12:10911"}}
    group = doc["groups"]["notification-consumer"]
    ids = [c["clientId"] for c in group["consumers"]]
    group["onBrokers"] = {"broker-a": {"clientIds": ids}, "broker-b": {"clientIds": ids[:2]}}
    got, _ = asyncio.run(_capture(parse_snapshot(doc), dialect))

    lists = {b: v.client_ids for b, v in got.groups["notification-consumer"].on_brokers.items()}
    assert lists == {"broker-a": tuple(ids), "broker-b": tuple(ids[:2])}
    config = got.brokers["broker-a"].config
    assert config is not None
    assert config.channel_expired_timeout == (90_000 if dialect == 5 else None)
    (f,) = [f for f in diagnose(got).findings if f.code is Code.DUPLICATE_CLIENT_ID]
    assert "(broker-a 2 times, broker-b 1 time)" in f.message
    assert "so it is one client and broker-a still lists connections it closed" in f.message
    assert f"registers it again, for {expiry} s after that heartbeat" in f.message
    assert f.hint.startswith(
        f"nothing to rename: broker-a drops the closed connections within {expiry + 10} s"
    )


def test_broker_lists_stay_out_of_a_capture_where_no_broker_repeats_an_id() -> None:
    got, _ = asyncio.run(_capture(load_snapshot(EXAMPLES / "healthy.json"), 4))
    assert all(v.client_ids is None for g in got.groups.values() for v in g.on_brokers.values())


def test_each_brokers_list_is_captured_when_the_brokers_list_different_clients() -> None:
    """broker-b does not list one client of OrderGroup (its heartbeats do not reach it): the
    capture keeps each broker's list, and BROKERS_DISAGREE shows what each client holds by
    each list (a client takes cidAll from a broker of the topic picked at random)."""
    doc = json.loads((EXAMPLES / "healthy.json").read_text(encoding="utf-8"))
    name, group = next((n, g) for n, g in doc["groups"].items() if len(g.get("consumers", ())) > 2)
    ids = [c["clientId"] for c in group["consumers"]]
    brokers = sorted(doc["brokers"])
    group["onBrokers"] = {brokers[0]: {"clientIds": ids}, brokers[1]: {"clientIds": ids[1:]}}
    got, _ = asyncio.run(_capture(parse_snapshot(doc), 4))

    lists = {b: v.client_ids for b, v in got.groups[name].on_brokers.items()}
    assert lists == {brokers[0]: tuple(ids), brokers[1]: tuple(ids[1:])}
    found = [f for f in diagnose(got).findings if f.code is Code.BROKERS_DISAGREE]
    assert found, [f.code for f in diagnose(got).findings]
    for f in found:
        assert f.group == name
        assert f"{brokers[1]} does not list {ids[0]}" in f.message
        assert f"by {brokers[0]}'s list, nothing by {brokers[1]}'s list" in f.message
        assert f.consumers[0] == ids[0]


def test_the_brokers_kept_subscriptions_are_captured_where_clients_filter_differently() -> None:
    """Two clients of a group subscribe a topic with different tags; c2's newer subVersion
    has reached broker-a only: the capture keeps each broker's subscription table, and the
    finding names what each filters by. A group whose clients agree records none."""
    doc = json.loads((EXAMPLES / "healthy.json").read_text(encoding="utf-8"))
    name, group = next((n, g) for n, g in doc["groups"].items() if len(g.get("consumers", ())) > 2)
    brokers = sorted(doc["brokers"])
    topic = group["consumers"][0]["subscriptions"][0]["topic"]
    for i, c in enumerate(group["consumers"]):
        c["subscriptions"] = [{"topic": topic, "subString": "TagB" if i else "TagA",
                               "subVersion": 9 if i else 5}]  # fmt: skip
    older = {"topic": topic, "subString": "TagA", "subVersion": 5}
    newer = {"topic": topic, "subString": "TagB", "subVersion": 9}
    group["onBrokers"] = {brokers[0]: {"subscriptions": [newer]},
                          brokers[1]: {"subscriptions": [older]}}  # fmt: skip
    got, _ = asyncio.run(_capture(parse_snapshot(doc), 4))

    kept = {b: v.subscriptions for b, v in got.groups[name].on_brokers.items()}
    assert {b: [(s.sub_string, s.sub_version) for s in subs or ()] for b, subs in kept.items()} == {
        brokers[0]: [("TagB", 9)],
        brokers[1]: [("TagA", 5)],
    }
    others = [g for n, g in got.groups.items() if n != name]
    assert all(v.subscriptions is None for g in others for v in g.on_brokers.values())
    (f,) = [f for f in diagnose(got).findings if f.code is Code.SUBSCRIPTION_INCONSISTENT]
    assert f"{brokers[1]} still keeps 'TagA' (subVersion 5)" in f.message


def test_a_broker_with_no_consumer_of_the_group_lists_none_and_nothing_failed() -> None:
    """A broker just restarted knows no client of the group until their next heartbeat: it
    answers GET_CONSUMER_LIST_BY_GROUP with code 1 "no consumer for this group, G", which is
    an empty list, not a failed request (before, the capture reported it failed and left the
    broker's list unknown)."""
    doc = json.loads((EXAMPLES / "broker-assigned-pull.json").read_text(encoding="utf-8"))
    name, group = next(iter(doc["groups"].items()))
    group["onBrokers"]["broker-b"] = {"clientIds": [], "requestModes": {}, "assignments": []}
    got, _ = asyncio.run(_capture(parse_snapshot(doc), 5))

    assert got.groups[name].on_brokers["broker-b"].client_ids == ()
    assert got.groups[name].on_brokers["broker-a"].client_ids == tuple(
        c["clientId"] for c in group["consumers"]
    )
    assert [e.request for e in got.errors if e.request == "GET_CONSUMER_LIST_BY_GROUP"] == []


def test_broker_assignments_are_asked_in_each_clients_own_model() -> None:
    """The brokers list a group's model as its last heartbeat's: with a BROADCASTING client
    in the group it may say BROADCASTING, and a broker asked in that mode answers every
    queue. The clients the brokers assign ask in their own (CLUSTERING) model, and so does
    the capture: the assignments come back as the clients got them."""
    raw = json.loads((EXAMPLES / "broker-assigned-pull.json").read_text(encoding="utf-8"))
    (g,) = raw["groups"].values()
    g["messageModel"] = "BROADCASTING"
    wide = {**g["consumers"][0], "clientId": "10.0.0.7@8500#2764219900000"}
    wide["properties"] = {**wide["properties"], "messageModel": "BROADCASTING"}
    g["consumers"].append(wide)
    for on in g["onBrokers"].values():
        on["clientIds"].append(wide["clientId"])
    original = parse_snapshot(raw)
    got, _ = asyncio.run(_capture(original, 5))
    (want,) = original.groups.values()
    (have,) = got.groups.values()
    assert {b: on.assignments for b, on in have.on_brokers.items()} == {
        b: on.assignments for b, on in want.on_brokers.items()
    }
    codes = {f.code for f in diagnose(got).findings}
    # the BROADCASTING client is no client balancing itself among the others
    assert Code.MESSAGE_MODEL_INCONSISTENT in codes and Code.MIXED_REBALANCE not in codes


def test_remoting_clients_a_proxy_lists_come_back_balancing_themselves() -> None:
    """The real 5.1.4 capture of five push consumers connected through the Proxy's remoting
    port, served by the fake: asked with ``--proxy``, the Proxy lists them with the group's
    retry topic among its subscriptions, so they come back with ``rebalance`` unreported,
    are diagnosed as balancing themselves, and the report is the file's."""
    original = load_snapshot(EXAMPLES / "proxy-remoting-clients.json")
    (proxy,) = {c.proxy for c in original.groups["IG"].consumers}
    assert proxy is not None

    async def run() -> Snapshot:
        async with FakeCluster(original, dialect=5) as cluster:
            options = CollectOptions(
                namesrv=(cluster.namesrv_addr,), proxies=(cluster.proxy_addrs[proxy],)
            )
            return await collect(options)

    got = asyncio.run(run())
    consumers = got.groups["IG"].consumers
    ids = [c.client_id for c in original.groups["IG"].consumers]
    assert [c.client_id for c in consumers] == ids
    assert {(c.rebalance, c.proxy is not None) for c in consumers} == {(None, True)}
    assert [(f.code, f.topic) for f in diagnose(got).findings] == [
        (f.code, f.topic) for f in diagnose(original).findings
    ]


def test_the_route_of_a_topic_pull_consumers_only_assign_is_captured() -> None:
    """Nobody of the group subscribes LX: two 5.1.4 lite pull consumers assign() queues of
    it (broker-a:1 both). The capture reads LX's route all the same (on the kit it had left
    it out: the table showed 4 queues, none readable, and NO_ROUTE), so every queue of it has
    a row and the doubled one is named."""
    doc = json.loads((EXAMPLES / "lite-pull-consumers.json").read_text(encoding="utf-8"))
    group = doc["groups"]["GX"]
    (a1,) = [c for c in group["consumers"] if c["clientId"] == "127.0.0.1@a1@STREAM"]
    group["consumers"] = []
    for name, queues in (("a1", [0, 1]), ("a2", [1])):
        client = json.loads(json.dumps(a1))
        client["clientId"] = f"127.0.0.1@{name}@STREAM"
        client["version"] = 441  # V5_1_4: its running info lists its queues
        client["properties"]["PROP_CLIENT_VERSION"] = "V5_1_4"
        client["assigned"] = [
            {"topic": "LX", "brokerName": "broker-a", "queueId": q} for q in queues
        ]
        group["consumers"].append(client)
    got, _ = asyncio.run(_capture(parse_snapshot(doc), 5))

    assert "LX" in got.topics
    report = diagnose(got)
    (table,) = report.groups[0].topics
    assert len(table.queues) == table.readable == 8
    codes = [(f.code, [q.label() for q in f.queues]) for f in report.findings]
    assert (Code.DUPLICATE_ASSIGNMENT, ["broker-a:1"]) in codes
    assert Code.NO_ROUTE not in {f.code for f in report.findings}
