"""CONSUMER_STALLED, FLOW_CONTROLLED, CONSUME_FAILING, ORDERLY_LOCK_LOST and CONSUME_DISABLED,
from hand-built snapshots with process queues, consume status and group configs."""

from __future__ import annotations

from typing import Any

from diagnose_builders import codes, consumer, group, labels, only, queues, route, run

from rmqlb.diagnose import Code, Report, Severity

T = "TopicA"
NOW = 1_795_348_800_000  # capturedAt below, in epoch ms
CAPTURED = {"capturedAt": "2026-11-22T12:00:00Z"}


def q(*ids: int, broker: str = "broker-a", topic: str = T) -> list[dict[str, Any]]:
    return queues(topic, broker, *ids)


def pq(qid: int, topic: str = T, **fields: Any) -> dict[str, Any]:
    """A healthy process queue of ``broker-a:qid``: pulled and consumed a moment ago."""
    state: dict[str, Any] = {
        "topic": topic,
        "brokerName": "broker-a",
        "queueId": qid,
        "cachedMsgCount": 0,
        "cachedMsgSizeInMiB": 0,
        "commitOffset": 100,
        "lastPullTimestamp": NOW - 1_000,
        "lastConsumeTimestamp": NOW - 500,
        "locked": False,
        "lastLockTimestamp": 0,
        "dropped": False,
    }
    state.update(fields)
    return state


def offsets(lags: dict[int, int], topic: str = T, committed: int = 100) -> list[dict[str, Any]]:
    return [
        {
            "topic": topic,
            "brokerName": "broker-a",
            "queueId": qid,
            "brokerOffset": committed + lag,
            "consumerOffset": committed,
        }
        for qid, lag in lags.items()
    ]


def status(**fields: float) -> dict[str, float]:
    out = {
        "pullRT": 2.0,
        "pullTPS": 0.0,
        "consumeRT": 0.0,
        "consumeOKTPS": 0.0,
        "consumeFailedTPS": 0.0,
        "consumeFailedMsgs": 0,
    }
    out.update(fields)
    return out


def two_clients(
    first_states: list[dict[str, Any]],
    *,
    lags: dict[int, int] | None = None,
    extra: dict[str, Any] | None = None,
    first: dict[str, Any] | None = None,
    second: dict[str, Any] | None = None,
    group_extra: dict[str, Any] | None = None,
) -> Report:
    """c1 holds broker-a:0,1 (with ``first_states``), c2 holds broker-a:2,3 (healthy)."""
    c1 = consumer("c1", T, assigned=q(0, 1), processQueues=first_states, **(first or {}))
    c2 = consumer("c2", T, assigned=q(2, 3), processQueues=[pq(2), pq(3)], **(second or {}))
    return run(
        {T: {"queues": 4}},
        {
            "G": group(
                c1, c2, offsets=offsets(lags or {0: 0, 1: 0, 2: 0, 3: 0}), **(group_extra or {})
            )
        },
        extra=CAPTURED if extra is None else extra,
    )


# -- CONSUMER_STALLED ---------------------------------------------------------------------------


def test_stalled_when_a_lagging_queue_was_not_pulled_for_minutes() -> None:
    states = [pq(0, lastPullTimestamp=NOW - 300_000), pq(1)]
    report = two_clients(states, lags={0: 5_000, 1: 0, 2: 0, 3: 0})
    f = only(report, Code.CONSUMER_STALLED)
    assert f.severity is Severity.error
    assert f.consumers == ("c1",)
    assert labels(f) == ["broker-a:0"]
    assert "has not pulled 1 of its 2 queues of TopicA for up to 5 min" in f.message
    assert "5,000 messages of lag" in f.message
    assert "one snapshot" in f.message
    assert "jstack" in f.hint and "GC log" in f.hint


def test_stalled_when_cached_messages_are_not_consumed() -> None:
    states = [pq(0, cachedMsgCount=64, lastConsumeTimestamp=NOW - 90_000), pq(1)]
    f = only(two_clients(states, lags={0: 700, 1: 0, 2: 0, 3: 0}), Code.CONSUMER_STALLED)
    assert "has consumed nothing from 1 queue for up to 1 min 30 s" in f.message
    assert "64 pulled messages wait in its cache" in f.message


