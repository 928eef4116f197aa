"""5.x static topics: the logical queues a 5.x client consumes, from real route bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from diagnose_builders import codes, labels, only

from rmqlb.diagnose import Code, Severity, diagnose
from rmqlb.diagnose.context import readable_queues
from rmqlb.errors import InputError
from rmqlb.model import MessageQueue, QueueMapping, TopicRoute
from rmqlb.model.snapshot import logical_offsets
from rmqlb.remoting import bodies
from rmqlb.render.offsets import offsets_view
from rmqlb.snapshot import dumps_snapshot, load_snapshot, parse_snapshot
from rmqlb.whatif.running import Changes, simulate_running

DATA = Path(__file__).resolve().parents[2] / "data" / "static-topic-5.1.4"
L = "__syslo__global__"
C1, C2 = "10.0.0.21@s1", "10.0.0.22@s2"


def _route() -> TopicRoute:
    return bodies.decode_topic_route((DATA / "105-ST.body").read_bytes(), "ST")[0]


def test_a_real_static_route_gives_the_logical_queues_a_5x_client_lists() -> None:
    route = _route()
    assert route.logical_counts() == {L: 6}
    assert [q.label() for q in readable_queues(route)] == [f"{L}:{i}" for i in range(6)]
    hosts = {logical.queue_id: host for host, logical in route.logical_queue().items()}
    assert hosts == {
        0: ("broker-b", 0),
        1: ("broker-a", 0),
        2: ("broker-b", 1),
        3: ("broker-a", 1),
        4: ("broker-b", 2),
        5: ("broker-a", 2),
    }


def test_real_consume_stats_of_physical_queues_become_the_logical_queues_offsets() -> None:
    stats = bodies.decode_consume_stats((DATA / "208-SG-ST-broker-a.body").read_bytes())
    got = logical_offsets(stats.offsets, {"ST": _route()})
    assert sorted((o.queue.label(), o.broker_offset, o.consumer_offset) for o in got) == [
        (f"{L}:1", 10, 10),
        (f"{L}:3", 10, 10),
        (f"{L}:5", 10, 10),
    ]
    # a route without mappings leaves them on their queues
    assert logical_offsets(stats.offsets, {"ST": TopicRoute("ST", ())}) == list(stats.offsets)


def _mapped(**mappings: QueueMapping) -> TopicRoute:
    return TopicRoute("T", (), {b.replace("_", "-"): m for b, m in mappings.items()})


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        # every id up to the largest total, hosted now or not
        (_mapped(broker_a=QueueMapping("__global__", 1, 4, {0: 0})), {L: 4}),
        (
            _mapped(
                broker_a=QueueMapping("__global__", 2, 4, {0: 0}),
                broker_b=QueueMapping("__global__", 1, 8, {1: 0}),
            ),
            {L: 8},
        ),
        # no scope: no logical queue (Java skips the mapping)
        (_mapped(broker_a=QueueMapping(None, 1, 4, {0: 0})), {}),
        # an epoch below -1 is not counted (Java's comparison with its unchanged -1)
        (_mapped(broker_a=QueueMapping("__global__", -2, 4, {0: 0})), {}),
        # another scope: the prefix and the scope
        (
            _mapped(
                broker_a=QueueMapping("east", 1, 2, {0: 0}),
                broker_b=QueueMapping("__global__", 1, 3, {0: 0}),
            ),
            {"__syslo__east": 2, L: 3},
        ),
    ],
)
def test_logical_queues_follow_the_java_client(route: TopicRoute, expected: dict[str, int]) -> None:
    assert route.logical_counts() == expected
    spans = [q.broker_name for q in readable_queues(route)]
    assert sorted(set(spans)) == sorted(expected)  # readable_queues: Java order of names
    assert len(spans) == sum(expected.values())


def test_the_newest_epoch_hosts_a_logical_queue_and_ids_past_the_total_are_none() -> None:
    route = _mapped(
        broker_a=QueueMapping("__global__", 1, 4, {0: 0, 1: 1}),
        broker_b=QueueMapping("__global__", 2, 4, {1: 0, 9: 1}),
    )
    assert route.logical_queue() == {
        ("broker-a", 0): MessageQueue("T", L, 0),
        ("broker-b", 0): MessageQueue("T", L, 1),
    }


def _static_doc() -> dict[str, Any]:
    """Two 5.x clients (AVG) on the logical queues of ``ST``, 7 messages behind on :4."""
    doc: dict[str, Any] = json.loads((DATA / "snapshot.json").read_text(encoding="utf-8"))
    return doc


def test_a_healthy_5x_group_on_a_static_topic_has_no_finding_and_its_logical_lag() -> None:
    report = diagnose(parse_snapshot(_static_doc()))
    assert codes(report) == []
    rows = report.groups[0].topics[0].queues
    assert [(r.queue.label(), r.expected, r.actual, r.lag) for r in rows] == [
        (f"{L}:{i}", C1 if i < 3 else C2, (C1 if i < 3 else C2,), 7 if i == 4 else 0)
        for i in range(6)
    ]


def test_a_static_route_comes_back_from_a_snapshot_file() -> None:
    parsed = parse_snapshot(_static_doc())
    route = parsed.topics["ST"]
    assert route.queue_mappings["broker-b"] == QueueMapping("__global__", 7, 6, {0: 0, 2: 1, 4: 2})
    assert parse_snapshot(json.loads(dumps_snapshot(parsed))) == parsed


def test_a_logical_queue_id_must_be_a_number() -> None:
    doc = _static_doc()
    doc["topics"]["ST"]["topicQueueMappingByBroker"]["broker-a"]["currIdMap"] = {"x": 1}
    with pytest.raises(Exception, match=r"currIdMap.x: logical queue id must be an integer"):
        parse_snapshot(doc)


def test_the_route_a_fake_namesrv_writes_reads_back_with_its_mappings() -> None:
    route = parse_snapshot(_static_doc()).topics["ST"]
    for standard in (True, False):
        body = bodies.encode_topic_route(route, {}, standard=standard, dialect=5)
        assert bodies.decode_topic_route(body, "ST")[0] == route


def _old(cid: str, *held: tuple[str, int]) -> dict[str, Any]:
    """A 4.9.8 client holding broker queues of ST."""
    return {
        "clientId": cid,
        "version": 409,
        "subscriptions": ["ST"],
        "assigned": [{"topic": "ST", "brokerName": b, "queueId": q} for b, q in held],
    }


def test_a_4x_client_in_a_5x_group_of_a_static_topic_is_named_with_what_it_doubles() -> None:
    """cidAll [s1, s2, o1]: AVG gives s2 the logical :2..3 and o1 :4..5, but o1 allocates
    the brokers' queues broker-b:1..2 (its AVG share of 6), which broker-b reads as the
    logical :1 (hosted on broker-a: refused, so the client drops it) and :2 (hosted there):
    o1 reads :2, with s2, and nobody reads :4 and :5."""
    o1 = "10.0.0.9@o1"
    doc = json.loads((DATA / "old-client.json").read_text(encoding="utf-8"))
    report = diagnose(parse_snapshot(doc))

    cause = only(report, Code.STATIC_TOPIC_OLD_CLIENT)
    assert cause.severity is Severity.error
    assert cause.message == (
        f"{o1} (V4_9_8) consumes the static topic ST by the brokers' own queues: a client "
        "before 5.0 knows nothing of its 6 logical queues (__syslo__global__:0..5), and a 5.x "
        "broker serves such a pull the logical queue of the same id, where it hosts that one, "
        "so it reads __syslo__global__:2; 1 logical queue read twice, by a 5.x client too "
        "(__syslo__global__:2); 2 logical queues read by nobody (__syslo__global__:4, "
        "__syslo__global__:5, 10 messages waiting)"
    )
    assert cause.hint.startswith(f"upgrade {o1} to a 5.x client")
    assert labels(cause) == [f"{L}:2", f"{L}:4", f"{L}:5"]
    under = {f.code.value for f in report.findings if f.caused_by == cause.id}
    assert under == {"DUPLICATE_ASSIGNMENT", "UNCONSUMED_QUEUE", "IMBALANCE"}
    assert codes(report) == [
        "STATIC_TOPIC_OLD_CLIENT",
        "UNCONSUMED_QUEUE",
        "DUPLICATE_ASSIGNMENT",
        "IMBALANCE",
    ]
    rows = report.groups[0].topics[0].queues
    assert [(r.queue.queue_id, r.expected, r.actual, r.status.value) for r in rows] == [
        (0, C1, (C1,), "ok"),
        (1, C1, (C1,), "ok"),
        (2, o1, (C2, o1), "duplicate"),  # expected by both: the column names one
        (3, C2, (C2,), "ok"),
        (4, None, (), "unconsumed"),
        (5, None, (), "unconsumed"),
    ]


def test_clients_all_older_than_5_0_read_only_the_logical_queues_their_ids_reach() -> None:
    """No 5.x client: o1 allocates broker-a:0..2 and reads only :1 (broker-a hosts :1, :3,
    :5); o2 allocates broker-b:0..2 and reads :0 and :2; it also holds broker-b:1, which
    broker-b refuses. :3..5 wait for nobody."""
    o1, o2 = "10.0.0.8@o1", "10.0.0.9@o2"
    doc = _static_doc()
    doc["groups"]["G"]["consumers"] = [
        _old(o1, ("broker-a", 1)),
        _old(o2, ("broker-b", 0), ("broker-b", 1), ("broker-b", 2)),
    ]
    report = diagnose(parse_snapshot(doc))

    cause = only(report, Code.STATIC_TOPIC_OLD_CLIENT)
    assert cause.severity is Severity.error
    assert cause.message.endswith(
        f"they read: {o1} __syslo__global__:1; {o2} __syslo__global__:0, __syslo__global__:2; "
        "3 logical queues read by nobody (__syslo__global__:3..5, 7 messages waiting); the "
        "brokers refuse 1 queue they hold (broker-b:1: no logical queue of that id is hosted "
        "there)"
    )
    assert [f.code.value for f in report.findings if f.caused_by == cause.id] == [
        "UNCONSUMED_QUEUE",
        "ASSIGNMENT_MISMATCH",  # o2 holds broker-b:1 too
        "IMBALANCE",
    ]


def test_clients_the_brokers_balance_on_a_static_topic_are_given_broker_queues() -> None:
    """The brokers assign from the route without its mapping: AVG over the six broker
    queues, which the 5.x clients cannot read (they hold nothing), so no logical queue is
    read; the brokers' answers are what rmqlb expects them to hold (no BROKERS_DISAGREE)."""
    report = diagnose(load_snapshot(DATA / "broker-balanced.json"))

    cause = only(report, Code.STATIC_TOPIC_BROKER_BALANCED)
    assert cause.severity is Severity.error
    assert cause.message == (
        "broker-a, broker-b, balancing 2 clients of G, assign them the static topic ST by its "
        "broker queues (QueryAssignmentProcessor reads the route without its 6 logical "
        f"queues: {C1} broker-a:0..2; {C2} broker-b:0..2), and a 5.x client cannot compute an "
        "offset for a broker queue of a static topic: they hold nothing of ST; 6 logical "
        "queues read by nobody (__syslo__global__:0..5, 7 messages waiting)"
    )
    assert cause.hint.startswith(f"let {C1}, {C2} balance themselves (setClientRebalance(true)")
    assert codes(report) == [
        "STATIC_TOPIC_BROKER_BALANCED",
        "UNCONSUMED_QUEUE",
        "ASSIGNMENT_MISMATCH",
        "BROKER_REBALANCE",
    ]
    assert [f.caused_by for f in report.findings[1:3]] == [cause.id, cause.id]
    rows = report.groups[0].topics[0].queues
    assert {(r.expected, r.actual, r.status.value) for r in rows} == {(None, (), "unconsumed")}


