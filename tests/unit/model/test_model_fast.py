"""The fast constructors build exactly what the dataclass constructors build."""

from __future__ import annotations

import dataclasses
import gc

import pytest

from rmqlb.diagnose._fast import new_consumer_row
from rmqlb.diagnose.report import ConsumerRow, QueueRow, QueueStatus, new_rows
from rmqlb.model import MessageQueue, QueueOffset
from rmqlb.model._fast import _CONSUMER_FIELDS, gc_paused, new_consumer, new_offset, new_queue
from rmqlb.model.snapshot import (
    Consumer,
    ConsumeStatus,
    ProcessQueueState,
    Rebalance,
    Subscription,
)
from rmqlb.model.strategy import Avg
from rmqlb.snapshot import parse_snapshot


def test_fast_constructors_equal_the_real_ones() -> None:
    mq = new_queue("T", "broker-a", 3)
    assert mq == MessageQueue("T", "broker-a", 3)
    assert hash(mq) == hash(MessageQueue("T", "broker-a", 3))
    (row,) = new_rows([mq], ["c1"], [("c1", "c2")], [QueueStatus.duplicate], [5])
    assert row == QueueRow(mq, "c1", ("c1", "c2"), QueueStatus.duplicate, 5)
    for args in ((mq, 10, 4), (mq, 10, -1, 7), (mq, 10, -1, 7, 3)):
        fast, real = new_offset(*args), QueueOffset(*args)
        assert (fast, hash(fast), repr(fast)) == (real, hash(real), repr(real))
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.broker_offset = 1  # type: ignore[misc]


def test_offsets_built_with_the_slot_setters_equal_the_real_ones() -> None:
    """The snapshot reader builds offsets with OFFSET_SETTERS inline."""
    offsets = [
        {"brokerOffset": 10, "consumerOffset": 4, "lastTimestamp": 7},
        {"brokerOffset": 10, "consumerOffset": -1, "lastTimestamp": 7, "minOffset": 3},
    ]
    doc = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 4}},
        "groups": {
            "G": {
                "consumers": [],
                "offsets": [
                    {"topic": "T", "brokerName": "broker-a", "queueId": i, **o}
                    for i, o in enumerate(offsets)
                ],
            }
        },
    }
    a, b = MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)
    got = parse_snapshot(doc).groups["G"].offsets
    assert got == (QueueOffset(a, 10, 4, 7), QueueOffset(b, 10, -1, 7, 3))
    assert [o.lag for o in got] == [6, 7]  # never committed: from the min offset


def test_fast_objects_stay_frozen() -> None:
    mq = new_queue("T", "broker-a", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mq.queue_id = 4  # type: ignore[misc]


def test_every_field_is_covered() -> None:
    assert [f.name for f in dataclasses.fields(MessageQueue)] == [
        "topic",
        "broker_name",
        "queue_id",
    ]
    assert [f.name for f in dataclasses.fields(QueueOffset)] == [
        "queue",
        "broker_offset",
        "consumer_offset",
        "last_timestamp",
        "min_offset",
    ]
    assert [f.name for f in dataclasses.fields(QueueRow)] == [
        "queue",
        "expected",
        "actual",
        "status",
        "lag",
        "offset",
    ]


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_new_rows_equal_the_real_constructor() -> None:
    a, b = new_queue("T", "broker-a", 0), new_queue("T", "broker-a", 1)
    rows = new_rows(
        [a, b], ["c1", None], [("c1",), None], [QueueStatus.ok, QueueStatus.unknown], [3, None]
    )
    assert rows == [
        QueueRow(a, "c1", ("c1",), QueueStatus.ok, 3),
        QueueRow(b, None, None, QueueStatus.unknown, None),
    ]
    assert new_rows([a], ["c2"], [("c1",)], [QueueStatus.moved], None) == [
        QueueRow(a, "c2", ("c1",), QueueStatus.moved, None)
    ]


def test_fast_consumer_constructors_equal_the_real_ones() -> None:
    mq = new_queue("T", "broker-a", 3)
    fields = (
        "c1",
        (Subscription("T"),),
        "10.0.0.1:5",
        "JAVA",
        413,
        Avg(),
        True,
        "CONSUME_PASSIVELY",
        (mq,),
        None,
        17,
        {"a": "b"},
        (ProcessQueueState(mq, cached_msg_count=3, locked=True),),
        {"T": ConsumeStatus(consume_ok_tps=2.5)},
    )
    assert [f.name for f in dataclasses.fields(Consumer)] == list(_CONSUMER_FIELDS)
    assert new_consumer(*fields) == Consumer(*fields)
    assert [f.name for f in dataclasses.fields(ConsumerRow)] == [
        "client_id",
        "subscribes",
        "strategy",
        "expected",
        "actual",
        "lag",
        "consumer",
        "balanced_by",
        "balance_inferred",
    ]
    assert new_consumer_row("c1", True, "AVG", 2, None, 5) == ConsumerRow(
        "c1", True, "AVG", 2, None, 5
    )
    row = ("c1", True, "AVG", 2, 2, 5, None, Rebalance.BROKER, "it holds POP queues")
    assert new_consumer_row(*row) == ConsumerRow(*row)
