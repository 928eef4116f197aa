"""Property: any valid snapshot diagnoses without an exception, and the report is coherent."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqlb.diagnose import QueueStatus, diagnose, report_to_json
from rmqlb.diagnose.context import readable_queues, readable_spans
from rmqlb.model import QueueData, TopicRoute, sort_queues
from rmqlb.snapshot import parse_snapshot

TOPICS = ["TopicA", "TopicB", "%RETRY%G0"]
BROKERS = ["broker-a", "broker-b", "hz@broker-c", "sh@broker-d"]
CLIENTS = ["10.0.0.1@1#5", "10.0.0.2@7", "host@12@0@lmr3x9k2", "\U0001f600@x", "\uffff@y", "c"]

strategies = st.sampled_from(
    [
        None,
        {"name": "AVG"},
        {"name": "AVG_BY_CIRCLE"},
        {"name": "CONSISTENT_HASH", "virtualNodeCnt": 0},
        {"name": "CONSISTENT_HASH", "virtualNodeCnt": 3},
        {"name": "MACHINE_ROOM", "consumeridcs": ["hz"]},
        {
            "name": "MACHINE_ROOM_NEARBY",
            "inner": {"name": "AVG"},
            "brokerRooms": "^([a-z]+)@",
            "consumerRooms": {"c": "hz"},
        },
        {
            "name": "CONFIG",
            "config": {"c": [{"topic": "TopicA", "brokerName": "broker-a", "queueId": 0}]},
        },
        {"name": "UNKNOWN", "className": "com.example.Custom"},
    ]
)


@st.composite
def queue_refs(draw: st.DrawFn) -> list[dict[str, Any]]:
    return draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "topic": st.sampled_from(TOPICS),
                    "brokerName": st.sampled_from(BROKERS),
                    "queueId": st.integers(0, 9),
                }
            ),
            max_size=8,
        )
    )


@st.composite
def consumers(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "clientId": draw(st.sampled_from(CLIENTS)),
        "subscriptions": [
            {
                "topic": t,
                "subString": draw(st.sampled_from(["*", "TagA", "TagA || TagB"])),
                "subVersion": draw(st.integers(0, 3)),
            }
            for t in draw(st.lists(st.sampled_from([*TOPICS, "Missing"]), unique=True))
        ],
    }
    strategy = draw(strategies)
    if strategy is not None:
        out["strategy"] = strategy
    if draw(st.booleans()):
        out["assigned"] = draw(queue_refs())
    if draw(st.integers(0, 9)) == 0:
        out["consumeType"] = "CONSUME_POP"
    return out


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    topics: dict[str, Any] = {}
    for topic in draw(st.lists(st.sampled_from(TOPICS), unique=True)):
        if draw(st.booleans()):
            topics[topic] = {"queues": draw(st.integers(0, 12))}
        else:
            topics[topic] = {
                "queueDatas": [
                    {
                        "brokerName": b,
                        "readQueueNums": draw(st.integers(0, 8)),
                        "writeQueueNums": draw(st.integers(0, 8)),
                        "perm": draw(st.sampled_from([0, 2, 4, 6, 7])),
                    }
                    for b in draw(st.lists(st.sampled_from(BROKERS), max_size=3))
                ]
            }
    groups: dict[str, Any] = {}
    for i in range(draw(st.integers(0, 3))):
        g: dict[str, Any] = {
            "messageModel": draw(st.sampled_from(["CLUSTERING", "CLUSTERING", "BROADCASTING"])),
            "consumers": draw(st.lists(consumers(), max_size=5)),
        }
        strategy = draw(strategies)
        if strategy is not None:
            g["strategy"] = strategy
        g["offsets"] = [
            {
                **ref,
                "brokerOffset": draw(st.integers(0, 5000)),
                "consumerOffset": draw(st.integers(0, 5000)),
            }
            for ref in draw(queue_refs())
        ]
        groups[f"G{i}"] = g
    source = {"namesrv": ["127.0.0.1:9876"]} if draw(st.booleans()) else None
    doc: dict[str, Any] = {"format": "rmqlb.snapshot/1", "topics": topics, "groups": groups}
    if source:
        doc["source"] = source
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_valid_snapshots_never_crash_the_engine(doc: dict[str, Any]) -> None:
    report = diagnose(parse_snapshot(doc))
    text = json.dumps(report_to_json(report))
    assert json.loads(text)["format"] == "rmqlb.report/1"
    for g in report.groups:
        for t in g.topics:
            for row in t.queues:
                if row.status is QueueStatus.duplicate:
                    assert row.actual is not None and len(row.actual) > 1
                if row.actual is None:
                    assert row.status in (QueueStatus.unknown, QueueStatus.unconsumed)
    for f in report.findings:
        assert f.message and f.hint


@given(
    st.lists(
        st.tuples(
            st.sampled_from([*BROKERS, "\U0001f600b", "\uffffb"]),
            st.integers(0, 6),
            st.integers(0, 6),
            st.integers(0, 7),
        ),
        max_size=6,
    )
)
def test_mq_all_is_the_java_clients_view(datas: list[tuple[str, int, int, int]]) -> None:
    route = TopicRoute("T", tuple(QueueData(b, r, w, p) for b, r, w, p in datas))
    expected = sort_queues(route.readable_queues())
    assert readable_queues(route) == expected
    base, n = readable_spans(route)
    assert n == len(expected)
    for broker, (first, count) in base.items():
        assert [q.queue_id for q in expected[first : first + count]] == list(range(count))
        assert {q.broker_name for q in expected[first : first + count]} <= {broker}
