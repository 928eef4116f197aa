"""Strategy parameters the wire does not carry, inferred from real Java clients.

A real 4.9.8 client reports its strategy only as ``allocateMessageQueueStrategy`` (a class
name): never the virtual node count of its hash ring, nor its CONFIG list, nor the rooms of
MACHINE_ROOM_NEARBY. Each test starts real push consumers spread over two JVMs, built with
parameters other than the defaults, waits until the group has settled, runs
``rmqlb explain -n ... -o json`` with no ``--strategy`` and checks: no ASSIGNMENT_MISMATCH,
the report names the inferred parameters, ``expected`` is exactly what each client's own
strategy allocates it, and ``actual`` exactly what it holds.

(The kit's brokers are named ``broker-a``/``broker-b``, without ``room@``: MACHINE_ROOM
allocates nothing there, whatever the rooms, so its rooms are inferred in the unit tests only;
the last test checks what rmqlb says of that cluster.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import Names
from realkit import (
    Kit,
    assert_actual_is_truth,
    assert_expected_is_truth,
    finding_codes,
    findings,
    lingering,
    qkey,
    report_topic,
    truth_held,
    without_activity,
)

RETRY = "%RETRY%"


def _inference(report: dict[str, Any], group: str) -> dict[str, Any]:
    (found,) = [g for g in report["groups"] if g["group"] == group]
    inference = found["inference"]
    assert inference is not None, found
    return dict(inference)


@pytest.mark.parametrize(("vnodes", "per_broker"), [(5, 8), (160, 32)])
def test_consistent_hash_virtual_nodes_are_inferred(
    kit: Kit, names: Names, vnodes: int, per_broker: int
) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=per_broker)
    spec = f"group={g};sub={t}:*;strategy=CONSISTENT_HASH;vnodes={vnodes}"
    one = kit.consumer(f"vn{vnodes}-1", f"{spec};instance=h1", f"{spec};instance=h2")
    two = kit.consumer(f"vn{vnodes}-2", f"{spec};instance=h3")
    states = kit.wait_steady(g, one, two, consumers=3, queues={t: 2 * per_broker})
    assert {s["strategyClass"] for s in states.values()} == {"AllocateMessageQueueConsistentHash"}

    report = kit.explain(g)

    assert "ASSIGNMENT_MISMATCH" not in finding_codes(report), report["findings"]
    inference = _inference(report, g)
    assert inference["status"] == "inferred"
    assert inference["parameter"] == "virtualNodeCnt"
    assert inference["clients"] == 3
    # Counts next to each other often give the very same shares: rmqlb names the smallest
    # of those and lists the others; the clients' own count is one of them.
    named = inference["value"]
    assert vnodes == named or vnodes in inference["alternatives"]
    assert named != 10
    assert inference["strategyOption"] == f"CONSISTENT_HASH:vnodes={named}"
    assert f"virtual nodes: {named}, inferred from what the 3 clients hold" in inference["note"]
    (group,) = [x for x in report["groups"] if x["group"] == g]
    assert group["strategy"] == f"CONSISTENT_HASH(vnodes={named})"
    for topic in (t, RETRY + g):
        assert_actual_is_truth(report, states, g, topic)
        assert_expected_is_truth(report, states, g, topic)
    # the premise: with the Java default the very same cluster looks broken
    stated = kit.explain(g, "--strategy", "CONSISTENT_HASH:vnodes=10")
    assert "ASSIGNMENT_MISMATCH" in finding_codes(stated)


#: Clients named by city: their ids differ only in non-ASCII characters.
CITIES = {"hz": "杭州", "bj": "北京", "sh": "上海"}


def _city_group(
    kit: Kit,
    group: str,
    topic: str,
    charset: str | Mapping[str, str],
    cities: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Three CONSISTENT_HASH clients named by city (``CITIES`` unless told), one JVM each
    with ``charset`` as its default (``file.encoding``; or each key's own); their settled
    states by client id. Their own state lines write ids in that charset too, so each JVM's
    one state is taken for its client."""
    spec = f"group={group};sub={topic}:*;strategy=CONSISTENT_HASH"
    places = CITIES if cities is None else cities
    own = dict.fromkeys(places, charset) if isinstance(charset, str) else dict(charset)
    prefix = "" if isinstance(charset, str) else "mixed-"
    jvms = {
        f"127.0.0.1@{city}": kit.consumer(
            f"{prefix}{own[key].lower()}-{key}",
            f"{spec};instance={city}",
            RMQ_CLIENT_JOPTS=f"-Xms16m -Xmx96m -Dfile.encoding={own[key]}",
        )
        for key, city in places.items()
    }

    def steady() -> dict[str, dict[str, Any]] | None:
        states = {}
        for cid, jvm in jvms.items():
            seen = list(kit.truth(group, jvm).values())
            view = seen[0].get("views", {}).get(topic) if len(seen) == 1 else None
            if not view or view.get("mqAll") != 16 or len(view.get("cidAll") or ()) != 3:
                return None
            held = {qkey(q) for q in seen[0]["held"] if q["topic"] == topic}
            if held != {qkey(q) for q in view["allocated"]}:
                return None
            states[cid] = seen[0]
        return states

    settled: dict[str, dict[str, Any]] = kit.wait_for(
        f"the {'/'.join(dict.fromkeys(own.values()))} clients of {group} to hold steady",
        steady,
        timeout=90,
    )
    return settled


