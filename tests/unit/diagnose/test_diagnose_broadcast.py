"""A BROADCASTING group's clients, each with its own progress: per-client lag from the
broker's max offsets and each client's commit offsets, BROADCAST_LAG, and CONSUME_FAILING
that says a failed message is dropped."""

from __future__ import annotations

from typing import Any

from diagnose_builders import codes, consumer, group, labels, only, queues, run

from rmqlb.diagnose import Code, Report, Severity
from rmqlb.diagnose.context import DiagnoseOptions

T = "Notices"
NOW = 1_795_348_800_000  # capturedAt below, in epoch ms
CAPTURED = {"capturedAt": "2026-11-22T12:00:00Z"}
MAX = 1_000  # every queue's max offset


def states(commit: int, consumed_ago_ms: int = 500, ids: range = range(4)) -> list[dict[str, Any]]:
    """Process queues of broker-a:0..3 committed at ``commit``, last consumed a moment ago."""
    return [
        {
            "topic": T,
            "brokerName": "broker-a",
            "queueId": i,
            "cachedMsgCount": 0,
            "cachedMsgSizeInMiB": 0,
            "commitOffset": commit,
            "lastPullTimestamp": NOW - 200,
            "lastConsumeTimestamp": NOW - consumed_ago_ms,
            "locked": False,
            "lastLockTimestamp": 0,
            "dropped": False,
        }
        for i in ids
    ]


def rates(ok: float, rt: float, failed: float = 0.0) -> dict[str, Any]:
    return {
        T: {
            "pullRT": 1.0,
            "pullTPS": ok,
            "consumeRT": rt,
            "consumeOKTPS": ok,
            "consumeFailedTPS": failed,
            "consumeFailedMsgs": 0,
        }
    }


def client(cid: str, commit: int, **extra: Any) -> dict[str, Any]:
    extra.setdefault("processQueues", states(commit))
    return consumer(cid, T, assigned=queues(T, "broker-a", 0, 1, 2, 3), **extra)


def broadcast(*clients: dict[str, Any], with_offsets: bool = True, **options: Any) -> Report:
    """The group of ``clients`` in BROADCASTING; its offsets as a capture lists them: the
    broker's max and min offsets, never committed."""
    rows = [
        {
            "topic": T,
            "brokerName": "broker-a",
            "queueId": i,
            "brokerOffset": MAX,
            "consumerOffset": -1,
            "minOffset": 0,
        }
        for i in range(4)
    ]
    extra: dict[str, Any] = {"messageModel": "BROADCASTING"}
    if with_offsets:
        extra["offsets"] = rows
    return run(
        {T: {"queues": 4}},
        {"G": group(*clients, **extra)},
        extra=CAPTURED,
        options=DiagnoseOptions(**options),
    )


def test_each_client_has_its_own_lag_and_the_queues_none() -> None:
    report = broadcast(client("c1", MAX), client("c2", 600))
    topic = report.groups[0].topics[0]
    assert {c.client_id: c.lag for c in topic.consumers} == {"c1": 0, "c2": 1_600}
    assert all(row.lag is None and row.offset is None for row in topic.queues)
    assert report.groups[0].lag_by_consumer() == {"c1": 0, "c2": 1_600}


def test_a_slow_client_behind_its_peers_is_a_warning_with_its_rates() -> None:
    report = broadcast(
        client("c1", MAX, status=rates(50.0, 0.004)),
        client("c2", 600, status=rates(4.0, 250.0)),
    )
    f = only(report, Code.BROADCAST_LAG)
    assert f.severity is Severity.warning
    assert f.topic == T and f.consumers == ("c2",)
    assert labels(f) == ["broker-a:0", "broker-a:1", "broker-a:2", "broker-a:3"]
    assert f.message.startswith(
        "1 of 2 consumers of G is behind on Notices: c2 is 1,600 messages behind (consumes "
        "4.0 msg/s, 250 ms per message: about 6 min 40 s to catch up if nothing more arrives); "
        "1 other consumer keeps up (c1: under 1,000 behind, 0.004 ms per message)"
    )
    assert "the others cannot take its share" in f.message
    assert "slower than its peers" in f.hint


def test_every_client_behind_says_the_producers_outpace_them() -> None:
    report = broadcast(client("c1", 500), client("c2", 600))
    f = only(report, Code.BROADCAST_LAG)
    assert f.consumers == ("c1", "c2")  # most behind first
    assert "2 of 2 consumers of G are behind" in f.message
    assert "no consumer of the topic keeps up" in f.message
    assert "CLUSTERING" in f.hint


