"""Which groups a live capture finds, and what a name that exists nowhere does, over TCP.

The fake cluster answers like a broker: subscription group configs (GET_ALL_SUBSCRIPTIONGROUP
_CONFIG), who consumes a topic (QUERY_TOPIC_CONSUME_BY_WHO: online subscribers and groups
with offsets), connection lists and consume stats. ``no-config=GROUP`` removes a group's
config, as ``mqadmin deleteSubGroup`` does, leaving only its clients and offsets.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from livehelpers import ROOT

from rmqlb.cli import run
from rmqlb.client.admin import ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.errors import GroupNotFound
from rmqlb.fake import FakeCluster, FakeClusterThread
from rmqlb.model import Snapshot
from rmqlb.remoting import fastjson
from rmqlb.snapshot import load_snapshot, parse_snapshot

pytestmark = pytest.mark.timeout(60)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"


def _consumer(cid: str, topic: str) -> dict[str, Any]:
    return {
        "clientId": cid,
        "subscriptions": [topic],
        "assigned": [{"topic": topic, "brokerName": "broker-a", "queueId": 0}],
    }


def _offset(topic: str, behind: int) -> dict[str, Any]:
    return {
        "topic": topic,
        "brokerName": "broker-a",
        "queueId": 0,
        "brokerOffset": 100 + behind,
        "consumerOffset": 100,
    }


def cluster() -> Snapshot:
    """order-consumer (online), legacy-consumer (offsets only, its config deleted),
    ghost-consumer (online, no config), idle-consumer (a config and nothing else)."""
    return parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {"OrderTopic": {"queues": 1}, "LegacyTopic": {"queues": 1}},
            "groups": {
                "order-consumer": {
                    "consumers": [_consumer("10.0.0.1@1", "OrderTopic")],
                    "offsets": [_offset("OrderTopic", 5)],
                },
                "legacy-consumer": {"consumers": [], "offsets": [_offset("LegacyTopic", 70)]},
                "ghost-consumer": {"consumers": [_consumer("10.0.0.2@1", "OrderTopic")]},
                "idle-consumer": {"consumers": []},
            },
        }
    )


async def _collect(snapshot: Snapshot, faults: list[str], **options: Any) -> Snapshot:
    async with FakeCluster(snapshot, faults=faults) as fake:
        return await collect(
            CollectOptions(
                namesrv=(fake.namesrv_addr,), client=ClientOptions(timeout=2.0), **options
            )
        )


FAULTS = ["no-config=legacy-consumer", "no-config=ghost-consumer"]


def test_every_group_the_brokers_know_is_found() -> None:
    got = asyncio.run(_collect(cluster(), FAULTS))
    # configs, plus what QUERY_TOPIC_CONSUME_BY_WHO finds: offsets only, online without config
    assert list(got.groups) == [
        "ghost-consumer",
        "idle-consumer",
        "legacy-consumer",
        "order-consumer",
    ]
    assert got.groups["legacy-consumer"].offsets[0].lag == 70
    assert [c.client_id for c in got.groups["ghost-consumer"].consumers] == ["10.0.0.2@1"]
    assert got.errors == ()


def test_system_groups_only_when_asked() -> None:
    got = asyncio.run(_collect(cluster(), [], system=True))
    assert {"TOOLS_CONSUMER", "SELF_TEST_C_GROUP"} <= set(got.groups)  # 4.9.8 built-ins
    assert "TOOLS_CONSUMER" not in asyncio.run(_collect(cluster(), [])).groups


def test_patterns_and_a_topic_narrow_the_discovery() -> None:
    got = asyncio.run(_collect(cluster(), FAULTS, patterns=("*-consumer",), topic="OrderTopic"))
    assert list(got.groups) == ["ghost-consumer", "order-consumer"]
    got = asyncio.run(_collect(cluster(), FAULTS, topic="LegacyTopic"))
    assert list(got.groups) == ["legacy-consumer"]  # found by its offsets alone
    got = asyncio.run(_collect(cluster(), FAULTS, patterns=("l*", "i*")))
    assert list(got.groups) == ["idle-consumer", "legacy-consumer"]


@pytest.mark.parametrize(
    "name", ["order-consumer", "legacy-consumer", "ghost-consumer", "idle-consumer"]
)
def test_a_named_group_exists_by_config_clients_or_offsets(name: str) -> None:
    got = asyncio.run(_collect(cluster(), FAULTS, groups=(name,)))
    assert list(got.groups) == [name]


def test_a_name_that_exists_nowhere_is_group_not_found_with_the_closest_name() -> None:
    with pytest.raises(GroupNotFound) as caught:
        asyncio.run(_collect(cluster(), FAULTS, groups=("order-consumr",)))
    assert str(caught.value) == (
        "group 'order-consumr' does not exist on this cluster (2 groups known); "
        "did you mean 'order-consumer'?"
    )


def test_a_missing_name_is_not_declared_missing_when_a_broker_did_not_answer() -> None:
    snapshot = load_snapshot(DEMO)
    got = asyncio.run(_collect(snapshot, ["broker-down=broker-b"], groups=("NoSuchGroup",)))
    # broker-b could hold its config: partial data, not "does not exist"
    assert list(got.groups) == ["NoSuchGroup"]
    assert got.errors and all(e.group in ("NoSuchGroup", None) for e in got.errors)


def test_capture_errors_name_the_group_they_were_about() -> None:
    snapshot = load_snapshot(DEMO)
    got = asyncio.run(_collect(snapshot, ["broker-down=broker-b"]))
    stats = [e for e in got.errors if e.request == "GET_CONSUME_STATS"]
    assert {e.group for e in stats} == set(snapshot.groups)
    assert all("broker-b" in e.target for e in stats)


# ----- the CLI: exit 2 and one line, nothing written -----------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "OrderGroupp"],
        ["explain", "-g", "OrderGroupp"],
        ["dump", "-g", "OrderGroupp"],
        ["status", "-g", "OrderGroupp"],
        ["status", "OrderGroupp"],
    ],
    ids=" ".join,
)
def test_a_typo_is_exit_2_with_did_you_mean(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snap.json"
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        extra = ["--out", str(out)] if argv[0] == "dump" else []
        code = run([argv[0], "-n", fake.namesrv_addr, *argv[1:], *extra])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err == (
        "rmqlb: error: group 'OrderGroupp' does not exist on this cluster (5 groups known); "
        "did you mean 'OrderGroup'?\n"
    )
    assert captured.out == ""
    assert not out.exists()


def test_mqadmin_style_flags_select_groups_and_topics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snap.json"
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        assert run(["dump", "-n", fake.namesrv_addr, "-t", "ShipmentTopic", "--out", str(out)]) == 0
        assert list(load_snapshot(out).groups) == ["ShipmentGroup"]
        assert run(["dump", "-n", fake.namesrv_addr, "-g", "AuditGroup", "--out", str(out)]) == 0
        assert list(load_snapshot(out).groups) == ["AuditGroup"]
        code = run(
            [
                "explain",
                "-n",
                fake.namesrv_addr,
                "-g",
                "OrderGroup",
                "-t",
                "RefundTopic",
                "-o",
                "json",
            ]
        )
        report = json.loads(capsys.readouterr().out)
        assert code == 1
        assert [t["topic"] for g in report["groups"] for t in g["topics"]] == ["RefundTopic"]
        assert run(["dump", "-n", fake.namesrv_addr, "-t", "NoSuchTopic", "--out", str(out)]) == 2
    # a topic the NameServer does not list exists nowhere: did you mean, like a group
    assert "topic 'NoSuchTopic' does not exist on this cluster" in capsys.readouterr().err


def test_a_group_without_consumers_stays_no_consumers(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        code = run(["explain", "-n", fake.namesrv_addr, "AuditGroup", "-o", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0  # a warning
    (finding,) = report["findings"]
    assert finding["code"] == "NO_CONSUMERS"
    assert "leaves 4,210 messages unconsumed" in finding["message"]
    assert "committed offsets stay unless -r true" in finding["hint"]


def test_one_group_reads_its_own_config_entry_and_a_bad_one_is_one_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One group's capture reads its own entry of each broker's config table: another
    group's bad entry costs it nothing; its own bad entry is one error of that broker's
    request, and its config there unknown. Discovering every group decodes each table whole,
    so there the bad entry is that broker's error too."""
    served = FakeCluster._subscription_groups

    def bad_entry(self: FakeCluster, broker: str) -> bytes:
        doc = fastjson.loads(served(self, broker))
        doc["subscriptionGroupTable"]["idle-consumer"]["retryMaxTimes"] = "x"
        return fastjson.dumps(doc)

    monkeypatch.setattr(FakeCluster, "_subscription_groups", bad_entry)
    got = asyncio.run(_collect(cluster(), FAULTS, groups=("order-consumer",)))
    assert got.errors == ()
    assert list(got.groups["order-consumer"].configs) == ["broker-a"]
    for options in ({"groups": ("idle-consumer",)}, {}):
        got = asyncio.run(_collect(cluster(), FAULTS, **options))
        (error,) = got.errors
        assert error.request == "GET_ALL_SUBSCRIPTIONGROUP_CONFIG"
        assert error.target.startswith("broker-a (")
        assert "subscriptionGroupTable[idle-consumer].retryMaxTimes" in error.message
        # named, it is captured without a config there; else its config was its only trace
        idle = got.groups.get("idle-consumer")
        assert (idle is not None and idle.configs == {}) if options else idle is None