def test_clients_hashing_in_us_ascii_are_inferred_and_their_idle_ones_explained(
    kit: Kit, names: Names
) -> None:
    """CONSISTENT_HASH clients 127.0.0.1@杭州, @北京 and @上海 on JVMs whose default charset
    is US-ASCII (Java 17 under a POSIX locale; here ``-Dfile.encoding=US-ASCII``) hash '?'
    for each non-ASCII character: all three ids take the same ring positions and the last
    in Java order holds every queue. rmqlb infers the charset (*actual* = *expected* = what
    each JVM holds) and IDLE_CONSUMER names the cause and the fix with the split UTF-8 gives;
    restarted with UTF-8, as advised, the clients hold exactly that split."""
    g, t = names.group, names.topic
    kit.topic(t, read=8)
    states = _city_group(kit, g, t, "US-ASCII")
    assert sorted(len([q for q in s["held"] if q["topic"] == t]) for s in states.values()) == [
        0, 0, 16
    ]  # fmt: skip

    report = kit.explain(g)

    (group,) = [x for x in report["groups"] if x["group"] == g]
    assert group["strategy"] == "CONSISTENT_HASH(vnodes=10, US-ASCII)"
    inference = _inference(report, g)
    assert inference["status"] == "inferred"
    assert inference["strategyOption"] == "CONSISTENT_HASH:vnodes=10:charset=US-ASCII"
    assert_actual_is_truth(report, states, g, t)
    assert_expected_is_truth(report, states, g, t)
    (idle,) = [f for f in findings(report, "IDLE_CONSUMER") if f["topic"] == t]
    assert sorted(idle["consumers"]) == ["127.0.0.1@上海", "127.0.0.1@北京"]
    assert (
        "127.0.0.1@上海, 127.0.0.1@北京, 127.0.0.1@杭州 all hash as '127.0.0.1@??', so the ring "
        "keeps the virtual nodes of 127.0.0.1@杭州 only"
    ) in idle["message"]
    fix = re.search(r"gives 3 consumers (\d+) to (\d+) queues$", idle["hint"])
    assert fix is not None and "-Dfile.encoding=UTF-8" in idle["hint"], idle["hint"]

    for key in CITIES:
        kit.halt(f"us-ascii-{key}")
    states = _city_group(kit, g, t, "UTF-8")
    sizes = sorted(len([q for q in s["held"] if q["topic"] == t]) for s in states.values())
    assert (sizes[0], sizes[-1]) == (int(fix[1]), int(fix[2]))
    fixed = kit.explain(g)
    (group,) = [x for x in fixed["groups"] if x["group"] == g]
    assert group["strategy"] == "CONSISTENT_HASH(vnodes=10)"
    assert "IDLE_CONSUMER" not in finding_codes(fixed, g)
    assert_actual_is_truth(fixed, states, g, t)