def test_not_stalled_when_recent_idle_progressing_or_timeless() -> None:
    old_pull = [pq(0, lastPullTimestamp=NOW - 300_000), pq(1)]
    lagging = {0: 5_000, 1: 0, 2: 0, 3: 0}
    # recent pull
    assert "CONSUMER_STALLED" not in codes(two_clients([pq(0), pq(1)], lags=lagging))
    # nothing to pull: an idle queue's old pull time means nothing
    assert "CONSUMER_STALLED" not in codes(two_clients(old_pull))
    # the client's commit offset is ahead of the broker's: it made progress lately
    ahead = [pq(0, lastPullTimestamp=NOW - 300_000, commitOffset=150), pq(1)]
    assert "CONSUMER_STALLED" not in codes(two_clients(ahead, lags=lagging))
    # a dropped process queue is on its way out
    dropped = [pq(0, lastPullTimestamp=NOW - 300_000, dropped=True), pq(1)]
    assert "CONSUMER_STALLED" not in codes(two_clients(dropped, lags=lagging))
    # no capture time: the ages cannot be computed
    assert "CONSUMER_STALLED" not in codes(two_clients(old_pull, lags=lagging, extra={}))


def test_pull_interval_widens_the_stall_threshold() -> None:
    states = [pq(0, lastPullTimestamp=NOW - 100_000), pq(1)]
    lagging = {0: 5_000, 1: 0, 2: 0, 3: 0}
    assert "CONSUMER_STALLED" in codes(two_clients(states, lags=lagging))
    slow = {"properties": {"pullInterval": "60000"}}
    assert "CONSUMER_STALLED" not in codes(two_clients(states, lags=lagging, first=slow))


def test_a_client_clock_ahead_of_the_capture_is_the_reference() -> None:
    # the client's clock runs 10 minutes ahead: its newest pull, not capturedAt, is "now"
    ahead = NOW + 600_000
    states = [pq(0, lastPullTimestamp=ahead - 1_000), pq(1, lastPullTimestamp=ahead - 2_000)]
    report = two_clients(states, lags={0: 5_000, 1: 5_000, 2: 0, 3: 0})
    assert "CONSUMER_STALLED" not in codes(report)


def test_a_silent_holder_with_lag_is_stalled_and_explains_unreachable() -> None:
    c1 = consumer("c1", T)  # no assigned: its running info is unknown
    c2 = consumer("c2", T, assigned=q(2, 3))
    report = run(
        {T: {"queues": 4}},
        {"G": group(c1, c2, offsets=offsets({0: 40, 1: 2, 2: 0, 3: 0}))},
        extra={
            **CAPTURED,
            "source": {"namesrv": ["127.0.0.1:9876"]},
            "errors": [
                {"target": "c1", "request": "GET_CONSUMER_RUNNING_INFO", "message": "timed out"}
            ],
        },
    )
    stalled = only(report, Code.CONSUMER_STALLED)
    assert stalled.consumers == ("c1",)
    assert labels(stalled) == ["broker-a:0", "broker-a:1"]
    assert "did not answer (GET_CONSUMER_RUNNING_INFO: timed out)" in stalled.message
    assert "42 messages of lag" in stalled.message and "120 s" in stalled.message
    unreachable = only(report, Code.CLIENT_UNREACHABLE)
    assert unreachable.caused_by == stalled.id


def test_a_silent_holder_without_lag_is_only_unreachable() -> None:
    c1, c2 = consumer("c1", T), consumer("c2", T, assigned=q(2, 3))
    report = run(
        {T: {"queues": 4}},
        {"G": group(c1, c2, offsets=offsets({0: 0, 1: 0, 2: 0, 3: 0}))},
        extra={
            "source": {"namesrv": ["127.0.0.1:9876"]},
            "errors": [{"target": "c1", "request": "GET_CONSUMER_RUNNING_INFO", "message": "x"}],
        },
    )
    assert codes(report) == ["CLIENT_UNREACHABLE"]


# -- FLOW_CONTROLLED ----------------------------------------------------------------------------


