"""Pull consumers against real servers: real ``DefaultLitePullConsumer``s of the kit's
version (``java/LitePullRig.java``): two that subscribe a topic and one that assign()s a
queue of it in the same group; two that assign() one queue both, in a group nobody of
which subscribes; one whose application stops calling poll().

A lite pull consumer before 5.1.1 lists no queue in its running info, so what it holds is
unknown (not "nothing"); from 5.1.1 it lists them. One that assign()s its queues subscribes
nothing, yet counts in the cidAll the others allocate over: of the share AVG gives it, what
it does not assign() is never consumed. 5.0.0's lite pull consumer lists no queue either.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import Names
from realkit import (
    Kit,
    finding_codes,
    findings,
    lite_pull_states,
    report_actual,
    report_expected,
    report_topic,
)

#: Advice that deletes or resets.
DESTRUCTIVE = ("deleteSubGroup", "resetOffset", "deleteTopic")


@pytest.mark.versions("4.9.8", "5.0.0", "5.1.4")
def test_lite_pull_consumers_and_one_that_assigns_its_queue(kit: Kit, names: Names) -> None:
    g, t = names.group, names.topic
    kit.topic(t)  # 4 queues on each broker
    a1, s1, s2 = (f"127.0.0.1@{n}@STREAM" for n in ("lpa1", "lps1", "lps2"))
    jvm = kit.lite_pull(
        "litepull",
        f"group={g};topic={t};instance=lps1",
        f"group={g};topic={t};instance=lps2",
        f"group={g};topic={t};instance=lpa1;assign=broker-a:0",
    )
    # AVG over [a1, s1, s2] (Java order): a1 gets broker-a:0..2, of which it assign()ed one
    share = {
        a1: [("broker-a", 0), ("broker-a", 1), ("broker-a", 2)],
        s1: [("broker-a", 3), ("broker-b", 0), ("broker-b", 1)],
        s2: [("broker-b", 2), ("broker-b", 3)],
    }
    held = {a1: share[a1][:1], s1: share[s1], s2: share[s2]}

    def settled() -> bool:
        states = lite_pull_states(jvm)
        return {cid: s["held"] for cid, s in states.items()} == {
            cid: [(t, b, q) for b, q in queues] for cid, queues in held.items()
        }

    kit.wait_for("the lite pull consumers to hold their queues", settled, timeout=60)
    kit.produce(t, 80)  # 10 a queue: those of a1's share it did not assign() keep theirs

    def committed() -> dict[str, object] | None:
        report = kit.explain(g)
        rows = report_topic(report, g, t)["queues"]
        lags = {(r["brokerName"], r["queueId"]): r["lag"] for r in rows}
        unread = {("broker-a", 1), ("broker-a", 2)}
        done = all(lag == (10 if q in unread else 0) for q, lag in lags.items())
        return report if done else None

    report = kit.wait_for("the held queues' offsets to be committed", committed, timeout=60)

    expected = {(t, b, q): cid for cid, queues in share.items() for b, q in queues}
    assert report_expected(report, g, t) == expected
    (split,) = findings(report, "SUBSCRIPTION_INCONSISTENT")
    assert split["consumers"] == [a1]
    assert not any(word in f["hint"] for f in report["findings"] for word in DESTRUCTIVE)
    actual = report_actual(report, g, t)
    if kit.version != "5.1.4":  # a DefaultLitePullConsumer before 5.1.1: unreported
        assert finding_codes(report, g) == {"SUBSCRIPTION_INCONSISTENT", "QUEUES_UNREPORTED"}
        assert {r["status"] for r in report_topic(report, g, t)["queues"]} == {"unknown"}
        assert actual == {queue: [] for queue in expected}
        assert split["queues"] == []
        assert "are read only where" in split["message"]
        (unreported,) = findings(report, "QUEUES_UNREPORTED")
        assert unreported["consumers"] == [a1, s1, s2]
    else:  # 5.1.4: each lists what it holds
        holders = {(t, b, q): [cid] for cid, queues in held.items() for b, q in queues}
        assert actual == {queue: holders.get(queue, []) for queue in expected}
        assert finding_codes(report, g) == {"SUBSCRIPTION_INCONSISTENT", "UNCONSUMED_QUEUE"}
        (unconsumed,) = findings(report, "UNCONSUMED_QUEUE")
        lost = [{"brokerName": "broker-a", "queueId": q} for q in (1, 2)]
        assert unconsumed["queues"] == split["queues"] == lost
        assert "20 messages wait there" in unconsumed["message"]
        assert f"broker-a:0 is read by {a1} itself" in split["message"]


@pytest.mark.versions("4.9.8", "5.1.4")  # 5.0.0's lite pull consumer lists no queue either
def test_a_queue_two_lite_pull_consumers_assign_is_read_twice_and_named(
    kit: Kit, names: Names
) -> None:
    """Nobody of the group subscribes: two clients assign() broker-a:1 both (as two stream
    jobs sharing a group would). Each holds it by its own table in the JVM and reads all of
    its messages. The topic's table shows every queue of its route with nobody expected; on
    5.1.4, whose clients list their queues, who holds what, and DUPLICATE_ASSIGNMENT with
    the application's fix (no rebalance ends it); before 5.1.1 the holders are unknown."""
    g, t = names.group, names.topic
    kit.topic(t)  # 4 queues on each broker
    d1, d2 = (f"127.0.0.1@{n}@STREAM" for n in ("lpd1", "lpd2"))
    jvm = kit.lite_pull(
        "litepull-twice",
        f"group={g};topic={t};instance=lpd1;assign=broker-a:0,broker-a:1",
        f"group={g};topic={t};instance=lpd2;assign=broker-a:1",
    )
    held = {d1: [(t, "broker-a", 0), (t, "broker-a", 1)], d2: [(t, "broker-a", 1)]}
    kit.wait_for(
        "the lite pull consumers to hold their queues",
        lambda: {cid: s["held"] for cid, s in lite_pull_states(jvm).items()} == held,
        timeout=60,
    )
    kit.produce(t, 80)  # 10 a queue: broker-a:1's are read by both
    kit.wait_for(
        "both to read broker-a:1",
        lambda: {cid: s["polled"] for cid, s in lite_pull_states(jvm).items()} == {d1: 20, d2: 10},
        timeout=60,
    )
    reported = kit.version == "5.1.4"

    def committed() -> dict[str, object] | None:
        report = kit.explain(g)
        # before its first commit a group that reports no queue has no offset: no table yet
        tables = [x for y in report["groups"] if y["group"] == g for x in y["topics"]]
        rows = {(r["brokerName"], r["queueId"]): r for x in tables for r in x["queues"]}
        read = {("broker-a", 0), ("broker-a", 1)}
        done = len(rows) == 8 and all(r["lag"] == (0 if q in read else 10) for q, r in rows.items())
        return report if done else None

    report = kit.wait_for("the assigned queues' offsets to be committed", committed, timeout=60)
    rows = {(r["brokerName"], r["queueId"]): r for r in report_topic(report, g, t)["queues"]}
    assert all(r["expected"] is None for r in rows.values())
    assert not any(word in f["hint"] for f in report["findings"] for word in DESTRUCTIVE)
    (no_consumers,) = findings(report, "NO_CONSUMERS")
    if not reported:  # a DefaultLitePullConsumer before 5.1.1 lists no queue
        assert {r["status"] for r in rows.values()} == {"unknown"}
        assert finding_codes(report, g) == {"NO_CONSUMERS", "QUEUES_UNREPORTED"}
        assert no_consumers["severity"] == "info"
        return
    assert {q: (r["actual"], r["status"]) for q, r in rows.items()} == {
        ("broker-a", 0): ([d1], "ok"),
        ("broker-a", 1): ([d1, d2], "duplicate"),
        **{q: ([], "unconsumed") for q in rows if q[0] == "broker-b" or q[1] > 1},
    }
    assert finding_codes(report, g) == {"DUPLICATE_ASSIGNMENT", "NO_CONSUMERS"}
    (doubled,) = findings(report, "DUPLICATE_ASSIGNMENT")
    assert doubled["consumers"] == [d1, d2]
    assert doubled["queues"] == [{"brokerName": "broker-a", "queueId": 1}]
    assert doubled["severity"] == "error"
    assert doubled["hint"].startswith(f"{d1}, {d2} assign() broker-a:1 each, so this lasts")
    assert f"{d1} holds broker-a:0, broker-a:1; {d2} holds broker-a:1" in no_consumers["message"]
    assert "where 60 messages wait" in no_consumers["message"]