def test_clients_hashing_in_gbk_are_inferred(kit: Kit, names: Names) -> None:
    """The same city clients on JVMs whose default charset is GBK (a Chinese locale's): each
    id hashes as its own GBK bytes, no two alike, so the ring is not UTF-8's. rmqlb infers
    GBK from what they hold: *expected* is what each JVM's strategy gives it and *actual* what
    it holds; stated as UTF-8 (Java's default), the same group looks mis-assigned."""
    g, t = names.group, names.topic
    kit.topic(t, read=8)
    states = _city_group(kit, g, t, "GBK")

    report = kit.explain(g)

    inference = _inference(report, g)
    assert inference["status"] == "inferred"
    assert inference["strategyOption"] == "CONSISTENT_HASH:vnodes=10:charset=GBK"
    assert "under a GBK locale: their ids' GBK bytes" in inference["note"]
    (group,) = [x for x in report["groups"] if x["group"] == g]
    assert group["strategy"] == "CONSISTENT_HASH(vnodes=10, GBK)"
    assert "ASSIGNMENT_MISMATCH" not in finding_codes(report, g)
    assert_actual_is_truth(report, states, g, t)
    assert_expected_is_truth(report, states, g, t)
    # the premise: the clients' shares are not what a UTF-8 ring gives
    stated = kit.explain(g, "--strategy", "CONSISTENT_HASH:charset=UTF-8")
    assert "ASSIGNMENT_MISMATCH" in finding_codes(stated, g)


def test_clients_whose_jvms_hash_in_different_charsets_are_named(kit: Kit, names: Names) -> None:
    """127.0.0.1@杭州's JVM runs under GBK (a Java 17 under zh_CN.GBK), 北京's and 上海's
    under UTF-8: their rings differ, so queues are held twice and by nobody. rmqlb infers
    each client's charset from what it holds and STRATEGY_INCONSISTENT names the GBK one,
    the queues the two rings double and orphan, as the clients really hold them, and the
    JVM to start with -Dfile.encoding=UTF-8."""
    g, t = names.group, names.topic
    kit.topic(t, read=8)
    hz, bj, sh = (f"127.0.0.1@{city}" for city in CITIES.values())
    states = _city_group(kit, g, t, {"hz": "GBK", "bj": "UTF-8", "sh": "UTF-8"})
    held = truth_held(states, t)
    doubled = {q for q, holders in held.items() if len(holders) > 1}
    orphaned = {(t, b, i) for b in ("broker-a", "broker-b") for i in range(8)} - set(held)
    assert doubled | orphaned  # the premise: the two rings differ on these queues

    report = kit.explain(g)

    assert_actual_is_truth(report, states, g, t)
    inference = _inference(report, g)
    assert inference["status"] == "mixed", inference
    assert f"10 in GBK ({hz}" in inference["note"], inference["note"]
    (group,) = [x for x in report["groups"] if x["group"] == g]
    assert group["strategy"] == "CONSISTENT_HASH(vnodes=10)"
    (cause,) = [f for f in findings(report, "STRATEGY_INCONSISTENT") if f["topic"] == t]
    assert cause["consumers"] == [hz]
    assert {qkey({**q, "topic": t}) for q in cause["queues"]} == doubled | orphaned
    assert "hashing their rings in 2 charsets" in cause["message"]
    assert f"UTF-8 ({sh}, {bj}); GBK ({hz}); " in cause["message"], cause["message"]
    assert f"-Dfile.encoding=UTF-8 (the default from Java 18 on) ({hz})" in cause["hint"]
    for code in ("DUPLICATE_ASSIGNMENT", "UNCONSUMED_QUEUE"):
        caused = {f["causedBy"] for f in findings(report, code) if f["topic"] == t}
        assert caused <= {cause["id"]}, code
    assert sh in {c["clientId"] for c in report_topic(report, g, t)["consumers"]}


#: Cities whose names hold Latin-1 letters: ISO-8859-1 writes each as one byte of its own.
LATIN_CITIES = {"zh": "Zürich", "ma": "Malmö", "be": "Besançon"}


