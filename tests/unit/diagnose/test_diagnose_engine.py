"""The engine: tables, strategy precedence, selection, retry topics, one allocation per topic."""

from __future__ import annotations

from typing import Any

import pytest
from diagnose_builders import codes, consumer, group, queues, route, run, snapshot

import rmqlb.diagnose.context as context_module
from rmqlb.diagnose import QueueStatus, diagnose
from rmqlb.diagnose.report import report_to_json
from rmqlb.diagnose.status import status
from rmqlb.errors import GroupNotFound, InputError
from rmqlb.model.strategy import AvgByCircle
from rmqlb.render._view import topic_header

T = "TopicA"


def test_queue_statuses_and_lag() -> None:
    offsets = [
        {
            "topic": T,
            "brokerName": "broker-a",
            "queueId": i,
            "brokerOffset": 100,
            "consumerOffset": 100 - i,
        }
        for i in range(5)
    ]
    report = run(
        {T: {"queues": 5}},
        {
            "G": group(
                consumer("c1", T, assigned=queues(T, "broker-a", 0, 4)),
                consumer("c2", T, assigned=queues(T, "broker-a", 2, 3, 4)),
                offsets=offsets,
            )
        },
    )
    table = report.groups[0].topics[0]
    rows = {r.queue.queue_id: r for r in table.queues}
    # AVG: c1 -> 0 1 2, c2 -> 3 4
    assert [rows[i].expected for i in range(5)] == ["c1", "c1", "c1", "c2", "c2"]
    assert [rows[i].status for i in range(5)] == [
        QueueStatus.ok,
        QueueStatus.unconsumed,
        QueueStatus.moved,
        QueueStatus.ok,
        QueueStatus.duplicate,
    ]
    assert rows[1].actual == ()
    assert rows[4].actual == ("c1", "c2")
    assert [rows[i].lag for i in range(5)] == [0, 1, 2, 3, 4]
    assert [(c.client_id, c.expected, c.actual, c.lag) for c in table.consumers] == [
        ("c1", 3, 2, 4),
        ("c2", 2, 3, 9),
    ]


def test_unknown_actual_rows() -> None:
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T), consumer("c2", T))})
    rows = report.groups[0].topics[0].queues
    assert [(r.actual, r.status) for r in rows] == [
        (None, QueueStatus.unknown),
        (None, QueueStatus.unknown),
    ]
    assert [c.actual for c in report.groups[0].topics[0].consumers] == [None, None]


def test_non_subscriber_is_in_the_consumer_table_with_its_share() -> None:
    report = run(
        {T: {"queues": 4}, "B": {"queues": 4}},
        {"G": group(consumer("c1", T), consumer("c2", "B"))},
    )
    topic_a = next(t for t in report.groups[0].topics if t.topic == T)
    assert [(c.client_id, c.subscribes, c.expected) for c in topic_a.consumers] == [
        ("c1", True, 2),
        ("c2", False, 2),
    ]
    assert [r.status for r in topic_a.queues][2:] == [QueueStatus.unconsumed] * 2


def test_queues_held_outside_the_route_get_a_row() -> None:
    report = run(
        {T: route(("broker-a", 2, 2, 6), ("broker-b", 2, 2, 2))},
        {
            "G": group(
                consumer("c1", T, assigned=queues(T, "broker-a", 0, 1) + queues(T, "broker-b", 0))
            )
        },
    )
    rows = report.groups[0].topics[0].queues
    assert [r.queue.label() for r in rows] == ["broker-a:0", "broker-a:1", "broker-b:0"]
    assert rows[-1].expected is None and rows[-1].status is QueueStatus.moved


def _offsets(broker: str, *lags: int) -> list[dict[str, Any]]:
    return [
        {"topic": T, "brokerName": broker, "queueId": i, "brokerOffset": 50 + lag,
         "consumerOffset": 50}
        for i, lag in enumerate(lags)
    ]  # fmt: skip