def test_flow_controlled_over_the_count_threshold_with_rates() -> None:
    c2 = {
        "properties": {"PROP_THREADPOOL_CORE_SIZE": "20"},
        "status": {T: status(pullTPS=40.0, consumeOKTPS=41.5, consumeRT=480.0)},
    }
    c2_states = [pq(2, cachedMsgCount=1_032, cachedMsgSizeInMiB=3), pq(3, cachedMsgCount=12)]
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, assigned=q(0, 1), processQueues=[pq(0), pq(1)]),
                consumer("c2", T, assigned=q(2, 3), processQueues=c2_states, **c2),
                offsets=offsets({0: 0, 1: 0, 2: 24_900, 3: 100}),
            )
        },
        extra=CAPTURED,
    )
    f = only(report, Code.FLOW_CONTROLLED)
    assert f.severity is Severity.warning
    assert f.consumers == ("c2",) and labels(f) == ["broker-a:2"]
    assert "caches 1,032 messages (3 MiB) on 1 of its 2 queues" in f.message
    assert "over pullThresholdForQueue 1,000 (default)" in f.message
    assert "consumes 41.5 msg/s at 480 ms a message with 20 consume threads" in f.message
    assert "(at most about 41.7 msg/s)" in f.message
    assert "24,900 messages of lag there take about 10 min" in f.message
    assert "consumeThreadMin, now 20" in f.hint


def test_flow_control_thresholds_come_from_the_client() -> None:
    over_size = [pq(0, cachedMsgCount=10, cachedMsgSizeInMiB=65), pq(1)]
    props = {"properties": {"pullThresholdSizeForQueue": "64", "pullThresholdForQueue": "5000"}}
    f = only(two_clients(over_size, first=props), Code.FLOW_CONTROLLED)
    assert "over pullThresholdSizeForQueue 64 MiB" in f.message
    # Java's rule is "more than": exactly at the threshold it still pulls
    at_limit = [pq(0, cachedMsgCount=1_000, cachedMsgSizeInMiB=100), pq(1)]
    assert "FLOW_CONTROLLED" not in codes(two_clients(at_limit))
    raised = {"properties": {"pullThresholdForQueue": "2000"}}
    busy = [pq(0, cachedMsgCount=1_500), pq(1)]
    assert "FLOW_CONTROLLED" in codes(two_clients(busy))
    assert "FLOW_CONTROLLED" not in codes(two_clients(busy, first=raised))


def test_flow_control_of_a_stalled_consumer_is_its_consequence() -> None:
    states = [
        pq(0, cachedMsgCount=1_100, lastConsumeTimestamp=NOW - 400_000),
        pq(1, cachedMsgCount=1_050, lastConsumeTimestamp=NOW - 400_000),
    ]
    report = two_clients(states, lags={0: 9_000, 1: 9_000, 2: 10, 3: 10})
    stalled = only(report, Code.CONSUMER_STALLED)
    flow = only(report, Code.FLOW_CONTROLLED)
    skew = only(report, Code.LAG_SKEW)
    assert flow.caused_by == stalled.id and skew.caused_by == stalled.id
    assert [f.code for f in report.findings][:1] == [Code.CONSUMER_STALLED]
    assert "caused by CONSUMER_STALLED" in flow.hint


# -- CONSUME_FAILING ----------------------------------------------------------------------------


def test_consume_failing_names_retry_and_dlq_and_the_retry_lag() -> None:
    retry = "%RETRY%G"
    failing = {
        "status": {T: status(consumeOKTPS=10.0, consumeFailedTPS=2.5, consumeFailedMsgs=150)}
    }
    healthy = {"status": {T: status(consumeOKTPS=12.0)}}
    report = run(
        {T: {"queues": 2}, retry: {"queues": 1}},
        {
            "G": group(
                consumer("c1", T, retry, assigned=[*q(0), *q(0, topic=retry)], **failing),
                consumer("c2", T, retry, assigned=q(1), **healthy),
                offsets=offsets({0: 0}, topic=retry) + offsets({0: 300}, topic=retry, committed=5),
                configs={"broker-a": {"retryMaxTimes": 3}},
            )
        },
    )
    f = only(report, Code.CONSUME_FAILING)
    assert f.severity is Severity.warning
    assert f.topic == T and f.consumers == ("c1",)
    assert "c1 2.5 failed/s, 150 failed in the last hour" in f.message
    assert "(the group consumes 22.0 msg/s successfully)" in f.message
    assert "goes to %RETRY%G" in f.message and "then to %DLQ%G" in f.message
    assert "up to 16 times" in f.message
    assert "retryMaxTimes 3" in f.message  # the group's setting, overridden by the client
    assert "%RETRY%G has 300 messages of lag" in f.message