def test_clients_hashing_in_iso_8859_1_are_inferred(kit: Kit, names: Names) -> None:
    """Clients named by cities with Latin-1 letters (127.0.0.1@Zürich, …) on JVMs whose
    default charset is ISO-8859-1 (a Latin-1 locale's): each ü, ö or ç hashes as one byte,
    not UTF-8's two nor US-ASCII's '?'. rmqlb infers ISO-8859-1 from what they hold:
    *expected* is what each JVM's strategy gives it and *actual* what it holds; stated as
    UTF-8, the same group looks mis-assigned."""
    g, t = names.group, names.topic
    kit.topic(t, read=8)
    states = _city_group(kit, g, t, "ISO-8859-1", LATIN_CITIES)

    report = kit.explain(g)

    inference = _inference(report, g)
    assert inference["status"] == "inferred", inference
    assert inference["strategyOption"] == "CONSISTENT_HASH:vnodes=10:charset=ISO-8859-1"
    assert "their ids' ISO-8859-1 bytes" in inference["note"], inference["note"]
    (group,) = [x for x in report["groups"] if x["group"] == g]
    assert group["strategy"] == "CONSISTENT_HASH(vnodes=10, ISO-8859-1)"
    assert "ASSIGNMENT_MISMATCH" not in finding_codes(report, g)
    assert_actual_is_truth(report, states, g, t)
    assert_expected_is_truth(report, states, g, t)
    # the premise: the clients' shares are neither what a UTF-8 ring gives nor US-ASCII's
    for other in ("UTF-8", "US-ASCII"):
        stated = kit.explain(g, "--strategy", f"CONSISTENT_HASH:charset={other}")
        assert "ASSIGNMENT_MISMATCH" in finding_codes(stated, g), other


