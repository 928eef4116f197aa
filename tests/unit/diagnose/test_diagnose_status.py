"""The cluster overview: selection, the numbers of each line, worst first, exit codes."""

from __future__ import annotations

from pathlib import Path
from random import Random
from typing import Any

import pytest
from diagnose_builders import consumer, group, queues, snapshot

from rmqlb.diagnose.context import ErrorIndex
from rmqlb.diagnose.report import exit_code
from rmqlb.diagnose.status import (
    DISCOVERY_REQUESTS,
    MIXED,
    GroupStatus,
    StatusReport,
    consumes,
    is_pattern,
    select_groups,
    status,
    status_to_json,
    worst_first,
)
from rmqlb.errors import ExitCode, GroupNotFound
from rmqlb.model import Consumer, Group, Subscription
from rmqlb.model.snapshot import CaptureError
from rmqlb.render.status import totals_line
from rmqlb.snapshot import load_snapshot

DEMO = Path(__file__).resolve().parents[3] / "rmqlb" / "data" / "demo-snapshot.json"
T = "OrderTopic"


def offset(topic: str, qid: int, behind: int, broker: str = "broker-a") -> dict[str, Any]:
    return {
        "topic": topic,
        "brokerName": broker,
        "queueId": qid,
        "brokerOffset": 500 + behind,
        "consumerOffset": 500,
    }


def line(report: StatusReport, name: str) -> GroupStatus:
    (found,) = [s for s in report.lines if s.group == name]
    return found


def test_demo_lines_worst_first_with_their_numbers() -> None:
    report = status(load_snapshot(DEMO))
    assert [s.group for s in report.lines] == [
        "OrderGroup",
        "ShipmentGroup",
        "AuditGroup",
        "NotifyGroup",
        "InventoryGroup",
    ]
    order = line(report, "OrderGroup")
    assert (order.message_model, order.strategy, order.consumers) == ("CLUSTERING", "AVG", 3)
    assert (order.topics, order.queues) == (2, 6)  # PaymentTopic 2 + RefundTopic 4
    assert order.lag == 3 + 3 + 0 + 1000 + 1037 + 1500 + 3
    # the 3 RefundTopic queues AVG gives to clients that do not subscribe it
    assert (order.stranded.queues, order.stranded.messages, order.stranded.unknown) == (3, 3537, 0)
    assert order.consume_tps == pytest.approx(84.2 + 79.6 + 12.3)
    assert order.worst is not None and order.worst.code.value == "SUBSCRIPTION_INCONSISTENT"
    ship = line(report, "ShipmentGroup")
    assert ship.strategy == MIXED
    # the cause on the ordinary topic, not the same finding on the retry topic
    assert ship.worst is not None and (ship.worst.code.value, ship.worst.topic) == (
        "STRATEGY_INCONSISTENT",
        "ShipmentTopic",
    )
    audit = line(report, "AuditGroup")
    assert (audit.consumers, audit.strategy, audit.consume_tps) == (0, "-", None)
    assert (audit.topics, audit.queues, audit.lag) == (1, 4, 4210)
    assert audit.stranded.queues == 4 and audit.stranded.messages == 4210  # nobody reads them
    notify = line(report, "NotifyGroup")
    # its most behind client's: 8 + 7 messages behind the brokers' max offsets
    assert (notify.message_model, notify.strategy, notify.lag) == ("BROADCASTING", "-", 15)
    healthy = line(report, "InventoryGroup")
    assert healthy.worst is None and healthy.stranded.queues == 0 and healthy.rank == -1
    assert exit_code(report.report) is ExitCode.FINDINGS


def test_problems_hides_lines_but_not_the_exit_code_or_totals() -> None:
    report = status(load_snapshot(DEMO), problems=True)
    assert [s.group for s in report.shown] == ["OrderGroup", "ShipmentGroup", "AuditGroup"]
    assert report.hidden == 2 and len(report.lines) == 5
    doc = status_to_json(report)
    assert [g["group"] for g in doc["groups"]] == ["OrderGroup", "ShipmentGroup", "AuditGroup"]
    assert doc["totals"]["groups"] == 5 and doc["totals"]["hidden"] == 2
    assert doc["exitCode"] == 1
    assert status_to_json(report, "never")["exitCode"] == 0


