"""5.x: broker-side assignment, POP groups, groups consumed through a Proxy."""

from __future__ import annotations

from typing import Any

import pytest
from diagnose_builders import (
    codes,
    consumer,
    group,
    labels,
    only,
    queues,
    route,
    run,
    snapshot,
)

from rmqlb.diagnose import Code, Severity
from rmqlb.diagnose.report import QueueStatus
from rmqlb.diagnose.status import status

T = "T"
BROKER = {"properties": {"clientRebalance": "false"}}
CLIENT = {"properties": {"clientRebalance": "true"}}


def offsets(n: int, lag: int = 0, last: int = 0, broker: str = "broker-a") -> list[dict[str, Any]]:
    return [
        {
            "topic": T,
            "brokerName": broker,
            "queueId": i,
            "brokerOffset": 100 + lag,
            "consumerOffset": 100,
            "lastTimestamp": last,
        }
        for i in range(n)
    ]


def test_broker_assigned_pull_group_is_exact_and_said_so() -> None:
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", assigned=queues(T, "broker-a", 0, 1), **BROKER),
                consumer("c2", T, strategy="AVG", assigned=queues(T, "broker-a", 2, 3), **BROKER),
            )
        },
    )
    assert codes(report) == ["BROKER_REBALANCE"]
    f = only(report, Code.BROKER_REBALANCE)
    assert "c1, c2 (reported)" in f.message and "PULL (assumed: the broker default)" in f.message
    table = report.groups[0].topics[0]
    assert [r.status for r in table.queues] == [QueueStatus.ok] * 4
    assert report.groups[0].strategy == "AVG"


def test_broker_assignment_follows_each_brokers_own_consumer_list() -> None:
    # broker-a lists only c1: it gives c1 every queue; c2 (not listed) gets nothing
    on_brokers = {"broker-a": {"clientIds": ["c1"], "requestModes": {}}}
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", assigned=queues(T, "broker-a", 0, 1), **BROKER),
                consumer("c2", T, strategy="AVG", assigned=[], **BROKER),
                onBrokers=on_brokers,
            )
        },
    )
    assert "ASSIGNMENT_MISMATCH" not in codes(report)
    assert "STALE_ALLOCATION" not in codes(report)
    rows = report.groups[0].topics[0].consumers
    assert [(r.client_id, r.expected) for r in rows] == [("c1", 2), ("c2", 0)]


def test_consistent_hash_under_broker_assignment_is_the_unknown_strategy_not_stale() -> None:
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, strategy="CONSISTENT_HASH", assigned=[], **BROKER),
                consumer("c2", T, strategy="CONSISTENT_HASH", assigned=[], **BROKER),
                offsets=offsets(4, lag=5),
            )
        },
    )
    assert "STALE_ALLOCATION" not in codes(report)
    assert "IDLE_CONSUMER" not in codes(report)
    f = only(report, Code.BROKER_STRATEGY_UNKNOWN)
    assert f.severity is Severity.error
    assert "4 queues of T" in f.message and "20 messages" in f.message
    assert "CONSISTENT_HASH" in f.message and "setClientRebalance(true)" in f.hint
    assert f.consumers == ("c1", "c2")


def test_pop_group_with_share_one_is_diagnosed_with_several_holders() -> None:
    on_brokers = {
        "broker-a": {
            "clientIds": ["c1", "c2", "c3"],
            "requestModes": {T: {"mode": "POP", "popShareQueueNum": 1}},
        }
    }
    # AVG over 4 queues: c1 0 1, c2 2, c3 3; share 1 adds the next client's share
    held = {"c1": (0, 1, 2), "c2": (2, 3), "c3": (0, 1, 3)}
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                *(
                    consumer(
                        c, T, strategy="AVG", popAssigned=queues(T, "broker-a", *ids), **BROKER
                    )
                    for c, ids in held.items()
                ),
                onBrokers=on_brokers,
                offsets=offsets(4, lag=3),
            )
        },
    )
    assert codes(report) == ["POP_MODE"]
    table = report.groups[0].topics[0]
    assert [r.status for r in table.queues] == [QueueStatus.ok] * 4
    assert table.queues[0].actual == ("c1", "c3")
    # two clients are expected to pop each queue: none is named as the one (was the last)
    assert [r.expected for r in table.queues] == [None] * 4
    assert [r.lag for r in table.queues] == [3, 3, 3, 3]
    assert report.groups[0].strategy == "AVG"
    assert [(r.client_id, r.expected, r.actual) for r in table.consumers] == [
        ("c1", 3, 3),
        ("c2", 2, 2),
        ("c3", 3, 3),
    ]