def test_a_failure_rate_the_hourly_count_has_not_sampled_yet_is_not_0_failed() -> None:
    """A client that began failing minutes ago: consumeFailedMsgs comes from samples taken
    every 10 minutes, so its 0 is not "0 failed in the last hour" (seen on a real 5.1.4
    client failing every message)."""
    young = {"status": {T: status(consumeFailedTPS=6.7, consumeFailedMsgs=0)}}
    report = run({T: {"queues": 1}}, {"G": group(consumer("c1", T, assigned=q(0), **young))})
    f = only(report, Code.CONSUME_FAILING)
    assert "c1 6.7 failed/s;" in f.message
    assert "in the last hour" not in f.message


def test_consume_failing_orderly_and_configured_retries() -> None:
    orderly = {
        "consumeOrderly": True,
        "status": {T: status(consumeFailedMsgs=3)},
    }
    counted = {
        "properties": {"maxReconsumeTimes": "5"},
        "status": {T: status(consumeFailedTPS=0.1)},
    }
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, **orderly), consumer("c2", T, **counted))},
    )
    f = only(report, Code.CONSUME_FAILING)
    assert f.consumers == ("c1", "c2")
    assert "orderly consumers (c1) retry a failed message in place" in f.message
    assert "on that queue; with maxReconsumeTimes unset" in f.message  # no lag known
    assert "up to 5 times" in f.message


def test_an_orderly_consumer_failing_names_the_queues_it_holds_with_lag() -> None:
    """Real 4.9.8 (orderly=true;fail=true): its 4 queues, 40 messages behind the failures."""
    c1 = consumer(
        "c1",
        T,
        assigned=q(0, 1, 2, 3),
        consumeOrderly=True,
        status={T: status(consumeFailedTPS=3.2)},
    )
    report = run({T: {"queues": 4}}, {"G": group(c1, offsets=offsets(dict.fromkeys(range(4), 10)))})
    f = only(report, Code.CONSUME_FAILING)
    assert (
        "consume nothing behind it on that queue (the queues they hold with lag now: "
        "broker-a:0..3, 40 messages)" in f.message
    )


def test_no_consume_failing_without_failures() -> None:
    ok = {"status": {T: status(consumeOKTPS=50.0)}}
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T, **ok))})
    assert "CONSUME_FAILING" not in codes(report)


# -- ORDERLY_LOCK_LOST --------------------------------------------------------------------------


def test_orderly_queue_without_lock_or_with_an_old_one() -> None:
    states = [
        pq(0, locked=False),
        pq(1, locked=True, lastLockTimestamp=NOW - 75_000),
    ]
    orderly = {"consumeOrderly": True}
    report = two_clients(states, lags={0: 30, 1: 12, 2: 0, 3: 0}, first=orderly)
    f = only(report, Code.ORDERLY_LOCK_LOST)
    assert f.severity is Severity.error
    assert f.consumers == ("c1",) and labels(f) == ["broker-a:0", "broker-a:1"]
    assert "broker-a:0 not locked" in f.message
    assert "broker-a:1 locked last 1 min 15 s before the capture" in f.message
    assert "42 messages of lag wait on them" in f.message
    assert "broker frees a lock 60 s after" in f.message


