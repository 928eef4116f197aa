"""RocketMQ 5.x against real servers and real Java clients (the kit's 5.0.0 and 5.1.4).

Who balances a client changes in 5.x: a push consumer with ``clientRebalance=false`` asks a
broker (QUERY_ASSIGNMENT), POP groups share queues, gRPC clients pop through the Proxy. Each
test starts real clients, waits until they settle, runs rmqlb as a user would and compares
with what every client holds and what the brokers answer it (the kit's state lines: for a
broker-assigned client ``allocated`` is its broker's QUERY_ASSIGNMENT answer).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Names
from realkit import (
    CLUSTER,
    Jvm,
    Kit,
    assert_actual_is_truth,
    assert_expected_is_truth,
    finding_codes,
    findings,
    qkey,
    report_topic,
)

RETRY = "%RETRY%"
FIVE = ("5.0.0", "5.1.4")
#: ``MQVersion`` ordinals the clients report.
CLIENT_VERSION = {"4.9.8": 409, "5.0.0": 413, "5.1.4": 441}
#: Advice that deletes or resets: never for a group that is being consumed.
DESTRUCTIVE = ("deleteSubGroup", "resetOffset", "deleteTopic")


def _per_client(states: dict[str, dict[str, Any]], topic: str, key: str) -> dict[str, set[Any]]:
    """client id -> the queues of ``topic`` it holds (``held``) or is assigned (``allocated``)."""
    out = {}
    for cid, state in states.items():
        if key == "held":
            queues = state.get("held", [])
        else:
            queues = state.get("views", {}).get(topic, {}).get("allocated", [])
        out[cid] = {qkey(q) for q in queues if q["topic"] == topic}
    return out


def _dump(kit: Kit, group: str, tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / f"{group}.json"
    kit.rmqlb("dump", "-n", kit.namesrv, "-g", group, "--out", str(out), *extra, expect=(0,))
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


def _group(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(doc["groups"][name])


def _broker_answers(doc: dict[str, Any], group: str, topic: str) -> dict[str, set[Any]]:
    """client id -> the queues of ``topic`` the brokers answered it (every broker the same)."""
    per_broker: dict[str, dict[str, set[Any]]] = {}
    for broker, on in _group(doc, group)["onBrokers"].items():
        for a in on.get("assignments", []):
            if a["topic"] == topic:
                queues = {qkey(q) for q in a.get("queues") or []}
                per_broker.setdefault(broker, {})[a["clientId"]] = queues
    answers = list(per_broker.values())
    assert answers, f"no broker answered QUERY_ASSIGNMENT for {topic}"
    assert all(a == answers[0] for a in answers), per_broker
    return answers[0]


@pytest.mark.versions(*FIVE)
def test_mixed_5x_and_4_9_8_clients_are_exact(kit: Kit, names: Names) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*"
    new = kit.consumer("mixed-new", f"{spec};instance=n1", f"{spec};instance=n2")
    old = kit.consumer("mixed-old", f"{spec};instance=o1;clientVersion=4.9.8")
    kit.wait(g, new, old, consumers=3, queues={t: 8})
    states = kit.truth(g, new, old)

    report = kit.explain(g)

    assert report["_exit"] == 0, report["_stderr"]
    assert finding_codes(report, g) == set()
    for topic in (t, RETRY + g):
        assert_actual_is_truth(report, states, g, topic)
        assert_expected_is_truth(report, states, g, topic)
    versions = {c["clientId"]: c["version"] for c in report_topic(report, g, t)["consumers"]}
    mine = CLIENT_VERSION[kit.version]
    assert versions == {"127.0.0.1@n1": mine, "127.0.0.1@n2": mine, "127.0.0.1@o1": 409}


@pytest.mark.versions(*FIVE)
def test_broker_assigned_pull_group_is_exact(kit: Kit, names: Names, tmp_path: Path) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*;rebalance=broker"
    jvm = kit.consumer("bpull", f"{spec};instance=b1", f"{spec};instance=b2")
    kit.wait(g, jvm, consumers=2, queues={t: 8})
    states = kit.truth(g, jvm)

    report = kit.explain(g)
    doc = _dump(kit, g, tmp_path)

    assert report["_exit"] == 0, report["_stderr"]
    assert "BROKER_REBALANCE" in finding_codes(report, g)
    # pulling, the clients subscribe the POP retry topic too, which has no route until a POP
    # retry: explained, and never to be created by hand
    (pop_retry,) = [f for f in report["findings"] if f["code"] == "NO_ROUTE"]
    assert pop_retry["topic"] == f"{RETRY}{g}_{t}"
    assert f"the POP retry topic of {t}" in pop_retry["message"]
    assert pop_retry["hint"].startswith("nothing to fix"), pop_retry["hint"]
    for topic in (t, RETRY + g):
        assert_actual_is_truth(report, states, g, topic)
        assert_expected_is_truth(report, states, g, topic)
        # what the brokers answer rmqlb == what they answered the clients == what they hold
        held = _per_client(states, topic, "held")
        assert _broker_answers(doc, g, topic) == held == _per_client(states, topic, "allocated")


@pytest.mark.versions(*FIVE)
def test_lag_skew_of_a_group_the_brokers_balance_is_cleared_by_the_pop_it_advises(
    kit: Kit, names: Names
) -> None:
    """Two clients the brokers balance by PULL, one of one thread at 50 ms a message: its
    queues' lag is LAG_SKEW, whose fix offers POP. Run as written, the lag of 2,000 messages
    the slow client alone would need over a minute and a half for is gone within 30 s: the
    other client pops them."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*;rebalance=broker"
    jvm = kit.consumer(
        "skewpop", f"{spec};instance=fast", f"{spec};instance=slow;sleepms=50;threads=1"
    )
    kit.wait(g, jvm, consumers=2, queues={t: 8})
    kit.produce(t, 4000)

    def skewed() -> dict[str, Any] | None:
        report = kit.explain(g)
        found = [f for f in findings(report, "LAG_SKEW") if f["topic"] == t]
        return report if found and report["groups"][0]["lag"] >= 1000 else None

    report = kit.wait_for("the slow client's lag", skewed, every=1.0)
    (finding,) = [f for f in findings(report, "LAG_SKEW") if f["topic"] == t]
    assert finding["consumers"] == ["127.0.0.1@slow"]
    command = f"mqadmin setConsumeMode -c {CLUSTER} -t {t} -g {g} -m POP -q 0"
    assert (
        f"; or, since the brokers balance {g}, have them serve {t} by POP ({command})"
        in (finding["hint"])
    )
    kit.mqadmin(*command.split()[1:])
    started = time.monotonic()
    kit.wait_for(
        "the lag to go", lambda: kit.explain(g)["groups"][0]["lag"] == 0 or None, timeout=30
    )
    assert time.monotonic() - started < 30