def test_pop_share_that_makes_every_client_pop_every_queue() -> None:
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1), **BROKER),
                consumer("c2", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1), **BROKER),
                onBrokers={
                    "broker-a": {
                        "clientIds": ["c1", "c2"],
                        "requestModes": {T: {"mode": "POP", "popShareQueueNum": -1}},
                    }
                },
            )
        },
    )
    f = only(report, Code.POP_SHARE_ALL)
    assert "popShareQueueNum=-1" in f.message and "every one of its 2 queues" in f.message
    assert labels(f) == ["broker-a:0", "broker-a:1"]
    assert [r.status for r in report.groups[0].topics[0].queues] == [QueueStatus.ok] * 2


def test_a_pop_share_is_no_finding_for_a_lone_client() -> None:
    """One client pops every queue under any share: nothing is shared (seen on a real 5.1.4
    POP group after one of its two clients was killed: 'each of the 1 client ... pops')."""
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1), **BROKER),
                onBrokers={
                    "broker-a": {
                        "clientIds": ["c1"],
                        "requestModes": {T: {"mode": "POP", "popShareQueueNum": 0}},
                    }
                },
            )
        },
    )
    assert codes(report) == ["POP_MODE"]
    assert [r.expected for r in report.groups[0].topics[0].queues] == ["c1", "c1"]


def test_a_pop_queue_one_client_is_expected_to_pop_keeps_its_expected_holder() -> None:
    """More clients than queues, share 1: the broker gives each client one queue (its index
    modulo the queues), so broker-a:0 goes to c1 and c3 and broker-a:1 to c2 alone."""
    ids = {"c1": 0, "c2": 1, "c3": 0}
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                *(
                    consumer(c, T, strategy="AVG", popAssigned=queues(T, "broker-a", i), **BROKER)
                    for c, i in ids.items()
                ),
                onBrokers={
                    "broker-a": {
                        "clientIds": list(ids),
                        "requestModes": {T: {"mode": "POP", "popShareQueueNum": 1}},
                    }
                },
            )
        },
    )
    table = report.groups[0].topics[0]
    assert [(r.expected, r.actual) for r in table.queues] == [
        (None, ("c1", "c3")),
        ("c2", ("c2",)),
    ]
    assert [r.status for r in table.queues] == [QueueStatus.ok] * 2


def test_brokers_with_different_consumer_lists_disagree() -> None:
    two = route(("broker-a", 2, 2, 6), ("broker-b", 2, 2, 6))
    report = run(
        {T: two},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", **BROKER),
                consumer("c2", T, strategy="AVG", **BROKER),
                onBrokers={
                    "broker-a": {"clientIds": ["c1", "c2"]},
                    "broker-b": {"clientIds": ["c1"]},
                },
            )
        },
    )
    f = only(report, Code.BROKERS_DISAGREE)
    assert "broker-b does not list c2" in f.message
    assert "c1 gets broker-a: broker-a:0, broker-a:1; broker-b: " in f.message
    assert labels(f) == ["broker-b:0", "broker-b:1"]  # what changes hands between the answers


def test_a_brokers_answer_that_differs_from_its_list_and_route_is_a_stale_route() -> None:
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", **BROKER),
                onBrokers={
                    "broker-a": {
                        "clientIds": ["c1"],
                        "assignments": [
                            {"clientId": "c1", "topic": T, "queues": queues(T, "broker-a", 0)}
                        ],
                    }
                },
            )
        },
    )
    f = only(report, Code.BROKERS_DISAGREE)
    assert "cached route is older" in f.message