def test_no_lock_finding_for_fresh_locks_or_concurrent_consumers() -> None:
    fresh = [
        pq(0, locked=True, lastLockTimestamp=NOW - 5_000),
        pq(1, locked=True, lastLockTimestamp=NOW - 12_000),
    ]
    orderly = {"properties": {"PROP_CONSUMEORDERLY": "true"}}
    assert "ORDERLY_LOCK_LOST" not in codes(two_clients(fresh, first=orderly))
    # concurrently consuming clients never lock
    assert "ORDERLY_LOCK_LOST" not in codes(two_clients([pq(0), pq(1)]))


def test_queues_an_orderly_client_cannot_lock_yet_are_not_a_stale_view() -> None:
    """Seen on a real 4.9.8 cluster: of two orderly consumers one was killed; the other is
    allocated every queue but holds only its own, since the killed one's broker locks stand
    for 60 s. That is not a stale route (which its holdings happen to match) but queues
    waiting for their locks, which leave them unconsumed meanwhile."""
    orderly = {"consumeOrderly": True}
    two = route(("broker-a", 2, 2, 6), ("broker-b", 2, 2, 6))
    alone = consumer("c1", T, assigned=q(0, 1), **orderly)  # broker-b:0, 1 not taken
    report = run({T: two}, {"G": group(alone)}, extra=CAPTURED)
    assert "STALE_ALLOCATION" not in codes(report)
    f = only(report, Code.ORDERLY_LOCK_LOST)
    assert labels(f) == ["broker-b:0", "broker-b:1"] and f.consumers == ("c1",)
    assert "held by nobody, allocated to an orderly consumer that has not taken them" in f.message
    assert "60 s after its last renewal" in f.message
    assert only(report, Code.UNCONSUMED_QUEUE).caused_by == f.id
    assert only(report, Code.ASSIGNMENT_MISMATCH).caused_by == f.id
    # a client consuming concurrently never locks: the same holdings are a stale route
    plain = run({T: two}, {"G": group(consumer("c1", T, assigned=q(0, 1)))}, extra=CAPTURED)
    assert "ORDERLY_LOCK_LOST" not in codes(plain) and "STALE_ALLOCATION" in codes(plain)


def test_an_orderly_client_waiting_for_a_queue_another_still_holds_is_no_lock_problem() -> None:
    """c2 joined: AVG now gives it queue 1, which c1 (not rebalanced yet) still holds and
    locks. c2 waits for that lock; the queue is consumed meanwhile: no ORDERLY_LOCK_LOST."""
    orderly = {"consumeOrderly": True}
    c1 = consumer("c1", T, assigned=q(0, 1), **orderly)
    c2 = consumer("c2", T, assigned=[], **orderly)
    report = run({T: {"queues": 2}}, {"G": group(c1, c2)}, extra=CAPTURED)
    assert "ORDERLY_LOCK_LOST" not in codes(report)
    assert "UNCONSUMED_QUEUE" not in codes(report)


def test_lock_lost_on_a_doubled_orderly_queue_follows_from_the_duplicate() -> None:
    orderly = {"consumeOrderly": True}
    c1 = consumer(
        "c1",
        T,
        assigned=q(0, 1),
        processQueues=[
            pq(0, locked=True, lastLockTimestamp=NOW - 1_000),
            pq(1, locked=True, lastLockTimestamp=NOW - 1_000),
        ],
        **orderly,
    )
    c2 = consumer(
        "c2",
        T,
        assigned=q(1, 2, 3),
        processQueues=[
            pq(1, locked=False),
            pq(2, locked=True, lastLockTimestamp=NOW - 1_000),
            pq(3, locked=True, lastLockTimestamp=NOW - 1_000),
        ],
        **orderly,
    )
    report = run({T: {"queues": 4}}, {"G": group(c1, c2)}, extra=CAPTURED)
    duplicate = only(report, Code.DUPLICATE_ASSIGNMENT)
    lost = only(report, Code.ORDERLY_LOCK_LOST)
    assert labels(lost) == ["broker-a:1"]
    assert lost.caused_by == duplicate.id


# -- CONSUME_DISABLED ---------------------------------------------------------------------------


