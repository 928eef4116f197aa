"""BROKERS_DISAGREE for clients that balance themselves: the brokers of a topic list
different consumers, so each client's cidAll depends on the broker it asks."""

from __future__ import annotations

from typing import Any

from diagnose_builders import codes, consumer, group, only, queues, route, run

from rmqlb.allocate import allocate
from rmqlb.diagnose import Code
from rmqlb.model import MessageQueue
from rmqlb.model.strategy import Avg, ConsistentHash

T = "T"
TOPICS = {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6))}
IDS = ["c1", "c2", "c3"]


def _group(lists: dict[str, list[str]], **extra: Any) -> dict[str, Any]:
    return group(
        *(consumer(cid, T) for cid in IDS),
        onBrokers={b: {"clientIds": ids} for b, ids in lists.items()},
        **extra,
    )


def _mq_all() -> list[MessageQueue]:
    return [MessageQueue(T, b, q) for b in ("broker-a", "broker-b") for q in range(4)]


def test_a_client_one_broker_does_not_list_flaps_and_the_numbers_are_the_allocators() -> None:
    report = run(TOPICS, {"G": _group({"broker-a": IDS, "broker-b": ["c1", "c2"]})})
    f = only(report, Code.BROKERS_DISAGREE)
    by_a = allocate(Avg(), _mq_all(), IDS)
    by_b = allocate(Avg(), _mq_all(), ["c1", "c2"])
    moving = [
        mq
        for mq in _mq_all()
        if {c for c, qs in by_a.items() if mq in qs} != {c for c, qs in by_b.items() if mq in qs}
    ]
    assert list(f.queues) == moving and len(moving) == 3
    assert f.message.startswith(
        "the brokers of T list different consumers of G: broker-b does not list c3. "
    )
    assert "so 3 queues (broker-a:3, broker-b:2, broker-b:3) change hands" in f.message
    assert "c1 holds broker-a:0..2 by broker-a's list, broker-a:0..3 by broker-b's list" in (
        f.message
    )
    assert "c3 holds broker-b:2, broker-b:3 by broker-a's list, nothing by broker-b's list" in (
        f.message
    )
    assert f.consumers == ("c3", "c1", "c2")
    assert f.hint.startswith("a broker lists the clients whose heartbeats reach it")
    assert "check that c3 reaches every broker of the topic" in f.hint


def test_brokers_with_one_list_are_named_together() -> None:
    topics = {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6), ("broker-c", 0, 0, 6))}
    lists = {"broker-a": IDS, "broker-b": ["c1", "c2"], "broker-c": ["c2", "c1"]}
    f = only(run(topics, {"G": _group(lists)}), Code.BROKERS_DISAGREE)
    assert "broker-b does not list c3; broker-c does not list c3." in f.message
    assert "by the list of broker-b, broker-c" in f.message


def test_the_same_allocation_from_every_list_is_said_so() -> None:
    topics = {T: route(("broker-a", 1, 1, 6), ("broker-b", 1, 1, 6))}
    f = only(
        run(topics, {"G": _group({"broker-a": IDS, "broker-b": ["c1", "c2"]})}),
        Code.BROKERS_DISAGREE,
    )
    assert f.message.endswith("; the allocation is the same from every list for now")
    assert f.queues == ()


def test_lists_that_differ_only_off_the_topics_brokers_or_in_counts_are_no_finding() -> None:
    topics = {**TOPICS, "X": route(("broker-x", 4, 4, 6))}
    elsewhere = {"broker-a": IDS, "broker-b": IDS, "broker-x": ["c1"]}
    assert Code.BROKERS_DISAGREE.value not in codes(run(topics, {"G": _group(elsewhere)}))
    repeated = {"broker-a": [*IDS, "c1"], "broker-b": IDS}  # DUPLICATE_CLIENT_ID's case
    twice = _group(repeated)
    twice["consumers"].append(consumer("c1", T))  # the capture keeps the most any lists
    report = run(TOPICS, {"G": twice})
    assert Code.BROKERS_DISAGREE.value not in codes(report)
    assert Code.DUPLICATE_CLIENT_ID.value in codes(report)


def test_broadcasting_groups_take_no_list() -> None:
    lists = {"broker-a": IDS, "broker-b": ["c1", "c2"]}
    report = run(TOPICS, {"G": _group(lists, messageModel="BROADCASTING")})
    assert Code.BROKERS_DISAGREE.value not in codes(report)


