"""The examples quoted in docs/findings.md for IDLE_CONSUMER, DUPLICATE_CLIENT_ID,
SUBSCRIPTION_INCONSISTENT, STRATEGY_INCONSISTENT, the "why lag grows" findings (QUEUE_STALLED
over two polls), BROKERS_DISAGREE of clients that balance themselves, POP_SHARE_ALL, NO_ROUTE,
WRITE_EXCEEDS_READ, QUEUE_NOT_READABLE and LAG_SKEW are real output: each quoted message and
fix comes out of the engine for an example snapshot or one below."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stalled_polls import poll_doc

from rmqlb.diagnose import diagnose
from rmqlb.diagnose.context import DiagnoseOptions, PollHistory
from rmqlb.snapshot import load_snapshot, parse_snapshot

ROOT = Path(__file__).resolve().parents[3]
#: The checked parts of the document: (first heading, the heading after the last).
CHECKED = (
    ("## IDLE_CONSUMER", "## UNCONSUMED_QUEUE"),
    ("## DUPLICATE_CLIENT_ID", "## CLIENT_UNREACHABLE"),
    ("## SUBSCRIPTION_INCONSISTENT", "## IMBALANCE"),
    ("## STALE_ALLOCATION", "## Thresholds"),
    ("#### Clients that balance themselves", "### MIXED_REBALANCE"),
    ("## NO_ROUTE", "## ALLOCATION_FAILED"),
    ("### POP_SHARE_ALL", "### BROKERS_DISAGREE"),
    ("## WRITE_EXCEEDS_READ", "## QUEUE_NOT_WRITABLE"),
    ("## LAG_SKEW", "## DUPLICATE_CLIENT_ID"),
)

NOW = 1_795_348_800_000


def _queue(broker: str, qid: int, **fields: object) -> dict[str, object]:
    return {"brokerName": broker, "queueId": qid, **fields}


def _offset(broker: str, qid: int, max_offset: int) -> dict[str, object]:
    return {"topic": "OrderTopic", **_queue(broker, qid), "brokerOffset": max_offset,
            "consumerOffset": 100}  # fmt: skip


# An orderly client that lost two locks, in a group whose config disables broker-b.
ORDERLY_DISABLED = {
    "format": "rmqlb.snapshot/1",
    "capturedAt": "2026-11-22T12:00:00Z",
    "brokers": {
        "broker-a": {"addrs": {"0": "10.0.0.11:10911"}},
        "broker-b": {"addrs": {"0": "10.0.0.12:10911"}},
    },
    "topics": {"OrderTopic": {"queueDatas": [
        {"brokerName": b, "readQueueNums": 4, "writeQueueNums": 4} for b in ("broker-a", "broker-b")
    ]}},
    "groups": {"order-consumer": {
        "configs": {"broker-a": {"consumeEnable": True}, "broker-b": {"consumeEnable": False}},
        "consumers": [
            {"clientId": "10.0.0.5@1#1", "consumeOrderly": True, "subscriptions": ["OrderTopic"],
             "assigned": [_queue("broker-a", i) for i in range(4)],
             "processQueues": [
                 _queue("broker-a", 0, locked=False, lastPullTimestamp=NOW - 1_000),
                 _queue("broker-a", 1, locked=True, lastLockTimestamp=NOW - 75_000,
                        lastPullTimestamp=NOW - 1_000),
                 _queue("broker-a", 2, locked=True, lastLockTimestamp=NOW - 5_000),
                 _queue("broker-a", 3, locked=True, lastLockTimestamp=NOW - 5_000),
             ]},
            {"clientId": "10.0.0.6@1#1", "consumeOrderly": True, "subscriptions": ["OrderTopic"],
             "assigned": [_queue("broker-b", i) for i in range(4)]},
        ],
        "offsets": [_offset("broker-a", i, m) for i, m in enumerate((130, 112, 100, 100))]
        + [_offset("broker-b", i, 800) for i in range(4)],
    }},
}  # fmt: skip

# Clients b and c still count a client that left (it held the first third of 9 queues).
LEFT = {
    "format": "rmqlb.snapshot/1",
    "topics": {"TopicA": {"queues": 9}, "%RETRY%G": {"queues": 1}},
    "groups": {"G": {"consumers": [
        {"clientId": cid, "subscriptions": ["TopicA", "%RETRY%G"],
         "assigned": [{"topic": "TopicA", "brokerName": "broker-a", "queueId": i} for i in ids]}
        for cid, ids in (("b", (3, 4, 5)), ("c", (6, 7, 8)))
    ]}},
}  # fmt: skip


# Two clients of one group subscribe OrderTopic with different tags; the second started later.
TAGS_DIFFER = {
    "format": "rmqlb.snapshot/1",
    "topics": {"OrderTopic": {"queues": 4}},
    "groups": {"order-consumer": {"consumers": [
        {"clientId": cid, "subscriptions": [
            {"topic": "OrderTopic", "subString": tag, "subVersion": version}
        ]}
        for cid, tag, version in (
            ("10.0.0.5@1#1", "TagA", 1700000001000), ("10.0.0.6@1#1", "TagB", 1700000005000)
        )
    ]}},
}  # fmt: skip


# broker-b does not list one of three clients that balance themselves.
_IDS = ["10.0.0.5@1#1", "10.0.0.6@1#1", "10.0.0.7@1#1"]
LISTS_DIFFER = {
    "format": "rmqlb.snapshot/1",
    "topics": {"OrderTopic": {"queueDatas": [
        {"brokerName": b, "readQueueNums": 4, "writeQueueNums": 4} for b in ("broker-a", "broker-b")
    ]}},
    "groups": {"order-consumer": {
        "consumers": [{"clientId": c, "subscriptions": ["OrderTopic"]} for c in _IDS],
        "onBrokers": {"broker-a": {"clientIds": _IDS}, "broker-b": {"clientIds": _IDS[:2]}},
    }},
}  # fmt: skip


# OrderTopic lives on broker-a, which does not list the third client (broker-b, of PayTopic, does).
def _q(topic: str, broker: str, *ids: int) -> list[dict[str, object]]:
    return [{"topic": topic, "brokerName": broker, "queueId": i} for i in ids]


ONE_BROKER_LIST = {
    "format": "rmqlb.snapshot/1",
    "topics": {
        topic: {"queueDatas": [{"brokerName": b, "readQueueNums": n, "writeQueueNums": n}]}
        for topic, b, n in (("OrderTopic", "broker-a", 4), ("PayTopic", "broker-b", 3))
    },
    "groups": {"order-consumer": {
        "consumers": [
            {"clientId": cid, "subscriptions": ["OrderTopic", "PayTopic"], "assigned": held}
            for cid, held in zip(_IDS, (
                _q("OrderTopic", "broker-a", 0, 1) + _q("PayTopic", "broker-b", 0),
                _q("OrderTopic", "broker-a", 2, 3) + _q("PayTopic", "broker-b", 1),
                _q("PayTopic", "broker-b", 2),
            ), strict=True)
        ],
        "onBrokers": {"broker-a": {"clientIds": _IDS[:2]}, "broker-b": {"clientIds": _IDS}},
    }},
}  # fmt: skip


# No route for a topic, the group's retry topic, or the POP retry topic 5.x clients subscribe,
# in a capture: the NameServer answered that the topics do not exist.
NO_ROUTES = {
    "format": "rmqlb.snapshot/1",
    "source": {"namesrv": ["10.0.0.1:9876"]},
    "brokers": {"broker-a": {"cluster": "DefaultCluster", "addrs": {"0": "10.0.0.11:10911"}}},
    "topics": {},
    "groups": {"order-consumer": {"consumers": [{"clientId": _IDS[0], "subscriptions": [
        "OrderTopic", "%RETRY%order-consumer", "%RETRY%order-consumer_OrderTopic"
    ]}]}},
}  # fmt: skip


# Two clients popping every queue of broker-a (popShareQueueNum -1, the broker default).
_POP = [{"topic": "OrderTopic", "brokerName": "broker-a", "queueId": -1}]
POP_SHARE_ALL = {
    "format": "rmqlb.snapshot/1",
    "topics": {"OrderTopic": {"queueDatas": [
        {"brokerName": "broker-a", "readQueueNums": 4, "writeQueueNums": 4}
    ]}},
    "groups": {"order-consumer": {
        "consumers": [
            {"clientId": c, "subscriptions": ["OrderTopic"], "popAssigned": _POP,
             "strategy": {"name": "AVG"}, "properties": {"clientRebalance": "false"}}
            for c in _IDS[:2]
        ],
        "onBrokers": {"broker-a": {"clientIds": _IDS[:2], "requestModes": {
            "OrderTopic": {"mode": "POP", "popShareQueueNum": -1}
        }}},
    }},
}  # fmt: skip


# broker-b answers QUERY_ASSIGNMENT with every queue (serverLoadBalancerEnable=false): the
# client that asked it last pulls all 8, the other its share from broker-a.
_EVERY = [
    {"topic": "OrderTopic", "brokerName": b, "queueId": i}
    for b in ("broker-a", "broker-b")
    for i in range(4)
]
BALANCER_OFF = {
    "format": "rmqlb.snapshot/1",
    "brokers": {b: {"addrs": {"0": f"10.0.0.1{i}:10911"}, "version": 441,
                    "config": {"serverLoadBalancerEnable": b == "broker-a"}}
                for i, b in enumerate(("broker-a", "broker-b"), start=1)},
    "topics": {"OrderTopic": {"queueDatas": [
        {"brokerName": b, "readQueueNums": 4, "writeQueueNums": 4} for b in ("broker-a", "broker-b")
    ]}},
    "groups": {"order-consumer": {
        "consumers": [
            {"clientId": c, "subscriptions": ["OrderTopic"], "assigned": held,
             "strategy": {"name": "AVG"}, "properties": {"clientRebalance": "false"}}
            for c, held in zip(_IDS[:2], (_EVERY[:4], _EVERY), strict=True)
        ],
    }},
}  # fmt: skip


# A gRPC group whose POP retry topic name is too long for its 5.0 brokers.
_LONG_TOPIC = "payment-reconciliation-events-of-the-settlement-service-prod"
LONG_POP_RETRY = {
    "format": "rmqlb.snapshot/1",
    "brokers": {b: {"addrs": {"0": f"10.0.0.1{i}:10911"}, "version": 413}
                for i, b in enumerate(("broker-a", "broker-b"))},
    "topics": {_LONG_TOPIC: {"queueDatas": [
        {"brokerName": b, "readQueueNums": 4, "writeQueueNums": 4} for b in ("broker-a", "broker-b")
    ]}},
    "groups": {"payment-reconciliation-consumer-group-of-the-settlement-service": {
        "consumers": [{"clientId": "pod-7@1@0@lmr3x9k2ab", "rebalance": "proxy",
                       "subscriptions": [_LONG_TOPIC]}],
    }},
}  # fmt: skip


# examples/duplicate-client-id.json where broker-b lists the shared id once (closed connections).
def _closed_connection() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        (ROOT / "examples" / "duplicate-client-id.json").read_text(encoding="utf-8")
    )
    doc["brokers"]["broker-b"] = {"cluster": "DefaultCluster", "addrs": {"0": "10.0.0.12:10911"}}
    group = doc["groups"]["notification-consumer"]
    ids = [c["clientId"] for c in group["consumers"]]
    group["onBrokers"] = {"broker-a": {"clientIds": ids}, "broker-b": {"clientIds": ids[:2]}}
    return doc


def _outputs() -> set[str]:
    snapshots = [load_snapshot(p) for p in sorted((ROOT / "examples").glob("*.json"))]
    static = ROOT / "tests" / "data" / "static-topic-5.1.4"
    snapshots += [load_snapshot(static / f) for f in ("old-client.json", "broker-balanced.json")]
    snapshots += [
        parse_snapshot(json.loads(json.dumps(d)))
        for d in (
            ORDERLY_DISABLED,
            TAGS_DIFFER,
            LEFT,
            LISTS_DIFFER,
            ONE_BROKER_LIST,
            NO_ROUTES,
            POP_SHARE_ALL,
            BALANCER_OFF,
            LONG_POP_RETRY,
            _closed_connection(),
        )
    ]
    out: set[str] = set()
    reports = [diagnose(snap) for snap in snapshots]
    # QUEUE_STALLED: a poll compared with one a minute older (tests/stalled_polls.py)
    history = PollHistory()
    for seconds, committed in ((0, [10] * 4), (61, [50, 50, 10, 50])):
        snap = parse_snapshot(poll_doc(seconds, committed))
        reports.append(diagnose(snap, options=DiagnoseOptions(earlier=history.earlier(snap))))
    for report in reports:
        for f in report.findings:
            out |= {f.message, f"fix: {f.hint}"}
    return out


def test_every_quoted_example_is_engine_output() -> None:
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    sections = [doc[doc.index(first) : doc.index(end)] for first, end in CHECKED]
    quoted = [
        line[2:]
        for section in sections
        for line in section.splitlines()
        if line.startswith("> ") and line[2:]
    ]
    assert len(quoted) >= 23
    outputs = _outputs()
    for text in quoted:
        if text.endswith("(...)"):  # shortened on purpose: the start must match
            assert any(o.startswith(text[: -len("(...)")]) for o in outputs), text
        else:
            assert text in outputs, text