def test_consume_disabled_names_the_broker_and_what_waits() -> None:
    topics = {T: {"queueDatas": [
        {"brokerName": "broker-a", "readQueueNums": 2, "writeQueueNums": 2},
        {"brokerName": "broker-b", "readQueueNums": 2, "writeQueueNums": 2},
    ]}}  # fmt: skip
    lag = [
        {"topic": T, "brokerName": b, "queueId": i, "brokerOffset": 500, "consumerOffset": 0}
        for b in ("broker-a", "broker-b")
        for i in range(2)
    ]
    configs = {"broker-a": {"consumeEnable": True}, "broker-b": {"consumeEnable": False}}
    report = run(
        topics,
        {"G": group(consumer("c1", T), consumer("c2", T), offsets=lag, configs=configs)},
        extra={"brokers": {"broker-b": {"addrs": {"0": "10.0.0.12:10911"}}}},
    )
    f = only(report, Code.CONSUME_DISABLED)
    assert f.severity is Severity.error and f.topic is None
    assert "consumeEnable=false in the subscription-group config of G on broker-b:" in f.message
    assert "TopicA (2 queues)" in f.message and "1,000 messages of lag" in f.message
    assert "NO_PERMISSION" in f.message
    assert f.hint.endswith("mqadmin updateSubGroup -b 10.0.0.12:10911 -g G -s true -d true")


def _broadcasting(configs: dict[str, Any], model: str = "BROADCASTING") -> Report:
    """One client of T (4 queues on broker-a) in ``model``, with ``configs``."""
    c1 = consumer("c1", T, assigned=q(0, 1, 2, 3), properties={"messageModel": model})
    return run(
        {T: {"queues": 4}},
        {"G": group(c1, messageModel=model, configs=configs)},
        extra={"brokers": {"broker-a": {"addrs": {"0": "10.0.0.11:10911"}}}},
    )


def test_a_broadcasting_group_refused_by_its_config_is_consume_disabled() -> None:
    """Real 4.9.8: consumeEnable=false refuses a BROADCASTING group's pulls too, and
    consumeBroadcastEnable=false refuses every pull of a group listed BROADCASTING ('the
    consumer group[G] can not consume by broadcast way'); the fix sets both, as
    ``mqadmin updateSubGroup -s true`` alone writes consumeBroadcastEnable=false."""
    paused = only(_broadcasting({"broker-a": {"consumeEnable": False}}), Code.CONSUME_DISABLED)
    assert paused.message.startswith("consumeEnable=false in the subscription-group config")
    assert paused.hint.endswith("-g G -s true -d true")
    both = {"broker-a": {"consumeEnable": False, "consumeBroadcastEnable": False}}
    f = only(_broadcasting(both), Code.CONSUME_DISABLED)
    assert "can not consume by broadcast way" in f.message
    assert f.hint == (
        "if G was not paused on purpose and every client of G should receive every message, "
        "let it consume there: mqadmin updateSubGroup -b 10.0.0.11:10911 -g G -s true -d true; "
        "else switch the consumers to MessageModel.CLUSTERING"
    )
    # a CLUSTERING group does not mind consumeBroadcastEnable
    quiet = _broadcasting({"broker-a": {"consumeBroadcastEnable": False}}, "CLUSTERING")
    assert Code.CONSUME_DISABLED not in {x.code for x in quiet.findings}


def test_update_sub_group_keeps_what_the_command_would_reset() -> None:
    """mqadmin writes a fresh config: the advice carries the group's other settings."""
    configs = {
        "broker-a": {
            "consumeEnable": False,
            "notifyConsumerIdsChangedEnable": False,
            "retryMaxTimes": 3,
            "consumeMessageOrderly": True,
            "consumeBroadcastEnable": False,
            "retryQueueNums": 4,
            "brokerId": 1,
            "whichBrokerWhenConsumeSlowly": 2,
            "groupRetryPolicy": '{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000]}}',
        }
    }
    f = only(_broadcasting(configs, "CLUSTERING"), Code.CONSUME_DISABLED)
    assert f.hint.endswith(
        "mqadmin updateSubGroup -b 10.0.0.11:10911 -g G -s true -r 3 -q 4 -i 1 -w 2 -a false"
        """ -o true -p '{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000]}}'"""
    )