def test_a_topic_whose_brokers_agree_is_allocated_from_their_list() -> None:
    """T lives on broker-a, which does not list c3 (broker-b, of U, does): every client takes
    T's cidAll from broker-a, so T is split between c1 and c2 alone, as they hold it."""
    topics = {T: route(("broker-a", 4, 4, 6)), "U": route(("broker-b", 3, 3, 6))}
    g = group(
        consumer("c1", T, "U", assigned=queues(T, "broker-a", 0, 1) + queues("U", "broker-b", 0)),
        consumer("c2", T, "U", assigned=queues(T, "broker-a", 2, 3) + queues("U", "broker-b", 1)),
        consumer("c3", T, "U", assigned=queues("U", "broker-b", 2)),
        onBrokers={"broker-a": {"clientIds": ["c1", "c2"]}, "broker-b": {"clientIds": IDS}},
    )
    report = run(topics, {"G": g})
    assert codes(report) == [Code.BROKERS_DISAGREE.value]  # nothing stale, mismatched or idle
    f = only(report, Code.BROKERS_DISAGREE)
    assert f.topic == T
    assert f.message == (
        "no broker of T (broker-a) lists c3, which subscribes it, while other brokers of G do "
        "(c3: broker-b). A client rebalancing T takes the consumer list from a broker of the "
        "topic, so every client leaves it out and it takes no queue of T"
    )
    assert "check that c3 reaches broker-a" in f.hint
    (table,) = [t for t in report.groups[0].topics if t.topic == T]
    expected = {row.queue.label(): row.expected for row in table.queues}
    assert expected == {"broker-a:0": "c1", "broker-a:1": "c1", "broker-a:2": "c2",
                        "broker-a:3": "c2"}  # fmt: skip


def test_a_broker_of_the_topic_whose_list_is_unknown_leaves_the_groups_list() -> None:
    topics = {
        T: route(("broker-a", 4, 4, 6), ("broker-c", 4, 4, 6)),
        "U": route(("broker-b", 4, 4, 6)),
    }
    lists = {"broker-a": {"clientIds": ["c1", "c2"]}, "broker-b": {"clientIds": IDS}}
    g = group(*(consumer(cid, T, "U") for cid in IDS), onBrokers=lists)
    report = run(topics, {"G": g})
    assert Code.BROKERS_DISAGREE.value not in codes(report)
    (table,) = [t for t in report.groups[0].topics if t.topic == T]
    assert {row.expected for row in table.queues} == set(IDS)


def _ring_holdings(
    vnodes: int, lists: dict[str, list[str]], topics: dict[str, int]
) -> dict[str, list[dict[str, Any]]]:
    """What each client holds when it runs CONSISTENT_HASH(``vnodes``) over each topic's own
    cidAll (``lists``: topic -> the list its broker keeps; ``topics``: topic -> queues on the
    broker named after it)."""
    held: dict[str, list[dict[str, Any]]] = {cid: [] for cid in IDS}
    for topic, n in topics.items():
        mqs = [MessageQueue(topic, f"broker-{topic.lower()}", q) for q in range(n)]
        for cid, got in allocate(ConsistentHash(vnodes), mqs, lists[topic]).items():
            held[cid] += queues(topic, f"broker-{topic.lower()}", *(q.queue_id for q in got))
    return held


def test_strategy_parameters_are_inferred_from_each_topics_own_list() -> None:
    """Clients built with 5 virtual nodes: T's broker lists c1 and c2 only, so their rings
    for T leave c3 out. Inferring over the group's three clients fits no count; over each
    topic's list, 5 fits exactly."""
    lists = {"T": ["c1", "c2"], "U": IDS}
    sizes = {"T": 16, "U": 16}
    held = _ring_holdings(5, lists, sizes)
    assert held != _ring_holdings(5, {"T": IDS, "U": IDS}, sizes)  # the lists matter here
    strategy = "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash"
    props = {"allocateMessageQueueStrategy": strategy}  # the class only, as on the wire
    g = group(
        *(consumer(cid, "T", "U", assigned=held[cid], properties=props) for cid in IDS),
        onBrokers={"broker-t": {"clientIds": lists["T"]}, "broker-u": {"clientIds": IDS}},
    )
    topics = {t: route((f"broker-{t.lower()}", n, n, 6)) for t, n in sizes.items()}
    report = run(topics, {"G": g})
    inference = report.groups[0].inference
    assert inference is not None
    assert inference.status.value == "inferred"
    assert 5 in (inference.value, *inference.alternatives)
    assert _ring_holdings(inference.value, lists, sizes) == held
    assert Code.BROKERS_DISAGREE.value in codes(report)  # c3: unlisted by T's broker only
    assert {row.status.value for t in report.groups[0].topics for row in t.queues} == {"ok"}
