"""Offsets of every queue a group consumes, over real TCP: what consume stats leave out."""

from __future__ import annotations

import asyncio

import pytest

from rmqlb.client.admin import ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.fake import FakeCluster
from rmqlb.model import (
    Consumer,
    Group,
    GroupConfig,
    MessageModel,
    MessageQueue,
    QueueData,
    QueueOffset,
    Snapshot,
    Subscription,
    TopicRoute,
)
from rmqlb.model.snapshot import NEVER_COMMITTED, V5_0_0

pytestmark = pytest.mark.timeout(60)


def _route(topic: str, read: int, write: int) -> TopicRoute:
    return TopicRoute(topic, (QueueData("broker-a", read, write),))


def _served() -> Snapshot:
    t1 = [MessageQueue("T1", "broker-a", i) for i in range(2)]
    t2 = [MessageQueue("T2", "broker-a", i) for i in range(2)]
    split = Group(
        "Split",
        consumers=(
            Consumer("c1", (Subscription("T1"),), assigned=tuple(t1)),
            Consumer("c2", (Subscription("T2"),), assigned=()),
        ),
        # Only T1 was ever committed: a 4.9 broker's consume stats list T1 alone.
        offsets=tuple(QueueOffset(mq, 10, 7, 0, 2) for mq in t1),
        configs={"broker-a": GroupConfig(notify_consumer_ids_changed_enable=False)},
    )
    # Another group writes down what the broker holds in T2 and in T1's unread queues 2..3
    # (queue 3's oldest 3 messages are already deleted).
    other = Group(
        "Other",
        offsets=(
            *(QueueOffset(mq, 20, 20, 0, 5) for mq in t2),
            *(QueueOffset(MessageQueue("T1", "broker-a", i), 30, 0, 0, i - 2) for i in (2, 3)),
        ),
    )
    return Snapshot(
        topics={"T1": _route("T1", 2, 4), "T2": _route("T2", 2, 2)},
        groups={"Split": split, "Other": other},
    )


def test_every_queue_gets_an_offset_and_never_committed_is_a_value() -> None:
    async def run() -> Snapshot:
        async with FakeCluster(_served()) as cluster:
            options = CollectOptions(
                namesrv=(cluster.namesrv_addr,), groups=("Split",), client=ClientOptions(2.0)
            )
            return await collect(options)

    got = asyncio.run(run())
    group = got.groups["Split"]
    offsets = {(o.queue.topic, o.queue.queue_id): o for o in group.offsets}
    # T1: committed offsets, min and max offsets from the topic's stats.
    assert offsets["T1", 0] == QueueOffset(MessageQueue("T1", "broker-a", 0), 10, 7, 0, 2)
    # T1 queues 2..3 are written but never read (writeQueueNums 4 > readQueueNums 2). A 4.9
    # broker answers 0 for a never-committed queue that still starts at offset 0 (queue 2),
    # "not found" once its oldest messages are deleted (queue 3).
    assert offsets["T1", 2].consumer_offset == 0
    assert offsets["T1", 2].lag == 30
    assert offsets["T1", 3].consumer_offset == NEVER_COMMITTED
    assert (offsets["T1", 3].min_offset, offsets["T1", 3].lag) == (1, 29)
    # T2: consume stats would say nothing; never committed, lag counted from the min offset.
    assert offsets["T2", 1].consumer_offset == NEVER_COMMITTED
    assert (offsets["T2", 1].min_offset, offsets["T2", 1].lag) == (5, 15)
    assert group.configs["broker-a"].notify_consumer_ids_changed_enable is False
    assert got.errors == ()


def test_a_broadcasting_group_gets_the_max_offsets_and_nothing_is_asked_of_commits() -> None:
    """Its clients keep its offsets: the capture reads the topic's min/max offsets (for each
    client's lag against its commit offsets) and asks no broker what the group committed."""
    t = [MessageQueue("T", "broker-a", i) for i in range(2)]
    notify = Group(
        "Notify",
        message_model=MessageModel.BROADCASTING,
        consumers=tuple(
            Consumer(cid, (Subscription("T"),), assigned=tuple(t)) for cid in ("c1", "c2")
        ),
    )
    # another group's offsets tell the fake what the broker holds in T
    other = Group("Other", offsets=tuple(QueueOffset(mq, 40, 40, 0, 3) for mq in t))
    served = Snapshot(topics={"T": _route("T", 2, 2)}, groups={"Notify": notify, "Other": other})

    async def run() -> tuple[Snapshot, list[str]]:
        async with FakeCluster(served) as cluster:
            options = CollectOptions(
                namesrv=(cluster.namesrv_addr,), groups=("Notify",), client=ClientOptions(2.0)
            )
            got = await collect(options)
            return got, [r.name for r in cluster.requests]

    got, asked = asyncio.run(run())
    assert got.groups["Notify"].offsets == tuple(
        QueueOffset(mq, 40, NEVER_COMMITTED, 0, 3) for mq in t
    )
    assert "GET_TOPIC_STATS_INFO" in asked
    assert "QUERY_CONSUMER_OFFSET" not in asked
    assert got.errors == ()