def test_consume_disabled_everywhere_and_lag_skew_follows() -> None:
    configs = {b: {"consumeEnable": False} for b in ("broker-a",)}
    c1 = consumer("c1", T, assigned=q(0, 1))
    c2 = consumer("c2", T, assigned=q(2, 3))
    report = run(
        {T: {"queues": 4}},
        {"G": group(c1, c2, offsets=offsets({0: 5_000, 1: 5_000, 2: 1, 3: 1}), configs=configs)},
    )
    disabled = only(report, Code.CONSUME_DISABLED)
    assert only(report, Code.LAG_SKEW).caused_by == disabled.id


def test_no_consume_disabled_when_enabled_or_unknown() -> None:
    enabled = {"broker-a": {"consumeEnable": True, "notifyConsumerIdsChangedEnable": False}}
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T), configs=enabled)})
    assert "CONSUME_DISABLED" not in codes(report)
    assert "CONSUME_DISABLED" not in codes(run({T: {"queues": 2}}, {"G": group(consumer("c1", T))}))


# -- DEAD_LETTERS -------------------------------------------------------------------------------


def dead(messages: int, max_offset: int, ago_ms: int | None) -> dict[str, Any]:
    """One broker's view of the group with its DLQ (newest stored ``ago_ms`` before NOW)."""
    letters: dict[str, Any] = {"messages": messages, "maxOffset": max_offset}
    if ago_ms is not None:
        letters["lastTimestamp"] = NOW - ago_ms
    return {"deadLetters": letters}


def test_dead_letters_name_what_waits_per_broker_and_when_the_newest_came() -> None:
    views = {"broker-b": dead(7, 7, 600_000), "broker-a": dead(30, 45, 180_000)}
    report = run(
        {T: {"queues": 1}},
        {"G": group(consumer("c1", T, assigned=q(0)), onBrokers=views)},
        extra=CAPTURED,
    )
    f = only(report, Code.DEAD_LETTERS)
    assert f.severity is Severity.warning and f.topic is None
    assert f.message.startswith(
        "37 messages of G wait in its dead-letter queue %DLQ%G (broker-a 30, broker-b 7): its "
        "consumers gave up on them after every retry (52 reached it since it was created); "
        "the newest was stored 3 min before the capture. Nothing consumes a DLQ: they stay"
    )
    assert "mqadmin queryMsgByOffset -t %DLQ%G -b BROKER -i 0 -o OFFSET" in f.hint
    assert "queryMsgById -i MSG_ID -g G -d CLIENT_ID" in f.hint
    assert "resend" not in f.hint  # mqadmin has no resend command


def test_old_dead_letters_are_info_and_an_emptied_dlq_is_nothing() -> None:
    old = run(
        {T: {"queues": 1}},
        {
            "G": group(
                consumer("c1", T, assigned=q(0)), onBrokers={"broker-a": dead(1, 9, 7_200_000)}
            )
        },
        extra=CAPTURED,
    )
    f = only(old, Code.DEAD_LETTERS)
    assert f.severity is Severity.info
    assert f.message.startswith("1 message of G waits in its dead-letter queue %DLQ%G")
    assert "gave up on it after" in f.message and "it stays until" in f.message
    # its messages deleted with the commit log: nothing waits, nothing to say
    gone = run(
        {T: {"queues": 1}},
        {"G": group(consumer("c1", T, assigned=q(0)), onBrokers={"broker-a": dead(0, 9, 60_000)})},
        extra=CAPTURED,
    )
    assert "DEAD_LETTERS" not in codes(gone)


def test_dead_letters_without_a_capture_time_or_with_a_broker_unread() -> None:
    errors = [{"target": "broker-b", "request": "GET_TOPIC_STATS_INFO", "message": "timed out",
               "topic": "%DLQ%G"}]  # fmt: skip
    report = run(
        {T: {"queues": 1}},
        {"G": group(consumer("c1", T, assigned=q(0)), onBrokers={"broker-a": dead(4, 4, None)})},
        extra={"errors": errors},
    )
    f = only(report, Code.DEAD_LETTERS)
    assert f.severity is Severity.info  # when the newest came is unknown
    assert f.message.startswith("at least 4 messages of G wait") and "stored" not in f.message
