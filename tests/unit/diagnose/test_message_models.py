"""A group whose clients mix CLUSTERING and BROADCASTING: diagnosed as CLUSTERING (the
brokers' offsets are the CLUSTERING clients'), whatever model the last heartbeat left the
brokers listing, with MESSAGE_MODEL_INCONSISTENT as the cause of what the mix does."""

from __future__ import annotations

from typing import Any

import pytest
from diagnose_builders import codes, consumer, group, labels, only, queues, route, run, snapshot

from rmqlb.diagnose import Code, Report, Severity
from rmqlb.diagnose.status import status
from rmqlb.model import MessageModel
from rmqlb.model.snapshot import Consumer, consumed_model

T = "MixT"
RETRY = "%RETRY%MixG"
ALL = queues(T, "broker-a", 0, 1, 2, 3) + queues(T, "broker-b", 0, 1, 2, 3)


def model(name: str) -> dict[str, Any]:
    return {"properties": {"messageModel": name}}


def offsets() -> list[dict[str, Any]]:
    """25 messages in each queue; the CLUSTERING client committed broker-b's, nobody
    broker-a's (the broker answers 0: never committed, the queue starting at 0)."""
    return [
        {
            "topic": T,
            "brokerName": broker,
            "queueId": i,
            "brokerOffset": 25,
            "consumerOffset": 25 if broker == "broker-b" else 0,
            "minOffset": 0,
        }
        for broker in ("broker-a", "broker-b")
        for i in range(4)
    ]


def mixed(
    listed: str, *, retry: bool = False, configs: dict[str, dict[str, Any]] | None = None
) -> Report:
    """c1 (CLUSTERING) holds broker-b's queues, b1 (BROADCASTING) every queue; with
    ``retry``, c1 also subscribes the group's retry topic (b1 does not, as in Java); the
    group's subscription-group ``configs`` by broker."""
    topics: dict[str, Any] = {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6))}
    c1_topics = [T]
    c1_held = queues(T, "broker-b", 0, 1, 2, 3)
    if retry:
        topics[RETRY] = route(("broker-a", 1, 1, 6), ("broker-b", 1, 1, 6))
        c1_topics.append(RETRY)
        c1_held += queues(RETRY, "broker-b", 0)
    members = (
        consumer("127.0.0.1@b1", T, assigned=ALL, strategy="AVG", **model("BROADCASTING")),
        consumer(
            "127.0.0.1@c1", *c1_topics, assigned=c1_held, strategy="AVG", **model("CLUSTERING")
        ),
    )
    mix = group(*members, messageModel=listed, offsets=offsets(), configs=configs or {})
    return run(topics, {"MixG": mix})


@pytest.mark.parametrize("listed", ["BROADCASTING", "CLUSTERING"])
def test_the_mix_is_the_cause_of_the_doubled_queues_and_of_the_lag_nobody_commits(
    listed: str,
) -> None:
    report = mixed(listed)
    assert codes(report) == [
        "MESSAGE_MODEL_INCONSISTENT",
        "DUPLICATE_ASSIGNMENT",
        "ASSIGNMENT_MISMATCH",
    ]
    cause = only(report, Code.MESSAGE_MODEL_INCONSISTENT)
    assert cause.severity is Severity.error
    assert cause.consumers == ("127.0.0.1@b1",)
    assert labels(cause) == [q["brokerName"] + f":{q['queueId']}" for q in ALL]
    assert f"the brokers list the group as {listed}" in cause.message
    assert (
        "the 4 queues AVG gives 127.0.0.1@b1 (broker-a:0..3) are read only by it, which keeps "
        "its offsets on its own disk, never on the brokers: the group never consumes them; "
        "100 messages wait there: once a consumer takes them over, all are consumed from "
        "offset 0" in cause.message
    )
    assert (
        "each message of the 4 queues the CLUSTERING clients take (broker-b:0..3) is "
        "processed 2 times" in cause.message
    )
    assert "set MessageModel.CLUSTERING in it and restart it" in cause.hint
    assert "127.0.0.1@b1 must receive every message, give it a consumer group" in cause.hint
    for effect in report.findings[1:]:
        assert effect.caused_by == cause.id
        assert "consumes in BROADCASTING mode in a CLUSTERING group" in effect.hint
    (g,) = report.groups
    assert g.message_model == "CLUSTERING"
    rows = g.topics[0].queues
    assert [(r.queue.label(), r.status.value) for r in rows] == [
        *((f"broker-a:{i}", "unconsumed") for i in range(4)),
        *((f"broker-b:{i}", "duplicate") for i in range(4)),
    ]
    assert g.total_lag() == (100, True)  # the brokers' offsets are the CLUSTERING clients'