def _config_group(
    kit: Kit, names: Names, lists: dict[str, list[tuple[str, int]]]
) -> tuple[dict[str, dict[str, Any]], dict[str, set[tuple[str, str, int]]]]:
    """Clients of CONFIG lists ``lists`` (instance -> queues of ``names.topic``), one JVM
    each, settled on holding their lists: their states and the lists by client id."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*;strategy=CONFIG"
    jvms = [
        kit.consumer(
            f"config-{name}",
            f"{spec};instance={name};config={','.join(f'{b}:{i}' for b, i in queues)}",
        )
        for name, queues in lists.items()
    ]
    want = {f"127.0.0.1@{name}": {(t, b, i) for b, i in queues} for name, queues in lists.items()}

    def settled() -> dict[str, dict[str, Any]] | None:
        states = kit.truth(g, *jvms)
        if set(states) != set(want):
            return None
        for cid, state in states.items():
            if sorted(state["views"][t]["cidAll"] or []) != sorted(want):
                return None
            if {qkey(q) for q in state["held"]} != want[cid]:
                return None
        return states

    states = kit.wait_for(
        f"group {g} to hold its CONFIG lists",
        settled,
        lingering=lambda: lingering(kit.truth(g, *jvms)),
    )
    return states, want


def test_config_lists_are_inferred(kit: Kit, names: Names) -> None:
    """Each client's CONFIG list is what it holds; the queues in no list, and the retry
    queues (the lists name only the topic's), are really never consumed."""
    g, t = names.group, names.topic
    lists = {"a": [("broker-a", 0), ("broker-a", 1)], "b": [("broker-b", 0), ("broker-b", 3)]}
    states, want = _config_group(kit, names, lists)

    report = kit.explain(g)

    assert "ASSIGNMENT_MISMATCH" not in finding_codes(report), report["findings"]
    inference = _inference(report, g)
    assert inference["status"] == "inferred"
    assert inference["parameter"] == "config"
    inferred = {cid: {qkey(q) for q in qs} for cid, qs in inference["value"].items()}
    assert inferred == want
    assert_actual_is_truth(report, states, g, t)
    assert_expected_is_truth(report, states, g, t)
    listed = set().union(*want.values())
    unconsumed = {
        (f["topic"], q["brokerName"], q["queueId"])
        for f in findings(report, "UNCONSUMED_QUEUE")
        for q in f["queues"]
    }
    every = {(t, b, i) for b in ("broker-a", "broker-b") for i in range(4)}
    assert {q for q in unconsumed if q[0] == t} == every - listed
    assert {q for q in unconsumed if q[0] == RETRY + g} == {
        (RETRY + g, b, 0) for b in ("broker-a", "broker-b")
    }
    assert set(truth_held(states, RETRY + g)) == set()  # nobody holds a retry queue


def test_overlapping_config_lists_double_a_queue_for_good(kit: Kit, names: Names) -> None:
    """Two CONFIG lists that both name broker-a:2: both clients hold it, whatever rebalances
    come; the duplicate's fix says so instead of waiting for a rebalance."""
    g, t = names.group, names.topic
    lists = {"a": [("broker-a", 0), ("broker-a", 2)], "b": [("broker-a", 2), ("broker-a", 3)]}
    states, _ = _config_group(kit, names, lists)

    report = kit.explain(g)

    assert truth_held(states, t)[(t, "broker-a", 2)] == ["127.0.0.1@a", "127.0.0.1@b"]
    (dup,) = [f for f in findings(report, "DUPLICATE_ASSIGNMENT") if f["topic"] == t]
    assert [(q["brokerName"], q["queueId"]) for q in dup["queues"]] == [("broker-a", 2)]
    assert dup["hint"] == (
        "the holders' CONFIG lists overlap on broker-a:2, so this lasts: keep each queue in "
        "exactly one client's list"
    )


def test_machine_room_nearby_rooms_and_inner_strategy_are_inferred(kit: Kit, names: Names) -> None:
    """The kit's resolver: a broker's room is its name up to '@' (here the whole name), a
    client's its instance name up to '-'. No client shares a room with a broker, so each
    broker's queues are dealt to all clients by the inner strategy, AVG_BY_CIRCLE here."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*;strategy=MACHINE_ROOM_NEARBY;nearby=AVG_BY_CIRCLE"
    one = kit.consumer("nearby-1", f"{spec};instance=hz-1")
    two = kit.consumer("nearby-2", f"{spec};instance=sh-1")
    states = kit.wait_steady(g, one, two, consumers=2, queues={t: 8})

    report = kit.explain(g)

    assert "ASSIGNMENT_MISMATCH" not in finding_codes(report), report["findings"]
    inference = _inference(report, g)
    assert inference["status"] == "inferred"
    assert inference["value"]["inner"] == {"name": "AVG_BY_CIRCLE"}
    assert "a client's room is its instance name up to '-'" in inference["note"]
    for topic in (t, RETRY + g):
        assert_actual_is_truth(report, states, g, topic)
        assert_expected_is_truth(report, states, g, topic)


def test_dump_records_the_inferred_count(kit: Kit, names: Names, tmp_path: Path) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=8)
    spec = f"group={g};sub={t}:*;strategy=CONSISTENT_HASH;vnodes=5"
    one = kit.consumer("dump-1", f"{spec};instance=d1", f"{spec};instance=d2")
    two = kit.consumer("dump-2", f"{spec};instance=d3")
    kit.wait_steady(g, one, two, consumers=3, queues={t: 16})
    saved = tmp_path / "snap.json"

    kit.rmqlb("dump", "-n", kit.namesrv, g, "--out", str(saved), expect=(0,))
    live = kit.explain(g)
    from_dump = kit.rmqlb("explain", "--dump", str(saved), "-o", "json")

    doc = json.loads(saved.read_text(encoding="utf-8"))
    strategy = doc["groups"][g]["strategy"]
    assert strategy["name"] == "CONSISTENT_HASH"
    assert strategy["inferred"] is True
    assert strategy["virtualNodeCnt"] == _inference(live, g)["value"]
    # two captures a moment apart: the same report but for the clients' own activity times
    assert without_activity(json.loads(from_dump.stdout)["groups"]) == without_activity(
        live["groups"]
    )


def test_machine_room_over_brokers_without_rooms(kit: Kit, names: Names) -> None:
    """MACHINE_ROOM clients with ``idcs=broker-a`` on brokers not named <room>@<name> hold
    nothing (the clients' own state says so): rmqlb says every queue goes to nobody because
    no broker has a room, and that the fix is naming the brokers or another strategy."""
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*;strategy=MACHINE_ROOM;idcs=broker-a"
    jvm = kit.consumer("roomless", f"{spec};instance=r1", f"{spec};instance=r2")
    states = kit.wait_steady(g, jvm, consumers=2, queues={t: 8})
    assert truth_held(states, t) == {}

    report = kit.explain(g)

    assert_actual_is_truth(report, states, g, t)
    (unconsumed,) = [f for f in findings(report, "UNCONSUMED_QUEUE") if f["topic"] == t]
    assert len(unconsumed["queues"]) == 8
    assert "and no broker of " in unconsumed["message"]
    assert unconsumed["hint"].startswith("name the brokers <room>@<name> (brokerName)")
    (idle,) = [f for f in findings(report, "IDLE_CONSUMER") if f["topic"] == t]
    assert idle["hint"] == unconsumed["hint"]
