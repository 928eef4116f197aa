"""STALE_ALLOCATION: the search for the inputs a mismatching client allocated from, its
wording and causes, and the consequences it explains."""

from __future__ import annotations

from typing import Any

from diagnose_builders import codes, consumer, group, labels, only, queues, route, run, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlb.allocate import allocate, allocate_sorted
from rmqlb.diagnose import Code, DiagnoseOptions, Report, Severity
from rmqlb.diagnose.context import group_context, topic_context
from rmqlb.diagnose.rules.stale import search
from rmqlb.model import MessageQueue
from rmqlb.model.strategy import Avg, AvgByCircle, StrategySpec

T = "TopicA"
NOW = 1_795_348_800_000
CAPTURED = {"capturedAt": "2026-11-22T12:00:00Z"}


def q(*ids: int, broker: str = "broker-a", topic: str = T) -> list[dict[str, Any]]:
    return queues(topic, broker, *ids)


def refs(mqs: list[MessageQueue]) -> list[dict[str, Any]]:
    return [{"topic": m.topic, "brokerName": m.broker_name, "queueId": m.queue_id} for m in mqs]


TWO_BROKERS = route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6))
ALL8 = q(0, 1, 2, 3) + q(0, 1, 2, 3, broker="broker-b")


def first_alone(**group_extra: Any) -> Report:
    """The real cluster's case: ``first`` started alone and never rebalanced, ``second``
    joined 10 minutes ago and holds its AVG half."""
    first = consumer("127.0.0.1@first", T, assigned=ALL8, startTime=NOW - 3_600_000)
    second = consumer(
        "127.0.0.1@second", T, assigned=q(0, 1, 2, 3, broker="broker-b"), startTime=NOW - 600_000
    )
    return run({T: TWO_BROKERS}, {"G": group(first, second, **group_extra)}, extra=CAPTURED)


def test_a_client_holding_everything_allocates_as_if_it_were_alone() -> None:
    silenced = {b: {"notifyConsumerIdsChangedEnable": False} for b in ("broker-a", "broker-b")}
    report = first_alone(configs=silenced)
    stale = only(report, Code.STALE_ALLOCATION)
    assert stale.severity is Severity.error
    assert stale.consumers == ("127.0.0.1@first",)
    assert labels(stale) == [f"broker-b:{i}" for i in range(4)]
    assert "as if the group were [127.0.0.1@first] alone" in stale.message
    assert "as before 127.0.0.1@second joined (10 min before the capture)" in stale.message
    assert "4 queues held twice (broker-b:0..3)" in stale.message
    assert "notifyConsumerIdsChangedEnable=false on broker-a, broker-b" in stale.message
    assert "mqadmin updateSubGroup -b <broker-a address> -g G -a true" in stale.hint
    duplicate = only(report, Code.DUPLICATE_ASSIGNMENT)
    mismatch = only(report, Code.ASSIGNMENT_MISMATCH)
    assert duplicate.caused_by == stale.id and mismatch.caused_by == stale.id
    assert report.findings[0] == stale
    for f in (duplicate, mismatch):
        assert f.hint.startswith(f"caused by STALE_ALLOCATION ({stale.id}): 127.0.0.1@first")
        assert "re-run" not in f.hint and "wait" not in f.hint


def test_without_the_notification_setting_a_lasting_view_is_a_stuck_rebalance() -> None:
    stale = only(first_alone(), Code.STALE_ALLOCATION)
    assert "likely cause: a stuck rebalance" in stale.message
    assert "RebalanceService" in stale.hint


def test_clients_that_missed_a_join_minutes_ago_or_a_moment_ago() -> None:
    def joined(age_ms: int | None) -> Report:
        started = {} if age_ms is None else {"startTime": NOW - age_ms}
        return run(
            {T: {"queues": 16}},
            {
                "G": group(
                    consumer("c1", T, assigned=q(*range(8)), startTime=NOW - 7_200_000),
                    consumer("c2", T, assigned=q(*range(8, 16)), startTime=NOW - 7_000_000),
                    consumer("c3", T, assigned=q(*range(11, 16)), **started),
                )
            },
            extra=CAPTURED,
        )

    fresh = only(joined(4_000), Code.STALE_ALLOCATION)
    assert fresh.consumers == ("c1", "c2")
    assert "for the consumer list without c3, as before it joined (4 s" in fresh.message
    assert "a rebalance in progress" in fresh.message
    old = only(joined(300_000), Code.STALE_ALLOCATION)
    assert "a stuck rebalance" in old.message
    unknown = only(joined(None), Code.STALE_ALLOCATION)
    assert "rebalance in progress for up to 20 s after the change, later a stuck one" in (
        unknown.message
    )
    assert unknown.hint.startswith("if it lasts beyond 20 s:")


