"""Strategy parameters the wire does not carry, inferred from what the clients hold.

Every case builds what real clients would hold (the bit-exact allocator with the *true*
parameters), reports only the strategy's class name as the wire does, and checks what the
diagnosis settles on, and what it says.
"""

from __future__ import annotations

import doctest
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rmqlb.allocate import allocate
from rmqlb.diagnose import (
    Code,
    InferenceStatus,
    QueueStatus,
    Report,
    StrategyInference,
    diagnose,
    record_inferred,
    report_to_json,
)
from rmqlb.diagnose import infer as infer_module
from rmqlb.model import MessageQueue, Snapshot
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    ConsistentHash,
    HashCharset,
    MachineRoom,
    MachineRoomNearby,
    Params,
    RoomPattern,
    StrategySpec,
    params_of,
    parse_strategy_spec,
)
from rmqlb.snapshot import parse_snapshot, redact, snapshot_to_json

CLASSES = {
    "CONSISTENT_HASH": "AllocateMessageQueueConsistentHash",
    "MACHINE_ROOM": "AllocateMessageQueueByMachineRoom",
    "MACHINE_ROOM_NEARBY": "AllocateMachineRoomNearby",
    "CONFIG": "AllocateMessageQueueByConfig",
    "AVG": "AllocateMessageQueueAveragely",
}
TOPIC = "TradeTopic"
RETRY = "%RETRY%G"
ID = st.builds(
    "10.{}.{}.{}@{}#{}".format,
    st.integers(0, 255),
    st.integers(0, 255),
    st.integers(1, 254),
    st.integers(1, 99999),
    st.integers(10**12, 10**15),
)
KIT_ROOMS = MachineRoomNearby(Avg(), RoomPattern(r"^([^@]+)"), RoomPattern(r"^(?:[^@]*@)?([^-]*)"))


def mq_all(brokers: Mapping[str, int], topic: str = TOPIC) -> list[MessageQueue]:
    return [MessageQueue(topic, b, i) for b, n in brokers.items() for i in range(n)]


def held_by(
    spec: StrategySpec, cids: Sequence[str], topics: Mapping[str, Mapping[str, int]]
) -> dict[str, list[MessageQueue]]:
    """What each client holds when every one runs ``spec`` (its own share of every topic)."""
    held: dict[str, list[MessageQueue]] = {cid: [] for cid in cids}
    for topic, brokers in topics.items():
        for cid, queues in allocate(spec, mq_all(brokers, topic), cids).items():
            held[cid] += [q for q in queues if q.topic == topic]
    return held


def wire_snapshot(
    name: str,
    cids: Sequence[str],
    topics: Mapping[str, Mapping[str, int]],
    held: Mapping[str, Sequence[MessageQueue]],
    *,
    unknown: Collection[str] = (),
    group: Mapping[str, Any] | None = None,
) -> Snapshot:
    """A snapshot as ``rmqlb dump`` captures it: each client reports its strategy's class
    (``allocateMessageQueueStrategy``) and, unless in ``unknown``, what it holds."""
    consumers = []
    for i, cid in enumerate(cids):
        c: dict[str, Any] = {
            "clientId": cid,
            "subscriptions": list(topics),
            "properties": {
                "allocateMessageQueueStrategy": "org.apache.rocketmq.client.consumer.rebalance."
                f"{CLASSES[name]}@{i + 0x1B6D3586:x}"
            },
        }
        if cid not in unknown:
            c["assigned"] = [
                {"topic": q.topic, "brokerName": q.broker_name, "queueId": q.queue_id}
                for q in held[cid]
            ]
        consumers.append(c)
    doc = {
        "format": "rmqlb.snapshot/1",
        "topics": {
            t: {
                "queueDatas": [
                    {"brokerName": b, "readQueueNums": n, "writeQueueNums": n}
                    for b, n in brokers.items()
                ]
            }
            for t, brokers in topics.items()
        },
        "groups": {"G": {"consumers": consumers, **(group or {})}},
    }
    return parse_snapshot(doc)


def codes(report: Report) -> list[str]:
    return [f.code.value for f in report.findings]


def rows_ok(report: Report) -> bool:
    return all(r.status is QueueStatus.ok for t in report.groups[0].topics for r in t.queues)


def held_twice_is_named(
    report: Report, value: str, doubled: MessageQueue, holder: str
) -> StrategyInference:
    """The inference of a group one of whose queues ``holder`` holds besides its owner:
    inferred, the note counting the queue no ``value`` gives, DUPLICATE_ASSIGNMENT naming it
    and ASSIGNMENT_MISMATCH only ``holder``, without an assumption."""
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    assert inference.note.endswith(
        f"; 1 queue is held in a way no {value} gives (twice, outside the route, or by a "
        "client the brokers do not list for its topic or that does not subscribe it): the "
        "findings name it"
    )
    (dup,) = [f for f in report.findings if f.code is Code.DUPLICATE_ASSIGNMENT]
    assert [q.label() for q in dup.queues] == [doubled.label()]
    (mismatch,) = [f for f in report.findings if f.code is Code.ASSIGNMENT_MISMATCH]
    assert mismatch.consumers == (holder,)  # the default 10 would name all three
    assert "assuming" not in mismatch.message
    return inference


THREE = ["10.0.3.21@21876#1038842201442170", "10.0.3.22@21877#1038842533990012"]
THREE.append("10.0.3.23@21902#1038843011275544")
TWO_BROKERS = {TOPIC: {"broker-a": 8, "broker-b": 8}, RETRY: {"broker-a": 1, "broker-b": 1}}


def five_vnodes(**kwargs: Any) -> Snapshot:
    """Three clients built with 5 virtual nodes (counts 6..9 happen to give the same shares)."""
    held = held_by(ConsistentHash(5), THREE, TWO_BROKERS)
    return wire_snapshot("CONSISTENT_HASH", THREE, TWO_BROKERS, held, **kwargs)


# ----- CONSISTENT_HASH ----------------------------------------------------------------------