@pytest.mark.versions(*FIVE)
def test_pop_group_with_share_1_is_exact(kit: Kit, names: Names, tmp_path: Path) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    kit.mqadmin("setConsumeMode", "-c", CLUSTER, "-t", t, "-g", g, "-m", "POP", "-q", "1")
    spec = f"group={g};sub={t}:*;rebalance=broker"
    jvm = kit.consumer("pop", *(f"{spec};instance=p{i}" for i in (1, 2, 3)))
    kit.wait(g, jvm, consumers=3, queues={t: 8})
    states = kit.truth(g, jvm)

    report = kit.explain(g)
    doc = _dump(kit, g, tmp_path)

    held = _per_client(states, t, "held")
    assert all(len(queues) in (5, 6) for queues in held.values())  # its share + the next's
    assert _broker_answers(doc, g, t) == held == _per_client(states, t, "allocated")
    assert "POP_MODE" in finding_codes(report, g)
    assert_actual_is_truth(report, states, g, t)  # every holder of every queue
    rows = {c["clientId"]: c for c in report_topic(report, g, t)["consumers"]}
    for cid, queues in held.items():
        assert (rows[cid]["expected"], rows[cid]["actual"]) == (len(queues), len(queues))
    for queue in report_topic(report, g, t)["queues"]:
        assert queue["status"] == "ok", queue
        assert queue["expected"] is None, queue  # two clients pop each: no one is the holder
    # rmqlb offsets names, per queue, the clients a broker lets pop it (their mqPopTable)
    done = kit.rmqlb("offsets", "-n", kit.namesrv, g, "-t", t, "-o", "json", expect=(0,))
    holders = {
        (t, q["brokerName"], q["queueId"]): set(q["holders"])
        for q in json.loads(done.stdout)["queues"]
    }
    assert holders == {q: {cid for cid, queues in held.items() if q in queues} for q in holders}, (
        held
    )
    assert all(len(cids) == 2 for cids in holders.values())