def test_clients_that_still_count_a_client_that_left_leave_holes() -> None:
    # was [a, b, c]; a left: b and c keep their thirds, the first third is held by nobody
    retry = "%RETRY%G"
    b = consumer("b", T, retry, assigned=q(3, 4, 5))
    c = consumer("c", T, retry, assigned=q(6, 7, 8))
    report = run({T: {"queues": 9}, retry: {"queues": 1}}, {"G": group(b, c)})
    stale = {f.topic: f for f in report.findings if f.code is Code.STALE_ALLOCATION}
    assert sorted(stale) == sorted([T, retry])
    main, on_retry = stale[T], stale[retry]
    assert main.consumers == ("b", "c")
    assert "a consumer list with one more client, sorting just before b" in main.message
    assert "3 queues held by nobody (broker-a:0..2)" in main.message
    holes = {f.topic: f for f in report.findings if f.code is Code.UNCONSUMED_QUEUE}
    assert holes[T].caused_by == main.id
    # the retry topic's one queue falls to b, which still thinks it is second of three
    assert holes[retry].caused_by == on_retry.id and labels(holes[retry]) == ["broker-a:0"]


def test_a_client_the_broker_does_not_list_holds_nothing() -> None:
    report = run(
        {T: {"queues": 4}},
        {"G": group(consumer("c1", T, assigned=[]), consumer("c2", T, assigned=q(0, 1, 2, 3)))},
    )
    stale = only(report, Code.STALE_ALLOCATION)
    assert stale.consumers == ("c1", "c2")
    assert "c1, c2 hold what AVG gives them as if the group were [c2] alone" in stale.message
    assert "the heartbeat of c1 has not reached the broker" in stale.message


def test_a_route_without_a_new_broker() -> None:
    # broker-b joined the route; c1 still allocates over broker-a only
    report = run(
        {T: TWO_BROKERS},
        {"G": group(consumer("c1", T, assigned=q(0, 1)), consumer("c2", T, assigned=ALL8[4:]))},
    )
    stale = only(report, Code.STALE_ALLOCATION)
    assert stale.consumers == ("c1",)
    assert "a route of TopicA without broker-b (its 4 queues)" in stale.message
    assert "a route not refreshed" in stale.message and "name server" in stale.hint


def test_a_stopped_broker_still_in_the_clients_routes_explains_the_retry_topic_too() -> None:
    # broker-b left the routes; both clients still allocate over the routes that had it,
    # their retry topic's too (one queue per broker there)
    retry = "%RETRY%G"
    topics = {T: route(("broker-a", 4, 4, 6)), retry: route(("broker-a", 1, 1, 6))}
    c1 = consumer("c1", T, retry, assigned=q(0, 1, 2, 3) + q(0, topic=retry))
    c2 = consumer(
        "c2",
        T,
        retry,
        assigned=q(0, 1, 2, 3, broker="broker-b") + q(0, broker="broker-b", topic=retry),
    )
    report = run(topics, {"G": group(c1, c2)})
    stale = {f.topic: f for f in report.findings if f.code is Code.STALE_ALLOCATION}
    assert set(stale) == {T, retry}
    assert "broker-b" in stale[retry].message
    vague = [f for f in report.findings if "re-run in a minute" in f.hint]
    assert vague == []


def test_a_route_with_a_broker_that_lost_read_permission() -> None:
    topics = {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 2))}
    report = run(
        topics,
        {"G": group(consumer("c1", T, assigned=ALL8[:4]), consumer("c2", T, assigned=ALL8[4:]))},
    )
    stale = only(report, Code.STALE_ALLOCATION)
    assert stale.consumers == ("c1", "c2")
    assert "in which broker-b had 4 readable queues (now none readable)" in stale.message


def test_clients_running_another_strategy_than_assumed() -> None:
    mqs = [MessageQueue(T, "broker-a", i) for i in range(6)]
    shares = allocate(AvgByCircle(), mqs, ["c1", "c2"])
    report = run(
        {T: {"queues": 6}},
        {
            "G": group(
                consumer("c1", T, assigned=refs(shares["c1"])),
                consumer("c2", T, assigned=refs(shares["c2"])),
                strategy={"name": "AVG"},
            )
        },
    )
    stale = only(report, Code.STALE_ALLOCATION)
    assert "hold what AVG_BY_CIRCLE gives, not AVG" in stale.message
    assert "explain with --strategy AVG_BY_CIRCLE" in stale.hint
    assert stale.severity is Severity.warning  # nothing doubled, nothing lost