def test_five_virtual_nodes_are_inferred_not_reported_as_mismatch() -> None:
    snap = five_vnodes()
    default = diagnose(snap, strategy=ConsistentHash(10))  # stated: never overridden
    assert "ASSIGNMENT_MISMATCH" in codes(default)
    assert default.groups[0].inference is None

    report = diagnose(snap)

    (group,) = report.groups
    assert group.strategy == "CONSISTENT_HASH(vnodes=5)"
    inference = group.inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    assert (inference.value, inference.default, inference.clients) == (5, 10, 3)
    assert inference.alternatives == (6, 7, 8, 9)  # two (or more) counts explain: the smallest
    assert inference.option == "CONSISTENT_HASH:vnodes=5"
    assert inference.note == (
        "virtual nodes: 5, inferred from what the 3 clients hold — the wire does not carry it; "
        "pass `--strategy CONSISTENT_HASH:vnodes=5` to fix it (6..9 would give the same "
        "queues: the smallest count is named)"
    )
    assert "ASSIGNMENT_MISMATCH" not in codes(report)
    assert rows_ok(report)
    assert [c.strategy for c in group.topics[0].consumers] == ["CONSISTENT_HASH"] * 3
    doc = report_to_json(report)["groups"][0]["inference"]
    assert doc["status"] == "inferred"
    assert doc["value"] == 5
    assert doc["alternatives"] == [6, 7, 8, 9]
    assert diagnose(snap).groups == report.groups  # deterministic


@settings(max_examples=25, deadline=None)
@given(
    st.lists(ID, min_size=2, max_size=4, unique=True),
    st.integers(1, 120),
    st.integers(4, 24),
    st.integers(1, 3),
)
def test_inference_finds_the_true_count(cids: list[str], vnodes: int, n: int, b: int) -> None:
    topics = {TOPIC: {f"broker-{chr(97 + i)}": n for i in range(b)}}
    truth = held_by(ConsistentHash(vnodes), cids, topics)
    report = diagnose(wire_snapshot("CONSISTENT_HASH", cids, topics, truth))

    inference = report.groups[0].inference
    assert inference is not None
    assert "ASSIGNMENT_MISMATCH" not in codes(report)
    assert rows_ok(report)
    if held_by(ConsistentHash(10), cids, topics) == truth:
        assert inference.status is InferenceStatus.confirmed
        assert inference.value == 10
        return
    assert inference.status is InferenceStatus.inferred
    found = inference.value
    assert held_by(ConsistentHash(found), cids, topics) == truth
    assert vnodes == found or vnodes in inference.alternatives
    for smaller in range(1, found):  # the smallest count that explains them is named
        assert held_by(ConsistentHash(smaller), cids, topics) != truth


def test_default_already_explains_nothing_is_inferred() -> None:
    held = held_by(ConsistentHash(10), THREE, TWO_BROKERS)
    report = diagnose(wire_snapshot("CONSISTENT_HASH", THREE, TWO_BROKERS, held))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.confirmed
    assert report.groups[0].strategy == "CONSISTENT_HASH(vnodes=10)"
    assert inference.note.startswith("virtual nodes: 10 (the Java default), confirmed by")
    assert inference.assumption == ""
    assert rows_ok(report)


def test_an_unknown_holding_stops_inference_and_findings_name_the_default() -> None:
    report = diagnose(five_vnodes(unknown=[THREE[1]]))
    (group,) = report.groups
    assert group.inference is not None
    assert group.inference.status is InferenceStatus.assumed
    assert group.strategy == "CONSISTENT_HASH(vnodes=10)"
    assert "1 of 3 clients did not report the queues it holds" in group.inference.note
    depends = [f for f in report.findings if f.code in (Code.ASSIGNMENT_MISMATCH, Code.IMBALANCE)]
    assert depends
    for f in depends:
        assert "assuming the Java default of 10 virtual nodes" in f.message
    unreachable = [f for f in report.findings if f.code is Code.CLIENT_UNREACHABLE]
    assert "assuming" not in unreachable[0].message  # it does not depend on the parameter


def test_no_count_explains_them_the_default_stays_and_the_closest_is_named() -> None:
    held = held_by(ConsistentHash(5), THREE, TWO_BROKERS)
    moved = held[THREE[1]].pop(0)  # a rebalance caught half way
    held[THREE[0]].append(moved)
    report = diagnose(wire_snapshot("CONSISTENT_HASH", THREE, TWO_BROKERS, held))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.unexplained
    assert report.groups[0].strategy == "CONSISTENT_HASH(vnodes=10)"
    assert (inference.closest, inference.differing) == (5, 1)
    assert inference.searched.startswith("1..1024, 2000")
    assert "the closest, 5, gets 1 queue wrong" in inference.note
    (mismatch,) = [f for f in report.findings if f.code is Code.ASSIGNMENT_MISMATCH]
    assert "the closest, 5, gets 1 queue wrong" in mismatch.message


CITY_IDS = ["10.0.0.1@杭州", "10.0.0.2@北京", "10.0.0.3@上海"]


def us_ascii_held(
    vnodes: int, cids: Sequence[str], topics: Mapping[str, Mapping[str, int]]
) -> dict[str, list[MessageQueue]]:
    """What clients hold whose JVMs hash in US-ASCII (Java 17 under a POSIX locale)."""
    return held_by(ConsistentHash(vnodes, charset=HashCharset.US_ASCII), cids, topics)


