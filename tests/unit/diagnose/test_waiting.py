"""Messages waiting in queues nobody consumes, and their fate (4.9 broker + Java client)."""

from __future__ import annotations

import pytest

from rmqlb.diagnose import Code, diagnose
from rmqlb.diagnose.rules.waiting import waiting
from rmqlb.model import (
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


def _split(offsets: tuple[QueueOffset, ...], consume_from: str | None = None) -> str:
    props = {"consumeFromWhere": consume_from} if consume_from else {}
    snapshot = Snapshot(
        topics={
            "A": TopicRoute("A", (QueueData("broker-a", 4, 4),)),
            "B": TopicRoute("B", (QueueData("broker-a", 4, 4),)),
        },
        groups={
            "G": Group(
                "G",
                consumers=(
                    Consumer("c1", (Subscription("A"),), assigned=tuple(A[:2]), properties=props),
                    Consumer("c2", (Subscription("B"),), assigned=(), properties=props),
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