def test_lines_with_equal_severity_sort_by_lag() -> None:
    snap = snapshot(
        {T: {"queues": 1}},
        {
            "small": group(offsets=[offset(T, 0, 10)]),
            "big": group(offsets=[offset(T, 0, 900)]),
            "none": group(),
        },
    )
    assert [s.group for s in status(snap).lines] == ["big", "small", "none"]


def test_selection_names_patterns_topics_and_system_groups() -> None:
    snap = snapshot(
        {T: {"queues": 1}, "Other": {"queues": 1}},
        {
            "order-a": group(consumer("c1", T)),
            "order-b": group(offsets=[offset("Other", 0, 1)]),
            "pay": group(consumer("c2", "Other")),
            "TOOLS_CONSUMER": group(),
        },
    )
    assert select_groups(snap) == ["order-a", "order-b", "pay"]
    assert select_groups(snap, system=True)[0] == "TOOLS_CONSUMER"
    assert select_groups(snap, names=["TOOLS_CONSUMER"]) == ["TOOLS_CONSUMER"]  # named: shown
    assert select_groups(snap, names=["order-*"]) == ["order-a", "order-b"]
    assert select_groups(snap, names=["x*"]) == []  # a pattern may match nothing
    assert select_groups(snap, topic="Other") == ["order-b", "pay"]  # offsets count
    assert select_groups(snap, names=["order-*"], topic=T) == ["order-a"]
    with pytest.raises(GroupNotFound, match=r"did you mean 'order-a'\?$"):
        select_groups(snap, names=["order-x", "order-*"])
    assert consumes(snap.groups["order-b"], "Other") and not consumes(snap.groups["pay"], T)
    assert is_pattern("a*") and is_pattern("a?") and is_pattern("[ab]") and not is_pattern("a-b")


def test_an_empty_selection_is_an_empty_overview() -> None:
    snap = snapshot({T: {"queues": 1}}, {"G": group(consumer("c1", T))})
    report = status(snap, names=["nothing-*"])
    assert report.lines == () and exit_code(report.report) is ExitCode.OK


def test_stranded_counts_unreadable_brokers_and_unknown_lags() -> None:
    route = {
        "queueDatas": [
            {"brokerName": "broker-a", "readQueueNums": 2, "writeQueueNums": 2, "perm": 6},
            {"brokerName": "broker-b", "readQueueNums": 2, "writeQueueNums": 2, "perm": 2},
        ]
    }
    held = queues(T, "broker-a", 0)
    snap = snapshot(
        {T: route},
        {
            "G": group(
                consumer("c1", T, assigned=held),
                offsets=[
                    offset(T, 0, 5),
                    # broker-a:1 is held by nobody and has no offset: unknown lag
                    offset(T, 0, 40, broker="broker-b"),  # not readable: nobody reads it
                    offset(T, 1, 2, broker="broker-b"),
                ],
            )
        },
    )
    s = line(status(snap), "G")
    assert (s.stranded.queues, s.stranded.messages, s.stranded.unknown) == (3, 42, 1)
    assert s.queues == 2  # the readable ones


def test_a_group_without_clients_strands_what_it_committed_or_what_waits() -> None:
    """No client online: broker-a's queue (committed, 30 behind) is stranded; broker-b's, which
    the group never committed and which holds nothing, is not (mqadmin consumerProgress lists
    no row for it either); holding messages it never committed, it is."""
    two = {
        "queueDatas": [
            {"brokerName": b, "readQueueNums": 1, "writeQueueNums": 1, "perm": 6}
            for b in ("broker-a", "broker-b")
        ]
    }
    never = {"topic": T, "brokerName": "broker-b", "queueId": 0, "consumerOffset": -1}
    for waiting, expected in ((0, (1, 30)), (7, (2, 37))):
        offsets = [offset(T, 0, 30), {**never, "brokerOffset": waiting}]
        snap = snapshot({T: two}, {"G": group(offsets=offsets)})
        s = line(status(snap), "G")
        assert (s.stranded.queues, s.stranded.messages) == expected, waiting