def test_clients_hashing_in_us_ascii_are_inferred_with_their_charset() -> None:
    """A JVM whose default charset is US-ASCII hashes each non-ASCII character of a client
    id as '?' (the real suite runs the kit's classes so): no count fits what such clients
    hold in UTF-8; in US-ASCII, the default 10 does, and expected uses it."""
    held = us_ascii_held(10, CITY_IDS, TWO_BROKERS)
    assert held != held_by(ConsistentHash(10), CITY_IDS, TWO_BROKERS)
    report = diagnose(wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held))
    group = report.groups[0]
    assert group.inference is not None
    assert group.inference.status is InferenceStatus.inferred
    assert group.strategy == "CONSISTENT_HASH(vnodes=10, US-ASCII)"
    assert group.inference.note == (
        "virtual nodes: 10, hashed in US-ASCII (the clients' JVMs' default charset, Java 17 and "
        "older under a POSIX locale: '?' for each character of their ids it lacks), inferred "
        "from what the 3 clients hold — the wire does not carry it; pass `--strategy "
        "CONSISTENT_HASH:vnodes=10:charset=US-ASCII` to fix it (9 and 11 would give the same "
        "queues: Java's default is named)"
    )
    assert not [f for f in report.findings if f.code is Code.ASSIGNMENT_MISMATCH]
    snap = wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held)
    doc = snapshot_to_json(record_inferred(snap))
    assert doc["groups"]["G"]["strategy"] == {
        "name": "CONSISTENT_HASH", "virtualNodeCnt": 10, "charset": "US-ASCII", "inferred": True
    }  # fmt: skip
    assert report_to_json(diagnose(parse_snapshot(doc))) == report_to_json(report)


@pytest.mark.parametrize("charset", [HashCharset.GBK, HashCharset.ISO_8859_1])
def test_clients_hashing_in_another_locale_charset_are_inferred_with_it(
    charset: HashCharset,
) -> None:
    """Under ``zh_CN.GBK`` a Java 17 JVM hashes GBK bytes, under a Latin-1 locale ISO-8859-1
    ones: tried after US-ASCII, each where it writes the ids otherwise."""
    cids = [f"{cid}é" for cid in CITY_IDS]  # Latin-1 writes é, not the CJK
    held = held_by(ConsistentHash(7, charset=charset), cids, TWO_BROKERS)
    report = diagnose(wire_snapshot("CONSISTENT_HASH", cids, TWO_BROKERS, held))
    group = report.groups[0]
    assert group.inference is not None
    assert group.inference.status is InferenceStatus.inferred
    assert group.strategy == f"CONSISTENT_HASH(vnodes=7, {charset})"
    assert f"under {charset.locale}: their ids' {charset} bytes, '?' for each" in (
        group.inference.note
    )
    assert rows_ok(report)


def test_a_charset_stated_without_a_count_is_searched_alone() -> None:
    """``{"name": "CONSISTENT_HASH", "charset": "US-ASCII"}`` (``--strategy
    CONSISTENT_HASH:charset=US-ASCII``): the count is searched with rings in that charset."""
    held = us_ascii_held(5, CITY_IDS, TWO_BROKERS)
    stated = {"strategy": {"name": "CONSISTENT_HASH", "charset": "US-ASCII"}}
    report = diagnose(wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held, group=stated))
    group = report.groups[0]
    assert group.inference is not None
    assert group.inference.status is InferenceStatus.inferred
    assert group.strategy == "CONSISTENT_HASH(vnodes=5, US-ASCII)"
    assert rows_ok(report)


def test_utf_8_stated_without_a_count_is_never_overridden_by_another_charset() -> None:
    """``--strategy CONSISTENT_HASH:charset=UTF-8`` states the charset Java 18+ hashes in:
    clients holding what a GBK ring gives are then not taken for GBK ones (as they are with
    no charset stated); no UTF-8 count fits, and their rows disagree with *expected*."""
    held = held_by(ConsistentHash(10, charset=HashCharset.GBK), CITY_IDS, TWO_BROKERS)
    assert held != held_by(ConsistentHash(10), CITY_IDS, TWO_BROKERS)
    unstated = diagnose(wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held))
    assert unstated.groups[0].strategy == "CONSISTENT_HASH(vnodes=10, GBK)"
    stated = {"strategy": {"name": "CONSISTENT_HASH", "charset": "UTF-8"}}
    snap = wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held, group=stated)
    report = diagnose(snap)
    group = report.groups[0]
    assert group.inference is not None
    assert group.inference.status is InferenceStatus.unexplained
    assert group.strategy == "CONSISTENT_HASH(vnodes=10)"
    assert [f for f in report.findings if f.code is Code.ASSIGNMENT_MISMATCH]
    spec = parse_strategy_spec("CONSISTENT_HASH:charset=UTF-8", absent=Params.UNKNOWN)
    cli = diagnose(wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held), strategy=spec)
    assert report_to_json(cli) == report_to_json(report)
    # the statement survives a snapshot's round trip
    assert snapshot_to_json(snap)["groups"]["G"]["strategy"] == stated["strategy"]


def test_where_no_count_fits_in_either_charset_the_note_says_so() -> None:
    """Non-ASCII ids, a queue moved as in a rebalance caught half way: no count fits in
    UTF-8 nor in US-ASCII, and the note names clients hashing in different charsets beside
    the other causes. ASCII ids never get that clause (both charsets hash them alike)."""
    for cids, clause in ((CITY_IDS, True), (THREE, False)):
        held = held_by(ConsistentHash(5), cids, TWO_BROKERS)
        held[cids[0]].append(held[cids[1]].pop(0))
        inference = (
            diagnose(wire_snapshot("CONSISTENT_HASH", cids, TWO_BROKERS, held)).groups[0].inference
        )
        assert inference is not None
        assert inference.status is InferenceStatus.unexplained
        assert inference.note.endswith(
            "or JVMs hashing '10.0.0.1@杭州' in different charsets (none of UTF-8, US-ASCII, GBK "
            "fits every client: Java 17 and older take the locale's)"
            if clause
            else "clients built with different counts"
        )


def test_queues_no_count_can_explain_do_not_stop_inference() -> None:
    """A queue held twice (a rebalance caught half way) is wrong whatever the count: every
    other queue still fits ring(5) exactly, so 5 is inferred, not the default 10, which
    would call most queues mismatched; the doubled queue stays a finding of its own."""
    held = held_by(ConsistentHash(5), THREE, TWO_BROKERS)
    doubled = held[THREE[1]][0]
    held[THREE[0]].append(doubled)  # the new owner took it, the old one still holds it
    report = diagnose(wire_snapshot("CONSISTENT_HASH", THREE, TWO_BROKERS, held))
    inference = held_twice_is_named(report, "count", doubled, THREE[0])
    assert report.groups[0].strategy == "CONSISTENT_HASH(vnodes=5)"
    assert inference.note.startswith(
        "virtual nodes: 5, inferred from what the 3 clients hold — the wire does not carry "
        "it; pass `--strategy CONSISTENT_HASH:vnodes=5` to fix it"
    )


