"""Messages waiting in queues nobody consumes, and their fate (the brokers' and the Java
push clients' rules, 4.9 to 5.1)."""

from __future__ import annotations

import pytest

from rmqlb.diagnose import Code, diagnose
from rmqlb.diagnose.rules.waiting import waiting
from rmqlb.model import (
    BrokerInfo,
    Consumer,
    Group,
    MessageQueue,
    QueueData,
    QueueOffset,
    Snapshot,
    Subscription,
    TopicRoute,
)
from rmqlb.model.snapshot import NEVER_COMMITTED

A = [MessageQueue("A", "broker-a", i) for i in range(4)]


def test_waiting_splits_by_what_the_broker_will_answer() -> None:
    w = waiting(
        [
            QueueOffset(A[0], 10, 4),  # committed: 6 behind
            QueueOffset(A[1], 10, NEVER_COMMITTED, 0, 0),  # starts at 0: 10
            QueueOffset(A[2], 10, NEVER_COMMITTED, 0, 7),  # start deleted: 3
            None,
        ]
    )
    assert (w.messages, w.committed, w.never_from_zero, w.never_trimmed) == (19, 6, 10, 3)
    assert (w.known, w.queues) == (3, 4)


def _split(
    offsets: tuple[QueueOffset, ...],
    consume_from: str | None = None,
    *,
    clients: tuple[int | None, int | None] = (None, None),
    broker: int | None = None,
) -> str:
    """The UNCONSUMED_QUEUE message of A[2], A[3] (c2 subscribes B only); ``clients``: the
    two clients' versions, ``broker``: broker-a's."""
    props = {"consumeFromWhere": consume_from} if consume_from else {}
    snapshot = Snapshot(
        brokers={"broker-a": BrokerInfo("broker-a", version=broker)},
        topics={
            "A": TopicRoute("A", (QueueData("broker-a", 4, 4),)),
            "B": TopicRoute("B", (QueueData("broker-a", 4, 4),)),
        },
        groups={
            "G": Group(
                "G",
                consumers=(
                    Consumer(
                        "c1",
                        (Subscription("A"),),
                        assigned=tuple(A[:2]),
                        properties=props,
                        version=clients[0],
                    ),
                    Consumer(
                        "c2",
                        (Subscription("B"),),
                        assigned=(),
                        properties=props,
                        version=clients[1],
                    ),
                ),
                offsets=offsets,
            )
        },
    )
    report = diagnose(snapshot)
    (finding,) = [f for f in report.findings if f.code is Code.UNCONSUMED_QUEUE and f.topic == "A"]
    assert set(finding.queues) == {A[2], A[3]}
    return finding.message


def test_committed_queues_are_resumed() -> None:
    text = _split((QueueOffset(A[2], 30, 10), QueueOffset(A[3], 30, 20)))
    assert text.endswith(
        "30 messages wait there: once a consumer takes them over, all are consumed from the "
        "committed offset"
    )


def test_never_committed_from_zero_is_consumed_from_zero() -> None:
    text = _split(
        (QueueOffset(A[2], 20, NEVER_COMMITTED, 0, 0), QueueOffset(A[3], 20, NEVER_COMMITTED, 0, 0))
    )
    assert "40 messages wait there" in text
    assert "all are consumed from offset 0 (committed there, or never committed" in text


@pytest.mark.parametrize(
    ("consume_from", "fate"),
    [
        (None, "all are skipped (never committed and the queue's start deleted"),
        ("CONSUME_FROM_MAX_OFFSET", "all are skipped"),
        ("CONSUME_FROM_FIRST_OFFSET", "all are consumed (never committed; the client starts"),
        ("CONSUME_FROM_TIMESTAMP", "all are consumed only from consumeTimestamp on"),
    ],
)
def test_never_committed_with_deleted_start_follows_consume_from_where(
    consume_from: str | None, fate: str
) -> None:
    offsets = tuple(QueueOffset(mq, 50, NEVER_COMMITTED, 0, 45) for mq in A[2:])
    text = _split(offsets, consume_from)
    assert "10 messages wait there" in text
    assert fate in text


def test_mixed_fates_are_counted_apart() -> None:
    text = _split((QueueOffset(A[2], 30, 10), QueueOffset(A[3], 50, NEVER_COMMITTED, 0, 45)))
    assert "25 messages wait there" in text
    assert "20 are consumed from the committed offset; 5 are skipped" in text


def test_unknown_offsets_say_so_and_no_offsets_add_nothing() -> None:
    text = _split((QueueOffset(A[2], 30, 10),))
    assert "20 messages wait there (offsets of 1 queue unknown)" in text
    assert "wait there" not in _split(())


# MQVersion ordinals: V4_9_8 409, V5_0_0 413, V5_1_4 441
NEVER_FROM_ZERO = tuple(QueueOffset(mq, 20, NEVER_COMMITTED, 0, 0) for mq in A[2:])
SKIPPED_BY_5_0 = (
    "skipped (never committed, and a 5.0 client asks the broker not to answer 0: "
    "CONSUME_FROM_LAST_OFFSET starts at the max offset)"
)


def test_5_0_clients_skip_never_committed_queues_on_a_5_broker() -> None:
    """The 5.0 client asks QUERY_CONSUMER_OFFSET with setZeroIfNotFound=false: a 5.x broker
    answers "not found" even for a queue that starts at 0, and LAST starts at the max."""
    text = _split(NEVER_FROM_ZERO, clients=(413, 413), broker=441)
    assert text.endswith(
        f"40 messages wait there: once a consumer takes them over, all are {SKIPPED_BY_5_0}"
    )


@pytest.mark.parametrize(
    ("clients", "broker"),
    [((413, 413), 409), ((413, 413), None), ((441, 409), 441), ((None, None), 441)],
)
def test_other_clients_or_a_4_9_broker_consume_from_zero(
    clients: tuple[int | None, int | None], broker: int | None
) -> None:
    """A 4.9 broker does not read the field; 4.9 and 5.1 clients do not send it."""
    text = _split(NEVER_FROM_ZERO, clients=clients, broker=broker)
    assert "all are consumed from offset 0 (committed there, or never committed: the broker" in text


def test_a_group_of_5_0_and_other_clients_gets_both_fates() -> None:
    text = _split(NEVER_FROM_ZERO, clients=(413, 441), broker=441)
    assert text.endswith(
        f"all are consumed from offset 0 by a client other than 5.0, but {SKIPPED_BY_5_0} by a "
        "5.0 client"
    )


def test_an_offset_of_0_read_from_a_5_broker_gives_5_0_clients_both_fates() -> None:
    """A 5.x broker answers rmqlb 0 for a queue committed at 0 and for one never committed
    that starts at 0 in memory (rmqlb asks as 4.9 and 5.1 clients do): a 5.0 client resumes
    the first and skips the second, so both are said."""
    at_zero = tuple(QueueOffset(mq, 20, 0, 0, 0) for mq in A[2:])
    text = _split(at_zero, clients=(413, 413), broker=441)
    assert text.endswith(
        "all are consumed from offset 0 if the group committed 0 there; if it never committed "
        f"there, {SKIPPED_BY_5_0}"
    )
    some = _split(at_zero, clients=(413, 441), broker=441)
    assert "if it never committed there and a 5.0 client takes them over, skipped" in some


def test_5_0_clients_consume_when_consume_from_where_starts_at_the_first_offset() -> None:
    first = _split(NEVER_FROM_ZERO, "CONSUME_FROM_FIRST_OFFSET", clients=(413, 413), broker=441)
    assert "all are consumed from offset 0 (committed there, or never committed" in first