def holder_unread(behind: int, consumed_ago_s: int | None = None) -> StatusReport:
    """G: c1 holds OrderTopic's queue 0, c2's running info failed: AVG gives it queue 1,
    ``behind`` messages behind, that nobody else holds (its last message consumed
    ``consumed_ago_s`` before the capture, or never)."""
    failed = {"target": "c2", "request": "GET_CONSUMER_RUNNING_INFO", "message": "timeout"}
    second = offset(T, 1, behind)
    if consumed_ago_s is not None:  # captured at 1970-01-01T01:00:00Z
        second["lastTimestamp"] = (3600 - consumed_ago_s) * 1000
    snap = snapshot(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, assigned=queues(T, "broker-a", 0)),
                consumer("c2", T),
                offsets=[offset(T, 0, 3), second],
            )
        },
        errors=[{**failed, "group": "G"}],
        capturedAt="1970-01-01T01:00:00Z",
    )
    return status(snap)


def test_a_queue_with_messages_and_an_unread_holder_leaves_stranded_unknown() -> None:
    s = line(holder_unread(30), "G")
    assert (s.stranded.queues, s.stranded.messages, s.stranded.complete) == (0, 0, False)
    assert not s.stranded.known and s.stranded_topics[T].complete is False
    doc = status_to_json(holder_unread(30))
    assert doc["groups"][0]["stranded"] == {
        "queues": 0, "messages": None, "knownMessages": None, "unknownQueues": 0,
        "complete": False,
    }  # fmt: skip
    assert doc["totals"]["strandedComplete"] is False
    assert totals_line(holder_unread(30)) == (
        "lag 33, stranded 0+ (+: more where offsets or holders could not be read)"
    )
    # an empty queue cannot strand a message, whoever holds it
    caught_up = line(holder_unread(0), "G")
    assert caught_up.stranded.complete and caught_up.stranded.known
    assert caught_up.stranded_topics == {}
    # a queue consumed shortly before the capture is being consumed, whoever holds it
    consumed = line(holder_unread(30, consumed_ago_s=20), "G")
    assert consumed.stranded.complete and consumed.stranded_topics == {}
    long_ago = line(holder_unread(30, consumed_ago_s=3600), "G")
    assert not long_ago.stranded.complete


def test_partial_data_is_marked_on_the_line_it_concerns() -> None:
    errors = [
        {"target": "broker-b", "request": "GET_CONSUME_STATS", "message": "down", "group": "A"},
        {"target": "ns", "request": "GET_ROUTEINFO_BY_TOPIC", "message": "t", "topic": "Other"},
        # the group list is in doubt, no line is
        {"target": "b", "request": "QUERY_TOPIC_CONSUME_BY_WHO", "message": "x", "topic": T},
        # an older snapshot's error names no group: its target is a client of C
        {"target": "10.0.0.9@1", "request": "GET_CONSUMER_RUNNING_INFO", "message": "silent"},
        {"target": "broker-b", "request": "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", "message": "down"},
    ]
    snap = snapshot(
        {T: {"queues": 1}},
        {
            "A": group(consumer("c1", T)),
            "B": group(consumer("c2", "Other")),
            "C": group(consumer("10.0.0.9@1", T)),
            "D": group(consumer("c4", T)),
        },
        errors=errors,
    )
    report = status(snap)
    assert {s.group for s in report.lines if s.partial} == {"A", "B", "C"}
    # D's own data is complete, but the group list may not be: partial all the same
    only_d = status(snap, names=["D"])
    assert [e.request for e in only_d.errors] == [
        "QUERY_TOPIC_CONSUME_BY_WHO",
        "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
    ]
    assert exit_code(only_d.report) is ExitCode.PARTIAL and not line(only_d, "D").partial
    only_a = status(snap, names=["A"])
    assert [e.group for e in only_a.errors] == ["A", None, None]  # A's, and the group list
    assert line(only_a, "A").problem  # partial data is a problem for --problems