def test_a_queue_a_stale_broker_route_leaves_out_is_unconsumed_because_of_it() -> None:
    """Seen on a real 5.1.4 cluster: broker-b's cached route of a new retry topic had only
    broker-b, so its answer left broker-a:0 to nobody. The unconsumed queue is a consequence
    of the disagreement, not a separate problem."""
    answer = [{"clientId": "c1", "topic": T, "queues": queues(T, "broker-b", 0)}]
    report = run(
        {T: route(("broker-a", 1, 1, 6), ("broker-b", 1, 1, 6))},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", assigned=queues(T, "broker-b", 0), **BROKER),
                onBrokers={
                    "broker-a": {"clientIds": ["c1"]},
                    "broker-b": {"clientIds": ["c1"], "assignments": answer},
                },
            )
        },
    )
    cause = only(report, Code.BROKERS_DISAGREE)
    assert labels(cause) == ["broker-a:0"]
    unconsumed = only(report, Code.UNCONSUMED_QUEUE)
    assert unconsumed.caused_by == cause.id


def test_mixed_client_and_broker_side_clients_double_and_orphan_queues() -> None:
    # c1 balances itself: AVG over [c1, c2] -> broker-a:0, 1; broker-a lists only c2 -> its
    # answer to c2 is every queue (broker-b lists both: its answer is broker-b's two)
    report = run(
        {T: route(("broker-a", 2, 2, 6), ("broker-b", 2, 2, 6))},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", **CLIENT),
                consumer("c2", T, strategy="AVG", **BROKER),
                onBrokers={
                    "broker-a": {"clientIds": ["c2"]},
                    "broker-b": {"clientIds": ["c1", "c2"]},
                },
            )
        },
    )
    f = only(report, Code.MIXED_REBALANCE)
    assert "2 queues given twice (broker-a:0, broker-a:1)" in f.message
    assert f.severity is Severity.warning
    assert "broker-a does not list c1" in only(report, Code.BROKERS_DISAGREE).message


def test_a_client_the_one_broker_of_the_topic_does_not_list_takes_nothing_of_it() -> None:
    """c1 balances itself, but cidAll comes from broker-a, the topic's only broker, which
    lists only c2: c1 computes nothing of T, and says why."""
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", **CLIENT),
                consumer("c2", T, strategy="AVG", **BROKER),
                onBrokers={"broker-a": {"clientIds": ["c2"]}},
            )
        },
    )
    assert Code.MIXED_REBALANCE.value not in codes(report)
    f = only(report, Code.BROKERS_DISAGREE)
    assert f.message.startswith("no broker of T (broker-a) lists c1, which subscribes it. ")
    assert f.consumers == ("c1",)


def test_mixed_clients_running_different_strategies_blame_the_strategies_not_the_mix() -> None:
    """c1 balances itself with AVG_BY_CIRCLE, the broker gives c2 and c3 their AVG shares:
    queues are doubled and orphaned, but every client balancing itself with its own
    strategy would double and orphan the very same ones (seen on a real 5.1.4 group, where
    both findings claimed them)."""
    report = run(
        {T: {"queues": 6}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG_BY_CIRCLE", **CLIENT),
                consumer("c2", T, strategy="AVG", **BROKER),
                consumer("c3", T, strategy="AVG", **BROKER),
            )
        },
    )
    strategies = only(report, Code.STRATEGY_INCONSISTENT)
    assert "1 queue doubled" in strategies.message and "1 queue orphaned" in strategies.message
    mixed = only(report, Code.MIXED_REBALANCE)
    assert mixed.severity is Severity.info and mixed.queues == ()
    assert mixed.message.endswith("the mix itself doubles or loses no queue at the moment")


def test_a_client_pulling_queues_that_others_pop_doubles_them() -> None:
    """A POP group with a 4.9.8 client, which balances itself and pulls its AVG share while
    the broker lets c2 pop every queue: each message of c1's queues can reach both (before,
    every row was ok and the mix "doubled no queue"). c2 and c3 popping a queue is POP's way."""
    modes = {T: {"mode": "POP", "popShareQueueNum": 0}}
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer(
                    "c1", T, strategy="AVG", version=409, assigned=queues(T, "broker-a", 0, 1)
                ),
                consumer("c2", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1), **BROKER),
                consumer("c3", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1), **BROKER),
                onBrokers={"broker-a": {"clientIds": ["c1", "c2", "c3"], "requestModes": modes}},
            )
        },
    )
    mixed = only(report, Code.MIXED_REBALANCE)
    assert mixed.severity is Severity.warning
    assert "2 queues pulled by a client and popped by others (broker-a:0, broker-a:1)" in (
        mixed.message
    )
    assert "-m PULL" in mixed.hint and "setClientRebalance(false)" in mixed.hint
    dup = only(report, Code.DUPLICATE_ASSIGNMENT)
    assert [q.label() for q in dup.queues] == ["broker-a:0", "broker-a:1"]
    assert dup.caused_by == mixed.id
    rows = report.groups[0].topics[0].queues
    assert [r.status for r in rows] == [QueueStatus.duplicate] * 2 + [QueueStatus.ok] * 2