def test_no_stale_allocation_when_nothing_explains_the_holdings() -> None:
    report = run(
        {T: {"queues": 8}},
        {"G": group(consumer("c1", T, assigned=q(0, 2, 5)), consumer("c2", T, assigned=q(1, 3)))},
    )
    assert "STALE_ALLOCATION" not in codes(report)
    mismatch = only(report, Code.ASSIGNMENT_MISMATCH)
    assert mismatch.caused_by is None and "re-run in a minute" in mismatch.hint


def test_no_stale_allocation_for_a_rolling_deploy() -> None:
    # each client holds its own strategy's share of the current inputs: STRATEGY_INCONSISTENT
    mqs = [MessageQueue(T, "broker-a", i) for i in range(6)]
    avg = allocate(Avg(), mqs, ["c1", "c2"])
    circle = allocate(AvgByCircle(), mqs, ["c1", "c2"])
    report = run(
        {T: {"queues": 6}},
        {
            "G": group(
                consumer("c1", T, assigned=refs(avg["c1"]), strategy="AVG"),
                consumer("c2", T, assigned=refs(circle["c2"]), strategy="AVG_BY_CIRCLE"),
            )
        },
    )
    assert "STALE_ALLOCATION" not in codes(report)
    inconsistent = only(report, Code.STRATEGY_INCONSISTENT)
    assert only(report, Code.UNCONSUMED_QUEUE).caused_by == inconsistent.id


def test_the_search_stays_within_its_budget() -> None:
    b = consumer("b", T, assigned=q(3, 4, 5))
    c = consumer("c", T, assigned=q(6, 7, 8))
    groups = {"G": group(b, c)}
    assert "STALE_ALLOCATION" in codes(run({T: {"queues": 9}}, groups))
    tight = DiagnoseOptions(stale_budget=2)  # alone for b and c only: no explanation
    assert "STALE_ALLOCATION" not in codes(run({T: {"queues": 9}}, groups, options=tight))


# -- the search, as a property --------------------------------------------------------------------


@st.composite
def stale_groups(draw: st.DrawFn) -> tuple[dict[str, Any], StrategySpec, str]:
    """A group where one client holds its share under an alternative the search covers
    (itself alone, the list without one other client, the route without a broker) and
    every other client holds its expected share."""
    strategy = draw(st.sampled_from([Avg(), AvgByCircle()]))
    per_broker = draw(st.integers(1, 12))
    brokers = ["broker-a", "broker-b"][: draw(st.integers(1, 2))]
    m = draw(st.integers(2, 6))
    cids = [f"10.0.0.{i}@{i}" for i in range(1, m + 1)]
    mq_all = [MessageQueue(T, b, i) for b in brokers for i in range(per_broker)]
    expected = allocate_sorted(strategy, mq_all, cids)
    stale = draw(st.sampled_from(cids))
    kind = draw(st.sampled_from(["alone", "without", "route"]))
    if kind == "alone":
        share = allocate_sorted(strategy, mq_all, [stale])[stale]
    elif kind == "without":
        other = draw(st.sampled_from([c for c in cids if c != stale]))
        share = allocate_sorted(strategy, mq_all, [c for c in cids if c != other])[stale]
    else:
        kept = [mq for mq in mq_all if mq.broker_name != brokers[-1]] or mq_all
        share = allocate_sorted(strategy, kept, cids)[stale]
    consumers = [consumer(c, T, assigned=refs(share if c == stale else expected[c])) for c in cids]
    topics = {T: route(*((b, per_broker, per_broker, 6) for b in brokers))}
    return {"topics": topics, "groups": {"G": group(*consumers)}}, strategy, stale


@settings(max_examples=150, deadline=None)
@given(stale_groups())
def test_every_explanation_is_exact_and_the_covered_alternatives_are_found(
    case: tuple[dict[str, Any], StrategySpec, str],
) -> None:
    doc, strategy, stale = case
    snap = snapshot(
        doc["topics"], {"G": {**doc["groups"]["G"], "strategy": {"name": strategy.name}}}
    )
    g = group_context(snap, snap.groups["G"], None, DiagnoseOptions())
    ctx = topic_context(g, T)
    held = {
        c.client_id: frozenset(a)
        for c, a in zip(g.consumers, ctx.actual, strict=True)
        if a is not None
    }
    expected = ctx.expected or {}
    found = search(ctx)
    explained = {c for s in found for c in s.clients}
    for s in found:
        queues_ = ctx.mq_all if s.view.mq_all is None else list(s.view.mq_all)
        shares = allocate_sorted(s.view.strategy, queues_, s.view.cid_all)
        for cid in s.clients:
            assert frozenset(shares.get(cid, ())) == held[cid], (s.view, cid)
            assert held[cid] != frozenset(expected.get(cid, ())), "explained a healthy client"
    if held[stale] != frozenset(expected.get(stale, ())):
        assert stale in explained
    else:
        assert not found
