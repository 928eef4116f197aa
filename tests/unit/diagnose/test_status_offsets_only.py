"""A status line of a group with offsets only (no topic table): the one-pass fast path gives
what the general per-topic computation gives, and what is unknown stays unknown."""

from __future__ import annotations

from random import Random

import pytest

from rmqlb.diagnose.engine import diagnose
from rmqlb.diagnose.status import (
    SORT_KEYS,
    _lag,
    _last_consumed,
    _offsets_only,
    _topics_and_queues,
    line_to_json,
    sort_key,
    status,
    stranded_by_topic,
)
from rmqlb.model import Group, MessageQueue, QueueData, QueueOffset, Snapshot, TopicRoute
from rmqlb.model.snapshot import CaptureError, MessageModel

TOPICS = ("TopicA", "TopicB", "%RETRY%G", "%DLQ%G")


def _offsets(rng: Random) -> tuple[QueueOffset, ...]:
    """Offsets of every kind: lagging or not, never committed (with and without a min
    offset), with and without a store time, retry topics, a queue listed twice."""
    out: list[QueueOffset] = []
    for _ in range(rng.randrange(0, 12)):
        queue = MessageQueue(
            rng.choice(TOPICS), rng.choice(("broker-a", "broker-b")), rng.randrange(4)
        )
        committed = rng.random() < 0.7
        out.append(
            QueueOffset(
                queue,
                broker_offset=rng.randrange(0, 50),
                consumer_offset=rng.randrange(0, 60) if committed else -1,
                last_timestamp=rng.choice((0, rng.randrange(1, 10**12))),
                min_offset=rng.choice((None, rng.randrange(0, 10))),
            )
        )
    if out and rng.random() < 0.3:
        out.append(rng.choice(out))
    return tuple(out)


def _snapshot(rng: Random, n: int) -> Snapshot:
    both = tuple(QueueData(b, 4, 4) for b in ("broker-a", "broker-b"))
    topics = {t: TopicRoute(t, both) for t in TOPICS}
    groups = {
        f"G{i}": Group(
            f"G{i}",
            message_model=rng.choice(tuple(MessageModel)),
            offsets=_offsets(rng),
        )
        for i in range(n)
    }
    return Snapshot(topics=topics, groups=groups)


@pytest.mark.parametrize("seed", range(20))
def test_offsets_only_equals_the_general_computation(seed: int) -> None:
    snap = _snapshot(Random(seed), 30)
    report = diagnose(snap)
    for g in report.groups:
        assert not g.topics  # no consumer: no topic table, the fast path's case
        group = snap.groups[g.group]
        topics, queues, by_topic, lag, last = _offsets_only(group)
        assert (topics, queues) == _topics_and_queues(snap, group, g)
        assert by_topic == stranded_by_topic(group, g)
        assert list(by_topic) == list(stranded_by_topic(group, g))  # same topic order
        assert lag == _lag(group)
        assert last == _last_consumed(group)


def test_unknown_stays_unknown_never_zero() -> None:
    mq = MessageQueue("TopicA", "broker-a", 0)
    never = QueueOffset(mq, broker_offset=5, consumer_offset=-1)
    snap = Snapshot(
        topics={"TopicA": TopicRoute("TopicA", (QueueData("broker-a", 4, 4),))},
        groups={
            "Empty": Group("Empty"),
            "Broadcast": Group(
                "Broadcast", message_model=MessageModel.BROADCASTING, offsets=(never,)
            ),
            "Unread": Group("Unread", offsets=(QueueOffset(mq, 10, 4),)),
        },
        errors=(CaptureError("broker-b", "GET_CONSUME_STATS", "timeout", group="Unread"),),
    )
    lines = {s.group: s for s in status(snap).lines}
    assert lines["Empty"].lag is None and lines["Empty"].last_consumed_ms is None
    assert lines["Broadcast"].lag is None  # its never-committed rows say nothing of it
    unread = line_to_json(lines["Unread"])
    assert (unread["lag"], unread["lagKnown"], unread["lagComplete"]) == (None, 6, False)
    assert unread["stranded"]["messages"] is None and unread["stranded"]["knownMessages"] == 6


@pytest.mark.parametrize("by", SORT_KEYS)
def test_lines_sorted_once_in_the_asked_order(by: str) -> None:
    """One sort by ``by`` gives the order a sort by severity then by ``by`` gave: every
    key ends with the group name, so no two lines tie."""
    snap = _snapshot(Random(7), 40)
    worst = status(snap).lines
    assert status(snap, sort_by=by).lines == tuple(sorted(worst, key=sort_key(by)))