def test_worst_first_prefers_the_cause_and_ordinary_topics() -> None:
    report = status(load_snapshot(DEMO), names=["ShipmentGroup"])
    codes = [(f.code.value, f.topic) for f in worst_first(report.report.findings)]
    assert codes[0] == ("STRATEGY_INCONSISTENT", "ShipmentTopic")
    assert codes.index(("STRATEGY_INCONSISTENT", "%RETRY%ShipmentGroup")) > codes.index(
        ("UNCONSUMED_QUEUE", "ShipmentTopic")
    )
    # the cause's consequences follow it; the same cause on the retry topic, where nothing
    # is doubled or orphaned at the moment, comes last
    assert codes[-1] == ("STRATEGY_INCONSISTENT", "%RETRY%ShipmentGroup")
    assert codes[3][0] == "ASSIGNMENT_MISMATCH"  # the only warning, under its cause


def test_json_contract() -> None:
    doc = status_to_json(status(load_snapshot(DEMO)))
    assert doc["format"] == "rmqlb.status/1"
    assert set(doc) == {
        "format",
        "capturedAt",
        "captureSeconds",
        "groups",
        "totals",
        "errors",
        "exitCode",
    }
    first = doc["groups"][0]
    assert set(first) == {
        "group", "messageModel", "strategy", "consumers", "topics", "queues", "lag",
        "lagKnown", "lagComplete", "stranded", "consumeTps", "versions", "lastConsumed",
        "findings", "worst", "worstConsequences", "partial",
    }  # fmt: skip
    assert (first["versions"], first["lastConsumed"]) == (["V4_9_8"], "2026-11-22T11:59:55Z")
    assert first["stranded"] == {
        "queues": 3, "messages": 3537, "knownMessages": 3537, "unknownQueues": 0, "complete": True,
    }  # fmt: skip
    assert first["findings"] == {"error": 2, "warning": 1, "info": 0}
    assert first["worst"]["code"] == "SUBSCRIPTION_INCONSISTENT"
    assert doc["totals"]["lag"] == sum(g["lag"] or 0 for g in doc["groups"])


def test_a_broadcasting_groups_lag_is_its_clients_not_the_brokers() -> None:
    never = {**offset(T, 0, 0), "brokerOffset": 700, "consumerOffset": -1, "minOffset": 0}
    snap = snapshot(
        {T: {"queues": 1}},
        {
            "B": group(consumer("c1", T), messageModel="BROADCASTING", offsets=[never]),
            "C": group(consumer("c2", T), offsets=[never]),
        },
    )
    report = status(snap)
    assert line(report, "B").lag is None  # offsets live in the clients
    assert line(report, "C").lag == 700  # never committed: counted from the min offset


def test_error_index_finds_what_a_scan_of_every_error_finds() -> None:
    """Each line's errors: those about the group, about one of its topics (not discovery),
    or (unattributed) about one of its clients; in capture order, as a scan of them all."""
    rng = Random(7)
    names, topics, clients = ["g1", "g2", "g3"], ["T1", "T2", "%RETRY%g1"], ["c1", "c2", "c3"]
    requests = ["GET_CONSUME_STATS", "GET_ROUTEINFO_BY_TOPIC", *sorted(DISCOVERY_REQUESTS)]
    errors = [
        CaptureError(
            target=rng.choice([*clients, "broker-a"]),
            request=rng.choice(requests),
            message=f"failure {i}",
            group=rng.choice([None, *names]),
            topic=rng.choice([None, *topics]),
        )
        for i in range(400)
    ]
    index = ErrorIndex(errors)
    for name in names:
        g = Group(
            name,
            consumers=tuple(
                Consumer(client_id=c, subscriptions=(Subscription(rng.choice(topics[:2])),))
                for c in rng.sample(clients, 2)
            ),
        )
        mine = {f"%RETRY%{name}"} | {s.topic for c in g.consumers for s in c.subscriptions}
        ids = {c.client_id for c in g.consumers}
        expected = tuple(
            e
            for e in errors
            if e.group == name
            or (e.group is None and e.request not in DISCOVERY_REQUESTS and e.topic in mine)
            or (e.group is None and e.topic is None and e.target in ids)
        )
        assert expected
        assert index.of(g) == expected


