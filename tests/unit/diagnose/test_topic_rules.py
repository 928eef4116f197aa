"""The rules on a topic's own configuration (``rmqlb.diagnose.rules.topics``): one positive
and one negative case each, and what they leave alone."""

from __future__ import annotations

from rmqlb.diagnose.report import Code, Severity
from rmqlb.diagnose.rules.topics import TopicFinding, topic_findings
from rmqlb.model.snapshot import QueueData, TopicRoute


def found(
    topic: str, *datas: tuple[str, int, int, int], cluster: tuple[str, ...] = ()
) -> list[TopicFinding]:
    route = TopicRoute(topic, tuple(QueueData(b, r, w, p) for b, r, w, p in datas))
    return topic_findings(route, cluster=cluster)


def codes(findings: list[TopicFinding]) -> list[tuple[str, str | None, str]]:
    return [(f.code.value, f.broker, f.severity.value) for f in findings]


def test_a_healthy_topic_has_nothing() -> None:
    assert (
        found("T", ("broker-a", 8, 8, 6), ("broker-b", 8, 8, 6), cluster=("broker-a", "broker-b"))
        == []
    )


def test_write_exceeds_read() -> None:
    (f,) = found("T", ("broker-a", 4, 8, 6))
    assert (f.code, f.severity, f.broker) == (Code.WRITE_EXCEEDS_READ, Severity.error, "broker-a")
    assert [q.queue_id for q in f.queues] == [4, 5, 6, 7]
    assert "writeQueueNums 8 > readQueueNums 4" in f.message
    assert found("T", ("broker-a", 8, 4, 6)) == []  # read > write: nothing stranded


def test_not_readable_but_not_for_a_dead_letter_topic() -> None:
    assert codes(found("T", ("broker-a", 8, 8, 2))) == [
        ("QUEUE_NOT_READABLE", "broker-a", "warning")
    ]
    # 4.x creates %DLQ% topics write-only on purpose (PermName.PERM_WRITE)
    assert found("%DLQ%G", ("broker-a", 1, 1, 2)) == []
    # a topic config holds the topic's own perm: no brokerPermission (a route's may be it)
    (f,) = found("T", ("broker-a", 8, 8, 2))
    assert f.hint.startswith("restore read permission: mqadmin updateTopicPerm -t T -b ")
    assert "brokerPermission" not in f.hint


def test_not_writable_is_info_while_another_broker_takes_writes() -> None:
    drain = found("T", ("broker-a", 8, 8, 4), ("broker-b", 8, 8, 6))
    assert codes(drain) == [("QUEUE_NOT_WRITABLE", "broker-a", "info")]
    assert "producers send only to its other brokers" in drain[0].message
    nowhere = found("T", ("broker-a", 8, 8, 4))
    assert codes(nowhere) == [("QUEUE_NOT_WRITABLE", "broker-a", "warning")]
    assert "cannot send to it at all" in nowhere[0].message
    (zero,) = found("T", ("broker-a", 8, 0, 6))
    assert zero.code is Code.QUEUE_NOT_WRITABLE and zero.about_write_count
    assert "writeQueueNums 0" in zero.message


def test_no_queues() -> None:
    assert codes(found("T", ("broker-a", 0, 0, 6), ("broker-b", 8, 8, 6))) == [
        ("NO_QUEUES", "broker-a", "warning")
    ]
    assert codes(found("T", ("broker-a", 0, 0, 6))) == [("NO_QUEUES", "broker-a", "error")]


def test_topic_not_on_all_brokers_of_the_cluster() -> None:
    cluster = ("broker-a", "broker-b", "broker-c")
    (f,) = found("T", ("broker-a", 8, 8, 6), cluster=cluster)
    assert (f.code, f.broker) == (Code.TOPIC_NOT_ON_ALL_BROKERS, None)
    assert "on broker-a but not on broker-b, broker-c" in f.message
    assert found("T", ("broker-a", 8, 8, 6)) == []  # cluster unknown
    # retry and dead-letter topics live where the broker needed them; a broker's own topic too
    assert found("%RETRY%G", ("broker-a", 1, 1, 6), cluster=cluster) == []
    assert found("%DLQ%G", ("broker-a", 1, 1, 2), cluster=cluster) == []
    assert found("broker-a", ("broker-a", 1, 1, 7), cluster=cluster) == []


def test_built_in_topics_are_left_alone() -> None:
    assert found("TBW102", ("broker-a", 4, 8, 6)) == []
    assert found("rmq_sys_SYNC_BROKER_MEMBER_broker-a", ("broker-a", 0, 0, 6)) == []
