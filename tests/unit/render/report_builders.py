"""Hand-built reports for the render tests, independent of the diagnosis engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rmqlb.diagnose.report import (
    Code,
    ConsumerRow,
    Finding,
    GroupReport,
    QueueRow,
    QueueStatus,
    Report,
    Severity,
    TopicReport,
    order_findings,
    sort_findings,
)
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import CaptureError

C1 = "10.0.0.5@12345#8814520316744000"
C2 = "10.0.0.6@23456#8814520398120500"
C3 = "10.0.0.7@34567#8814533012887900"
C4 = "10.0.0.8@45678#8814533101452100"


def queues(topic: str, broker: str, n: int) -> list[MessageQueue]:
    """Queues ``0..n-1`` of ``topic`` on ``broker``."""
    return [MessageQueue(topic, broker, i) for i in range(n)]


def topic_report(
    topic: str,
    mqs: Sequence[MessageQueue],
    expected: Mapping[str, Sequence[MessageQueue]],
    actual: Mapping[str, Sequence[MessageQueue] | None],
    *,
    subscribers: Sequence[str] | None = None,
    strategy: str = "AVG",
    lags: Mapping[MessageQueue, int] | None = None,
    retry: bool = False,
) -> TopicReport:
    """Rows derived from expected/actual maps: the status rules of the queue table."""
    expected_of = {q: cid for cid, qs in expected.items() for q in qs}
    rows: list[QueueRow] = []
    for q in mqs:
        holders = tuple(cid for cid, qs in actual.items() if qs is not None and q in qs)
        unknown = any(qs is None for qs in actual.values())
        if len(holders) > 1:
            status = QueueStatus.duplicate
        elif holders:
            status = QueueStatus.ok if holders[0] == expected_of.get(q) else QueueStatus.moved
        elif unknown:
            status = QueueStatus.unknown
        else:
            status = QueueStatus.unconsumed
        act: tuple[str, ...] | None = holders if holders or not unknown else None
        lag = lags.get(q) if lags is not None else None
        rows.append(QueueRow(q, expected_of.get(q), act, status, lag))
    subs = set(subscribers) if subscribers is not None else set(expected)
    consumers = []
    for cid in expected:
        got = actual.get(cid)
        lag = None
        if lags is not None and got is not None:
            lag = sum(lags.get(q, 0) for q in got)
        consumers.append(
            ConsumerRow(
                cid,
                cid in subs,
                strategy,
                len(expected[cid]),
                len(got) if got is not None else None,
                lag,
            )
        )
    return TopicReport(topic, tuple(rows), tuple(consumers), retry)


def rebalance_report() -> Report:
    """16 queues, a third consumer just joined (seed 000): C1 and C3 rebalanced, C2 not yet."""
    mqs = queues("lhy-test-topic", "broker-a", 16)
    expected = {C1: mqs[0:6], C2: mqs[6:11], C3: mqs[11:16]}
    actual = {C1: mqs[0:6], C2: mqs[8:16], C3: mqs[11:16]}
    lags = {q: (q.queue_id * 7) % 23 for q in mqs}
    topic = topic_report("lhy-test-topic", mqs, expected, actual, lags=lags)
    group = "lhy-test-consumerGroup"
    findings = [
        Finding(
            Code.DUPLICATE_ASSIGNMENT,
            Severity.error,
            group,
            "5 queues of lhy-test-topic are held by 2 consumers at once: broker-a:11..15 "
            f"by {C2} and {C3}",
            "a rebalance is in progress or clients see different consumer lists; "
            "re-run in 20 s and check that every client runs the same strategy",
            "lhy-test-topic",
            (C2, C3),
            tuple(mqs[11:16]),
        ),
        Finding(
            Code.UNCONSUMED_QUEUE,
            Severity.error,
            group,
            "2 of 16 readable queues of lhy-test-topic are held by nobody: broker-a:6, broker-a:7",
            f"expected owner {C2} has not rebalanced yet; restart it if this persists",
            "lhy-test-topic",
            (C2,),
            tuple(mqs[6:8]),
        ),
        Finding(
            Code.ASSIGNMENT_MISMATCH,
            Severity.warning,
            group,
            f"{C2} holds 8 queues of lhy-test-topic, expected 5 under AVG",
            "a rebalance is in progress; it settles within rebalanceInterval (20 s)",
            "lhy-test-topic",
            (C2,),
        ),
    ]
    g = GroupReport(group, "CLUSTERING", "AVG", (topic,))
    return Report((g,), tuple(sort_findings(findings)))


def idle_report() -> Report:
    """1 queue, 2 consumers: the second is idle. No offsets (no lag column)."""
    mqs = queues("OrderTopic", "broker-a", 1)
    topic = topic_report("OrderTopic", mqs, {C1: mqs, C2: []}, {C1: mqs, C2: []})
    finding = Finding(
        Code.IDLE_CONSUMER,
        Severity.warning,
        "OrderGroup",
        f"topic OrderTopic has 1 readable queue for 2 consumers: 1 consumer idle under AVG ({C2})",
        "raise readQueueNums and writeQueueNums to a multiple of 2, such as 2 or 4",
        "OrderTopic",
        (C2,),
    )
    g = GroupReport("OrderGroup", "CLUSTERING", "AVG", (topic,))
    return Report((g,), (finding,))


def large_report() -> Report:
    """48 queues on two brokers, one client unreachable: problem rows only, partial data."""
    mqs = queues("PayTopic", "broker-a", 24) + queues("PayTopic", "broker-b", 24)
    expected = {C1: mqs[0:12], C2: mqs[12:24], C3: mqs[24:36], C4: mqs[36:48]}
    actual: dict[str, Sequence[MessageQueue] | None] = {
        C1: mqs[0:12],
        C2: mqs[12:24],
        C3: mqs[24:36],
        C4: None,
    }
    topic = topic_report("PayTopic", mqs, expected, actual)
    findings = (
        Finding(
            Code.CLIENT_UNREACHABLE,
            Severity.warning,
            "PayGroup",
            f"the running info of {C4} could not be read: its 12 queues show as unknown",
            "check that the client is alive and reachable from its broker",
            None,
            (C4,),
        ),
    )
    errors = (CaptureError("10.0.0.2:10911", "GET_CONSUMER_RUNNING_INFO", "timed out after 5.0 s"),)
    g = GroupReport("PayGroup", "CLUSTERING", "AVG", (topic,))
    return Report((g,), findings, errors)


def subscription_report() -> Report:
    """Two consumers, only one subscribes TopicB (seed 001): half of TopicB is never read."""
    a = queues("TopicA", "broker-a", 4)
    b = queues("TopicB", "broker-a", 4)
    ta = topic_report("TopicA", a, {C1: a[0:2], C2: a[2:4]}, {C1: a[0:2], C2: a[2:4]})
    tb = topic_report(
        "TopicB",
        b,
        {C1: b[0:2], C2: b[2:4]},
        {C1: b[0:2], C2: []},
        subscribers=[C1],
    )
    retry = topic_report(
        "%RETRY%MixedGroup",
        queues("%RETRY%MixedGroup", "broker-a", 1),
        {C1: queues("%RETRY%MixedGroup", "broker-a", 1), C2: []},
        {C1: queues("%RETRY%MixedGroup", "broker-a", 1), C2: []},
        retry=True,
    )
    findings = [
        Finding(
            Code.SUBSCRIPTION_INCONSISTENT,
            Severity.error,
            "MixedGroup",
            f"consumers of MixedGroup subscribe different topics: {C2} does not subscribe "
            "TopicB, so the 2 queues of TopicB that fall to it (broker-a:2, broker-a:3) "
            "are never consumed",
            "give every client of a group the same subscriptions, or split the group",
            "TopicB",
            (C2,),
            tuple(b[2:4]),
        ),
        Finding(
            Code.UNCONSUMED_QUEUE,
            Severity.error,
            "MixedGroup",
            "2 of 4 readable queues of TopicB are held by nobody: broker-a:2, broker-a:3",
            f"they fall to {C2}, which does not subscribe TopicB",
            "TopicB",
            (C2,),
            tuple(b[2:4]),
        ),
        Finding(
            Code.BROADCASTING,
            Severity.info,
            "AuditGroup",
            "AuditGroup consumes in BROADCASTING mode: every client reads every queue",
            "nothing to balance; this group is listed for completeness",
        ),
    ]
    g = GroupReport("MixedGroup", "CLUSTERING", "AVG", (ta, tb, retry))
    broadcast = GroupReport("AuditGroup", "BROADCASTING", "AVG", ())
    return Report((g, broadcast), tuple(sort_findings(findings)))


def empty_report() -> Report:
    """No group matched."""
    return Report((), ())


def causes_report() -> Report:
    """A client stale since another joined (notification off): its duplicates and its
    mismatch are listed under it; an unrelated failing listener stands alone."""
    topic_name, group = "OrderEventTopic", "order-event-consumer"
    mqs = queues(topic_name, "broker-a", 4) + queues(topic_name, "broker-b", 4)
    expected = {C1: mqs[0:4], C2: mqs[4:8]}
    actual = {C1: mqs, C2: mqs[4:8]}
    topic = topic_report(topic_name, mqs, expected, actual)
    doubled = tuple(mqs[4:8])
    findings = [
        Finding(
            Code.STALE_ALLOCATION,
            Severity.error,
            group,
            f"1 of 2 consumers of {topic_name} allocates from other inputs than the group's: "
            f"{C1} holds what AVG gives it as if the group were [{C1}] alone; so 4 queues held "
            "twice (broker-b:0..3); likely cause: notifyConsumerIdsChangedEnable=false on "
            "broker-a, broker-b",
            "enable the notification again: mqadmin updateSubGroup -b 10.0.0.11:10911 "
            f"-g {group} -a true",
            topic_name,
            (C1,),
            doubled,
            id="F1",
        ),
        Finding(
            Code.ASSIGNMENT_MISMATCH,
            Severity.warning,
            group,
            f"1 of 2 consumers of {topic_name} holds other queues than AVG predicts ({C1} holds "
            "8, expected 4 +broker-b:0..3)",
            f"caused by STALE_ALLOCATION (F1): {C1} allocates from outdated inputs; fixing that "
            "clears this too",
            topic_name,
            (C1,),
            doubled,
            id="F3",
            caused_by="F1",
        ),
        Finding(
            Code.DUPLICATE_ASSIGNMENT,
            Severity.error,
            group,
            f"4 queues of {topic_name} are held by more than one consumer (broker-b:0..3 by "
            f"{C1} and {C2})",
            f"caused by STALE_ALLOCATION (F1): {C1} allocates from outdated inputs; fixing that "
            "clears this too",
            topic_name,
            (C1, C2),
            doubled,
            id="F2",
            caused_by="F1",
        ),
        Finding(
            Code.CONSUME_FAILING,
            Severity.warning,
            group,
            f"1 of 2 consumers of {group} fails to consume {topic_name}: {C2} 1.2 failed/s",
            "read the client's log for the exceptions its listener throws",
            topic_name,
            (C2,),
            id="F4",
        ),
    ]
    g = GroupReport(group, "CLUSTERING", "AVG", (topic,))
    return Report((g,), tuple(order_findings(findings)))


REPORTS = {
    "causes": causes_report,
    "rebalance": rebalance_report,
    "idle": idle_report,
    "large": large_report,
    "subscription": subscription_report,
    "empty": empty_report,
}


def settled_report() -> Report:
    """:func:`rebalance_report` one rebalance later: everyone holds what AVG expects."""
    mqs = queues("lhy-test-topic", "broker-a", 16)
    expected = {C1: mqs[0:6], C2: mqs[6:11], C3: mqs[11:16]}
    lags = {q: (q.queue_id * 7) % 23 for q in mqs}
    topic = topic_report("lhy-test-topic", mqs, expected, dict(expected), lags=lags)
    g = GroupReport("lhy-test-consumerGroup", "CLUSTERING", "AVG", (topic,))
    return Report((g,), ())
