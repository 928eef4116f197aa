"""A client id on two connections of a group, against the real brokers.

A real client's closed connection that a late heartbeat registered again stays in the
broker's consumer list until the expiry scan drops it (120 s; on the suite's 5.1.4 brokers,
their ``channelExpiredTimeout`` of 90 s, which rmqlb reads and states): every client then allocates
over a cidAll that lists the id twice. Here the extra connection is made on purpose (one
heartbeat with a live client's id, then silence) so the case is exact and short: rmqlb must
compute what the real clients compute from that list, blame the idle consumer and the lost
queue on the duplicated id without proposing counts, and tell the causes apart as far as
the brokers' own lists allow: where the clients also heartbeat to broker-b (4.9.8 here),
broker-b lists the id once, so it is one client whose connection broker-a still lists; where
only broker-a knows the group (5.1.4 here), both causes are named. Once the connection
closes, the broker lists the id once and all of it is gone.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Names
from realkit import (
    EXPIRY_5_1_MS,
    Kit,
    assert_expected_is_truth,
    finding_codes,
    findings,
    qkey,
    report_actual,
    report_topic,
    truth_held,
)


@pytest.mark.versions("4.9.8", "5.1.4")
def test_an_id_listed_twice_is_named_with_both_causes_and_clears(kit: Kit, names: Names) -> None:
    """2 queues (broker-a), clients a and b; a's id on one more connection: cidAll
    [a, a, b] gives a queue 0, the second slot queue 1 (nobody) and b nothing."""
    g, t = names.group, names.topic
    kit.topic(t, read=2, brokers=("broker-a",))
    spec = f"group={g};sub={t}:*"
    jvm = kit.consumer("listed-twice", f"{spec};instance=a", f"{spec};instance=b")
    kit.wait_steady(g, jvm, consumers=2, queues={t: 2})
    a, b = "127.0.0.1@a", "127.0.0.1@b"

    def twice() -> dict[str, dict[str, Any]] | None:
        states = kit.truth(g, jvm)
        if set(states) != {a, b}:
            return None
        for state in states.values():
            view = state["views"][t]
            held = {qkey(q) for q in state["held"] if q["topic"] == t}
            if view.get("cidAll") != [a, a, b] or held != {
                qkey(q) for q in view.get("allocated", [])
            }:
                return None
        return states

    with kit.listed_again("broker-a", g, a, t):
        states = kit.wait_for(f"the clients of {g} to list {a} twice", twice)
        report = kit.explain(g)
        on_a, on_b = kit.listed_by("broker-a", g), kit.listed_by("broker-b", g)

    assert truth_held(states, t) == {(t, "broker-a", 0): [a]}  # the premise: b idle, 1 lost
    assert_expected_is_truth(report, states, g, t)
    actual = report_actual(report, g, t)
    assert not actual[(t, "broker-a", 1)]
    # The broker forwards a running-info request for a to one of a's connections: a's answer
    # then stands for both (once where broker-b's list shows a is one client); if it picks
    # the silent one, a's queues are unknown, and said so.
    if actual[(t, "broker-a", 0)]:
        assert actual[(t, "broker-a", 0)] == ([a] if on_b else [a, a])
    else:
        (unreachable,) = findings(report, "CLIENT_UNREACHABLE")
        assert a in unreachable["consumers"], unreachable

    (dup,) = findings(report, "DUPLICATE_CLIENT_ID")
    assert "used by 2 connections" in dup["message"]
    # how long broker-a keeps the connection listed: its config where it has the setting
    expiry = EXPIRY_5_1_MS // 1000 if kit.version == "5.1.4" else 120
    assert f"registers it again, for {expiry} s after that heartbeat" in dup["message"]
    assert sorted(on_a) == [a, a, b]
    if on_b:  # the clients heartbeat to broker-b too (4.9.8 here): it lists a once
        assert sorted(on_b) == [a, b]
        assert (
            "the brokers list it unequally (broker-a 2 times, broker-b 1 time) and a client "
            "heartbeats to every broker of its topics, so it is one client and broker-a still "
            "lists connections it closed"
        ) in dup["message"], dup["message"]
        assert dup["hint"].startswith(
            f"nothing to rename: broker-a drops the closed connections within {expiry + 10} s"
        )
        doubled = [f for f in findings(report, "DUPLICATE_ASSIGNMENT") if f["topic"] == t]
        assert doubled == [], doubled  # a's one answer stands for one holder, not two
        assert report_topic(report, g, t)["queues"][0]["status"] == "ok"
    else:  # only broker-a knows the group (5.1.4 here): nothing to compare with
        assert (
            "either 2 processes share it, or the broker still lists connections" in (dup["message"])
        )
        assert dup["hint"].startswith(
            f"capture again in {expiry + 10} s: if {a} is listed once by then"
        )
    assert f"idle because of it: {t}: {b}" in dup["message"]
    assert dup["consumers"] == [a, b]
    idle = [f for f in findings(report, "IDLE_CONSUMER") if f["topic"] == t]
    assert [(f["consumers"], f["causedBy"], f.get("proposals")) for f in idle] == [
        ([b], dup["id"], [])
    ], idle
    lost = [f for f in findings(report, "UNCONSUMED_QUEUE") if f["topic"] == t]
    assert [f["causedBy"] for f in lost] == [dup["id"]], lost

    kit.wait_steady(g, jvm, consumers=2, queues={t: 2})  # closed: the broker dropped it
    after = kit.explain(g)
    assert not finding_codes(after, g) & {"DUPLICATE_CLIENT_ID", "IDLE_CONSUMER"}, after["findings"]


@pytest.mark.versions("4.9.8")
def test_two_processes_sharing_one_client_id_consume_what_rmqlb_says(
    kit: Kit, names: Names
) -> None:
    """Two JVMs with one instanceName (what PID 1 in containers sharing an IP, or an explicit
    setInstanceName, makes): each broker lists the id twice, both processes take the slice
    of index 0 of [x, x] and the slice of index 1 goes to nobody. rmqlb names both processes
    as holders of the doubled slice and the messages waiting in the other."""
    g, t = names.group, names.topic
    kit.topic(t, read=4, brokers=("broker-a",))
    spec = f"group={g};sub={t}:*;instance=x"
    jvms = kit.consumer("shared-id-1", spec), kit.consumer("shared-id-2", spec)
    x = "127.0.0.1@x"

    def both_hold() -> list[list[tuple[str, str, int]]] | None:
        held = []
        for jvm in jvms:  # one truth file each: the two states share the client id
            state = kit.truth(g, jvm).get(x)
            if state is None or state["views"].get(t, {}).get("cidAll") != [x, x]:
                return None
            held.append(sorted(qkey(q) for q in state["held"] if q["topic"] == t))
        return held if held[0] and held[0] == held[1] else None

    held = kit.wait_for("both processes to allocate over [x, x]", both_hold)
    assert held[0] == [(t, "broker-a", 0), (t, "broker-a", 1)]  # the premise
    kit.wait_for(  # each process heartbeats to both brokers (the retry topic is on both)
        "both brokers to list x twice",
        lambda: all(kit.listed_by(b, g) == [x, x] for b in ("broker-a", "broker-b")) or None,
    )
    kit.produce(t, 40)  # 10 per queue
    report = kit.explain(g)

    actual = report_actual(report, g, t)
    assert actual == {
        (t, "broker-a", 0): [x, x],
        (t, "broker-a", 1): [x, x],
        (t, "broker-a", 2): [],
        (t, "broker-a", 3): [],
    }
    (dup,) = findings(report, "DUPLICATE_CLIENT_ID")
    assert "used by 2 connections" in dup["message"]
    assert "either 2 processes share it" in dup["message"]  # each broker lists it alike
    assert f"going to nobody: {t}: broker-a:2, broker-a:3" in dup["message"]
    (lost,) = [f for f in findings(report, "UNCONSUMED_QUEUE") if f["topic"] == t]
    assert "broker-a:2, broker-a:3; 20 messages wait there" in lost["message"]
    (doubled,) = [f for f in findings(report, "DUPLICATE_ASSIGNMENT") if f["topic"] == t]
    assert sorted(qkey({"topic": t, **q}) for q in doubled["queues"]) == held[0]
    assert lost["causedBy"] == doubled["causedBy"] == dup["id"]