def test_a_static_topic_popped_is_shown_by_the_brokers_queues_it_is_popped_from() -> None:
    """Served by POP (queue id -1: every queue of a broker), a static topic is popped from
    the brokers' own queues (seen on the 5.1.4 kit, consumed), so its rows are those, with
    the logical queues' offsets back on the broker queues hosting them (:4's 7 on
    broker-b:2), and nothing is unread or mismatched."""
    doc = _static_doc()
    every = [{"topic": "ST", "brokerName": b, "queueId": -1} for b in ("broker-a", "broker-b")]
    for c in doc["groups"]["G"]["consumers"]:
        del c["assigned"]
        c["popAssigned"] = every
        c["properties"] = {"clientRebalance": "false"}
    report = diagnose(parse_snapshot(doc))

    assert Code.STATIC_TOPIC_BROKER_BALANCED not in {f.code for f in report.findings}
    assert {f.severity for f in report.findings} == {Severity.info}
    rows = report.groups[0].topics[0].queues
    assert [(r.queue.label(), r.actual, r.lag) for r in rows] == [
        (f"{b}:{q}", (C1, C2), 7 if (b, q) == ("broker-b", 2) else 0)
        for b in ("broker-a", "broker-b")
        for q in range(3)
    ]


def test_rmqlb_offsets_names_the_readers_of_a_static_topics_queues_as_explain_does() -> None:
    """A 4.9.8 client's broker-b:2 is read as __syslo__global__:2: it holds that row with
    the 5.x client given it; popped, the rows are the brokers' queues, every popper on each."""
    view = offsets_view(load_snapshot(DATA / "old-client.json"), "G", topic="ST")
    assert [(r.queue.label(), r.holders) for r in view.rows] == [
        (f"{L}:0", (C1,)),
        (f"{L}:1", (C1,)),
        (f"{L}:2", (C2, "10.0.0.9@o1")),
        (f"{L}:3", (C2,)),
        (f"{L}:4", ()),
        (f"{L}:5", ()),
    ]
    doc = _static_doc()
    every = [{"topic": "ST", "brokerName": b, "queueId": -1} for b in ("broker-a", "broker-b")]
    for c in doc["groups"]["G"]["consumers"]:
        c["popAssigned"] = every
        del c["assigned"]
    popped = offsets_view(parse_snapshot(doc), "G", topic="ST")
    assert [(r.queue.label(), r.holders, r.lag) for r in popped.rows] == [
        (f"{b}:{q}", (C1, C2), 7 if (b, q) == ("broker-b", 2) else 0)
        for b in ("broker-a", "broker-b")
        for q in range(3)
    ]