def test_a_client_behind_that_consumes_nothing_is_an_error() -> None:
    stuck = states(600, consumed_ago_ms=5 * 60_000)
    report = broadcast(client("c1", MAX), client("c2", 600, processQueues=stuck))
    f = only(report, Code.BROADCAST_LAG)
    assert f.severity is Severity.error
    assert (
        "c2 is 1,600 messages behind and has consumed nothing from its 4 queues that wait for 5 min"
        in f.message
    )
    assert "jstack" in f.hint and "offsets.json" in f.hint


def test_under_min_lag_or_unknown_no_finding() -> None:
    assert "BROADCAST_LAG" not in codes(broadcast(client("c1", MAX), client("c2", 800)))
    assert "BROADCAST_LAG" in codes(broadcast(client("c1", MAX), client("c2", 800), min_lag=500))
    # no max offsets (a capture before this was read, or a file without them): unknown
    report = broadcast(client("c1", MAX), client("c2", 0), with_offsets=False)
    assert "BROADCAST_LAG" not in codes(report)
    assert [c.lag for c in report.groups[0].topics[0].consumers] == [None, None]
    # a client without running info, or with a commit offset it never had (-1): unknown
    report = broadcast(client("c1", 0, processQueues=None), client("c2", -1))
    assert [c.lag for c in report.groups[0].topics[0].consumers] == [None, None]


def test_a_failing_broadcasting_client_drops_what_it_fails() -> None:
    report = broadcast(client("c1", MAX, status=rates(0.0, 1.0, failed=5.0)))
    f = only(report, Code.CONSUME_FAILING)
    assert "in BROADCASTING a client drops every message its listener fails" in f.message
    assert "never sent to %DLQ%G" in f.message and "%RETRY%G" not in f.message
    assert "mqadmin queryMsgById -i MSG_ID -g G -d c1" in f.hint
    assert "consumeMessage" not in f.hint


def test_a_peer_that_drops_what_it_fails_does_not_keep_up() -> None:
    report = broadcast(
        client("c1", MAX, status=rates(50.0, 0.004)),
        client("c2", 600, status=rates(4.0, 250.0)),
        client("c3", MAX, status=rates(0.0, 0.01, failed=40.0)),
    )
    f = only(report, Code.BROADCAST_LAG)
    assert "1 of 3 consumers of G is behind" in f.message
    assert "1 other consumer keeps up (c1: under 1,000 behind, 0.004 ms per message)" in f.message
    assert "CONSUME_FAILING" in codes(report)


def test_a_client_stuck_before_its_first_commit_is_an_error_with_its_lag_unknown() -> None:
    """Seen on the kit: a listener that never returns leaves the client with no commit
    offset (-1) and its pulled messages cached; a restart would skip them."""
    stuck = [{**s, "cachedMsgCount": 375} for s in states(-1, consumed_ago_ms=67_000)]
    report = broadcast(client("c1", MAX), client("c2", 0, processQueues=stuck))
    assert [c.lag for c in report.groups[0].topics[0].consumers] == [0, None]
    f = only(report, Code.BROADCAST_LAG)
    assert f.severity is Severity.error and f.consumers == ("c2",)
    assert (
        "c2 has consumed nothing from its 4 queues for 1 min 7 s although 1,500 pulled "
        "messages wait in its cache (its lag is unknown: it has committed no offset yet)"
    ) in f.message
    assert "CONSUME_FROM_LAST_OFFSET" in f.hint and "offsets.json" not in f.hint
    # the same a few seconds into its first message: not stalled yet
    fresh = [{**s, "cachedMsgCount": 375} for s in states(-1, consumed_ago_ms=5_000)]
    report = broadcast(client("c1", MAX), client("c2", 0, processQueues=fresh))
    assert "BROADCAST_LAG" not in codes(report)


def test_the_reports_group_and_topic_lag_are_the_most_behind_clients() -> None:
    """As status says it: the queues have none, the clients have theirs."""
    from rmqlb.diagnose import report_to_json

    doc = report_to_json(broadcast(client("c1", MAX), client("c2", 600)))
    (group,) = doc["groups"]
    assert (group["lag"], group["lagKnown"], group["lagComplete"]) == (1_600, 1_600, True)
    assert group["topics"][0]["lag"] == 1_600
    # one client without running info: a lower bound, not the lag
    doc = report_to_json(broadcast(client("c1", MAX), client("c2", 600, processQueues=None)))
    (group,) = doc["groups"]
    assert (group["lag"], group["lagKnown"], group["lagComplete"]) == (None, 0, False)
    assert group["topics"][0]["lag"] is None