@pytest.mark.versions("5.1.4")  # the first of the kit's lite pull consumers to list queues
def test_a_lite_pull_consumer_whose_application_stops_polling_is_stalled(
    kit: Kit, names: Names
) -> None:
    """A stream job's application stops calling poll() (the rig's ``stall``) before 20
    messages reach the two queues it assign()s: the client pulls them into its cache and
    keeps them there. Once a minute has passed without poll() taking any, CONSUMER_STALLED
    names it, the queues and the messages waiting in its cache, with the pull consumer's fix
    (no rebalance moves what it assigns); nothing is advised deleted or reset."""
    g, t = names.group, names.topic
    kit.topic(t)  # 4 queues on each broker
    sa1 = "127.0.0.1@sa1@STREAM"
    jvm = kit.lite_pull(
        "litepull-stall", f"group={g};topic={t};instance=sa1;assign=broker-a:0,broker-b:1;stall=2"
    )
    held = [(t, "broker-a", 0), (t, "broker-b", 1)]
    kit.wait_for(
        "the lite pull consumer to hold its queues",
        lambda: lite_pull_states(jvm).get(sa1, {}).get("held") == held,
    )
    time.sleep(3)  # its application has stopped calling poll() (2 s after the start)
    kit.produce(t, 80)  # 10 a queue

    def stalled() -> dict[str, Any] | None:
        report = kit.explain(g)
        found = [f for f in findings(report, "CONSUMER_STALLED") if f["topic"] == t]
        return found[0] if found else None

    finding = kit.wait_for("CONSUMER_STALLED", stalled, timeout=120, every=5)

    assert lite_pull_states(jvm)[sa1]["polled"] == 0
    assert finding["consumers"] == [sa1]
    assert finding["queues"] == [
        {"brokerName": "broker-a", "queueId": 0},
        {"brokerName": "broker-b", "queueId": 1},
    ]
    assert (
        f"{sa1} has given its application nothing through poll() from 2 queues for up to "
    ) in finding["message"]
    assert (
        "although 20 pulled messages wait in its cache (broker-a:0, broker-b:1)"
        in (finding["message"])
    )
    assert "no rebalance moves the queues a pull consumer assign()s" in finding["message"]
    assert "poll() shows where it is stuck" in finding["hint"]
    assert not any(word in finding["hint"] for word in DESTRUCTIVE)