@pytest.mark.versions(*FIVE)
def test_a_4_9_8_client_pulling_in_a_pop_group_doubles_what_it_pulls(
    kit: Kit, names: Names
) -> None:
    """Mid-migration to POP: a 4.9.8 client cannot ask the broker, so it pulls its own AVG
    share, which the 5.x client the broker lets pop every queue pops too: each message of
    those queues can reach both. rmqlb names them as the mix's doing."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    kit.mqadmin("setConsumeMode", "-c", CLUSTER, "-t", t, "-g", g, "-m", "POP", "-q", "0")
    spec = f"group={g};sub={t}:*"
    popper = kit.consumer("popper", f"{spec};rebalance=broker;instance=p1")
    puller = kit.consumer("puller", f"{spec};instance=o1;clientVersion=4.9.8")

    def both_hold() -> dict[str, set[Any]] | None:
        held = _per_client(kit.truth(g, popper, puller), t, "held")
        pulled, popped = held.get("127.0.0.1@o1"), held.get("127.0.0.1@p1")
        return held if pulled and len(pulled) == 4 and popped else None

    held = kit.wait_for("the 4.9.8 client to pull its share while the other pops", both_hold)
    report = kit.explain(g)

    pulled = sorted(held["127.0.0.1@o1"])
    assert all(q[2] >= 0 for q in pulled) and all(q[2] == -1 for q in held["127.0.0.1@p1"])
    (mixed,) = [f for f in report["findings"] if f["code"] == "MIXED_REBALANCE"]
    assert mixed["severity"] == "warning", mixed
    assert "4 queues pulled by a client and popped by others" in mixed["message"]
    (dup,) = [f for f in report["findings"] if f["code"] == "DUPLICATE_ASSIGNMENT"]
    assert sorted(qkey({"topic": t, **q}) for q in dup["queues"]) == pulled
    assert dup["causedBy"] == mixed["id"]
    statuses = {r["status"] for r in report_topic(report, g, t)["queues"]}
    assert statuses == {"duplicate", "ok"}


@pytest.mark.versions(*FIVE)
def test_a_static_topic_is_explained_by_its_logical_queues_and_a_4_9_8_client_in_it_named(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    """``mqadmin updateStaticTopic``: 5.x clients consume the logical queues
    ``__syslo__global__:0..5`` the brokers map to their own. rmqlb allocates those, reads
    the brokers' offsets of the physical queues and gives them to the logical ones, as
    ``mqadmin consumerProgress`` lists them.

    Then a 4.9.8 client joins. It knows no logical queue: it allocates the brokers' own
    queues, and a 5.x broker reads the id of its pull as the logical queue of that id,
    served where it hosts that one (elsewhere refused, and the client drops the queue). The
    5.x clients allocate the logical queues over the same three ids. What rmqlb says is
    read twice, or by nobody, is the real clients' doing; stopping it clears every finding.
    """
    g, t = names.group, names.topic
    kit.mqadmin("updateStaticTopic", "-c", CLUSTER, "-t", t, "-qn", "6")
    spec = f"group={g};sub={t}:*"
    new = kit.consumer("static-new", f"{spec};instance=s1", f"{spec};instance=s2")
    kit.wait(g, new, consumers=2, queues={t: 6})
    kit.produce(t, 60)

    def consumed() -> dict[str, Any] | None:
        report = kit.explain(g)
        rows = report_topic(report, g, t)["queues"]
        done = sum(r["offsets"]["max"] for r in rows if r.get("offsets")) == 60
        return report if done and all(r.get("lag") == 0 for r in rows) else None

    report = kit.wait_for("the clients to consume the 60 messages", consumed)
    states = kit.truth(g, new)

    assert report["_exit"] == 0, report["_stderr"]
    assert finding_codes(report, g) == set()
    assert_actual_is_truth(report, states, g, t)
    assert_expected_is_truth(report, states, g, t)
    rows = report_topic(report, g, t)["queues"]
    ours = {
        (r["brokerName"], r["queueId"]): (r["offsets"]["max"], r["offsets"]["committed"])
        for r in rows
    }
    progress = {}
    for line in kit.mqadmin("consumerProgress", "-g", g).splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0] == t:
            progress[fields[1], int(fields[2])] = (int(fields[3]), int(fields[4]))
    assert list(ours) == [("__syslo__global__", i) for i in range(6)]
    assert ours == progress

    old = kit.consumer("static-old", f"{spec};instance=o1;clientVersion=4.9.8")
    mappings = _dump(kit, g, tmp_path)["topics"][t]["topicQueueMappingByBroker"]
    read_as = {
        (t, broker, int(lid)): (t, "__syslo__global__", int(lid))
        for broker, m in mappings.items()
        for lid in m["currIdMap"]
    }
    new_ids = ("127.0.0.1@s1", "127.0.0.1@s2")

    def mixed() -> tuple[dict[str, Any], dict[str, dict[str, Any]]] | None:
        states = kit.truth(g, new, old)
        held = _per_client(states, t, "held")
        allocated = _per_client(states, t, "allocated")
        o1 = allocated.get("127.0.0.1@o1")
        if not o1 or held.get("127.0.0.1@o1") != {q for q in o1 if q in read_as}:
            return None  # it holds what its brokers serve of its share of the broker queues
        if any(held.get(c) != allocated.get(c) or len(held[c]) != 2 for c in new_ids):
            return None  # the 5.x clients took their shares over three ids
        report = kit.explain(g)
        return (report, states) if "STATIC_TOPIC_OLD_CLIENT" in finding_codes(report, g) else None

    report, states = kit.wait_for("the 4.9.8 client to pull what its brokers serve", mixed)
    readers: dict[Any, set[str]] = {}
    for cid, queues in _per_client(states, t, "held").items():
        for q in queues:
            readers.setdefault(read_as.get(q, q), set()).add(cid)
    rows = report_topic(report, g, t)["queues"]
    actual = {qkey({"topic": t, **r}): set(r["actual"]) for r in rows if r["actual"]}
    assert actual == readers
    twice = {q for q, c in readers.items() if len(c) > 1}
    nobody = set(read_as.values()) - set(readers)
    assert {qkey({"topic": t, **r}) for r in rows if r["status"] == "unconsumed"} == nobody
    (cause,) = findings(report, "STATIC_TOPIC_OLD_CLIENT")
    assert cause["severity"] == "error", cause
    assert cause["message"].startswith("127.0.0.1@o1 (V4_9_8) consumes the static topic")
    assert {qkey({"topic": t, **q}) for q in cause["queues"]} == twice | nobody
    for code in ("DUPLICATE_ASSIGNMENT", "UNCONSUMED_QUEUE"):
        assert all(f["causedBy"] == cause["id"] for f in findings(report, code)), code
    assert bool(findings(report, "DUPLICATE_ASSIGNMENT")) == bool(twice)
    assert bool(findings(report, "UNCONSUMED_QUEUE")) == bool(nobody)
    for cid in new_ids:  # rmqlb's expected is the 5.x clients' own allocations (the column
        # names one of the clients expected to read a queue twice)
        mine = {qkey({"topic": t, **r}) for r in rows if r["expected"] == cid}
        assert mine - twice == _per_client(states, t, "allocated")[cid] - twice, cid

    kit.halt("static-old")  # the fix: stop it (or upgrade it)

    def settled() -> dict[str, Any] | None:
        report = kit.explain(g)
        return report if finding_codes(report, g) == set() else None

    kit.wait_for("the 5.x clients to share the logical queues", settled)


@pytest.mark.versions(*FIVE)
def test_clients_the_brokers_balance_on_a_static_topic_read_nothing_until_they_balance_themselves(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    """The brokers assign a static topic from a route without its mapping: broker queues,
    for which a 5.x client cannot compute an offset, so the two clients hold nothing and
    the 60 messages wait. rmqlb expects the brokers' answers and names the cause; the
    clients restarted balancing themselves, as advised, consume them all."""
    g, t = names.group, names.topic
    kit.mqadmin("updateStaticTopic", "-c", CLUSTER, "-t", t, "-qn", "6")
    spec = f"group={g};sub={t}:*"
    jvm = kit.consumer(
        "static-broker",
        f"{spec};rebalance=broker;instance=b1",
        f"{spec};rebalance=broker;instance=b2",
    )
    kit.produce(t, 60)

    def answered() -> dict[str, dict[str, Any]] | None:
        states = kit.truth(g, jvm)
        allocated = _per_client(states, t, "allocated")
        return states if len(allocated) == 2 and all(allocated.values()) else None

    states = kit.wait_for("the brokers to answer both clients", answered)
    report = kit.explain(g)
    doc = _dump(kit, g, tmp_path)

    allocated = _per_client(states, t, "allocated")
    assert all(q[1] != "__syslo__global__" for qs in allocated.values() for q in qs), allocated
    assert _per_client(states, t, "held") == {"127.0.0.1@b1": set(), "127.0.0.1@b2": set()}
    assert _broker_answers(doc, g, t) == allocated
    (cause,) = findings(report, "STATIC_TOPIC_BROKER_BALANCED")
    assert cause["severity"] == "error", cause
    assert "they hold nothing of" in cause["message"], cause["message"]
    assert cause["message"].endswith(
        "6 logical queues read by nobody (__syslo__global__:0..5, 60 messages waiting)"
    ), cause["message"]
    assert "BROKERS_DISAGREE" not in finding_codes(report, g)
    (unread,) = findings(report, "UNCONSUMED_QUEUE")
    assert unread["causedBy"] == cause["id"]

    kit.halt("static-broker")  # the fix: let them balance themselves
    kit.consumer("static-client", f"{spec};instance=b1", f"{spec};instance=b2")

    def consumed() -> dict[str, Any] | None:
        report = kit.explain(g)
        rows = report_topic(report, g, t)["queues"]
        done = sum(r["offsets"].get("committed") or 0 for r in rows if r.get("offsets")) == 60
        return report if done and finding_codes(report, g) <= {"NO_ROUTE"} else None

    kit.wait_for("the clients to consume the 60 messages", consumed)


@pytest.mark.versions(*FIVE)
def test_a_static_topic_popped_is_shown_by_the_broker_queues_it_is_popped_from(
    kit: Kit, names: Names
) -> None:
    """By POP the brokers serve a static topic from their own queues (queue id -1: all of a
    broker's), and the clients consume it: rmqlb's rows are those queues, each popped by
    both clients, with the logical queues' offsets given back to them."""
    g, t = names.group, names.topic
    kit.mqadmin("updateStaticTopic", "-c", CLUSTER, "-t", t, "-qn", "6")
    kit.mqadmin("setConsumeMode", "-c", CLUSTER, "-t", t, "-g", g, "-m", "POP", "-q", "0")
    spec = f"group={g};sub={t}:*;rebalance=broker"
    jvm = kit.consumer("static-pop", f"{spec};instance=p1", f"{spec};instance=p2")

    def settled() -> bool:  # their retry topic's queues (the brokers assign them too)
        states = kit.truth(g, jvm)
        held, allocated = (_per_client(states, RETRY + g, k) for k in ("held", "allocated"))
        return len(held) == 2 and held == allocated and sum(map(len, held.values())) == 2

    kit.wait_for("the clients to hold their retry queues", settled)
    kit.produce(t, 60)

    def consumed() -> dict[str, Any] | None:
        report = kit.explain(g)
        rows = report_topic(report, g, t)["queues"]
        done = sum(r["offsets"].get("committed") or 0 for r in rows if r.get("offsets")) == 60
        return report if done and all(r.get("lag") == 0 for r in rows) else None

    report = kit.wait_for("the clients to pop the 60 messages", consumed)
    held = _per_client(kit.truth(g, jvm), t, "held")

    assert held == {c: {(t, "broker-a", -1), (t, "broker-b", -1)} for c in held}, held
    rows = report_topic(report, g, t)["queues"]
    assert [(r["brokerName"], r["queueId"]) for r in rows] == [
        (b, q) for b in ("broker-a", "broker-b") for q in range(3)
    ]
    assert all(sorted(r["actual"]) == ["127.0.0.1@p1", "127.0.0.1@p2"] for r in rows), rows
    # (the test's long names make a POP retry topic too long for a 5.0 broker: named too)
    worse = {f["code"] for f in report["findings"] if f["severity"] != "info"}
    assert worse <= {"POP_RETRY_TOO_LONG"}, worse


@pytest.mark.versions(*FIVE)
def test_a_static_topic_read_by_a_grpc_client_is_shown_by_the_queues_the_proxy_pops(
    kit: Kit, names: Names
) -> None:
    """The Proxy pops a static topic's broker queues for its gRPC client (what the client
    received says which queue each message came from): rmqlb's rows, and each row's
    committed offset, are those queues' and what came from each."""
    g, t = names.group, names.topic
    kit.mqadmin("updateStaticTopic", "-c", CLUSTER, "-t", t, "-qn", "6")
    jvm = kit.consumer("static-grpc", f"group={g};sub={t}:*;grpc=true;instance=g1")
    kit.wait_for("the gRPC consumer to start", lambda: kit.truth(g, jvm))
    kit.produce(t, 60)

    def acked() -> dict[str, Any] | None:
        state = next(iter(kit.truth(g, jvm).values()), {})
        return state if state.get("ackedTotal", 0) >= 60 else None

    state = kit.wait_for("the gRPC consumer to ack the 60 messages", acked, timeout=90)
    received = {(q["brokerName"], q["queueId"]): q["count"] for q in state["received"]}

    def committed() -> dict[str, Any] | None:
        report = kit.explain(g)
        rows = report_topic(report, g, t)["queues"]
        done = sum(r["offsets"].get("committed") or 0 for r in rows if r.get("offsets")) == 60
        return report if done else None

    report = kit.wait_for("the Proxy to commit what it acked", committed)
    rows = report_topic(report, g, t)["queues"]
    assert {(r["brokerName"], r["queueId"]): r["offsets"]["committed"] for r in rows} == received
    assert not any(f["code"].startswith("STATIC_TOPIC") for f in report["findings"])


@pytest.mark.versions(*FIVE)
def test_brokers_without_load_balancing_are_named_and_their_advice_ends_the_duplicates(
    kit: Kit, names: Names
) -> None:
    """serverLoadBalancerEnable=false on both brokers (set at runtime, as an operator would):
    each broker answers every client the whole route, so both clients the brokers balance
    pull all 8 queues. rmqlb names the setting as the duplicates' cause, and the commands of
    its fix, run as printed, give each client its share again."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    addrs = [kit.broker_addr(b) for b in ("broker-a", "broker-b")]

    def balancing(value: str) -> None:
        for addr in addrs:
            kit.mqadmin(
                "updateBrokerConfig", "-b", addr, "-k", "serverLoadBalancerEnable", "-v", value
            )

    balancing("false")
    try:
        spec = f"group={g};sub={t}:*;rebalance=broker"
        jvm = kit.consumer("no-balancer", f"{spec};instance=n1", f"{spec};instance=n2")

        def held_by_both(count: int) -> dict[str, set[Any]] | None:
            held = _per_client(kit.truth(g, jvm), t, "held")
            return held if len(held) == 2 and all(len(q) == count for q in held.values()) else None

        # (a 5.0 broker learns the new topic's route within its 30 s poll of the NameServer)
        kit.wait_for("both clients to pull all 8 queues", lambda: held_by_both(8), timeout=90)
        report = kit.explain(g)
        (off,) = [f for f in findings(report, "SERVER_LOAD_BALANCER_OFF") if f["topic"] == t]
        assert off["severity"] == "error"
        assert off["message"].startswith(
            "broker-a, broker-b run with serverLoadBalancerEnable=false"
        ), off["message"]
        assert "8 queues held by several now (broker-a:0..3, broker-b:0..3" in off["message"]
        (dup,) = [f for f in findings(report, "DUPLICATE_ASSIGNMENT") if f["topic"] == t]
        assert dup["causedBy"] == off["id"]
        assert {r["status"] for r in report_topic(report, g, t)["queues"]} == {"duplicate"}

        commands = off["hint"].split(": ", 1)[1].split(" (")[0].split("; ")
        assert [c.split()[3] for c in commands] == addrs, commands
        for command in commands:
            kit.mqadmin(*shlex.split(command)[1:])
        kit.wait_for("each client to hold its share again", lambda: held_by_both(4))
        after = kit.explain(g)
        codes = {f["code"] for f in after["findings"] if f.get("topic") == t}
        assert not codes & {"SERVER_LOAD_BALANCER_OFF", "DUPLICATE_ASSIGNMENT"}, codes
    finally:
        balancing("true")  # a broker-wide setting: never left off for the next tests


@pytest.mark.versions(*FIVE)
def test_broker_assigned_consistent_hash_gets_the_unknown_strategy_finding(
    kit: Kit, names: Names
) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    kit.produce(t, 16)
    spec = f"group={g};sub={t}:*;rebalance=broker;strategy=CONSISTENT_HASH"
    jvm = kit.consumer("bhash", f"{spec};instance=h1", f"{spec};instance=h2")
    kit.wait_for("both clients to start", lambda: len(kit.truth(g, jvm)) == 2)
    states = kit.truth(g, jvm)
    assert all(not s.get("held") for s in states.values())  # the broker assigns nothing

    report = kit.explain(g)

    assert "BROKER_STRATEGY_UNKNOWN" in finding_codes(report, g)
    assert "STALE_ALLOCATION" not in finding_codes(report, g)
    assert report["_exit"] == 1  # an error: messages nobody will consume


def _grpc(kit: Kit, g: str, t: str) -> Jvm:
    """A slow gRPC consumer and messages for it: a group that is consumed (offsets move) and
    has lag. A new POP group starts each queue at its last message: the messages are sent
    once the consumer runs."""
    kit.topic(t, read=2)
    jvm = kit.consumer("grpc", f"group={g};sub={t}:*;grpc=true;instance=g1;batch=1;sleepms=1500")
    kit.wait_for("the gRPC consumer to start", lambda: kit.truth(g, jvm))
    kit.produce(t, 80)

    def acked() -> bool:
        return any(s.get("ackedTotal", 0) >= 2 for s in kit.truth(g, jvm).values())

    kit.wait_for("the gRPC consumer to ack messages", acked, timeout=90)
    return jvm


def _assert_in_use(report: dict[str, Any], g: str) -> None:
    assert "NO_CONSUMERS" not in finding_codes(report, g)
    for finding in report["findings"]:
        text = json.dumps(finding)
        assert not any(word in text for word in DESTRUCTIVE), finding
    group = next(x for x in report["groups"] if x["group"] == g)
    assert group["lag"] > 0


@pytest.mark.versions(*FIVE)
def test_grpc_group_gets_no_delete_advice_and_shows_its_lag(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    g, t = names.group, names.topic
    _grpc(kit, g, t)

    last: list[dict[str, Any]] = []

    def committed() -> dict[str, Any] | None:
        report = kit.explain(g)
        last[:] = [report]
        group = next(x for x in report["groups"] if x["group"] == g)
        return report if group["topics"] and group["lag"] > 0 else None

    try:
        report = kit.wait_for("the brokers to show the group's offsets", committed, timeout=60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last report: {json.dumps(last[-1])[:3000]}") from None
    _assert_in_use(report, g)
    assert "PROXY_CONSUMED" in finding_codes(report, g)
    # status, explain and dump succeed on this POP-only group (no %RETRY% topic), where
    # 5.0.0's mqadmin consumerProgress -g fails
    doc = _dump(kit, g, tmp_path)
    assert _group(doc, g)["offsets"]
    done = kit.rmqlb("status", "-n", kit.namesrv, g, "-o", "json")
    line = next(x for x in json.loads(done.stdout)["groups"] if x["group"] == g)
    assert line["lag"] > 0
    text = kit.rmqlb("explain", "-n", kit.namesrv, g)
    assert "Traceback" not in text.stderr and g in text.stdout
    # offsets: who pops each queue is unknown, not nobody ('-', before)
    done = kit.rmqlb("offsets", g, "-n", kit.namesrv, "-o", "json")
    rows = json.loads(done.stdout)["queues"]
    assert rows and all(r["holders"] is None for r in rows), rows


@pytest.mark.versions("5.1.4")
def test_grpc_consumers_are_listed_through_the_5_1_4_proxy(kit: Kit, names: Names) -> None:
    g, t = names.group, names.topic
    jvm = _grpc(kit, g, t)
    assert kit.proxy_remoting is not None

    report = kit.explain(g, "--proxy", kit.proxy_remoting)

    consumers = report_topic(report, g, t)["consumers"]
    assert [c["clientId"] for c in consumers] == ["127.0.0.1@g1"]
    assert consumers[0]["version"] == CLIENT_VERSION["5.1.4"]
    assert "PROXY_CLIENTS" in finding_codes(report, g)
    _assert_in_use(report, g)
    assert list(kit.truth(g, jvm)) == ["127.0.0.1@g1"]
    # offsets: every holder '?', and the totals say why
    args = ("offsets", g, "-n", kit.namesrv, "--proxy", kit.proxy_remoting, "-o", "plain")
    out = kit.rmqlb(*args, expect=(0,)).stdout
    assert out.rstrip().endswith(
        "holder ?: 1 gRPC client pops through a Proxy, which does not say who pops which queue"
    ), out


@pytest.mark.versions("5.1.4")
def test_a_remoting_client_pulling_what_grpc_clients_pop_is_named(kit: Kit, names: Names) -> None:
    """One group, a gRPC client through the Proxy and a remoting push consumer: the brokers
    list only the latter, which pulls every queue while the Proxy pops any queue for the
    former. rmqlb names the queues both reach; the gRPC client is no idle consumer."""
    g, t = names.group, names.topic
    kit.topic(t, read=2)
    grpc = kit.consumer("grpc", f"group={g};sub={t}:*;grpc=true;instance=g1")
    push = kit.consumer("push", f"group={g};sub={t}:*;instance=r1")
    kit.wait(g, push, consumers=1, queues={t: 4})
    kit.wait_for("the gRPC consumer to start", lambda: kit.truth(g, grpc))
    assert kit.proxy_remoting is not None

    report = kit.explain(g, "--proxy", kit.proxy_remoting)

    held = _per_client(kit.truth(g, push), t, "held")["127.0.0.1@r1"]
    assert len(held) == 4
    codes = finding_codes(report, g)
    assert "IDLE_CONSUMER" not in codes and "PROXY_CLIENTS" in codes
    (mixed,) = [f for f in report["findings"] if f["code"] == "MIXED_REBALANCE"]
    assert mixed["severity"] == "warning", mixed
    assert "4 queues pulled by a client and popped by others" in mixed["message"]
    assert {qkey({"topic": t, **q}) for q in mixed["queues"]} == held

    # each client up close: who balances it; the gRPC one's queues are unknown by nature
    def client(cid: str) -> dict[str, Any]:
        args = ("client", cid, "-n", kit.namesrv, "-g", g, "--proxy", kit.proxy_remoting or "")
        (view,) = json.loads(kit.rmqlb(*args, "-o", "json", expect=(0,)).stdout)["clients"]
        return dict(view)

    popper = client("127.0.0.1@g1")
    assert (popper["balancedBy"], popper["proxy"], popper["queues"]) == (
        "proxy",
        kit.proxy_remoting,
        None,
    )
    puller = client("127.0.0.1@r1")
    assert (puller["balancedBy"], puller["balanceInferred"]) == ("client", None)  # reported
    assert {qkey(q) for q in puller["queues"] if q["topic"] == t} == held


@pytest.mark.versions(*FIVE)
def test_a_grpc_consumer_that_never_acks_is_failing(kit: Kit, names: Names) -> None:
    """Its main topic's lag stays 0 (POP commits at the pop) while every message comes back
    through the group's POP retry topic: CONSUME_FAILING from that topic's offsets, and no
    NO_CONSUMERS on it (which advised removing it)."""
    g, t = names.group, names.topic
    kit.topic(t, read=2)
    spec = f"group={g};sub={t}:*;grpc=true;instance=g1;fail=true;invisible=10"
    jvm = kit.consumer("grpc", spec)
    kit.wait_for("the gRPC consumer to start", lambda: kit.truth(g, jvm))
    kit.produce(t, 20)
    pop_retry = f"{RETRY}{g}_{t}"

    def failing() -> dict[str, Any] | None:
        report = kit.explain(g)
        return report if findings(report, "CONSUME_FAILING") else None

    report = kit.wait_for("popped messages to come back", failing, timeout=120, every=2.0)

    (finding,) = findings(report, "CONSUME_FAILING")
    assert finding["topic"] == t and finding["severity"] == "warning"
    assert f"through {pop_retry}, its POP retry topic of {t}" in finding["message"]
    assert "at most 17 times (the group's retryMaxTimes + 1)" in finding["message"]
    assert "NO_CONSUMERS" not in finding_codes(report, g)
    for f in report["findings"]:
        assert not any(word in json.dumps(f) for word in DESTRUCTIVE), f
    (state,) = kit.truth(g, jvm).values()
    assert state["ackedTotal"] == 0, state  # every message it received is unacknowledged
    # the brokers' revive service brought them back, consuming its revive topic itself: its
    # group's offsets move and no broker lists a consumer, yet it is no Proxy's group
    revive = kit.explain("CID_RMQ_SYS_REVIVE_GROUP")
    assert finding_codes(revive, "CID_RMQ_SYS_REVIVE_GROUP") == {"SYSTEM_GROUP"}
    if kit.proxy_remoting is not None:  # 5.1.4: the Proxy names the client
        listed = kit.explain(g, "--proxy", kit.proxy_remoting)
        (finding,) = findings(listed, "CONSUME_FAILING")
        assert finding["consumers"] == ["127.0.0.1@g1"]


@pytest.mark.versions(*FIVE)
def test_a_failing_pop_push_client_is_told_where_its_failures_go(kit: Kit) -> None:
    """A 5.x push client the brokers let pop: what it fails comes back through the POP retry
    topic (counted there: a 5.0 broker's consume stats leave that topic out while the
    client is online, so it is read apart), not the group's retry topic, and no
    NO_CONSUMERS on that topic. (Short names: a 5.0 broker stores no message in a POP retry
    topic of more than 127 bytes.)"""
    g, t = "G-pop-failing", "T-pop-failing"
    kit.topic(t, read=2)
    kit.mqadmin("setConsumeMode", "-c", CLUSTER, "-t", t, "-g", g, "-m", "POP", "-q", "0")
    jvm = kit.consumer("pop", f"group={g};sub={t}:*;rebalance=broker;instance=p1;fail=true")
    kit.wait(g, jvm, consumers=1, queues={t: 4})
    kit.produce(t, 20)
    pop_retry = f"{RETRY}{g}_{t}"

    def came_back() -> tuple[dict[str, Any], dict[str, tuple[int, int]]] | None:
        """A report that counts returns, between two equal topicStatus reads of the POP
        retry topic (more come back while the client runs)."""

        def counted(report: dict[str, Any]) -> bool:
            found = findings(report, "CONSUME_FAILING")
            return bool(found) and "came back (one per return)" in found[0]["message"]

        if not counted(kit.explain(g)):
            return None
        try:  # mqadmin reads the route: the brokers register a new topic within 30 s
            before = _topic_status(kit, pop_retry)
            if set(before) != {"broker-a", "broker-b"}:  # both pop 2 queues, so both fail
                return None  # one broker's topic is not in the route yet (rmqlb asks each)
            report = kit.explain(g)
            return (report, before) if _topic_status(kit, pop_retry) == before else None
        except AssertionError:  # "No topic route info in name server" meanwhile
            return None

    report, shown = kit.wait_for("failed messages to come back", came_back, timeout=150, every=3.0)

    (finding,) = findings(report, "CONSUME_FAILING")
    total = sum(high for _, high in shown.values())
    per_broker = ", ".join(f"{b} {high:,}" for b, (_, high) in sorted(shown.items()))
    assert (
        f"{total:,} messages came back (one per return) through {pop_retry}" in (finding["message"])
    )
    assert f"its POP retry topic of {t} ({per_broker})" in finding["message"]
    assert finding["consumers"] == ["127.0.0.1@p1"]
    assert f"comes back through {pop_retry} after a growing delay" in finding["message"]
    assert f"never sent to %DLQ%{g}" in finding["message"]
    assert f"goes to {RETRY}{g} " not in finding["message"]
    assert "NO_CONSUMERS" not in finding_codes(report, g)


def _topic_status(kit: Kit, topic: str) -> dict[str, tuple[int, int]]:
    """broker -> (min, max offset) of ``topic``, its queues summed, as mqadmin topicStatus
    prints them (#Broker Name, #QID, #Min Offset, #Max Offset, #Last Updated)."""
    out: dict[str, tuple[int, int]] = {}
    for line in kit.mqadmin("topicStatus", "-t", topic).splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1].isdigit() and parts[2].isdigit() and parts[3].isdigit():
            low, high = out.get(parts[0], (0, 0))
            out[parts[0]] = (low + int(parts[2]), high + int(parts[3]))
    return out


@pytest.mark.versions(*FIVE)
def test_grpc_dead_letters_match_mqadmin(kit: Kit, names: Names, tmp_path: Path) -> None:
    """With retryMaxTimes 1 the Proxy forwards a message its gRPC client failed twice to
    %DLQ%G: DEAD_LETTERS says how many wait there, per broker, as mqadmin topicStatus.
    (A short test name: a 5.0 broker cannot store a message in a topic name of more than
    127 characters, the POP retry topic %RETRY%G_T included, so with the longest names of
    this suite the failed messages never came back.)"""
    g, t = names.group, names.topic
    kit.topic(t, read=2)
    kit.group_config(g, "-r", "1")
    spec = f"group={g};sub={t}:*;grpc=true;instance=g1;fail=true;invisible=10"
    jvm = kit.consumer("dead", spec)
    kit.wait_for("the gRPC consumer to start", lambda: kit.truth(g, jvm))
    kit.produce(t, 10)

    def dead_letters() -> dict[str, Any] | None:
        report = kit.explain(g)
        return report if findings(report, "DEAD_LETTERS") else None

    # about 30 s; more than 150 s when the brokers ran out of direct memory (BROKER_JOPTS)
    kit.wait_for("messages to reach the DLQ", dead_letters, timeout=200, every=3.0)
    kit.halt("dead")  # no more receives
    dlq = f"%DLQ%{g}"

    def letters_in(doc: dict[str, Any]) -> dict[str, Any]:
        return {
            broker: view["deadLetters"]
            for broker, view in _group(doc, g)["onBrokers"].items()
            if "deadLetters" in view
        }

    def still() -> tuple[dict[str, Any], dict[str, tuple[int, int]]] | None:
        """A dump between two equal topicStatus reads: messages popped before the halt can
        still be forwarded to the DLQ for a while (seen: 1 in the dump, 6 just after). Both
        name the same brokers: mqadmin reads the route, where a broker registers the DLQ it
        created within 30 s, and rmqlb asks each broker."""
        before = _topic_status(kit, dlq)
        doc = _dump(kit, g, tmp_path)
        if _topic_status(kit, dlq) != before or set(letters_in(doc)) != set(before):
            return None
        return doc, before

    doc, shown = kit.wait_for("the DLQ to stop growing", still, timeout=120, every=5.0)
    letters = letters_in(doc)
    assert letters, shown
    for broker, (low, high) in shown.items():
        assert (letters[broker]["messages"], letters[broker]["maxOffset"]) == (high - low, high)
    assert dlq not in doc["topics"]  # read for its counts, not kept as a topic
    done = kit.rmqlb("explain", "--dump", str(tmp_path / f"{g}.json"), "-o", "json")
    (finding,) = findings(json.loads(done.stdout), "DEAD_LETTERS")
    total = sum(high - low for low, high in shown.values())
    what = "message" if total == 1 else "messages"
    wait = "waits" if total == 1 else "wait"
    assert finding["message"].startswith(f"{total:,} {what} of {g} {wait} in its dead-letter")
    assert finding["severity"] == "warning"


@pytest.mark.versions(*FIVE)
def test_a_pop_retry_topic_name_too_long_for_5_0(kit: Kit) -> None:
    """A group and a topic of 61 characters each: their POP retry topic has 130. A 5.0
    broker stores no message there, so what a gRPC client fails never comes back
    (POP_RETRY_TOO_LONG); a 5.1.4 broker stores it, and the messages come back."""
    g, t = "G-" + "x" * 59, "T-" + "x" * 59
    kit.topic(t, read=2)
    spec = f"group={g};sub={t}:*;grpc=true;instance=g1;fail=true;invisible=10"
    jvm = kit.consumer("long", spec)
    kit.wait_for("the gRPC consumer to start", lambda: kit.truth(g, jvm))
    kit.produce(t, 8)

    def received() -> int:
        return sum(s.get("receivedTotal", 0) for s in kit.truth(g, jvm).values())

    kit.wait_for("the messages to be received", lambda: received() >= 8, timeout=60)
    if kit.version == "5.0.0":
        time.sleep(30)  # three invisible times: long enough for a failed message to come back
    else:  # they come back through the POP retry topic (later while the machine is busy)
        kit.wait_for("a failed message to come back", lambda: received() > 8, timeout=120)
    report = kit.explain(g)

    found = findings(report, "POP_RETRY_TOO_LONG")
    if kit.version == "5.0.0":
        (finding,) = found
        assert finding["severity"] == "error" and finding["topic"] == t
        assert f"%RETRY%{g}_{t} is 130 bytes long" in finding["message"]
        assert received() == 8  # each once: none came back
        assert report["_exit"] == 1
    else:
        assert not found
        assert received() > 8  # they came back through the POP retry topic


def _settled_through_proxy(
    kit: Kit, g: str, t: str, jvm: Jvm, ids: list[str], *, queues: int, held: int
) -> None:
    """Wait until clients ``ids`` of ``g`` (connected through the Proxy) all see ``queues``
    queues of ``t`` and themselves, and hold ``held`` of them together (``truth.py wait``
    also wants the retry topic's route, which such clients do not get at first)."""

    def settled() -> bool:
        states = kit.truth(g, jvm)
        views = [states.get(cid, {}).get("views", {}).get(t, {}) for cid in ids]
        ok = all(v.get("mqAll") == queues and v.get("cidAll") == ids for v in views)
        return ok and sum(len(s["held"]) for s in states.values()) == held

    kit.wait_for("the clients to settle through the Proxy", settled, timeout=60)


@pytest.mark.versions("5.1.4")
def test_remoting_clients_through_the_proxy_are_expected_and_the_idle_one_named(
    kit: Kit, names: Names
) -> None:
    """Push consumers whose NameServer address is the 5.1.4 Proxy's remoting port: the
    brokers list none of them, the Proxy lists them with its gRPC clients. They balance
    themselves over the Proxy's route and consumer list, so with ``--proxy`` rmqlb's
    expected queues are what they hold, and of three on two queues the idle one is named;
    what each holds stays unknown (a Proxy relays no running-info request), which is no
    CLIENT_UNREACHABLE. Their retry topic has no route until a message is first sent back
    through the Proxy (a client of a second group fails one): then it has."""
    g, t = names.group, names.topic
    failing = f"{g}_fails"
    proxy = kit.proxy_remoting
    assert proxy is not None
    kit.topic(t, read=1)
    specs = [f"group={g};sub={t}:*;instance=p{i}" for i in (1, 2, 3)]
    specs.append(f"group={failing};sub={t}:*;instance=f1;fail=true")
    jvm = kit.consumer("viaproxy", *specs, RMQ_NAMESRV_PORT=proxy.rpartition(":")[2])
    ids = [f"127.0.0.1@p{i}" for i in (1, 2, 3)]
    _settled_through_proxy(kit, g, t, jvm, ids, queues=2, held=2)
    assert kit.listed_by("broker-a", g) == kit.listed_by("broker-b", g) == []

    report = kit.explain(g, "--proxy", proxy)

    states = kit.truth(g, jvm)
    assert_expected_is_truth(report, states, g, t)
    held = _per_client(states, t, "held")
    (idle,) = [cid for cid, queues in held.items() if not queues]
    rows = {c["clientId"]: c for c in report_topic(report, g, t)["consumers"]}
    assert {cid: (c["expected"], c["actual"], c["balancedBy"]) for cid, c in rows.items()} == {
        cid: (len(queues), None, "client") for cid, queues in held.items()
    }
    codes = finding_codes(report, g)
    assert "CLIENT_UNREACHABLE" not in codes and "PROXY_CONSUMED" not in codes, codes
    (idle_finding,) = findings(report, "IDLE_CONSUMER")
    assert idle_finding["consumers"] == [idle], idle_finding
    (through,) = findings(report, "PROXY_CLIENTS")
    assert "3 of 3 consumers" in through["message"] and proxy in through["message"]
    (retry,) = findings(report, "NO_ROUTE")
    assert retry["topic"] == RETRY + g and retry["severity"] == "info"
    assert "its retry topic, which has no route yet" in retry["message"], retry

    kit.produce(t, 2)

    def sent_back() -> dict[str, Any] | None:
        again = kit.explain(failing, "--proxy", proxy)
        return None if "NO_ROUTE" in finding_codes(again, failing) else again

    kit.wait_for("the failed message to create the retry topic", sent_back, timeout=60)


@pytest.mark.versions("5.1.4")
def test_a_queue_nobody_holds_through_the_proxy_is_named_by_two_polls_a_minute_apart(
    kit: Kit, names: Names
) -> None:
    """Two push consumers connected through the Proxy, one on AVG and one on AVG_BY_CIRCLE:
    nobody takes broker-b:0 (and broker-a:1 is taken twice), which no single capture can
    show (the Proxy relays no running-info request). ``explain --watch`` compares its third
    poll with its first, 62 s before, while messages keep coming: the queue that stood still
    is QUEUE_STALLED, and it is the queue no client holds."""
    g, t = names.group, names.topic
    proxy = kit.proxy_remoting
    assert proxy is not None
    kit.topic(t, read=2)
    specs = [f"group={g};sub={t}:*;instance=p1", f"group={g};sub={t}:*;instance=p2"]
    specs[1] += ";strategy=AVG_BY_CIRCLE"
    jvm = kit.consumer("circle", *specs, RMQ_NAMESRV_PORT=proxy.rpartition(":")[2])
    _settled_through_proxy(kit, g, t, jvm, ["127.0.0.1@p1", "127.0.0.1@p2"], queues=4, held=4)
    held = set().union(*_per_client(kit.truth(g, jvm), t, "held").values())
    every = {(t, b, i) for b in ("broker-a", "broker-b") for i in (0, 1)}
    assert every - held == {(t, "broker-b", 0)}, held  # AVG + AVG_BY_CIRCLE leave it out
    kit.produce(t, 20)
    args = ["explain", "-n", kit.namesrv, "--proxy", proxy, g, "--watch", "31", "--count", "3"]
    watch = subprocess.Popen(
        [sys.executable, "-m", "rmqlb", *args, "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(40)  # between the first poll and the third
        kit.produce(t, 20)
        out, err = watch.communicate(timeout=90)
    finally:
        watch.kill()
    polls = [json.loads(line) for line in out.splitlines()]
    assert len(polls) == 3 and watch.returncode == 1, err
    assert "QUEUE_STALLED" not in finding_codes(polls[0], g)
    (stalled,) = [f for f in polls[2]["newFindings"] if f["code"] == "QUEUE_STALLED"]
    assert stalled["message"].startswith(f"1 queue of {t} (broker-b:0) did not advance"), stalled
    assert "gives broker-b:0 to 127.0.0.1@p2" in stalled["message"]  # AVG's holder of it


@pytest.mark.versions("5.1.4")
def test_remoting_clients_through_the_proxy_read_a_static_topic_as_clients_before_5_0(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    """A static topic of 6 logical queues read by two push consumers connected through the
    5.1.4 Proxy's remoting port. The Proxy's routes carry no logical queue: the clients
    allocate the brokers' own queues (3 each) and the brokers serve each pull the logical
    queue of the same id where they host it, refusing the others, as for a client before
    5.0. rmqlb's expected reader of each logical queue is the client that reads it, the
    logical queues nobody reads are ``unconsumed``, and STATIC_TOPIC_OLD_CLIENT names the
    clients with the fix (it had expected the 6 logical queues shared out, 3 each)."""
    g, t = names.group, names.topic
    proxy = kit.proxy_remoting
    assert proxy is not None
    kit.mqadmin("updateStaticTopic", "-c", CLUSTER, "-t", t, "-qn", "6")
    ids = ["127.0.0.1@q1", "127.0.0.1@q2"]
    specs = [f"group={g};sub={t}:*;instance={cid.split('@')[1]}" for cid in ids]
    jvm = kit.consumer("static-proxy", *specs, RMQ_NAMESRV_PORT=proxy.rpartition(":")[2])
    mappings = _dump(kit, g, tmp_path, "--proxy", proxy)["topics"][t]["topicQueueMappingByBroker"]
    read_as = {
        (t, broker, int(lid)): (t, "__syslo__global__", int(lid))
        for broker, m in mappings.items()
        for lid in m["currIdMap"]
    }

    def settled() -> dict[str, dict[str, Any]] | None:
        states = kit.truth(g, jvm)
        allocated = _per_client(states, t, "allocated")
        held = _per_client(states, t, "held")
        if set(allocated) != set(ids) or sum(map(len, allocated.values())) != 6:
            return None
        served = all(held.get(c) == {q for q in allocated[c] if q in read_as} for c in ids)
        return states if served else None

    states = kit.wait_for("the clients to hold what the brokers serve of their shares", settled)

    report = kit.explain(g, "--proxy", proxy)

    readers = {read_as[q]: cid for cid, qs in _per_client(states, t, "held").items() for q in qs}
    logical = set(read_as.values())
    nobody = logical - set(readers)
    assert nobody  # the premise: the brokers refuse some of what the clients allocate
    rows = report_topic(report, g, t)["queues"]
    assert {qkey({"topic": t, **r}): r["expected"] for r in rows} == {
        q: readers.get(q) for q in logical
    }
    assert {qkey({"topic": t, **r}) for r in rows if r["status"] == "unconsumed"} == nobody
    (cause,) = findings(report, "STATIC_TOPIC_OLD_CLIENT")
    assert cause["consumers"] == ids
    assert f"127.0.0.1@q1 (through the Proxy {proxy})" in cause["message"]
    assert (
        "the routes a Proxy's remoting port answers carry none of its 6 logical"
        in (cause["message"])
    )
    assert cause["hint"].startswith(f"connect {ids[0]}, {ids[1]} to the NameServer instead")
    (unread,) = findings(report, "UNCONSUMED_QUEUE")
    assert unread["causedBy"] == cause["id"]


@pytest.mark.versions("5.1.4")
def test_clients_through_the_proxy_and_through_the_nameserver_take_every_queue_each(
    kit: Kit, names: Names
) -> None:
    """Two push consumers connected to the NameServer and one through the 5.1.4 Proxy's
    remoting port, in one group, on a topic of 8 queues. The brokers list only the first
    two and the Proxy answers its client with itself alone, so each side shares out every
    queue: n1 and n2 hold 4 each, p1 all 8, and every queue is read twice. PROXY_LIST_SPLIT
    (an error) names p1 and the 8 queues; *expected* is what each list gives (rmqlb had
    shared the 8 queues over all three and blamed a STALE_ALLOCATION on n1 and n2)."""
    g, t = names.group, names.topic
    proxy = kit.proxy_remoting
    assert proxy is not None
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*"
    direct = kit.consumer("split-n", f"{spec};instance=n1", f"{spec};instance=n2")
    through = kit.consumer(
        "split-p", f"{spec};instance=p1", RMQ_NAMESRV_PORT=proxy.rpartition(":")[2]
    )
    every = {(t, b, i) for b in ("broker-a", "broker-b") for i in range(4)}
    n1, n2, p1 = "127.0.0.1@n1", "127.0.0.1@n2", "127.0.0.1@p1"

    def settled() -> dict[str, dict[str, Any]] | None:
        states = kit.truth(g, direct, through)
        held = _per_client(states, t, "held")
        if set(held) != {n1, n2, p1} or held[p1] != every or held[n1] | held[n2] != every:
            return None
        lists = {cid: s.get("views", {}).get(t, {}).get("cidAll") for cid, s in states.items()}
        return states if lists == {n1: [n1, n2], n2: [n1, n2], p1: [p1]} else None

    states = kit.wait_for("each side to hold every queue over its own list", settled)

    report = kit.explain(g, "--proxy", proxy)

    (split,) = [f for f in findings(report, "PROXY_LIST_SPLIT") if f["topic"] == t]
    assert split["severity"] == "error"
    assert split["consumers"] == [p1]
    assert {qkey({**q, "topic": t}) for q in split["queues"]} == every
    assert (
        f"{n1}, {n2} over the brokers' list (2 clients); {p1} over the Proxy {proxy}'s"
        in (split["message"])
    )
    assert "8 of 8 queues are allocated twice" in split["message"]
    assert "STALE_ALLOCATION" not in finding_codes(report, g)
    assert_actual_is_truth(report, {c: states[c] for c in (n1, n2)}, g, t)
    rows = {c["clientId"]: c["expected"] for c in report_topic(report, g, t)["consumers"]}
    assert rows == {cid: len(qs) for cid, qs in _per_client(states, t, "allocated").items()}


@pytest.mark.versions("5.1.4")
def test_a_static_topic_read_through_the_proxy_and_through_the_nameserver(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    """A static topic of 6 logical queues, one push consumer connected to the NameServer
    (q1) and one through the Proxy's remoting port (q2). Each sees only itself: q1 reads the
    6 logical queues, q2 allocates the 6 broker queues and reads the logical queues the
    brokers host at those ids. rmqlb's *expected* is exactly what each reads: PROXY_LIST_SPLIT
    names the logical queues read twice, STATIC_TOPIC_OLD_CLIENT under it."""
    g, t = names.group, names.topic
    proxy = kit.proxy_remoting
    assert proxy is not None
    kit.mqadmin("updateStaticTopic", "-c", CLUSTER, "-t", t, "-qn", "6")
    spec = f"group={g};sub={t}:*"
    direct = kit.consumer("static-split-n", f"{spec};instance=q1")
    through = kit.consumer(
        "static-split-p", f"{spec};instance=q2", RMQ_NAMESRV_PORT=proxy.rpartition(":")[2]
    )
    q1, q2 = "127.0.0.1@q1", "127.0.0.1@q2"
    logical = {(t, "__syslo__global__", i) for i in range(6)}

    def settled() -> dict[str, dict[str, Any]] | None:
        states = kit.truth(g, direct, through)
        held = _per_client(states, t, "held")
        allocated = _per_client(states, t, "allocated")
        if set(held) != {q1, q2} or held[q1] != logical or len(allocated[q2]) != 6:
            return None
        return states if len(held[q2]) == 3 else None  # the ids its brokers host

    states = kit.wait_for("each side to read over its own list", settled)

    report = kit.explain(g, "--proxy", proxy)

    doc = _dump(kit, g, tmp_path, "--proxy", proxy)
    hosts = doc["topics"][t]["topicQueueMappingByBroker"]
    held = _per_client(states, t, "held")[q2]
    # a broker reads each pull's queue id as the logical queue of that id, where it hosts it
    assert all(str(i) in hosts[b]["currIdMap"] for _, b, i in held)
    reads = {(t, "__syslo__global__", i) for _, _, i in held}
    (split,) = [f for f in findings(report, "PROXY_LIST_SPLIT") if f["topic"] == t]
    assert {qkey({**q, "topic": t}) for q in split["queues"]} == reads
    assert split["consumers"] == [q2]
    (old,) = findings(report, "STATIC_TOPIC_OLD_CLIENT")
    assert old["causedBy"] == split["id"]
    assert f"{len(reads)} logical queues read twice, by a 5.x client too" in old["message"]
    assert "read by nobody" not in old["message"]
    assert {r["expected"] for r in report_topic(report, g, t)["queues"]} == {q1}
