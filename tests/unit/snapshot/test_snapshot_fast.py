"""The fast constructors build exactly what the dataclass constructors build."""

from __future__ import annotations

import dataclasses
import gc

import pytest

from rmqlb.diagnose._fast import new_row
from rmqlb.diagnose.report import QueueRow, QueueStatus
from rmqlb.model import MessageQueue, QueueOffset
from rmqlb.snapshot._fast import gc_paused, new_offset, new_queue


def test_fast_constructors_equal_the_real_ones() -> None:
    mq = new_queue("T", "broker-a", 3)
    assert mq == MessageQueue("T", "broker-a", 3)
    assert hash(mq) == hash(MessageQueue("T", "broker-a", 3))
    assert new_offset(mq, 10, 4, 7) == QueueOffset(mq, 10, 4, 7)
    assert new_offset(mq, 10, 4, 7).lag == 6
    row = new_row(mq, "c1", ("c1", "c2"), QueueStatus.duplicate, 5)
    assert row == QueueRow(mq, "c1", ("c1", "c2"), QueueStatus.duplicate, 5)


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
    ]
    assert [f.name for f in dataclasses.fields(QueueRow)] == [
        "queue",
        "expected",
        "actual",
        "status",
        "lag",
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