def test_queues_wrong_whatever_the_count_alone_do_not_make_a_count() -> None:
    """Only queues held twice, and nothing else to go by: no count is told apart from
    another, so none is inferred or confirmed from them: the default stays, unexplained."""
    cids = THREE[:2]
    topics = {TOPIC: {"broker-a": 2}}
    both = [MessageQueue(TOPIC, "broker-a", i) for i in range(2)]
    report = diagnose(wire_snapshot("CONSISTENT_HASH", cids, topics, dict.fromkeys(cids, both)))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.unexplained


def test_stated_parameters_are_never_overridden() -> None:
    stated = {"strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 10}}
    report = diagnose(five_vnodes(group=stated))
    assert report.groups[0].inference is None
    assert report.groups[0].strategy == "CONSISTENT_HASH(vnodes=10)"
    assert "ASSIGNMENT_MISMATCH" in codes(report)


def test_a_strategy_named_without_parameters_may_be_inferred() -> None:
    unknown = ConsistentHash(params=Params.UNKNOWN)  # explain --strategy CONSISTENT_HASH
    report = diagnose(five_vnodes(), strategy=unknown)
    assert report.groups[0].strategy == "CONSISTENT_HASH(vnodes=5)"
    unstated = {"strategy": {"name": "CONSISTENT_HASH"}}  # a snapshot's group, no count
    assert diagnose(five_vnodes(group=unstated)).groups[0].strategy == "CONSISTENT_HASH(vnodes=5)"


def test_a_shared_client_id_keeps_the_count_from_being_inferred() -> None:
    cids = [THREE[0], THREE[0], THREE[1]]
    held = held_by(ConsistentHash(5), cids, TWO_BROKERS)
    report = diagnose(wire_snapshot("CONSISTENT_HASH", cids, TWO_BROKERS, held))
    inference = report.groups[0].inference
    assert inference is not None
    if inference.status is not InferenceStatus.confirmed:
        assert inference.status is InferenceStatus.assumed
        assert "shared by several processes" in inference.note


def test_rolling_deploy_own_shares_say_which_count_they_assume() -> None:
    topics = {TOPIC: {"broker-a": 8}}
    held = held_by(Avg(), THREE, topics)
    snap = wire_snapshot("AVG", THREE, topics, held)
    doc = snapshot_to_json(snap)
    doc["groups"]["G"]["consumers"][2]["strategy"] = {"name": "CONSISTENT_HASH"}  # as dumped
    report = diagnose(parse_snapshot(doc))
    (finding,) = [f for f in report.findings if f.code is Code.STRATEGY_INCONSISTENT]
    assert "assuming the Java default of 10 virtual nodes for CONSISTENT_HASH" in finding.message
    assert "AVG (" in finding.message and "CONSISTENT_HASH (" in finding.message


def _own_rings(counts: Mapping[str, int], topics: Mapping[str, Mapping[str, int]]) -> Any:
    """What each client holds when it runs its own count (``counts``), over all of them."""
    cids = list(counts)
    return {cid: held_by(ConsistentHash(n), cids, topics)[cid] for cid, n in counts.items()}


def test_clients_built_with_different_counts_each_get_their_own() -> None:
    """Two clients built with the default 10, one with 20 (a config rollout): no one count
    explains them, each client's own count does; STRATEGY_INCONSISTENT names the counts and
    the queues doubled and orphaned, and the holdings' findings are its consequences."""
    topics = {TOPIC: {"broker-a": 8, "broker-b": 8}}
    counts = {THREE[0]: 10, THREE[1]: 20, THREE[2]: 10}
    held = _own_rings(counts, topics)
    taken = [q for qs in held.values() for q in qs]
    doubled = {q for q in taken if taken.count(q) > 1}
    orphaned = set(mq_all(topics[TOPIC])) - set(taken)
    assert doubled and orphaned  # the premise: the two rings disagree here

    report = diagnose(wire_snapshot("CONSISTENT_HASH", THREE, topics, held))

    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.mixed
    assert report.groups[0].strategy == "CONSISTENT_HASH(vnodes=10)"
    values = dict(inference.client_values)
    assert values[THREE[0]] == values[THREE[2]] == 10
    odd = values[THREE[1]]
    assert held_by(ConsistentHash(odd), THREE, topics)[THREE[1]] == held[THREE[1]]
    assert inference.note.startswith(
        "virtual nodes: the clients run different counts, inferred from what each holds: 10 ("
    )
    assert report_to_json(report)["groups"][0]["inference"]["clientValues"] == values
    (cause,) = [f for f in report.findings if f.code is Code.STRATEGY_INCONSISTENT]
    assert cause.consumers == (THREE[1],)
    assert set(cause.queues) == doubled | orphaned
    assert f"{odd} ({THREE[1]})" in cause.message
    assert "run CONSISTENT_HASH with 2 virtual node counts" in cause.message
    assert "expected uses CONSISTENT_HASH(vnodes=10)" in cause.hint
    for f in report.findings:
        if f.code in (Code.DUPLICATE_ASSIGNMENT, Code.UNCONSUMED_QUEUE, Code.ASSIGNMENT_MISMATCH):
            assert f.caused_by == cause.id


def test_a_client_in_a_rebalance_keeps_the_count_of_the_others() -> None:
    """In a group of the default count with one client built with 20, another client has
    just released a queue: it is not given a count of its own but named as in a rebalance."""
    four = [*THREE, "10.0.3.24@21911#1038843377120003"]
    topics = {TOPIC: {"broker-a": 8, "broker-b": 8}}
    held = _own_rings({four[0]: 10, four[1]: 20, four[2]: 10, four[3]: 10}, topics)
    released = held[four[3]].pop()

    report = diagnose(wire_snapshot("CONSISTENT_HASH", four, topics, held))

    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.mixed
    values = dict(inference.client_values)
    assert values[four[3]] == values[four[0]] == values[four[2]] == 10 != values[four[1]]
    assert inference.note.split(" — ")[0].endswith(
        "1 client holds a part of its share under 10 or that share and more: a rebalance in "
        "progress"
    )
    (mismatch,) = [
        f for f in report.findings if f.code is Code.ASSIGNMENT_MISMATCH and f.topic == TOPIC
    ]
    assert four[3] in mismatch.consumers
    assert released in mismatch.queues


def test_a_queue_released_and_not_taken_yet_is_no_other_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first client released broker-a:3 in a rebalance and nobody took it yet. What it
    still holds happens to be its share of another ring, but a part of its share under the
    count the others run is a rebalance caught half way: no STRATEGY_INCONSISTENT."""
    topics = {TOPIC: {"broker-a": 4, "broker-b": 4}}
    held = held_by(ConsistentHash(10), THREE, topics)
    held[THREE[0]].remove(MessageQueue(TOPIC, "broker-a", 3))
    snap = wire_snapshot("CONSISTENT_HASH", THREE, topics, held)

    report = diagnose(snap)

    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.unexplained
    assert "STRATEGY_INCONSISTENT" not in codes(report)
    # the premise: without that rule, each client's holdings fit a count of its own
    monkeypatch.setattr(infer_module, "_apart", lambda _held, _most, odd: list(odd))
    mixed = diagnose(snap).groups[0].inference
    assert mixed is not None
    assert mixed.status is InferenceStatus.mixed


def _charset_rings(
    rings: Mapping[str, tuple[HashCharset, int]], topics: Mapping[str, Mapping[str, int]]
) -> dict[str, list[MessageQueue]]:
    """What each client holds when its JVM hashes in its own charset with its own count."""
    cids = list(rings)
    return {
        cid: held_by(ConsistentHash(n, charset=charset), cids, topics)[cid]
        for cid, (charset, n) in rings.items()
    }


def _doubled_and_orphaned(
    held: Mapping[str, Sequence[MessageQueue]], topics: Mapping[str, Mapping[str, int]]
) -> set[MessageQueue]:
    taken = [q for qs in held.values() for q in qs if q.topic == TOPIC]
    return {q for q in taken if taken.count(q) > 1} | (set(mq_all(topics[TOPIC])) - set(taken))


def test_a_client_whose_jvm_hashes_in_another_charset_is_named_with_it() -> None:
    """10.0.0.1@杭州's JVM hashes in GBK (a Java 17 under zh_CN.GBK), the others' in UTF-8:
    no one ring explains them, each client's own does. STRATEGY_INCONSISTENT names the
    charsets, who hashes in which and the queues doubled and orphaned; the fix names the
    JVM to start with -Dfile.encoding=UTF-8; the holdings' findings are its consequences
    (before, a rebalance in progress or different counts were blamed)."""
    utf8, gbk = HashCharset.UTF_8, HashCharset.GBK
    rings = {CITY_IDS[0]: (gbk, 10), CITY_IDS[1]: (utf8, 10), CITY_IDS[2]: (utf8, 10)}
    held = _charset_rings(rings, TWO_BROKERS)
    wrong = _doubled_and_orphaned(held, TWO_BROKERS)
    assert wrong  # the premise: the two rings disagree here

    report = diagnose(wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held))

    group = report.groups[0]
    inference = group.inference
    assert inference is not None
    assert inference.status is InferenceStatus.mixed
    assert group.strategy == "CONSISTENT_HASH(vnodes=10)"
    assert inference.note.startswith(
        "virtual nodes and charsets: the clients' JVMs hash their rings in different charsets "
        "(Java 17 and older take the locale's), inferred from what each holds: 10 in GBK "
        "(10.0.0.1@杭州; 9 and 11 give the same queues); 10 in UTF-8 (10.0.0.2@北京, "
        "10.0.0.3@上海) — the wire does not carry them; expected uses 10 in UTF-8"
    ), inference.note
    (cause,) = [
        f for f in report.findings if f.code is Code.STRATEGY_INCONSISTENT and f.topic == TOPIC
    ]
    assert cause.consumers == (CITY_IDS[0],)
    assert set(cause.queues) == wrong
    assert (
        "consumers of G run CONSISTENT_HASH, hashing their rings in 2 charsets (each JVM's "
        "default: Java 17 and older take the locale's), inferred from what each holds (a "
        "rebalance caught half way can look alike, but clears within 20 s): GBK "
        "(10.0.0.1@杭州); UTF-8 (10.0.0.2@北京, 10.0.0.3@上海); each client taking its own "
        "share of TradeTopic leaves"
    ) in cause.message
    assert cause.hint.startswith(
        "start the consumers of G that hash in another charset than UTF-8 with "
        "-Dfile.encoding=UTF-8 (the default from Java 18 on) (10.0.0.1@杭州); expected uses "
        "CONSISTENT_HASH(vnodes=10)"
    ), cause.hint
    effects = [f for f in report.findings if f.caused_by == cause.id]  # of TradeTopic
    assert {f.code for f in effects} >= {Code.ASSIGNMENT_MISMATCH}
    assert all(
        "the consumers' JVMs hash their rings in different charsets" in f.hint for f in effects
    )


def test_most_clients_hashing_in_gbk_set_expected_and_the_fix_offers_both_ways() -> None:
    """Two GBK JVMs and one in UTF-8 (a Java 21 host) with its own count: *expected* uses
    GBK, the count and charset of most; the fix names the one to start with
    -Dfile.encoding=GBK, or every GBK one with UTF-8, and the counts to align."""
    utf8, gbk = HashCharset.UTF_8, HashCharset.GBK
    rings = {CITY_IDS[0]: (gbk, 10), CITY_IDS[1]: (utf8, 20), CITY_IDS[2]: (gbk, 10)}
    held = _charset_rings(rings, TWO_BROKERS)
    assert _doubled_and_orphaned(held, TWO_BROKERS)

    report = diagnose(wire_snapshot("CONSISTENT_HASH", CITY_IDS, TWO_BROKERS, held))

    group = report.groups[0]
    assert group.inference is not None
    assert group.inference.status is InferenceStatus.mixed
    assert group.strategy == "CONSISTENT_HASH(vnodes=10, GBK)"
    assert dict(group.inference.client_values)[CITY_IDS[0]] == 10
    assert "charsets (Java 17 and older take the locale's) and run different counts" in (
        group.inference.note
    )
    (cause,) = [
        f for f in report.findings if f.code is Code.STRATEGY_INCONSISTENT and f.topic == TOPIC
    ]
    assert cause.consumers == (CITY_IDS[1],)
    odd = dict(group.inference.client_values)[CITY_IDS[1]]
    assert held_by(ConsistentHash(odd), CITY_IDS, TWO_BROKERS)[CITY_IDS[1]] == held[CITY_IDS[1]]
    assert "run CONSISTENT_HASH with 2 virtual node counts, hashing their rings in 2" in (
        cause.message
    )
    assert f"10 in GBK (10.0.0.1@杭州, 10.0.0.3@上海); {odd} in UTF-8 (10.0.0.2@北京)" in (
        cause.message
    )
    assert cause.hint.startswith(
        "start the consumers of G that hash in another charset than GBK with "
        "-Dfile.encoding=GBK (10.0.0.2@北京), or every one that does not hash in UTF-8 (Java "
        "18 and later's default) with -Dfile.encoding=UTF-8 (10.0.0.1@杭州, 10.0.0.3@上海), "
        "and give every consumer the same virtual node count; expected uses "
        "CONSISTENT_HASH(vnodes=10, GBK)"
    ), cause.hint


@settings(max_examples=40, deadline=None)
@given(
    st.lists(ID, min_size=2, max_size=4, unique=True),
    st.lists(st.integers(1, 40), min_size=4, max_size=4),
    st.integers(2, 12),
)
@example(  # four counts, none nested: more than a rollout leaves (found by a CI-like run)
    [
        "10.82.106.44@737#23271023236507",
        "10.24.226.183@1510#2092329246647",
        "10.22.0.1@93#1095209110564",
        "10.45.45.38@2210#3646436660336",
    ],
    [5, 16, 2, 10],
    5,
)
def test_each_client_count_found_gives_exactly_what_it_holds(
    cids: list[str], counts: list[int], n: int
) -> None:
    """Whatever counts the clients run: one count explains all of them, or each client is
    given a count whose ring share is exactly what it holds, or some client holds a part of
    another count's share or that share and more (taken for a rebalance caught half way), or
    they run more counts than :data:`~rmqlb.diagnose.infer.MAX_MIXED_COUNTS` (more than a
    rollout leaves: no explanation of that kind is given)."""
    topics = {TOPIC: {"broker-a": n, "broker-b": n}}
    own = dict(zip(cids, counts, strict=False))
    held = _own_rings(own, topics)
    report = diagnose(wire_snapshot("CONSISTENT_HASH", cids, topics, held))
    inference = report.groups[0].inference
    assert inference is not None
    if len(set(own.values())) == 1:
        assert inference.status in (InferenceStatus.inferred, InferenceStatus.confirmed)
    if inference.status is InferenceStatus.mixed:
        for cid, value in inference.client_values:  # exact, or nested: a rebalance under it
            share, mine = set(held_by(ConsistentHash(value), cids, topics)[cid]), set(held[cid])
            assert share == mine or share < mine or mine < share
    elif inference.status is InferenceStatus.unexplained:  # nested: taken for a rebalance
        if len(set(own.values())) > infer_module.MAX_MIXED_COUNTS:
            return
        shares = {v: held_by(ConsistentHash(v), cids, topics) for v in set(own.values())}
        assert any(
            set(held[c]) <= set(shares[v][c]) or set(held[c]) >= set(shares[v][c])
            for v in shares
            for c in cids
            if own[c] != v
        )
    else:
        assert inference.status in (InferenceStatus.inferred, InferenceStatus.confirmed)


def test_only_clients_that_balance_themselves_are_compared() -> None:
    """c3 is a 5.x client its broker balances (``clientRebalance=false``): what it holds is
    the broker's answer, not its ring share, so only c1 and c2 settle the count. Their rings
    still count c3 (the broker lists it)."""
    truth = held_by(ConsistentHash(5), THREE, TWO_BROKERS)
    snap = wire_snapshot("CONSISTENT_HASH", THREE, TWO_BROKERS, {**truth, THREE[2]: []})
    doc = snapshot_to_json(snap)
    doc["groups"]["G"]["consumers"][2]["properties"]["clientRebalance"] = "false"
    report = diagnose(parse_snapshot(doc))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    assert (inference.value, inference.clients) == (5, 2)
    assert inference.note.startswith("virtual nodes: 5, inferred from what the 2 clients hold")


# ----- MACHINE_ROOM ---------------------------------------------------------------------------

ROOMED = {"hz@broker-a": 4, "sh@broker-b": 4, "bj@broker-c": 2, "plain-broker": 2}


@settings(max_examples=30, deadline=None)
@given(
    st.lists(ID, min_size=1, max_size=4, unique=True),
    st.sets(st.sampled_from(["hz", "sh", "bj", "gz"]), min_size=1),
)
def test_machine_room_rooms_are_inferred(cids: list[str], idcs: set[str]) -> None:
    topics = {TOPIC: ROOMED}
    truth = held_by(MachineRoom(frozenset(idcs)), cids, topics)
    report = diagnose(wire_snapshot("MACHINE_ROOM", cids, topics, truth))
    (group,) = report.groups
    inference = group.inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    rooms = set(inference.value)
    assert rooms == idcs - {"gz"}  # no broker lives in gz: it changes nothing
    assert held_by(MachineRoom(frozenset(rooms)), cids, topics) == truth
    assert inference.option == (f"MACHINE_ROOM:idcs={','.join(sorted(rooms))}" if rooms else None)
    assert rows_ok(report) or "UNCONSUMED_QUEUE" in codes(report)
    assert "ASSIGNMENT_MISMATCH" not in codes(report)
    unconsumed = {
        q.label() for f in report.findings if f.code is Code.UNCONSUMED_QUEUE for q in f.queues
    }
    outside = {q.label() for q in mq_all(ROOMED) if q.broker_name.split("@")[0] not in rooms}
    assert unconsumed == outside  # true findings: the brokers of other rooms are not consumed


def test_machine_room_nothing_fits_the_closest_rooms_are_used_and_said() -> None:
    topics = {TOPIC: ROOMED}
    held = held_by(MachineRoom(frozenset({"hz", "sh"})), THREE, topics)
    held[THREE[0]].append(MessageQueue(TOPIC, "bj@broker-c", 0))  # a stale extra queue
    report = diagnose(wire_snapshot("MACHINE_ROOM", THREE, topics, held))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.unexplained
    assert (inference.closest, inference.differing) == (["hz", "sh"], 1)
    assert report.groups[0].strategy == "MACHINE_ROOM(hz,sh)"
    (mismatch,) = [f for f in report.findings if f.code is Code.ASSIGNMENT_MISMATCH]
    assert mismatch.message.endswith(
        "(assuming consumeridcs hz,sh, the closest to what the clients hold: they do not report it)"
    )
    assert [q.label() for q in mismatch.queues] == ["bj@broker-c:0"]


def test_machine_room_a_queue_held_twice_does_not_stop_inference() -> None:
    """A queue held twice is wrong whatever the rooms: every other queue fits hz,sh exactly,
    so they are inferred, not merely the closest; the doubled queue is a finding of its own."""
    topics = {TOPIC: ROOMED}
    held = held_by(MachineRoom(frozenset({"hz", "sh"})), THREE, topics)
    doubled = held[THREE[1]][0]
    held[THREE[0]].append(doubled)  # the new owner took it, the old one still holds it
    report = diagnose(wire_snapshot("MACHINE_ROOM", THREE, topics, held))
    inference = held_twice_is_named(report, "set of rooms", doubled, THREE[0])
    assert (inference.value, inference.option) == (["hz", "sh"], "MACHINE_ROOM:idcs=hz,sh")


def test_machine_room_queues_wrong_whatever_the_rooms_alone_do_not_make_rooms() -> None:
    """Both clients hold both queues: every set of rooms gets both wrong, so the holdings
    tell no set from another and none is inferred from them."""
    cids = THREE[:2]
    both = mq_all({"hz@broker-a": 2})
    topics = {TOPIC: {"hz@broker-a": 2}}
    report = diagnose(wire_snapshot("MACHINE_ROOM", cids, topics, dict.fromkeys(cids, both)))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.unexplained


def test_machine_room_rooms_unknown_expected_is_not_computed() -> None:
    topics = {TOPIC: ROOMED}
    truth = held_by(MachineRoom(frozenset({"hz"})), THREE, topics)
    report = diagnose(wire_snapshot("MACHINE_ROOM", THREE, topics, truth, unknown=[THREE[0]]))
    (group,) = report.groups
    assert group.inference is not None
    assert group.inference.status is InferenceStatus.unknown
    assert group.strategy == "MACHINE_ROOM"
    assert "UNCONSUMED_QUEUE" not in codes(report)  # no false alarm from empty rooms
    assert "IDLE_CONSUMER" not in codes(report)
    (failed,) = [f for f in report.findings if f.code is Code.ALLOCATION_FAILED]
    assert failed.severity.value == "info"
    assert "consumeridcs is unknown" in failed.message
    assert "--strategy MACHINE_ROOM:idcs=" in failed.hint


# ----- CONFIG ----------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.lists(ID, min_size=1, max_size=4, unique=True), st.data())
def test_config_lists_are_what_each_client_holds(cids: list[str], data: st.DataObject) -> None:
    queues = mq_all({"broker-a": 4, "broker-b": 4})
    lists = {
        cid: sorted(data.draw(st.sets(st.sampled_from(queues), max_size=5), label=cid))
        for cid in cids
    }
    topics = {TOPIC: {"broker-a": 4, "broker-b": 4}, RETRY: {"broker-a": 1}}
    report = diagnose(wire_snapshot("CONFIG", cids, topics, lists))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    assert inference.parameter == "config"
    assert "ASSIGNMENT_MISMATCH" not in codes(report)
    listed = {q for qs in lists.values() for q in qs}
    unconsumed = {
        (f.topic, q.label())
        for f in report.findings
        if f.code is Code.UNCONSUMED_QUEUE
        for q in f.queues
    }
    # queues in no list are never consumed, and the retry queue is in none of them
    assert unconsumed == {(TOPIC, q.label()) for q in queues if q not in listed} | {
        (RETRY, "broker-a:0")
    }


def test_config_lists_unknown_expected_is_not_computed() -> None:
    lists = {cid: mq_all({"broker-a": 4})[i : i + 1] for i, cid in enumerate(THREE)}
    topics = {TOPIC: {"broker-a": 4}}
    report = diagnose(wire_snapshot("CONFIG", THREE, topics, lists, unknown=[THREE[2]]))
    assert report.groups[0].inference is not None
    assert report.groups[0].inference.status is InferenceStatus.unknown
    assert "UNCONSUMED_QUEUE" not in codes(report)
    (failed,) = [f for f in report.findings if f.code is Code.ALLOCATION_FAILED]
    assert "CONFIG lists are unknown" in failed.message


def test_config_processes_sharing_an_id_cannot_both_be_explained() -> None:
    cids = [THREE[0], THREE[0], THREE[1]]
    queues = mq_all({"broker-a": 4})
    snap = wire_snapshot("CONFIG", cids, {TOPIC: {"broker-a": 4}}, {c: [] for c in cids})
    doc = snapshot_to_json(snap)
    for c, mine in zip(doc["groups"]["G"]["consumers"], ([0, 1], [2], [3]), strict=True):
        c["assigned"] = [{"topic": TOPIC, "brokerName": "broker-a", "queueId": i} for i in mine]
    report = diagnose(parse_snapshot(doc))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.unexplained
    assert inference.differing == 3  # the first process's list differs from the second's
    assert inference.value[THREE[0]] == [
        {"topic": TOPIC, "brokerName": "broker-a", "queueId": i} for i in (0, 1)
    ]
    assert queues[3].label() not in {q.label() for f in report.findings for q in f.queues}


def test_config_queues_of_a_client_the_brokers_do_not_list_do_not_stop_inference() -> None:
    """A client cut off from the topic's broker keeps holding its queues: no list explains
    them, but every other client's list is what it holds, so the lists are inferred and the
    note does not blame processes sharing an id."""
    queues = mq_all({"broker-a": 4})
    lists = {THREE[0]: queues[:1], THREE[1]: queues[1:2], THREE[2]: queues[2:]}
    listed = {"onBrokers": {"broker-a": {"clientIds": THREE[:2]}}}  # it dropped THREE[2]
    snap = wire_snapshot("CONFIG", THREE, {TOPIC: {"broker-a": 4}}, lists, group=listed)
    report = diagnose(snap)
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    assert inference.note.endswith(
        "; 2 queues are held in a way no list gives (by a client the brokers do not list for "
        "its topic or that does not subscribe it): the findings name them"
    )
    assert "sharing a client id" not in inference.note


# ----- MACHINE_ROOM_NEARBY ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "brokers", "cids"),
    [
        (KIT_ROOMS, {"broker-a": 4, "broker-b": 4}, ["127.0.0.1@c1", "127.0.0.1@c2"]),
        (
            MachineRoomNearby(AvgByCircle(), KIT_ROOMS.broker_rooms, KIT_ROOMS.consumer_rooms),
            {"hz@broker-a": 6, "sh@broker-b": 4, "bj@broker-c": 3},
            ["10.0.0.1@hz-1", "10.0.0.2@hz-2", "10.0.0.3@sh-1"],
        ),
        (
            MachineRoomNearby(Avg(), KIT_ROOMS.broker_rooms, RoomPattern(r"^[^@]*@[^@]*@(.+)$")),
            {"hz@broker-a": 4, "sh@broker-b": 4},
            ["10.0.0.1@1#1@hz", "10.0.0.2@2#2@sh", "10.0.0.3@3#3@sh"],
        ),
    ],
)
def test_nearby_rooms_come_from_the_naming_convention(
    spec: MachineRoomNearby, brokers: dict[str, int], cids: list[str]
) -> None:
    topics = {TOPIC: brokers}
    truth = held_by(spec, cids, topics)
    report = diagnose(wire_snapshot("MACHINE_ROOM_NEARBY", cids, topics, truth))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    assert inference.value == {
        "inner": {"name": spec.inner.name},
        "brokerRooms": "^([^@]+)",
        "consumerRooms": spec.consumer_rooms.pattern,  # type: ignore[union-attr]
    }
    assert rows_ok(report)
    assert "ASSIGNMENT_MISMATCH" not in codes(report)


def test_nearby_a_queue_held_twice_does_not_stop_inference() -> None:
    """The rooms and inner strategy that explain every queue but one held twice are
    inferred: that queue is wrong whatever the convention."""
    spec = MachineRoomNearby(AvgByCircle(), KIT_ROOMS.broker_rooms, KIT_ROOMS.consumer_rooms)
    cids = ["10.0.0.1@hz-1", "10.0.0.2@hz-2", "10.0.0.3@sh-1"]
    topics = {TOPIC: {"hz@broker-a": 6, "sh@broker-b": 4, "bj@broker-c": 3}}
    held = held_by(spec, cids, topics)
    doubled = held[cids[1]][0]
    held[cids[0]].append(doubled)
    report = diagnose(wire_snapshot("MACHINE_ROOM_NEARBY", cids, topics, held))
    inference = held_twice_is_named(report, "convention", doubled, cids[0])
    assert inference.value["inner"] == {"name": "AVG_BY_CIRCLE"}


def test_nearby_without_a_convention_that_resolves_every_room_is_not_computed() -> None:
    topics = {TOPIC: {"@odd": 2, "hz@broker-a": 2}}  # "@odd" has no room in any convention
    held = {cid: [] for cid in THREE}
    report = diagnose(wire_snapshot("MACHINE_ROOM_NEARBY", THREE, topics, held))
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.unknown
    (failed,) = [f for f in report.findings if f.code is Code.ALLOCATION_FAILED]
    assert "no naming convention rmqlb knows gives every broker and client a room" in (
        failed.message
    )
    assert failed.severity.value == "info"


# ----- rmqlb dump records what it inferred ----------------------------------------------------


def test_record_inferred_marks_the_group_strategy_and_explain_agrees() -> None:
    snap = five_vnodes()
    recorded = record_inferred(snap)
    strategy = recorded.groups["G"].strategy
    assert strategy == ConsistentHash(5)
    assert strategy is not None and params_of(strategy) is Params.INFERRED
    doc = snapshot_to_json(recorded)
    assert doc["groups"]["G"]["strategy"] == {
        "name": "CONSISTENT_HASH",
        "virtualNodeCnt": 5,
        "inferred": True,
    }
    reloaded = parse_snapshot(doc)
    assert report_to_json(diagnose(reloaded)) == report_to_json(diagnose(snap))
    assert record_inferred(reloaded) is reloaded  # nothing left to record


def test_record_inferred_leaves_stated_and_unsettled_groups_alone() -> None:
    stated = five_vnodes(group={"strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 7}})
    assert record_inferred(stated) is stated
    unknown = five_vnodes(unknown=[THREE[0]])
    assert record_inferred(unknown) is unknown


def test_a_redacted_dump_keeps_the_inferred_count() -> None:
    """Redaction renames client ids, so the ring can no longer be rebuilt from them: the
    recorded count is kept and the report says it comes from the snapshot."""
    redacted = redact(record_inferred(five_vnodes()))
    report = diagnose(redacted)
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status is InferenceStatus.inferred
    assert report.groups[0].strategy == "CONSISTENT_HASH(vnodes=5)"
    assert inference.note.startswith("virtual nodes: 5, recorded as inferred in the snapshot")
    assert "what the clients hold now differs in" in inference.note


def test_docstring_examples() -> None:
    failures, tried = doctest.testmod(infer_module)
    assert tried > 0
    assert failures == 0