@pytest.mark.parametrize("listed", [["c1", "c2", "c2"], ["c1", "c1", "c2"]])
def test_the_queues_a_client_pulls_in_a_pop_group_are_those_it_holds(listed: list[str]) -> None:
    """c1 took its AVG share of 6 queues over [c1, c2] (3); the broker now lists an id twice
    (a connection its client closed, not yet expired), over which AVG gives c1 2 queues until
    its next rebalance. What c1 pulls now is what it holds: 3 queues are doubled, not 2 (a
    real 5.1.4 run once said 3 of the 4 a client pulled), and they are the mix's doing."""
    modes = {T: {"mode": "POP", "popShareQueueNum": 0}}
    report = run(
        {T: {"queues": 6}},
        {
            "G": group(
                consumer(
                    "c1", T, strategy="AVG", version=409, assigned=queues(T, "broker-a", 0, 1, 2)
                ),
                consumer("c2", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1), **BROKER),
                onBrokers={"broker-a": {"clientIds": listed, "requestModes": modes}},
            )
        },
    )
    mixed = only(report, Code.MIXED_REBALANCE)
    assert "3 queues pulled by a client and popped by others (broker-a:0..2)" in mixed.message
    dup = only(report, Code.DUPLICATE_ASSIGNMENT)
    assert [q.label() for q in dup.queues] == ["broker-a:0", "broker-a:1", "broker-a:2"]
    assert dup.caused_by == mixed.id


def test_mixed_with_the_same_list_orphans_nothing_but_is_said() -> None:
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", **CLIENT),
                consumer("c2", T, strategy="AVG", **BROKER),
            )
        },
    )
    f = only(report, Code.MIXED_REBALANCE)
    assert f.severity is Severity.info


def test_a_proxy_consumed_group_gets_no_delete_advice_and_shows_its_lag() -> None:
    # the capture time decides: 5 s before it is recent
    report = run(
        {T: {"queues": 2}},
        {"G": group(offsets=offsets(2, lag=7, last=1_768_464_000_000 - 5_000))},
        extra={"capturedAt": "2026-01-15T08:00:00Z"},
    )
    f = only(report, Code.PROXY_CONSUMED)
    assert "deleteSubGroup" not in f.hint and "nothing to delete" in f.hint
    assert "ask a 5.1+ Proxy: --proxy HOST:PORT" in f.hint  # the option that shows them
    assert "lag is 14" in f.message and "5 s before the capture" in f.message
    table = report.groups[0].topics[0]
    assert [r.lag for r in table.queues] == [7, 7]


def test_a_proxy_consumed_group_states_the_rate_its_brokers_count() -> None:
    # nothing consumed recently by the offsets' clock: the brokers' consumeTps is the sign
    views = {"broker-a": {"consumeTps": 2.5}, "broker-b": {"consumeTps": 1.25}}
    groups = {"G": group(offsets=offsets(2, lag=7), onBrokers=views)}
    report = run({T: {"queues": 2}}, groups)
    f = only(report, Code.PROXY_CONSUMED)
    assert "its brokers count it fetching 3.8 messages/s (consumeTps)" in f.message
    assert "deleteSubGroup" not in f.hint
    (line,) = status(snapshot({T: {"queues": 2}}, groups)).lines
    assert line.consume_tps == 3.75  # no client reports a rate: the brokers' count


def test_client_reported_rates_win_over_the_brokers_count() -> None:
    views = {"broker-a": {"consumeTps": 9.0}}
    c1 = consumer("c1", T, status={T: {"consumeOKTPS": 4.5}})
    groups = {"G": group(c1, onBrokers=views)}
    (line,) = status(snapshot({T: {"queues": 2}}, groups)).lines
    assert line.consume_tps == 4.5