def _capture(
    served: Snapshot, group: str, dialect: int = 4, version: int | None = None
) -> tuple[Snapshot, list[str]]:
    """The capture of ``group`` from brokers of ``dialect`` (answering with ``version``
    where given), and its requests (``NAME`` or ``NAME topic`` for those naming a topic)."""

    async def run() -> tuple[Snapshot, list[str]]:
        async with FakeCluster(served, dialect=dialect) as cluster:
            if version is not None:
                cluster.version = version
            options = CollectOptions(
                namesrv=(cluster.namesrv_addr,), groups=(group,), client=ClientOptions(2.0)
            )
            got = await collect(options)
            return got, [
                " ".join((r.name, *([r.ext_fields["topic"]] if "topic" in r.ext_fields else [])))
                for r in cluster.requests
            ]

    return asyncio.run(run())


def test_a_group_nobody_consumes_gets_the_queues_its_consume_stats_leave_out() -> None:
    """Gone consumed T on broker-a and stopped; T was then created on broker-b, where
    messages wait that Gone never committed: its consume stats list broker-a's queues only,
    the route says broker-b holds T too, so broker-b's queues are read (a 4.9 broker answers
    0 for a queue never committed that starts at 0) and the group is not "all caught up"."""
    route = TopicRoute("T", (QueueData("broker-a", 2, 2), QueueData("broker-b", 2, 2)))
    on_a = [MessageQueue("T", "broker-a", i) for i in range(2)]
    on_b = [MessageQueue("T", "broker-b", i) for i in range(2)]
    gone = Group("Gone", offsets=tuple(QueueOffset(mq, 10, 10, 0, 0) for mq in on_a))
    other = Group("Other", offsets=tuple(QueueOffset(mq, 5, 5, 0, 0) for mq in on_b))
    got, asked = _capture(
        Snapshot(topics={"T": route}, groups={"Gone": gone, "Other": other}), "Gone"
    )
    offsets = {o.queue: o for o in got.groups["Gone"].offsets}
    assert [(o.consumer_offset, o.lag) for o in map(offsets.__getitem__, on_b)] == [(0, 5), (0, 5)]
    assert [offsets[mq].lag for mq in on_a] == [0, 0]
    assert "GET_TOPIC_STATS_INFO T" in asked and got.errors == ()


def test_a_group_nobody_consumes_whose_stats_cover_its_routes_asks_no_topic_stats() -> None:
    """Most groups of a big cluster: offsets on every queue of their topics' routes (and a
    retry topic: not a POP-only group, whose offsets' routes are read anyway)."""
    t = [MessageQueue("T", "broker-a", i) for i in range(2)]
    idle = Group("Idle", offsets=tuple(QueueOffset(mq, 10, 10, 0, 0) for mq in t))
    routes = {"T": _route("T", 2, 2), "%RETRY%Idle": _route("%RETRY%Idle", 1, 1)}
    got, asked = _capture(Snapshot(topics=routes, groups={"Idle": idle}), "Idle")
    assert [(o.queue, o.broker_offset, o.consumer_offset) for o in got.groups["Idle"].offsets] == [
        (mq, 10, 10) for mq in t
    ]
    assert not [r for r in asked if r.endswith(" T")]  # offsets on every broker: no route
    assert not [r for r in asked if r.startswith(("GET_TOPIC_STATS_INFO", "QUERY_CONSUMER"))]


def test_the_pop_retry_topic_consume_stats_leave_out_is_read_apart_on_5_0() -> None:
    """A 5.0 broker's consume stats list no topic the group's online clients do not
    subscribe, and none subscribes its POP retry topic: for a topic its clients pop, the
    retry topic's offsets are read apart (min/max, then each queue's committed offset), so
    what came back through it is counted. Nothing asked of a 4.x or 5.1+ broker (5.1 lists
    the topic; 4.x has none) or for a group that does not pop."""
    t = [MessageQueue("T", "broker-a", i) for i in range(2)]
    retry = MessageQueue("%RETRY%Pop_T", "broker-a", 0)
    popper = Consumer("c1", (Subscription("T"),), assigned=(), pop_assigned=tuple(t))
    offsets = (*(QueueOffset(mq, 10, 10, 0, 0) for mq in t), QueueOffset(retry, 6, 4, 0, 1))
    routes = {"T": _route("T", 2, 2), retry.topic: _route(retry.topic, 1, 1)}
    served = Snapshot(
        topics=routes, groups={"Pop": Group("Pop", consumers=(popper,), offsets=offsets)}
    )
    got, asked = _capture(served, "Pop", dialect=5, version=V5_0_0)
    found = {o.queue: o for o in got.groups["Pop"].offsets}
    assert found[retry] == QueueOffset(retry, 6, 4, 0, 1)
    assert "GET_TOPIC_STATS_INFO %RETRY%Pop_T" in asked and got.errors == ()
    puller = Consumer("c1", (Subscription("T"),), assigned=tuple(t))
    pulled = Snapshot(
        topics=routes, groups={"Pop": Group("Pop", consumers=(puller,), offsets=offsets)}
    )
    for snapshot, dialect, version in ((served, 5, None), (served, 4, None), (pulled, 5, V5_0_0)):
        got, asked = _capture(snapshot, "Pop", dialect=dialect, version=version)
        assert retry not in {o.queue for o in got.groups["Pop"].offsets}
        assert not [r for r in asked if r.endswith("%RETRY%Pop_T")]