def _clients(n: int) -> dict[str, Any]:
    """The static topic with ``n`` 5.x clients that did not say what they hold."""
    doc = _static_doc()
    doc["groups"]["G"]["consumers"] = [
        {"clientId": f"10.0.0.{20 + i}@s{i}", "subscriptions": ["ST"], "version": 476}
        for i in range(1, n + 1)
    ]
    doc["brokers"] = {"broker-a": {"cluster": "C1", "addrs": {"0": "10.0.0.11:10911"}}}
    return doc


def test_a_static_topics_queue_proposals_raise_its_logical_queues_and_never_lower_them() -> None:
    """updateStaticTopic -qn sets the logical total and refuses a lower one: 8 clients on 6
    logical queues are told 8 (each gets 1); 4 clients (2, 2, 1, 1) are told 8 too, never
    the 4 an ordinary topic could drop to."""
    idle = only(diagnose(parse_snapshot(_clients(8))), Code.IDLE_CONSUMER)
    assert idle.hint.endswith(
        "or raise the logical queues of static topic ST to 8 (mqadmin updateStaticTopic -c C1 "
        "-t ST -qn 8): with 8 queues 8 consumers get 1 queue each"
    )
    uneven = only(diagnose(parse_snapshot(_clients(4))), Code.IMBALANCE)
    assert uneven.hint.startswith(
        "raise the logical queues of static topic ST to 8 (mqadmin updateStaticTopic -c C1 -t "
        "ST -qn 8): with 8 queues 4 consumers get 2 queues each"
    )
    assert "lower" not in uneven.hint
    assert [p.queues for p in uneven.proposals if p.queues is not None] == [8]