def test_no_consumers_on_a_5x_cluster_without_a_proxy_asked_gives_no_delete_advice() -> None:
    report = run(
        {T: {"queues": 1}},
        {"G": group(offsets=offsets(1))},
        extra={"brokers": {"broker-a": {"version": 413}}},
    )
    f = only(report, Code.NO_CONSUMERS)
    assert "deleteSubGroup" not in f.hint


def test_inferred_balance_is_said_with_its_reason() -> None:
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1)),
                consumer("c2", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1)),
            )
        },
    )
    f = (
        only(report, Code.POP_MODE)
        if "POP_MODE" in codes(report)
        else only(report, Code.BROKER_REBALANCE)
    )
    assert "inferred: it holds POP queues" in f.message


def test_a_pop_client_reporting_only_pop_queues_is_not_unreachable() -> None:
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG", popAssigned=queues(T, "broker-a", -1), **BROKER),
                consumer("c2", T, strategy="AVG", assigned=queues(T, "broker-a", 1), **BROKER),
            )
        },
        extra={"source": {"namesrv": ["10.0.0.1:9876"]}},
    )
    assert "CLIENT_UNREACHABLE" not in codes(report)


def test_on_4x_brokers_broker_assigned_clients_fall_back_to_their_own_rebalance() -> None:
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, strategy="CONSISTENT_HASH", assigned=[], **BROKER),
                consumer("c2", T, strategy="CONSISTENT_HASH", assigned=[], **BROKER),
            )
        },
        extra={"brokers": {"broker-a": {"version": 409}}},
    )
    assert "BROKER_STRATEGY_UNKNOWN" not in codes(report)
    assert "BROKER_REBALANCE" not in codes(report)
    rows = report.groups[0].topics[0].consumers
    assert sum(r.expected for r in rows) == 4  # CONSISTENT_HASH, computed by the clients


# -- messages that come back through a POP retry topic (CONSUME_FAILING) ------------------------

POP_RETRY = "%RETRY%G_T"
CAPTURED_MS = 1_768_464_000_000  # 2026-01-15T08:00:00Z
AT_CAPTURE = {"capturedAt": "2026-01-15T08:00:00Z"}
GRPC = {"rebalance": "proxy", "proxy": "10.0.0.9:8081"}


def came_back(per_broker: dict[str, int], ago_ms: int, lag: int = 0) -> list[dict[str, Any]]:
    """Offsets of the POP retry topic: ``n`` messages came back on each broker, the last
    popped one stored ``ago_ms`` before the capture."""
    return [
        {
            "topic": POP_RETRY,
            "brokerName": broker,
            "queueId": 0,
            "brokerOffset": n,
            "consumerOffset": n - lag,
            "lastTimestamp": CAPTURED_MS - ago_ms,
        }
        for broker, n in per_broker.items()
    ]


def test_popped_messages_that_come_back_are_a_failing_grpc_group_not_an_unread_topic() -> None:
    """A gRPC client that never acks (seen on a real 5.1.4 cluster): the main topic's lag
    stays 0, as POP commits at the pop, while every message comes back through the POP retry
    topic. It was NO_CONSUMERS on that topic, advising to remove it."""
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("10.0.0.5@1", T, **GRPC),
                offsets=offsets(2, last=CAPTURED_MS - 3_000)
                + came_back({"broker-a": 135, "broker-b": 118}, ago_ms=3_000, lag=4),
                configs={"broker-a": {"retryMaxTimes": 16}},
            )
        },
        extra=AT_CAPTURE,
    )
    assert "NO_CONSUMERS" not in codes(report)
    f = only(report, Code.CONSUME_FAILING)
    assert f.severity is Severity.warning and f.topic == T and f.consumers == ("10.0.0.5@1",)
    assert (
        "messages of T that G pops come back unacknowledged: 253 messages came back (one per "
        "return) through %RETRY%G_T, its POP retry topic of T (broker-a 135, broker-b 118)"
    ) in f.message
    assert "stored 3 s before the capture; 8 wait there to be popped" in f.message
    assert "at most 17 times (the group's retryMaxTimes + 1), then forwards it to %DLQ%G" in (
        f.message
    )
    assert "changeInvisibleDuration" in f.hint and "%DLQ%G" in f.hint