def test_queues_outside_mq_all_with_offsets_are_unconsumed_rows_with_their_lag() -> None:
    """broker-b write-only (perm 2), broker-c writes 3 queues and reads 2: messages wait
    where no consumer is given the queue; the rows, the topic's and the group's lag say so,
    as status does."""
    topics = {T: route(("broker-a", 2, 2, 6), ("broker-b", 2, 2, 2), ("broker-c", 2, 3, 6))}
    offsets = [
        *_offsets("broker-a", 0, 0),
        *_offsets("broker-b", 7, 5),
        *_offsets("broker-c", 0, 0, 4),
    ]
    held = queues(T, "broker-a", 0, 1) + queues(T, "broker-c", 0, 1)
    groups = {"G": group(consumer("c1", T, assigned=held), offsets=offsets)}
    report = run(topics, groups)
    t = report.groups[0].topics[0]
    rows = [(r.queue.label(), r.expected, r.actual, r.status.value, r.lag) for r in t.queues]
    assert rows[4:] == [
        ("broker-b:0", None, (), "unconsumed", 7),
        ("broker-b:1", None, (), "unconsumed", 5),
        ("broker-c:2", None, (), "unconsumed", 4),
    ]
    assert [r.offset is not None for r in t.queues] == [True] * 7
    assert t.lag == 16 and report.groups[0].lag == 16
    line = status(snapshot(topics, groups)).lines[0]
    assert (line.lag, line.stranded.queues, line.stranded.messages) == (16, 3, 16)
    # explain's header counts the rows and, apart, the readable queues status counts
    assert t.readable == line.queues == 4
    assert topic_header(t) == f"Topic {T} · 7 queues (4 readable) · 1 consumer"


def test_a_held_queue_outside_mq_all_keeps_its_lag() -> None:
    topics = {T: route(("broker-a", 2, 2, 6), ("broker-b", 1, 1, 2))}
    held = queues(T, "broker-a", 0, 1) + queues(T, "broker-b", 0)
    groups = {
        "G": group(
            consumer("c1", T, assigned=held),
            offsets=_offsets("broker-a", 1, 1) + _offsets("broker-b", 9),
        )
    }
    t = run(topics, groups).groups[0].topics[0]
    assert [(r.queue.label(), r.status.value, r.lag) for r in t.queues][2:] == [
        ("broker-b:0", "moved", 9)
    ]
    assert t.lag == 11


def test_the_group_lag_counts_offsets_of_topics_nobody_subscribes_as_status_does() -> None:
    """T0 was consumed once and nobody subscribes it now: its 7 waiting messages are in
    the group's lag (NO_CONSUMERS names them), as status counts them; T's own lag is 5. A
    group with no consumer at all has a known lag too, not null; ``--topic`` keeps T's."""
    old = [
        {"topic": "T0", "brokerName": "broker-a", "queueId": 0, "brokerOffset": 17,
         "consumerOffset": 10}
    ]  # fmt: skip
    topics = {T: route(("broker-a", 2, 2, 6)), "T0": route(("broker-a", 1, 1, 6))}
    groups = {
        "G": group(consumer("c1", T), offsets=_offsets("broker-a", 2, 3) + old),
        "Gone": group(offsets=old),
    }
    report = run(topics, groups)
    g, gone = report.groups
    assert ([t.lag for t in g.topics], g.lag, gone.lag) == ([5], 12, 7)
    lines = {line.group: line.lag for line in status(snapshot(topics, groups)).lines}
    assert lines == {"G": 12, "Gone": 7}
    doc = report_to_json(report)
    assert [(x["lag"], x["lagKnown"]) for x in doc["groups"]] == [(12, 12), (7, 7)]
    only_t = diagnose(snapshot(topics, groups), groups=["G"], topic=T).groups[0]
    assert only_t.lag == 5


def test_outside_rows_of_unknown_holdings_are_unconsumed_when_the_allocation_is_checked() -> None:
    """Holdings unknown (``actual`` null), but the allocation gives nobody a queue outside
    mqAll: unconsumed, as the rows of mqAll nobody is expected to hold."""
    topics = {T: route(("broker-a", 2, 2, 6), ("broker-b", 1, 1, 2))}
    groups = {
        "G": group(consumer("c1", T), offsets=_offsets("broker-a", 0, 0) + _offsets("broker-b", 3))
    }
    last = run(topics, groups).groups[0].topics[0].queues[-1]
    assert (last.queue.label(), last.actual, last.status, last.lag) == (
        "broker-b:0",
        None,
        QueueStatus.unconsumed,
        3,
    )


