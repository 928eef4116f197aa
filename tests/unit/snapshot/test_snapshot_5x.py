"""The 5.x fields of the snapshot: who balances a consumer, what each broker knows of a
group, broker config; loaded, written back and redacted."""

from __future__ import annotations

from typing import Any

from rmqlb.model import MessageQueue, Rebalance, RequestMode
from rmqlb.snapshot import parse_snapshot, redact, snapshot_to_json


def _doc(consumer: dict[str, Any], on_brokers: dict[str, Any] | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"consumers": [consumer]}
    if on_brokers is not None:
        group["onBrokers"] = on_brokers
    return {"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": 2}}, "groups": {"G": group}}


def test_rebalance_is_read_from_the_running_info_properties_when_not_given() -> None:
    def rebalance(props: dict[str, Any]) -> Rebalance | None:
        doc = _doc({"clientId": "c", "subscriptions": ["T"], "properties": props})
        return parse_snapshot(doc).groups["G"].consumers[0].rebalance

    assert rebalance({"clientRebalance": "false"}) is Rebalance.BROKER
    assert rebalance({"clientRebalance": "true"}) is Rebalance.CLIENT
    assert rebalance({"clientRebalance": "false", "PROP_CONSUMEORDERLY": "true"}) is (
        Rebalance.CLIENT
    )
    assert rebalance({"clientRebalance": "false", "messageModel": "BROADCASTING"}) is (
        Rebalance.CLIENT
    )
    assert rebalance({}) is None


def test_a_given_rebalance_wins_over_the_properties_on_both_paths() -> None:
    for extra in ({}, {"properties": {"clientRebalance": "true"}}):
        doc = _doc({"clientId": "c", "subscriptions": ["T"], "rebalance": "proxy", **extra})
        assert parse_snapshot(doc).groups["G"].consumers[0].rebalance is Rebalance.PROXY


def test_on_brokers_loads_writes_back_and_keeps_null_apart_from_empty() -> None:
    views = {
        "broker-a": {
            "clientIds": [],
            "requestModes": {},
            "assignments": [
                {"clientId": "c", "topic": "T", "strategyName": "CONSISTENT_HASH"},
                {"clientId": "c", "topic": "T", "mode": "POP", "queues": []},
                {
                    "clientId": "c",
                    "topic": "T",
                    "mode": "POP",
                    "queues": [{"brokerName": "broker-a", "queueId": -1}],
                },
            ],
        },
        "broker-b": {},
    }
    snap = parse_snapshot(_doc({"clientId": "c", "subscriptions": ["T"]}, views))
    a, b = snap.groups["G"].on_brokers["broker-a"], snap.groups["G"].on_brokers["broker-b"]
    assert a.client_ids == () and a.request_modes == {}
    assert b.client_ids is None and b.request_modes is None
    unknown, empty, every = a.assignments
    assert unknown.queues is None and empty.queues == ()
    assert every.mode is RequestMode.POP
    assert every.queues == (MessageQueue("T", "broker-a", -1),)
    written = snapshot_to_json(snap)
    assert parse_snapshot(written) == snap
    assert "queues" not in written["groups"]["G"]["onBrokers"]["broker-a"]["assignments"][0]


def test_redact_renames_the_brokers_client_lists_and_the_proxy() -> None:
    views = {
        "broker-a": {
            "clientIds": ["10.0.0.5@1"],
            "assignments": [{"clientId": "10.0.0.5@1", "topic": "T", "queues": []}],
        }
    }
    doc = _doc({"clientId": "10.0.0.5@1", "subscriptions": ["T"], "proxy": "10.0.0.9:8080"}, views)
    doc["source"] = {"proxies": ["10.0.0.9:8080"]}
    snap = redact(parse_snapshot(doc))
    group = snap.groups["G"]
    assert group.consumers[0].client_id == "client-1"
    assert group.on_brokers["broker-a"].client_ids == ("client-1",)
    assert group.on_brokers["broker-a"].assignments[0].client_id == "client-1"
    assert group.consumers[0].proxy == "198.18.0.1:8080"
    assert snap.source is not None and snap.source.proxies == ("198.18.0.1:8080",)


def test_broker_config_and_version_load() -> None:
    doc = _doc({"clientId": "c", "subscriptions": ["T"]})
    doc["brokers"] = {
        "broker-a": {
            "version": 453,
            "config": {"defaultMessageRequestMode": "POP", "defaultPopShareQueueNum": 1},
        }
    }
    broker = parse_snapshot(doc).brokers["broker-a"]
    assert broker.version == 453
    assert broker.config is not None
    assert broker.config.default_message_request_mode is RequestMode.POP
    assert broker.config.server_load_balancer_enable is None