def test_a_group_no_broker_lists_is_failing_when_what_it_pops_comes_back() -> None:
    # 5.0: the brokers do not list the Proxy's gRPC clients; the offsets show the group
    report = run(
        {T: {"queues": 2}},
        {"G": group(offsets=offsets(2, last=CAPTURED_MS - 1_000) + came_back({"b": 9}, 60_000))},
        extra=AT_CAPTURE,
    )
    assert {"PROXY_CONSUMED", "CONSUME_FAILING"} <= set(codes(report))
    f = only(report, Code.CONSUME_FAILING)
    assert "9 messages came back" in f.message and "1 min 0 s before" not in f.message
    assert "1 min before the capture" in f.message and "at most 17 times" in f.message


def test_messages_that_came_back_long_ago_are_no_failure_now() -> None:
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("10.0.0.5@1", T, **GRPC),
                offsets=offsets(2) + came_back({"broker-a": 5}, ago_ms=2 * 3_600_000),
            )
        },
        extra=AT_CAPTURE,
    )
    assert "CONSUME_FAILING" not in codes(report) and "NO_CONSUMERS" not in codes(report)


def test_a_failing_pop_push_client_drops_what_it_fails_instead_of_the_dlq() -> None:
    """A 5.x push client the brokers let pop: what it fails comes back through the POP
    retry topic, and past maxReconsumeTimes it acknowledges a message 4 h after it was
    sent (ConsumeMessagePopConcurrentlyService): never the group's retry topic nor its DLQ,
    as the message said."""
    failing = {"status": {T: {"consumeFailedTPS": 0.3}}, **BROKER}
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("c1", T, popAssigned=queues(T, "broker-a", -1), **failing),
                offsets=offsets(2) + came_back({"broker-a": 17}, ago_ms=35_000),
                onBrokers={"broker-a": {"requestModes": {T: {"mode": "POP"}}}},
            )
        },
        extra=AT_CAPTURE,
    )
    assert "NO_CONSUMERS" not in codes(report)
    f = only(report, Code.CONSUME_FAILING)
    assert "comes back through %RETRY%G_T after a growing delay" in f.message
    assert "until 4 h after it was sent, then acknowledges it unconsumed" in f.message
    assert "never sent to %DLQ%G" in f.message and "goes to %RETRY%G " not in f.message
    assert "17 messages came back (one per return) through %RETRY%G_T" in f.message
    assert "resendMsgById" not in f.hint and "4 h after it was sent" in f.hint


def test_a_pop_retry_topic_nobody_pops_any_more_is_still_unread() -> None:
    # a group back on 4.x clients that pull: what came back through the POP retry topic
    # waits there, and no one reads it
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T), offsets=offsets(2) + came_back({"broker-a": 6}, 0, lag=6))},
        extra=AT_CAPTURE,
    )
    f = only(report, Code.NO_CONSUMERS)
    assert f.topic == POP_RETRY and "6 messages of lag" in f.message


# -- POP_RETRY_TOO_LONG --------------------------------------------------------------------------


def long_names(group_len: int, topic_len: int, version: int | None) -> Any:
    """A gRPC group of ``group_len`` characters popping a topic of ``topic_len`` on one
    broker of ``version``."""
    group_name, topic = "G" * group_len, "T" * topic_len
    brokers = {"broker-a": {} if version is None else {"version": version}}
    return run(
        {topic: {"queues": 2}},
        {group_name: group(consumer("10.0.0.5@1", topic, **GRPC))},
        extra={"brokers": brokers},
    )


def test_a_pop_retry_topic_a_5_0_broker_cannot_store_is_an_error() -> None:
    """%RETRY%G_T over 127 bytes: a 5.0 broker refuses every message of it, so what a POP
    consumer does not acknowledge never comes back (seen on the kit's 5.0.0: names of 61
    characters each, failed messages received once and never again; 'revive error' in the
    broker's pop log, again and again)."""
    report = long_names(61, 61, 413)
    f = only(report, Code.POP_RETRY_TOO_LONG)
    assert f.severity is Severity.error and f.topic == "T" * 61
    assert f"its POP retry topic %RETRY%{'G' * 61}_{'T' * 61} is 130 bytes long" in f.message
    assert "1 broker of" in f.message and "(broker-a) runs 5.0" in f.message
    # the revive queue stops there for every group (the kit: a short-named group got 48
    # deliveries of 40 failing messages in 2.5 min beside it, 339 without it)
    assert "what every other group pops on those brokers stops coming back too" in f.message
    assert "rmqlb offsets CID_RMQ_SYS_REVIVE_GROUP" in f.message
    assert "shorten the group or the topic name by 3 bytes at least" in f.hint
    assert "within 119 bytes" in f.hint