@pytest.mark.parametrize(
    ("group_strategy", "consumer_strategies", "override", "label"),
    [
        (None, [None, None], None, "AVG"),
        (None, ["AVG_BY_CIRCLE", "AVG_BY_CIRCLE"], None, "AVG_BY_CIRCLE"),
        (None, ["AVG_BY_CIRCLE", None], None, "AVG_BY_CIRCLE"),
        (None, ["AVG_BY_CIRCLE", "AVG"], None, "AVG"),
        ("CONSISTENT_HASH", ["AVG_BY_CIRCLE", "AVG_BY_CIRCLE"], None, "CONSISTENT_HASH(vnodes=10)"),
        ("AVG", ["AVG", "AVG"], AvgByCircle(), "AVG_BY_CIRCLE"),
    ],
)
def test_strategy_precedence(
    group_strategy: str | None,
    consumer_strategies: list[str | None],
    override: Any,
    label: str,
) -> None:
    consumers = [consumer(f"c{i}", T, strategy=s) for i, s in enumerate(consumer_strategies)]
    extra = {"strategy": {"name": group_strategy}} if group_strategy else {}
    report = run({T: {"queues": 4}}, {"G": group(*consumers, **extra)}, strategy=override)
    assert report.groups[0].strategy == label


def test_unknown_group_and_unsubscribed_topic_are_input_errors() -> None:
    snap = snapshot({T: {"queues": 1}}, {"A": group(consumer("c1", T)), "B": group()})
    with pytest.raises(
        InputError, match=r"group 'Nope' does not exist in the snapshot \(2 groups known\)$"
    ):
        diagnose(snap, groups=["Nope"])
    with pytest.raises(GroupNotFound, match=r"\(2 groups known\); did you mean 'A'\?$") as caught:
        diagnose(snap, groups=["a"])
    assert (caught.value.group, caught.value.suggestion) == ("a", "A")
    with pytest.raises(InputError, match="topic 'Other' does not exist in the snapshot"):
        diagnose(snap, topic="Other")


def test_group_and_topic_selection() -> None:
    snap = snapshot(
        {T: {"queues": 1}, "B": {"queues": 1}},
        {"A": group(consumer("c1", T, "B")), "Z": group(consumer("c9", T))},
    )
    report = diagnose(snap, groups=["Z"], topic=T)
    assert [g.group for g in report.groups] == ["Z"]
    assert [t.topic for t in report.groups[0].topics] == [T]
    both = diagnose(snap, topic="B")
    assert [(g.group, [t.topic for t in g.topics]) for g in both.groups] == [
        ("A", ["B"]),
        ("Z", []),
    ]


def test_retry_topics_come_last_and_are_flagged() -> None:
    retry = "%RETRY%G"
    report = run(
        {"Zeta": {"queues": 1}, retry: {"queues": 1}, "Alpha": {"queues": 1}},
        {"G": group(consumer("c1", retry, "Zeta", "Alpha"))},
    )
    topics = report.groups[0].topics
    assert [(t.topic, t.retry) for t in topics] == [
        ("Alpha", False),
        ("Zeta", False),
        (retry, True),
    ]


def test_capture_errors_are_carried_into_the_report() -> None:
    error = {"target": "10.0.0.2:10911", "request": "GET_CONSUME_STATS", "message": "timeout"}
    report = run({T: {"queues": 1}}, {"G": group(consumer("c1", T))}, extra={"errors": [error]})
    assert report.partial
    assert [e.message for e in report.errors] == ["timeout"]


def test_findings_are_sorted_most_severe_first() -> None:
    report = run(
        {T: route(("broker-a", 1, 2, 6))},
        {"G": group(consumer("c1", T), consumer("c2", T))},
    )
    assert codes(report) == ["WRITE_EXCEEDS_READ", "IDLE_CONSUMER"]


def test_expected_allocation_runs_once_per_group_and_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = context_module.allocate_sorted

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(context_module, "allocate_sorted", counting)
    consumers = [consumer(f"c{i}", T, "B", assigned=[]) for i in range(7)]
    run({T: {"queues": 16}, "B": {"queues": 3}}, {"G": group(*consumers)})
    assert len(calls) == 2


def test_duplicate_client_id_in_the_tables() -> None:
    report = run(
        {T: {"queues": 3}},
        {"G": group(consumer("a", T), consumer("b", T), consumer("b", T))},
    )
    table = report.groups[0].topics[0]
    assert [(c.client_id, c.expected) for c in table.consumers] == [("a", 1), ("b", 1), ("b", 1)]
    assert [r.expected for r in table.queues] == ["a", "b", None]
    assert table.queues[2].status is QueueStatus.unconsumed
