"""The one spelling of a set of queues."""

from __future__ import annotations

import pytest

from rmqlb.model.queue import MessageQueue, queue_ranges


def q(broker: str, qid: int, topic: str = "T") -> MessageQueue:
    return MessageQueue(topic, broker, qid)


@pytest.mark.parametrize(
    ("queues", "text"),
    [
        ([q("broker-a", i) for i in range(6)], "broker-a:0..5"),
        (
            [q("broker-a", 0), q("broker-a", 2), q("broker-a", 4)],
            "broker-a:0, broker-a:2, broker-a:4",
        ),
        ([q("broker-a", 3), q("broker-a", 1), q("broker-a", 2)], "broker-a:1..3"),
        (
            [q("broker-a", 7), q("broker-b", 0), q("broker-b", 1)],
            "broker-a:7, broker-b:0, broker-b:1",
        ),
        ([q("a", 0, "T1"), q("a", 1, "T2")], "T1/a:0, T2/a:1"),
        ([], ""),
    ],
)
def test_queue_ranges(queues: list[MessageQueue], text: str) -> None:
    assert queue_ranges(queues) == text