def test_a_pop_retry_topic_of_127_bytes_or_a_5_1_broker_or_an_unknown_one_is_fine() -> None:
    assert "POP_RETRY_TOO_LONG" not in codes(long_names(60, 59, 413))  # 127 bytes
    assert "POP_RETRY_TOO_LONG" in codes(long_names(60, 60, 413))  # 128
    assert "POP_RETRY_TOO_LONG" not in codes(long_names(61, 61, 441))  # 5.1.4 stores it
    assert "POP_RETRY_TOO_LONG" not in codes(long_names(61, 61, None))  # version unknown


def test_a_long_pop_retry_topic_name_matters_only_where_the_group_pops() -> None:
    name, topic = "G" * 61, "T" * 61
    report = run(
        {topic: {"queues": 2}},
        {name: group(consumer("c1", topic))},  # a push client that pulls
        extra={"brokers": {"broker-a": {"version": 413}}},
    )
    assert "POP_RETRY_TOO_LONG" not in codes(report)


def test_a_client_that_pulls_beside_grpc_clients_gets_no_pop_client_story() -> None:
    """Only a client that pops is told what a popping push client does with a failure."""
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer("10.0.0.5@1", T, **GRPC),
                consumer("c1", T, assigned=queues(T, "broker-a", 0, 1)),
                offsets=offsets(2) + came_back({"broker-a": 5}, ago_ms=1_000),
            )
        },
        extra=AT_CAPTURE,
    )
    f = only(report, Code.CONSUME_FAILING)
    assert "at most 17 times" in f.message and "push client that pops" not in f.message


def test_lag_skew_in_a_group_the_brokers_balance_by_pull_offers_pop() -> None:
    """Every client balanced by the brokers, the topic served by PULL: POP lets the faster
    clients take a slow one's share; a client balancing itself, or an orderly one, does not
    get that fix."""

    def skewed(second: dict[str, Any]) -> str:
        report = run(
            {T: {"queues": 4}},
            {
                "G": group(
                    consumer(
                        "c1", T, strategy="AVG", assigned=queues(T, "broker-a", 0, 1), **BROKER
                    ),
                    consumer(
                        "c2", T, strategy="AVG", assigned=queues(T, "broker-a", 2, 3), **second
                    ),
                    offsets=offsets(2)
                    + [
                        {
                            "topic": T,
                            "brokerName": "broker-a",
                            "queueId": i,
                            "brokerOffset": 5_100,
                            "consumerOffset": 100,
                        }
                        for i in (2, 3)
                    ],
                )
            },
        )
        return only(report, Code.LAG_SKEW).hint

    pop = (
        "; or, since the brokers balance G, have them serve T by POP (mqadmin setConsumeMode "
        "-c <cluster> -t T -g G -m POP -q 0): every client then pops every queue"
    )
    assert pop in skewed(BROKER)
    assert "setConsumeMode" not in skewed(CLIENT)
    orderly = {**BROKER, "consumeOrderly": True}
    assert "setConsumeMode" not in skewed(orderly)


def _balancer(*off: str) -> dict[str, Any]:
    """Brokers broker-a and broker-b (5.1.4), ``off`` with serverLoadBalancerEnable=false."""
    return {
        b: {
            "addrs": {"0": f"10.0.0.{i}:10911"},
            "version": 441,
            "config": {"serverLoadBalancerEnable": b not in off},
        }
        for i, b in enumerate(("broker-a", "broker-b"), start=11)
    }


TWO_BROKERS = {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6))}
EVERY_QUEUE = queues(T, "broker-a", 0, 1, 2, 3) + queues(T, "broker-b", 0, 1, 2, 3)