def test_consume_broadcast_enable_false_refuses_the_clustering_clients_too() -> None:
    """Real 4.9.8: a group made with ``mqadmin updateSubGroup`` (which writes
    consumeBroadcastEnable=false) with one client of each model: the CLUSTERING client's
    pulls were refused for a while after each heartbeat of the BROADCASTING one. Named
    only where the config says false."""
    off = {"consumeBroadcastEnable": False}
    report = mixed("CLUSTERING", configs={"broker-b": off, "broker-a": off})
    cause = only(report, Code.MESSAGE_MODEL_INCONSISTENT)
    assert cause.message.endswith(
        "; and consumeBroadcastEnable=false in the group's config on broker-a, broker-b (what "
        "mqadmin updateSubGroup writes unless given -d true): while a broker lists the group "
        "as BROADCASTING it refuses every pull of the group, the CLUSTERING clients' too ('the "
        "consumer group[MixG] can not consume by broadcast way'), so each heartbeat of a "
        "BROADCASTING client stops the group's consumption there until a CLUSTERING client's "
        "heartbeat comes next"
    )
    allowed = mixed("CLUSTERING", configs={"broker-a": {"consumeBroadcastEnable": True}})
    assert "consumeBroadcastEnable" not in only(allowed, Code.MESSAGE_MODEL_INCONSISTENT).message
    assert (
        "consumeBroadcastEnable"
        not in only(mixed("CLUSTERING"), Code.MESSAGE_MODEL_INCONSISTENT).message
    )


def test_a_broadcasting_client_is_not_taken_for_a_stale_one() -> None:
    """It holds every queue, as a client alone in its list would: not STALE_ALLOCATION."""
    assert "STALE_ALLOCATION" not in codes(mixed("BROADCASTING"))


def test_on_the_retry_topic_its_share_is_read_by_nobody() -> None:
    report = mixed("BROADCASTING", retry=True)
    on_retry = [f for f in report.findings if f.topic == RETRY]
    assert [f.code for f in on_retry] == [Code.MESSAGE_MODEL_INCONSISTENT, Code.UNCONSUMED_QUEUE]
    cause, effect = on_retry
    assert (
        "the 1 queue AVG gives 127.0.0.1@b1 (broker-a:0) is read by nobody (a BROADCASTING "
        f"client does not subscribe {RETRY})" in cause.message
    )
    assert effect.caused_by == cause.id
    assert (
        f"each heartbeat of a BROADCASTING client, which does not subscribe {RETRY}, removes "
        "it from the subscription table the brokers keep for the group" in cause.message
    )


def test_the_retry_topic_is_named_even_when_the_strategy_gives_it_nothing_there() -> None:
    """Its heartbeats still drop the retry topic from the group's subscription table (one
    retry queue, which AVG gives the CLUSTERING client, first of the two ids)."""
    topics = {
        T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6)),
        RETRY: route(("broker-a", 1, 1, 6)),
    }
    members = (
        consumer("127.0.0.1@z9", T, assigned=ALL, strategy="AVG", **model("BROADCASTING")),
        consumer(
            "127.0.0.1@a1",
            T,
            RETRY,
            assigned=ALL[:4] + queues(RETRY, "broker-a", 0),
            strategy="AVG",
            **model("CLUSTERING"),
        ),
    )
    report = run(topics, {"MixG": group(*members, messageModel="BROADCASTING")})
    (cause,) = [f for f in report.findings if f.topic == RETRY]
    assert cause.code is Code.MESSAGE_MODEL_INCONSISTENT and not cause.queues
    assert cause.message.endswith(
        "'the consumer's subscription not exist'): retried messages wait meanwhile"
    )


def test_status_counts_the_lag_on_the_brokers() -> None:
    topics = {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6))}
    members = (
        consumer("127.0.0.1@b1", T, assigned=ALL, strategy="AVG", **model("BROADCASTING")),
        consumer("127.0.0.1@c1", T, assigned=ALL[4:], strategy="AVG", **model("CLUSTERING")),
    )
    snap = snapshot(
        topics, {"MixG": group(*members, messageModel="BROADCASTING", offsets=offsets())}
    )
    (line,) = status(snap).lines
    assert (line.message_model, line.lag) == ("CLUSTERING", 100)
    # broker-a's queues, read by b1 only, are unconsumed rows: stranded (what pages)
    assert (line.stranded.queues, line.stranded.messages) == (4, 100)
    assert line.worst is not None and line.worst.code is Code.MESSAGE_MODEL_INCONSISTENT


@pytest.mark.parametrize(
    ("reported", "listed"),
    [(["BROADCASTING", "BROADCASTING"], "BROADCASTING"), ([None, None], "BROADCASTING")],
)
def test_a_group_all_broadcasting_or_unreported_stays_broadcasting(
    reported: list[str | None], listed: str
) -> None:
    members = [
        consumer(f"127.0.0.1@b{i}", T, assigned=ALL, **(model(m) if m else {}))
        for i, m in enumerate(reported)
    ]
    report = run(
        {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6))},
        {"MixG": group(*members, messageModel=listed, offsets=offsets())},
    )
    assert codes(report) == ["BROADCASTING"]
    assert report.groups[0].message_model == "BROADCASTING"


def test_consumed_model() -> None:
    def c(name: str | None) -> Consumer:
        return Consumer("x", properties={"messageModel": name} if name else {})

    clustering, broadcasting = MessageModel.CLUSTERING, MessageModel.BROADCASTING
    assert consumed_model(broadcasting, [c("BROADCASTING"), c("CLUSTERING")]) is clustering
    assert consumed_model(broadcasting, [c("BROADCASTING"), c(None)]) is broadcasting
    assert consumed_model(broadcasting, []) is broadcasting
    # the clients' own reports win over a listing a departed client's heartbeat left
    assert consumed_model(clustering, [c("BROADCASTING")]) is broadcasting
    assert consumed_model(clustering, [c(None)]) is clustering
    assert c("SOMETHING").message_model is None