def test_simulating_a_static_topic_steps_its_logical_queues() -> None:
    snap = parse_snapshot(_clients(2))
    (sim,) = simulate_running(snap, "dump", ["G"], None, Changes(queues=8))
    assert sim.start.brokers == (L,)
    assert sim.steps[-1].change == "8 logical queues (mqadmin updateStaticTopic -qn 8)"
    assert len(sim.steps[-1].queues) == 8
    with pytest.raises(InputError, match="never lowered to 4"):
        simulate_running(snap, "dump", ["G"], None, Changes(queues=4))


def test_a_static_topic_consumed_through_a_proxy_is_shown_by_the_brokers_queues() -> None:
    """gRPC clients: the Proxy pops the brokers' queues for them (on the 5.1.4 kit its client
    received 10 messages from each of broker-a:0..2 and broker-b:0..2), so explain and
    offsets both show those, holders unknown."""
    doc = _static_doc()
    doc["groups"]["G"]["consumers"] = [
        {"clientId": "pod-1@1@0@lmr3x9k2ab", "rebalance": "proxy", "subscriptions": ["ST"]}
    ]
    snap = parse_snapshot(doc)
    rows = diagnose(snap).groups[0].topics[0].queues
    view = offsets_view(snap, "G", topic="ST")
    physical = [f"{b}:{q}" for b in ("broker-a", "broker-b") for q in range(3)]
    assert [r.queue.label() for r in rows] == [r.queue.label() for r in view.rows] == physical
    assert [r.lag for r in view.rows] == [0, 0, 0, 0, 0, 7]
    assert {r.holders for r in view.rows} == {None}