def test_brokers_that_give_every_client_every_queue_are_the_cause_of_its_duplicates() -> None:
    """serverLoadBalancerEnable=false (seen on a real 5.1.4 cluster): QueryAssignmentProcessor
    answers the whole route to each client, which pulls all of it. Before, the duplicates
    were said to "clear at the next rebalance" and the rows expected c2 alone."""
    report = run(
        TWO_BROKERS,
        {
            "G": group(
                consumer("c1", T, strategy="AVG", assigned=EVERY_QUEUE, **BROKER),
                consumer("c2", T, strategy="AVG", assigned=EVERY_QUEUE, **BROKER),
            )
        },
        extra={"brokers": _balancer("broker-a", "broker-b")},
    )
    off = only(report, Code.SERVER_LOAD_BALANCER_OFF)
    assert off.severity is Severity.error
    assert off.message.startswith(
        "broker-a, broker-b run with serverLoadBalancerEnable=false: their "
        "QueryAssignmentProcessor answers every client that asks with all 8 queues of T, which "
        "G consumes by PULL there, so each of the 2 clients the brokers balance pulls every "
        "queue whenever it asks one of them: 8 queues held by several now (broker-a:0..3, "
        "broker-b:0..3"
    ), off.message
    assert off.hint.startswith(
        "turn it on again: mqadmin updateBrokerConfig -b 10.0.0.11:10911 -k "
        "serverLoadBalancerEnable -v true; mqadmin updateBrokerConfig -b 10.0.0.12:10911 -k "
        "serverLoadBalancerEnable -v true (it applies at once"
    )
    assert off.consumers == ("c1", "c2") and len(off.queues) == 8
    dup = only(report, Code.DUPLICATE_ASSIGNMENT)
    assert dup.caused_by == off.id
    rows = report.groups[0].topics[0].queues
    assert {(r.expected, r.status) for r in rows} == {(None, QueueStatus.duplicate)}


def test_one_broker_without_balancing_makes_the_answers_differ_for_its_reason() -> None:
    """broker-a turned on again, broker-b not: a client asking broker-a gets its share,
    asking broker-b every queue. BROKERS_DISAGREE follows from it, not "usually transient"."""
    report = run(
        TWO_BROKERS,
        {
            "G": group(
                consumer("c1", T, strategy="AVG", assigned=EVERY_QUEUE[:4], **BROKER),
                consumer("c2", T, strategy="AVG", assigned=EVERY_QUEUE, **BROKER),
            )
        },
        extra={"brokers": _balancer("broker-b")},
    )
    off = only(report, Code.SERVER_LOAD_BALANCER_OFF)
    assert off.message.startswith("broker-b runs with serverLoadBalancerEnable=false: its ")
    assert (
        "whenever it asks it (broker-a gives each client its share; each rebalance asks a "
        "broker of the topic picked at random): 4 queues held by several now (broker-a:0..3)"
    ) in off.message, off.message
    assert "-b 10.0.0.12:10911 -k serverLoadBalancerEnable -v true (it" in off.hint
    assert "10.0.0.11" not in off.hint
    assert only(report, Code.BROKERS_DISAGREE).caused_by == off.id
    assert only(report, Code.DUPLICATE_ASSIGNMENT).caused_by == off.id


def test_one_client_of_brokers_without_balancing_is_warned_and_pop_is_left_alone() -> None:
    alone = run(
        TWO_BROKERS,
        {"G": group(consumer("c1", T, strategy="AVG", assigned=EVERY_QUEUE, **BROKER))},
        extra={"brokers": _balancer("broker-a", "broker-b")},
    )
    off = only(alone, Code.SERVER_LOAD_BALANCER_OFF)
    assert off.severity is Severity.warning and off.queues == ()
    assert off.message.endswith(
        "; with one client nothing doubles yet, but every client added pulls them all too"
    )
    modes = {T: {"mode": "POP", "popShareQueueNum": 0}}
    popped = run(
        TWO_BROKERS,
        {
            "G": group(
                consumer("c1", T, strategy="AVG", popAssigned=EVERY_QUEUE, **BROKER),
                consumer("c2", T, strategy="AVG", popAssigned=EVERY_QUEUE, **BROKER),
                onBrokers={
                    b: {"clientIds": ["c1", "c2"], "requestModes": modes}
                    for b in ("broker-a", "broker-b")
                },
            )
        },
        extra={"brokers": _balancer("broker-a", "broker-b")},
    )
    assert "SERVER_LOAD_BALANCER_OFF" not in codes(popped)
