"""QUEUE_STALLED: two polls at least ``stall_ms`` apart show a queue of unknown holder
standing still while messages wait and the group consumes the topic's other queues."""

from __future__ import annotations

from typing import Any

from stalled_polls import T, poll_doc

from rmqlb.diagnose import Code, Severity, diagnose
from rmqlb.diagnose.context import DiagnoseOptions, PollHistory
from rmqlb.model import Snapshot
from rmqlb.snapshot import parse_snapshot


def _poll(seconds: int, committed: list[int], high: int = 100, **client: Any) -> Snapshot:
    return parse_snapshot(poll_doc(seconds, committed, high, **client))


def _diagnosed(*polls: Snapshot) -> list[Any]:
    history = PollHistory()
    report = None
    for poll in polls:
        report = diagnose(poll, options=DiagnoseOptions(earlier=history.earlier(poll)))
    assert report is not None
    return list(report.findings)


def test_a_queue_standing_still_for_a_minute_while_the_others_advance() -> None:
    found = _diagnosed(_poll(0, [10, 10, 10, 10]), _poll(61, [50, 50, 10, 50]))
    (f,) = [f for f in found if f.code is Code.QUEUE_STALLED]
    assert f.severity is Severity.error and f.topic == T
    assert [q.label() for q in f.queues] == ["broker-a:2"]
    assert f.consumers == ("10.0.0.2@c",)  # AVG gives broker-a:2 and 3 to the second
    assert f.message == (
        "1 queue of T (broker-a:2) did not advance between two polls 61 s apart, though 90 "
        "messages waited there already at the first (90 now), while the group consumed 3 "
        "other queues of the topic: nobody consumes it. Who holds it is not known (they "
        "connect through a Proxy, which relays no running-info request); AVG (assumed: no "
        "client reported its strategy) gives broker-a:2 to 10.0.0.2@c"
    )
    assert f.hint.startswith(
        "find what holds broker-a:2 and why it does not consume it: start with the log of its "
        "expected holder (10.0.0.2@c); a client running another strategy"
    )


def test_no_finding_from_polls_too_close_a_group_at_rest_or_no_waiting() -> None:
    def stalled(*polls: Snapshot) -> bool:
        return any(f.code is Code.QUEUE_STALLED for f in _diagnosed(*polls))

    # 30 s apart: a slow consumer, or one that has not committed yet (every 5 s)
    assert not stalled(_poll(0, [10] * 4), _poll(30, [50, 50, 10, 50]))
    # a minute of nothing moving anywhere: the group stopped, not one queue
    assert not stalled(_poll(0, [10] * 4), _poll(61, [10] * 4))
    # nothing waited at the first poll
    assert not stalled(_poll(0, [10] * 4, high=10), _poll(61, [50, 50, 10, 50], high=60))
    # held queues known: the other rules say who holds it
    held = [{"topic": T, "brokerName": "broker-a", "queueId": 0}]
    assert not stalled(
        _poll(0, [10] * 4, assigned=held), _poll(61, [50, 50, 10, 50], assigned=held)
    )


def test_the_history_compares_with_the_latest_poll_a_minute_older_and_keeps_few() -> None:
    history = PollHistory()
    times = range(0, 181, 5)  # a poll every 5 s for 3 minutes
    chosen = [history.earlier(_poll(s, [10] * 4)) for s in times]
    assert chosen[:12] == [None] * 12  # nothing a minute old before 60 s
    start = chosen[12].captured_ms if chosen[12] else 0
    ages = [s - (c.captured_ms - start) // 1000 for s, c in zip(times, chosen, strict=True) if c]
    assert len(ages) == len(times) - 12
    assert all(60 <= age < 60 + 15 for age in ages), ages
    assert len(history.polls) <= 6  # one kept per quarter minute at most


def test_a_silent_holder_that_is_stalled_is_the_cause() -> None:
    """The second client does not answer (its running info failed) while its queues wait:
    CONSUMER_STALLED from one snapshot, and QUEUE_STALLED over two polls is listed under it."""

    def silent(seconds: int, committed: list[int]) -> Snapshot:
        doc = poll_doc(seconds, committed)
        for c in doc["groups"]["G"]["consumers"]:
            del c["proxy"]
        first = doc["groups"]["G"]["consumers"][0]
        first["assigned"] = [{"topic": T, "brokerName": "broker-a", "queueId": i} for i in (0, 1)]
        doc["errors"] = [
            {"target": "10.0.0.2@c", "request": "GET_CONSUMER_RUNNING_INFO",
             "message": "timed out", "group": "G"}
        ]  # fmt: skip
        return parse_snapshot(doc)

    found = _diagnosed(silent(0, [10] * 4), silent(61, [50, 50, 10, 10]))
    (cause,) = [f for f in found if f.code is Code.CONSUMER_STALLED]
    (stalled,) = [f for f in found if f.code is Code.QUEUE_STALLED]
    assert [q.label() for q in stalled.queues] == ["broker-a:2", "broker-a:3"]
    assert stalled.caused_by == cause.id


def test_a_queue_never_committed_at_either_poll_stood_still_too() -> None:
    """A client that takes a queue commits its starting offset within 5 s: one still never
    committed a minute later, with messages waiting, is held by nobody."""
    found = _diagnosed(_poll(0, [10, 10, -1, 10]), _poll(61, [50, 50, -1, 50]))
    (f,) = [f for f in found if f.code is Code.QUEUE_STALLED]
    assert [q.label() for q in f.queues] == ["broker-a:2"]
    assert "though 100 messages waited there already at the first (100 now)" in f.message