def test_the_errors_naming_a_client_are_looked_up_by_its_id_or_address() -> None:
    """A client's errors: its id or address as their target, or as a word of their text
    (punctuation around it ignored); never another id that merely contains it."""
    errors = [
        CaptureError("c1", "GET_CONSUMER_RUNNING_INFO", "via broker-a (10.0.0.1:10911): 207"),
        CaptureError("c10", "GET_CONSUMER_RUNNING_INFO", "via broker-a (10.0.0.1:10911): 207"),
        CaptureError("broker-b (10.0.0.2:10911)", "QUERY_ASSIGNMENT", "no answer for (c1)"),
        CaptureError("broker-b (10.0.0.2:10911)", "GET_CONSUME_STATS", "timed out after 5 s"),
        CaptureError("10.0.0.9:40100", "GET_CONSUMER_RUNNING_INFO", "connection refused"),
        CaptureError("c2 via broker-a", "GET_CONSUMER_RUNNING_INFO", "relay of c2, c1: 207"),
    ]
    index = ErrorIndex(errors)
    c1 = Consumer(client_id="c1", client_addr="10.0.0.9:40100")
    assert index.naming(c1) == [errors[0], errors[2], errors[4], errors[5]]
    assert index.naming(Consumer(client_id="c10")) == [errors[1]]
    assert index.naming(Consumer(client_id="c2")) == [errors[5]]
    assert index.naming(Consumer(client_id="c3")) == []


def _broadcast(commits: dict[str, int | None]) -> StatusReport:
    """A BROADCASTING group of T (2 queues, max offsets 900): each client's commit offsets
    (``None``: it did not answer, its running info unknown)."""
    rows = [
        {"topic": T, "brokerName": "broker-a", "queueId": i, "brokerOffset": 900,
         "consumerOffset": -1, "minOffset": 0}
        for i in range(2)
    ]  # fmt: skip
    clients = [
        consumer(
            cid,
            T,
            assigned=queues(T, "broker-a", 0, 1),
            processQueues=[
                {"topic": T, "brokerName": "broker-a", "queueId": i, "commitOffset": commit}
                for i in range(2)
            ],
        )
        if commit is not None
        else consumer(cid, T)
        for cid, commit in commits.items()
    ]
    snap = snapshot(
        {T: {"queues": 2}},
        {"Notify": {"messageModel": "BROADCASTING", "consumers": clients, "offsets": rows}},
    )
    return status(snap)


def test_a_broadcasting_groups_lag_is_its_most_behind_clients() -> None:
    """Not the never-committed rows' max - min (1,800), not unknown: the worst client's."""
    found = line(_broadcast({"c1": 900, "c2": 400}), "Notify")
    assert (found.lag, found.lag_complete) == (1_000, True)
    doc = status_to_json(_broadcast({"c1": 900, "c2": 400}))
    assert (doc["groups"][0]["lag"], doc["totals"]["lag"]) == (1_000, 1_000)
    # a client whose lag is unknown makes it a lower bound
    found = line(_broadcast({"c1": 900, "c2": 400, "c3": None}), "Notify")
    assert (found.lag, found.lag_complete) == (1_000, False)
    # none known: unknown, not partial
    found = line(_broadcast({"c3": None}), "Notify")
    assert (found.lag, found.lag_complete) == (None, True)