def test_remoting_clients_through_a_proxy_read_a_static_topic_as_clients_before_5_0() -> None:
    """Push consumers connected through a 5.1 Proxy's remoting port get routes without the
    logical queues: they allocate the brokers' own queues, and the brokers serve the logical
    queue of the same id where they host it (seen on the 5.1.4 kit). What each holds is
    unknown (the Proxy relays no running-info request); expected says who reads what, and
    the logical queues nobody reads are unconsumed, under STATIC_TOPIC_OLD_CLIENT."""
    doc = _static_doc()
    for c in doc["groups"]["G"]["consumers"]:
        del c["assigned"]
        c["proxy"] = "127.0.0.1:8081"
        c["subscriptions"] = ["ST", "%RETRY%G"]
    report = diagnose(parse_snapshot(doc))

    rows = report.groups[0].topics[0].queues
    # AVG over the brokers' queues: s1 broker-a:0..2 (it hosts :1, :3, :5 on 0..2, so 0 and
    # 2 are refused), s2 broker-b:0..2 (:0, :2, :4 hosted there: 1 refused)
    assert [(r.queue.label(), r.expected, r.status.value) for r in rows] == [
        (f"{L}:0", C2, "unknown"),
        (f"{L}:1", C1, "unknown"),
        (f"{L}:2", C2, "unknown"),
        (f"{L}:3", None, "unconsumed"),
        (f"{L}:4", None, "unconsumed"),
        (f"{L}:5", None, "unconsumed"),
    ]
    cause = only(report, Code.STATIC_TOPIC_OLD_CLIENT)
    assert cause.consumers == (C1, C2)
    assert cause.message.startswith(
        f"{C1} (through the Proxy 127.0.0.1:8081), {C2} (through the Proxy 127.0.0.1:8081) "
        "consume the static topic ST by the brokers' own queues: the routes a Proxy's remoting "
        f"port answers carry none of its 6 logical queues ({L}:0..5)"
    )
    assert cause.hint.startswith(f"connect {C1}, {C2} to the NameServer instead of the Proxy")
    unread = only(report, Code.UNCONSUMED_QUEUE)
    assert unread.caused_by == cause.id
    assert "a client connected through a Proxy's remoting port allocates" in unread.message
