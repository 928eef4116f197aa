"""Every snapshot in ``examples/`` explains its scenario: exact finding codes and queue ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rmqlb.diagnose import QueueStatus, diagnose, report_to_json
from rmqlb.diagnose.report import report_to_text
from rmqlb.model.strategy import parse_strategy_spec
from rmqlb.snapshot import load_snapshot

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

# file -> [(code, topic, [queue labels], position of the cause in this list or None)], in
# report order: causes first, each followed by its consequences, otherwise most severe first
Expected = tuple[str, str | None, list[str], int | None]
BROKERS_0_3 = [f"{b}:{i}" for b in ("broker-a", "broker-b") for i in range(4)]
EXPECTED: dict[str, list[Expected]] = {
    "16-queues-2-consumers.json": [],
    "16-queues-3-consumers-rebalancing.json": [
        (
            "STALE_ALLOCATION",
            "OrderTopic",
            ["broker-a:6", "broker-a:7", *(f"broker-a:{i}" for i in range(11, 16))],
            None,
        ),
        ("DUPLICATE_ASSIGNMENT", "OrderTopic", [f"broker-a:{i}" for i in range(11, 16)], 0),
        (
            "ASSIGNMENT_MISMATCH",
            "OrderTopic",
            ["broker-a:6", "broker-a:7", *(f"broker-a:{i}" for i in range(11, 16))],
            0,
        ),
    ],
    "1-queue-2-consumers.json": [("IDLE_CONSUMER", "lhy-test-topic", [], None)],
    # 5 virtual nodes, inferred (the clients report only the class): no mismatch, and the
    # true imbalance of a 5-node ring
    "consistent-hash-vnodes.json": [("IMBALANCE", "TradeTopic", [], None)],
    # a real 4.9.8 capture: clients named by city on US-ASCII JVMs, their ids alike in
    # US-ASCII: one holds the whole ring
    "consistent-hash-us-ascii.json": [("IDLE_CONSUMER", "CityTopic", [], None)],
    "split-subscriptions.json": [
        ("SUBSCRIPTION_INCONSISTENT", "topicA", ["broker-a:2", "broker-a:3"], None),
        ("UNCONSUMED_QUEUE", "topicA", ["broker-a:2", "broker-a:3"], 0),
        ("SUBSCRIPTION_INCONSISTENT", "topicB", ["broker-a:0", "broker-a:1"], None),
        ("UNCONSUMED_QUEUE", "topicB", ["broker-a:0", "broker-a:1"], 2),
    ],
    "strategy-mid-deploy.json": [
        (
            "STRATEGY_INCONSISTENT",
            "PaymentTopic",
            ["broker-a:1", "broker-a:2", "broker-a:3", "broker-b:2"],
            None,
        ),
        # the orphaned queues hold more messages than the doubled ones: they come first
        ("UNCONSUMED_QUEUE", "PaymentTopic", ["broker-a:3", "broker-b:2"], 0),
        ("DUPLICATE_ASSIGNMENT", "PaymentTopic", ["broker-a:1", "broker-a:2"], 0),
        (
            "ASSIGNMENT_MISMATCH",
            "PaymentTopic",
            ["broker-a:1", "broker-a:2", "broker-a:3", "broker-b:2"],
            0,
        ),
    ],
    "write-exceeds-read.json": [
        ("WRITE_EXCEEDS_READ", "InventoryTopic", [f"broker-a:{i}" for i in range(8, 16)], None),
    ],
    "broker-not-readable.json": [
        ("QUEUE_NOT_READABLE", "ShipmentTopic", [f"broker-b:{i}" for i in range(8)], None),
    ],
    "machine-room-nearby.json": [("IMBALANCE", "LogisticsTopic", [], None)],
    "consistent-hash-imbalance.json": [("IMBALANCE", "ClickTopic", [], None)],
    "broadcasting.json": [("BROADCASTING", None, [], None)],
    # real 4.9.8: three BROADCASTING clients, one slow (2,360 behind), one failing (dropping)
    "broadcasting-slow-and-failing.json": [
        ("BROADCAST_LAG", "CacheInvalidation", [*BROKERS_0_3], None),
        ("CONSUME_FAILING", "CacheInvalidation", [], None),
        ("BROADCASTING", None, [], None),
    ],
    "healthy.json": [],
    "duplicate-client-id.json": [
        ("DUPLICATE_CLIENT_ID", None, [f"broker-a:{i}" for i in range(8, 12)], None),
        ("UNCONSUMED_QUEUE", "NotificationTopic", [f"broker-a:{i}" for i in range(8, 12)], 0),
        ("DUPLICATE_ASSIGNMENT", "NotificationTopic", [f"broker-a:{i}" for i in range(4, 8)], 0),
    ],
    "lag-skew.json": [
        ("LAG_SKEW", "ClickTopic", [f"broker-a:{i}" for i in range(4, 8)], None),
    ],
    "what-if-shorthand.json": [("IDLE_CONSUMER", "OrderTopic", [], None)],
    # 5.x broker-side assignment: expected is what the brokers' QueryAssignmentProcessor gives
    "broker-assigned-pull.json": [("BROKER_REBALANCE", None, [], None)],
    "pop-share-1.json": [("POP_MODE", None, [], None)],
    "broker-consistent-hash.json": [
        ("BROKER_STRATEGY_UNKNOWN", "HashTopic", [f"broker-a:{i}" for i in range(4)], None),
        ("BROKER_STRATEGY_UNKNOWN", "%RETRY%hash-consumer", ["broker-a:0"], None),
        ("BROKER_REBALANCE", None, [], None),
    ],
    "proxy-consumed.json": [("PROXY_CONSUMED", None, [], None)],
    # a gRPC client that never acks: what it pops comes back through %RETRY%GF_GT, which
    # its POP requests pop too (no NO_CONSUMERS on it)
    "grpc-never-acks.json": [
        ("CONSUME_FAILING", "GT", [], None),
        ("PROXY_CLIENTS", None, [], None),
    ],
    # real 5.1.4: five remoting clients connected through the Proxy's remoting port, four
    # queues: they balance themselves (AVG), one is idle; the brokers list none of them
    "proxy-remoting-clients.json": [
        ("IDLE_CONSUMER", "FT", [], None),
        ("PROXY_CLIENTS", None, [], None),
        ("NO_ROUTE", "%RETRY%IG", [], None),
    ],
    # real 4.9.8: two lite pull consumers subscribe LX, a third assign()s broker-a:0 of the
    # share AVG gives it; none lists its queues (a DefaultLitePullConsumer before 5.1.1)
    "lite-pull-consumers.json": [
        ("SUBSCRIPTION_INCONSISTENT", "LX", [], None),
        ("QUEUES_UNREPORTED", None, [], None),
    ],
    # real 5.1.4: lite pull consumers whose application stopped calling poll() while 10
    # messages a queue waited in their caches: st1 of SG (subscribes ST; st2 reads on) and
    # sa1 of SA (assign()s broker-a:0 and broker-b:1; SA's other queues are nobody's)
    "stalled-lite-pull.json": [
        ("CONSUMER_STALLED", "ST", ["broker-a:0", "broker-b:1"], None),
        ("CONSUMER_STALLED", "ST", ["broker-a:0", "broker-a:1"], None),
        ("NO_CONSUMERS", "ST", ["broker-a:1", "broker-b:0"], None),
    ],
    "mixed-rebalance.json": [
        ("STRATEGY_INCONSISTENT", "MixTopic", ["broker-a:1", "broker-a:3"], None),
        ("UNCONSUMED_QUEUE", "MixTopic", ["broker-a:1"], 0),
        ("DUPLICATE_ASSIGNMENT", "MixTopic", ["broker-a:3"], 0),
        ("ASSIGNMENT_MISMATCH", "MixTopic", ["broker-a:1", "broker-a:3"], 0),
        ("STRATEGY_INCONSISTENT", "%RETRY%mixed-consumer", [], None),
        ("BROKER_REBALANCE", None, [], None),
        # every client taking its own strategy's share doubles and orphans the same queues
        ("MIXED_REBALANCE", "MixTopic", [], None),
    ],
    # real 4.9.8: CONSISTENT_HASH clients built with 10, 20 and 10 virtual nodes
    # real 4.9.8: two CLUSTERING clients and a BROADCASTING one in one group
    "message-models-mixed.json": [
        ("MESSAGE_MODEL_INCONSISTENT", "NoticeTopic", BROKERS_0_3, None),
        ("DUPLICATE_ASSIGNMENT", "NoticeTopic", [*BROKERS_0_3[:4], "broker-b:0", "broker-b:1"], 0),
        ("ASSIGNMENT_MISMATCH", "NoticeTopic", [*BROKERS_0_3[:4], "broker-b:0", "broker-b:1"], 0),
        ("MESSAGE_MODEL_INCONSISTENT", "%RETRY%NoticeGroup", [], None),
    ],
    "consistent-hash-mixed-counts.json": [
        (
            "STRATEGY_INCONSISTENT",
            "T1",
            [
                *(f"broker-a:{i}" for i in (0, 2, 3, 4, 5, 6)),
                "broker-b:0",
                "broker-b:4",
                "broker-b:7",
            ],
            None,
        ),
        ("UNCONSUMED_QUEUE", "T1", ["broker-a:2", "broker-a:3", "broker-a:6", "broker-b:0"], 0),
        (
            "DUPLICATE_ASSIGNMENT",
            "T1",
            ["broker-a:0", "broker-a:4", "broker-a:5", "broker-b:4", "broker-b:7"],
            0,
        ),
        (
            "ASSIGNMENT_MISMATCH",
            "T1",
            [
                *(f"broker-a:{i}" for i in (0, 2, 3, 4, 5, 6)),
                "broker-b:0",
                "broker-b:4",
                "broker-b:7",
            ],
            0,
        ),
        ("STRATEGY_INCONSISTENT", "%RETRY%GH", ["broker-a:0"], None),
        ("DUPLICATE_ASSIGNMENT", "%RETRY%GH", ["broker-a:0"], 4),
        ("ASSIGNMENT_MISMATCH", "%RETRY%GH", ["broker-a:0"], 4),
    ],
    # real 5.1.4: n1, n2 connected to the NameServer, p1 through the Proxy's remoting port
    "proxy-list-split.json": [
        ("PROXY_LIST_SPLIT", "TM", BROKERS_0_3, None),
        ("IMBALANCE", "TM", [], 0),
        ("PROXY_LIST_SPLIT", "%RETRY%GM", ["broker-a:0", "broker-b:0"], None),
        ("PROXY_CLIENTS", None, [], None),
    ],
    # real 4.9.8: 127.0.0.1@杭州's JVM hashes its ring in GBK, the other two in UTF-8
    "consistent-hash-mixed-charsets.json": [
        (
            "STRATEGY_INCONSISTENT",
            "CityTopic",
            [*(f"broker-a:{i}" for i in (1, 6)), *(f"broker-b:{i}" for i in (0, 2, 4, 5, 7))],
            None,
        ),
        ("UNCONSUMED_QUEUE", "CityTopic", ["broker-a:1", "broker-b:2", "broker-b:5"], 0),
        (
            "DUPLICATE_ASSIGNMENT",
            "CityTopic",
            ["broker-a:6", "broker-b:0", "broker-b:4", "broker-b:7"],
            0,
        ),
        (
            "ASSIGNMENT_MISMATCH",
            "CityTopic",
            [*(f"broker-a:{i}" for i in (1, 6)), *(f"broker-b:{i}" for i in (0, 2, 4, 5, 7))],
            0,
        ),
        ("STRATEGY_INCONSISTENT", "%RETRY%city-consumer", ["broker-a:0", "broker-b:0"], None),
        ("DUPLICATE_ASSIGNMENT", "%RETRY%city-consumer", ["broker-a:0", "broker-b:0"], 4),
        ("ASSIGNMENT_MISMATCH", "%RETRY%city-consumer", ["broker-a:0", "broker-b:0"], 4),
        ("IMBALANCE", "CityTopic", [], None),
    ],
    # real 4.9.8: one of two orderly consumers killed; the survivor cannot lock its queues yet
    "orderly-consumer-killed.json": [
        ("ORDERLY_LOCK_LOST", "OT", [f"broker-b:{i}" for i in range(4)], None),
        ("UNCONSUMED_QUEUE", "OT", [f"broker-b:{i}" for i in range(4)], 0),
        ("ASSIGNMENT_MISMATCH", "OT", [f"broker-b:{i}" for i in range(4)], 0),
        ("ORDERLY_LOCK_LOST", "%RETRY%O", ["broker-b:0"], None),
        ("UNCONSUMED_QUEUE", "%RETRY%O", ["broker-b:0"], 3),
        ("ASSIGNMENT_MISMATCH", "%RETRY%O", ["broker-b:0"], 3),
    ],
    "stale-client.json": [
        ("STALE_ALLOCATION", "OrderEventTopic", [f"broker-b:{i}" for i in range(4)], None),
        ("DUPLICATE_ASSIGNMENT", "OrderEventTopic", [f"broker-b:{i}" for i in range(4)], 0),
        ("ASSIGNMENT_MISMATCH", "OrderEventTopic", [f"broker-b:{i}" for i in range(4)], 0),
    ],
    "slow-and-stuck-consumers.json": [
        ("CONSUMER_STALLED", "PaymentEventTopic", ["broker-a:6", "broker-a:7"], None),
        ("LAG_SKEW", "PaymentEventTopic", ["broker-a:6", "broker-a:7"], 0),
        # within a severity, a finding with queues at stake before one without
        ("FLOW_CONTROLLED", "PaymentEventTopic", [f"broker-a:{i}" for i in range(3, 6)], None),
        ("CONSUME_FAILING", "PaymentEventTopic", [], None),
        ("DEAD_LETTERS", None, [], None),
    ],
}


def test_every_example_is_covered() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_findings(name: str) -> None:
    report = diagnose(load_snapshot(EXAMPLES / name))
    position = {f.id: i for i, f in enumerate(report.findings)}
    got = [
        (
            f.code.value,
            f.topic,
            [q.label() for q in f.queues],
            None if f.caused_by is None else position[f.caused_by],
        )
        for f in report.findings
    ]
    assert got == EXPECTED[name]
    numbers: dict[str, int] = {}
    for f in report.findings:  # numbered per group, group-qualified
        numbers[f.group] = numbers.get(f.group, 0) + 1
        assert f.id == f"{f.group}/F{numbers[f.group]}"
    for f in report.findings:
        assert f.message and f.hint and f.group
        assert "re-run" not in f.hint or f.caused_by is None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_report_is_json(name: str) -> None:
    doc = report_to_json(diagnose(load_snapshot(EXAMPLES / name)))
    assert json.loads(json.dumps(doc)) == doc
    assert doc["format"] == "rmqlb.report/1"


def test_consistent_hash_example_proposes_what_its_ring_needs() -> None:
    report = diagnose(load_snapshot(EXAMPLES / "consistent-hash-imbalance.json"))
    (imbalance,) = report.findings
    shown = [{k: v for k, v in p.to_json().items() if k != "proof"} for p in imbalance.proposals]
    # by how little they change: a parameter or the strategy before 2.5 times the queues
    assert shown == [{"vnodes": 146}, {"strategy": "AVG"}, {"queues": 40}]
    # 40 queues for 4 consumers: an even division, yet 8 to 12 each under the hash ring
    assert (imbalance.proposals[2].proof.low, imbalance.proposals[2].proof.high) == (8, 12)


def test_healthy_example_tables() -> None:
    report = diagnose(load_snapshot(EXAMPLES / "healthy.json"))
    (group,) = report.groups
    assert [t.topic for t in group.topics] == [
        "UserAuditTopic",
        "UserEventTopic",
        "%RETRY%user-event-consumer",
    ]
    assert [t.retry for t in group.topics] == [False, False, True]
    audit = group.topics[0]
    assert {r.status for r in audit.queues} == {QueueStatus.ok}
    assert [c.expected for c in audit.consumers] == [4, 4, 4, 4]
    assert all(r.lag is not None for r in audit.queues)
    assert sum(c.lag or 0 for c in audit.consumers) == sum(r.lag or 0 for r in audit.queues)


def test_consistent_hash_example_infers_five_virtual_nodes() -> None:
    snap = load_snapshot(EXAMPLES / "consistent-hash-vnodes.json")
    (group,) = diagnose(snap).groups
    assert group.strategy == "CONSISTENT_HASH(vnodes=5)"
    assert group.inference is not None
    assert (group.inference.status.value, group.inference.value) == ("inferred", 5)
    assert {r.status for t in group.topics for r in t.queues} == {QueueStatus.ok}
    # what the report said before: the Java default, and a mismatch on two of the clients
    stated = diagnose(snap, strategy=parse_strategy_spec("CONSISTENT_HASH:vnodes=10"))
    mismatch = [f for f in stated.findings if f.code.value == "ASSIGNMENT_MISMATCH"]
    assert len(mismatch) == 1
    assert len(mismatch[0].consumers) == 2


def test_rebalancing_example_statuses() -> None:
    report = diagnose(load_snapshot(EXAMPLES / "16-queues-3-consumers-rebalancing.json"))
    order = report.groups[0].topics[0]
    status = {r.queue.queue_id: r.status for r in order.queues}
    assert [status[i] for i in (0, 5, 6, 7, 8, 11, 15)] == [
        QueueStatus.ok,
        QueueStatus.ok,
        QueueStatus.moved,
        QueueStatus.moved,
        QueueStatus.ok,
        QueueStatus.duplicate,
        QueueStatus.duplicate,
    ]
    assert [(c.expected, c.actual) for c in order.consumers] == [(6, 8), (5, 8), (5, 5)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_report_to_text_equals_report_to_json(name: str) -> None:
    report = diagnose(load_snapshot(EXAMPLES / name))
    assert json.loads(report_to_text(report)) == report_to_json(report)
    assert json.loads(report_to_text(report, "warning", indent=2)) == report_to_json(
        report, "warning"
    )


@pytest.mark.parametrize("name", ["broker-assigned-pull.json", "pop-share-1.json"])
def test_broker_assigned_examples_hold_exactly_what_the_brokers_assign(name: str) -> None:
    report = diagnose(load_snapshot(EXAMPLES / name))
    for table in report.groups[0].topics:
        assert {q.status for q in table.queues} == {QueueStatus.ok}
        assert [(c.expected, c.actual) for c in table.consumers] == [
            (c.expected, c.expected) for c in table.consumers
        ]


FIVE_X = {
    "broker-assigned-pull.json": "BROKER_REBALANCE",
    "pop-share-1.json": "POP_MODE",
    "broker-consistent-hash.json": "BROKER_STRATEGY_UNKNOWN",
    "mixed-rebalance.json": "MIXED_REBALANCE",
    "proxy-consumed.json": "PROXY_CONSUMED",
    "grpc-never-acks.json": "CONSUME_FAILING",
    "proxy-remoting-clients.json": "PROXY_CLIENTS",
    "proxy-list-split.json": "PROXY_LIST_SPLIT",
}


@pytest.mark.parametrize("name", sorted(FIVE_X))
def test_the_5x_findings_quoted_in_the_catalogue_are_real_output(name: str) -> None:
    doc = (EXAMPLES.parent / "docs" / "findings.md").read_text(encoding="utf-8")
    report = diagnose(load_snapshot(EXAMPLES / name))
    first = next(f for f in report.findings if f.code.value == FIVE_X[name])
    assert f"> {first.message}\n>\n> fix: {first.hint}\n" in doc


OLDER = "a client older than 5.0 cannot ask the broker"
BALANCED_BY = {
    "broker-assigned-pull.json": {
        "10.0.0.5@8421#2764210394381": ("broker", None),
        "10.0.0.6@8419#2764215512009": ("broker", None),
    },
    "mixed-rebalance.json": {
        "10.0.0.5@5101#5200000000001": ("client", OLDER),
        "10.0.0.6@5102#5200000000002": ("broker", None),
        "10.0.0.7@5103#5200000000003": ("broker", None),
    },
}


@pytest.mark.parametrize("name", sorted(BALANCED_BY))
def test_consumer_rows_say_who_balances_each_client_and_whether_reported(name: str) -> None:
    doc = report_to_json(diagnose(load_snapshot(EXAMPLES / name)))
    for table in doc["groups"][0]["topics"]:
        rows = {
            c["clientId"]: (c["balancedBy"], c["balancedByInferred"]) for c in table["consumers"]
        }
        assert rows == BALANCED_BY[name]
