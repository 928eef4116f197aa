"""One positive and one negative case (at least) per finding code of design §5."""

from __future__ import annotations

from typing import Any

import pytest
from diagnose_builders import codes, consumer, group, labels, only, queues, route, run

from rmqlb.allocate import allocate
from rmqlb.diagnose import Code, DiagnoseOptions, QueueStatus, Severity
from rmqlb.diagnose.rules.lag import GENERIC_HINT
from rmqlb.model import MessageQueue
from rmqlb.model.strategy import Avg, AvgByCircle

T = "TopicA"


def proof(consumers: str, low: int, high: int) -> dict[str, object]:
    return {
        "consumers": consumers,
        "sampled": False,
        "minQueues": low,
        "maxQueues": high,
    }


def q(*ids: int, broker: str = "broker-a", topic: str = T) -> list[dict[str, object]]:
    return queues(topic, broker, *ids)


# -- IDLE_CONSUMER --------------------------------------------------------------------------------


def test_idle_consumer_when_queues_are_fewer_than_consumers() -> None:
    consumers = [consumer(f"c{i}", T) for i in range(1, 7)]
    report = run({T: {"queues": 4}}, {"G": group(*consumers)})
    f = only(report, Code.IDLE_CONSUMER)
    assert f.severity is Severity.warning
    assert f.consumers == ("c5", "c6")
    assert "4 readable queues for 6 consumers: 2 consumers idle under AVG" in f.message
    assert [p.to_json() for p in f.proposals] == [
        {"replicas": 4, "proof": proof("4", 1, 1)},
        {"queues": 6, "proof": proof("6", 1, 1)},
    ]
    assert f.hint == (
        "run 4 consumers in G (2 consumers fewer: they were idle): each gets 1 queue; or raise "
        "readQueueNums and writeQueueNums of TopicA to 6: with 6 queues 6 consumers get 1 queue "
        "each"
    )


def test_no_idle_consumer_when_every_consumer_gets_a_queue() -> None:
    report = run({T: {"queues": 4}}, {"G": group(consumer("c1", T), consumer("c2", T))})
    assert "IDLE_CONSUMER" not in codes(report)


def test_no_idle_consumer_on_a_single_retry_queue() -> None:
    retry = "%RETRY%G"
    consumers = [consumer(f"c{i}", T, retry) for i in range(3)]
    report = run({T: {"queues": 3}, retry: {"queues": 1}}, {"G": group(*consumers)})
    assert codes(report) == []


# -- UNCONSUMED_QUEUE -----------------------------------------------------------------------------


def test_unconsumed_queue_falls_to_a_non_subscriber() -> None:
    report = run(
        {T: {"queues": 4}, "TopicB": {"queues": 4}},
        {"G": group(consumer("c1", T), consumer("c2", "TopicB"))},
    )
    unconsumed = [f for f in report.findings if f.code is Code.UNCONSUMED_QUEUE]
    by_topic = {f.topic: f for f in unconsumed}
    assert labels(by_topic[T]) == ["broker-a:2", "broker-a:3"]
    assert by_topic[T].consumers == ("c2",)
    assert labels(by_topic["TopicB"]) == ["broker-a:0", "broker-a:1"]


def test_unconsumed_queue_held_by_nobody_when_all_actuals_are_known() -> None:
    report = run(
        {T: {"queues": 4}},
        {"G": group(consumer("c1", T, assigned=q(0, 1)), consumer("c2", T, assigned=q(2)))},
    )
    f = only(report, Code.UNCONSUMED_QUEUE)
    assert labels(f) == ["broker-a:3"]
    assert f.consumers == ("c2",)
    assert "held by no consumer right now" in f.message


def test_unconsumed_queue_excluded_by_machine_room() -> None:
    topics = {T: route(("hz@broker-a", 2, 2, 6), ("sh@broker-b", 2, 2, 6))}
    strategy = {"name": "MACHINE_ROOM", "consumeridcs": ["hz"]}
    report = run(topics, {"G": group(consumer("c1", T), strategy=strategy)})
    f = only(report, Code.UNCONSUMED_QUEUE)
    assert labels(f) == ["sh@broker-b:0", "sh@broker-b:1"]
    assert "consumeridcs (hz)" in f.message


def test_machine_room_over_brokers_without_rooms_says_to_name_them() -> None:
    """Brokers not named <room>@<name> are never allocated, whatever consumeridcs says: the
    unconsumed queues and the idle consumers both point at the broker names."""
    topics = {T: route(("broker-a", 4, 4, 6), ("broker-b", 4, 4, 6))}
    strategy = {"name": "MACHINE_ROOM", "consumeridcs": ["broker-a"]}
    report = run(topics, {"G": group(consumer("c1", T), consumer("c2", T), strategy=strategy)})
    unconsumed = only(report, Code.UNCONSUMED_QUEUE)
    assert "MACHINE_ROOM takes only queues of brokers named <room>@<name>, and no broker of " in (
        unconsumed.message
    )
    fix = (
        "name the brokers <room>@<name> (brokerName), or switch the group to a strategy that "
        "needs no rooms, such as AVG"
    )
    assert unconsumed.hint == fix
    assert only(report, Code.IDLE_CONSUMER).hint == fix


def test_machine_room_idle_consumers_are_told_how_many_queues_their_rooms_have() -> None:
    topics = {T: route(("hz@broker-a", 1, 1, 6), ("sh@broker-b", 4, 4, 6))}
    strategy = {"name": "MACHINE_ROOM", "consumeridcs": ["hz"]}
    report = run(topics, {"G": group(consumer("c1", T), consumer("c2", T), strategy=strategy)})
    assert only(report, Code.IDLE_CONSUMER).hint == (
        f"consumeridcs selects 1 queue of {T} for 2 consumers: add queues on the brokers of "
        "those rooms, or run fewer consumers"
    )


def test_no_unconsumed_queue_when_healthy_or_actual_unknown() -> None:
    healthy = run(
        {T: {"queues": 4}},
        {"G": group(consumer("c1", T, assigned=q(0, 1)), consumer("c2", T, assigned=q(2, 3)))},
    )
    assert codes(healthy) == []
    partly_unknown = run(
        {T: {"queues": 4}},
        {"G": group(consumer("c1", T, assigned=q(0, 1)), consumer("c2", T))},
    )
    assert "UNCONSUMED_QUEUE" not in codes(partly_unknown)


# -- DUPLICATE_ASSIGNMENT / ASSIGNMENT_MISMATCH ---------------------------------------------------


def test_duplicate_assignment_lists_queue_and_holders() -> None:
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, assigned=q(0, 1)), consumer("c2", T, assigned=q(1)))},
    )
    f = only(report, Code.DUPLICATE_ASSIGNMENT)
    assert labels(f) == ["broker-a:1"]
    assert f.consumers == ("c1", "c2")
    assert f.severity is Severity.error


def test_duplicate_assignment_from_overlapping_config_lists_says_it_lasts() -> None:
    lists = {"c1": q(0, 1, 2), "c2": q(2, 3)}
    strategy = {"name": "CONFIG", "config": lists}
    report = run(
        {T: {"queues": 4}},
        {"G": group(*(consumer(c, T, assigned=qs) for c, qs in lists.items()), strategy=strategy)},
    )
    f = only(report, Code.DUPLICATE_ASSIGNMENT)
    assert labels(f) == ["broker-a:2"]
    assert f.hint == (
        "the holders' CONFIG lists overlap on broker-a:2, so this lasts: keep each queue in "
        "exactly one client's list"
    )


def test_no_duplicate_assignment_when_holders_are_distinct() -> None:
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, assigned=q(1)), consumer("c2", T, assigned=q(0)))},
    )
    assert "DUPLICATE_ASSIGNMENT" not in codes(report)


def test_assignment_mismatch_names_the_moved_queues() -> None:
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, assigned=q(1)), consumer("c2", T, assigned=q(0)))},
    )
    f = only(report, Code.ASSIGNMENT_MISMATCH)
    assert f.consumers == ("c1", "c2")
    assert labels(f) == ["broker-a:0", "broker-a:1"]
    assert "+broker-a:1" in f.message and "-broker-a:0" in f.message
    assert f"2 of 2 consumers of {T} hold other queues" in f.message
    three = (consumer("c1", T, assigned=q(0, 2)), consumer("c2", T, assigned=q(1)))
    one = run({T: {"queues": 3}}, {"G": group(*three, consumer("c3", T, assigned=q(2)))})
    mismatch = only(one, Code.ASSIGNMENT_MISMATCH)
    assert f"1 of 3 consumers of {T} holds other queues" in mismatch.message


def test_no_assignment_mismatch_when_matching_or_unknown() -> None:
    matching = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, assigned=q(0)), consumer("c2", T, assigned=q(1)))},
    )
    assert codes(matching) == []
    unknown = run({T: {"queues": 2}}, {"G": group(consumer("c1", T), consumer("c2", T))})
    assert codes(unknown) == []


# -- SUBSCRIPTION_INCONSISTENT --------------------------------------------------------------------


def test_subscription_inconsistent_topic_sets() -> None:
    report = run(
        {T: {"queues": 4}, "TopicB": {"queues": 4}},
        {"G": group(consumer("c1", T, "TopicB"), consumer("c2", T))},
    )
    f = only(report, Code.SUBSCRIPTION_INCONSISTENT)
    assert f.topic == "TopicB"
    assert f.consumers == ("c2",)
    assert labels(f) == ["broker-a:2", "broker-a:3"]
    assert "subscription not exist" in f.message


def test_subscription_inconsistent_expressions_latest_sub_version_wins() -> None:
    subs = [
        {"topic": T, "subString": "TagA", "subVersion": 5},
        {"topic": T, "subString": "TagB", "subVersion": 9},
        {"topic": T, "subString": "TagA", "subVersion": 5},
    ]
    consumers = [{"clientId": f"c{i}", "subscriptions": [sub]} for i, sub in enumerate(subs, 1)]
    report = run({T: {"queues": 3}}, {"G": {"consumers": consumers}})
    f = only(report, Code.SUBSCRIPTION_INCONSISTENT)
    assert "'TagB' from c2 (subVersion 9;" in f.message
    assert f.consumers == ("c1", "c3")
    assert "'TagA || TagB'" in f.hint


def _expressions(*subs: tuple[str, int], pop: bool = False) -> Any:
    """The SUBSCRIPTION_INCONSISTENT finding of clients c1, c2... subscribing T with the
    given (expression, subVersion); ``pop``: a broker serves them T by POP."""
    consumers: list[dict[str, Any]] = [
        {"clientId": f"c{i}", "subscriptions": [{"topic": T, "subString": e, "subVersion": v}]}
        for i, (e, v) in enumerate(subs, 1)
    ]
    doc: dict[str, Any] = {"consumers": consumers}
    if pop:
        for c in consumers:
            c["popAssigned"] = [{"topic": T, "brokerName": "broker-a", "queueId": -1}]
            c["properties"] = {"clientRebalance": "false"}
        doc["onBrokers"] = {"broker-a": {
            "clientIds": [c["clientId"] for c in consumers],
            "requestModes": {T: {"mode": "POP", "popShareQueueNum": -1}},
        }}  # fmt: skip
    report = run({T: {"queues": 4}}, {"G": doc})
    return only(report, Code.SUBSCRIPTION_INCONSISTENT)


def test_expressions_name_what_the_broker_filters_out_and_what_clients_drop() -> None:
    f = _expressions(("TagA", 5), ("TagB", 9))
    assert f.message.endswith(
        "the broker keeps the latest subVersion, 'TagB' from c2 (subVersion 9; a client renews "
        "its subVersion whenever its queues change, so the kept expression can change with a "
        "rebalance), and filters every pull by it: messages tagged 'TagA' reach no consumer, "
        "not even c1, which subscribes them; c1 drops the messages tagged 'TagB' that the "
        "broker sends it, as its own expression rejects them"
    )
    assert f.consumers == ("c1",)


def _kept_by_brokers(kept: dict[str, tuple[str, int]]) -> Any:
    """The SUBSCRIPTION_INCONSISTENT finding of c1 (TagA, subVersion 5) and c2 (TagB, 9)
    when the brokers' own tables keep ``kept`` (broker name -> expression, subVersion)."""
    consumers = [
        {"clientId": f"c{i}", "subscriptions": [{"topic": T, "subString": e, "subVersion": v}]}
        for i, (e, v) in enumerate([("TagA", 5), ("TagB", 9)], 1)
    ]
    on_brokers = {
        broker: {"subscriptions": [{"topic": T, "subString": e, "subVersion": v}]}
        for broker, (e, v) in kept.items()
    }
    two = {"queueDatas": [
        {"brokerName": b, "readQueueNums": 2, "writeQueueNums": 2, "perm": 6}
        for b in ("broker-a", "broker-b")
    ]}  # fmt: skip
    report = run({T: two}, {"G": {"consumers": consumers, "onBrokers": on_brokers}})
    return only(report, Code.SUBSCRIPTION_INCONSISTENT)


def test_expressions_the_brokers_tables_say_what_they_keep() -> None:
    # c2's renewed subVersion 9 has not reached the brokers (its heartbeat after the
    # rebalance was skipped): they still keep c1's, and filter by it
    f = _kept_by_brokers({"broker-a": ("TagA", 5), "broker-b": ("TagA", 5)})
    assert "the broker keeps the latest subVersion, 'TagA' from c1 (subVersion 5;" in f.message
    assert "messages tagged 'TagB' reach no consumer, not even c2" in f.message
    assert "still keeps" not in f.message
    assert f.consumers == ("c2",)


def test_expressions_a_broker_still_keeping_an_older_one_is_named() -> None:
    f = _kept_by_brokers({"broker-a": ("TagB", 9), "broker-b": ("TagA", 5)})
    assert "the broker keeps the latest subVersion, 'TagB' from c2 (subVersion 9;" in f.message
    assert f.message.endswith(
        "; broker-b still keeps 'TagA' (subVersion 5) and filters the pulls of its queues by "
        "it until a heartbeat brings it the newer one"
    )
    assert f.consumers == ("c1",)


def test_expressions_kept_from_a_client_no_longer_listed() -> None:
    f = _kept_by_brokers({"broker-a": ("TagC", 3)})
    assert "'TagC' from no client listed now (subVersion 3;" in f.message
    assert f.consumers == ("c1", "c2")


def test_expressions_a_wider_kept_expression_only_makes_the_narrow_client_drop() -> None:
    f = _expressions(("TagA", 5), ("TagA || TagB", 9), ("TagA", 6))
    assert f.message.endswith(
        "filters every pull by it: c1, c3 drop the messages tagged 'TagB' that the broker "
        "sends them, as their own expressions reject them"
    )
    every = _expressions(("TagA", 5), ("*", 9))
    assert every.message.endswith(
        "c1 drops the messages without a tag of 'TagA' that the broker sends it, as its own "
        "expression rejects them"
    )


def test_expressions_a_narrower_kept_expression_only_filters_out() -> None:
    f = _expressions(("*", 5), ("TagA", 9))
    assert f.message.endswith(
        "filters every pull by it: messages without a tag of 'TagA' reach no consumer, not "
        "even c1, which subscribes them"
    )
    f = _expressions(("TagA || TagB || TagC", 5), ("TagA", 9))
    assert "messages tagged 'TagB' or 'TagC' reach no consumer, not even c1," in f.message


def test_expressions_of_the_same_tags_in_another_spelling_agree() -> None:
    report = run(
        {T: {"queues": 2}},
        {"G": {"consumers": [
            {"clientId": f"c{i}", "subscriptions": [{"topic": T, "subString": e}]}
            for i, e in enumerate(("TagA || TagB", "TagB||TagA", " TagA||TagB || TagA"), 1)
        ]}},
    )  # fmt: skip
    assert "SUBSCRIPTION_INCONSISTENT" not in codes(report)


def test_expressions_popped_are_filtered_per_request() -> None:
    f = _expressions(("TagA", 5), ("TagB", 9), pop=True)
    assert "latest subVersion" not in f.message
    assert f.message.endswith(
        "a POP request carries its client's own expression, and the broker moves the group's "
        "offset past the messages it skips: a message is lost whenever a client whose "
        "expression rejects it pops its queue"
    )


def test_expressions_of_other_types_are_described_without_tags() -> None:
    consumers = [
        {"clientId": "c1", "subscriptions": [{"topic": T, "subString": "TagA", "subVersion": 5}]},
        {"clientId": "c2", "subscriptions": [
            {"topic": T, "expressionType": "SQL92", "subString": "a > 1", "subVersion": 9}
        ]},
    ]  # fmt: skip
    f = only(
        run({T: {"queues": 2}}, {"G": {"consumers": consumers}}), Code.SUBSCRIPTION_INCONSISTENT
    )
    assert f.message.endswith(
        "'SQL92 a > 1' from c2 (subVersion 9; a client renews its subVersion whenever its "
        "queues change, so the kept expression can change with a rebalance), and filters every "
        "pull by it: messages it "
        "rejects reach no consumer, and a client whose own expression rejects some of what "
        "the broker sends drops those messages"
    )


def test_no_subscription_inconsistency_when_all_agree() -> None:
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T), consumer("c2", T))})
    assert "SUBSCRIPTION_INCONSISTENT" not in codes(report)


# -- STRATEGY_INCONSISTENT ------------------------------------------------------------------------


def test_strategy_inconsistent_lists_doubled_and_orphaned_queues() -> None:
    cids = ["c1", "c2", "c3"]
    report = run(
        {T: {"queues": 8}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG"),
                consumer("c2", T, strategy="AVG_BY_CIRCLE"),
                consumer("c3", T, strategy="AVG_BY_CIRCLE"),
                strategy={"name": "AVG_BY_CIRCLE"},
            )
        },
    )
    f = only(report, Code.STRATEGY_INCONSISTENT)
    mqs = [MessageQueue(T, "broker-a", i) for i in range(8)]
    own = {
        "c1": allocate(Avg(), mqs, cids)["c1"],
        "c2": allocate(AvgByCircle(), mqs, cids)["c2"],
        "c3": allocate(AvgByCircle(), mqs, cids)["c3"],
    }
    held = [mq for qs in own.values() for mq in qs]
    doubled = {mq for mq in held if held.count(mq) > 1}
    orphaned = set(mqs) - set(held)
    assert doubled and orphaned
    assert set(f.queues) == doubled | orphaned
    assert f.consumers == ("c1",)


def test_no_strategy_inconsistency_when_consumers_agree() -> None:
    report = run(
        {T: {"queues": 4}},
        {"G": group(consumer("c1", T, strategy="AVG"), consumer("c2", T, strategy="AVG"))},
    )
    assert "STRATEGY_INCONSISTENT" not in codes(report)


def test_strategy_from_the_java_class_property() -> None:
    cls = "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle@1"
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, strategy="AVG"),
                consumer("c2", T, properties={"allocateMessageQueueStrategy": cls}),
            )
        },
    )
    assert "STRATEGY_INCONSISTENT" in codes(report)


# -- IMBALANCE ------------------------------------------------------------------------------------


def test_imbalance_suggests_even_queue_and_consumer_counts() -> None:
    consumers = [consumer(f"c{i:02d}", T) for i in range(10)]
    report = run({T: {"queues": 16}}, {"G": group(*consumers)})
    f = only(report, Code.IMBALANCE)
    assert "6 hold 2 queues and 4 hold 1 queue" in f.message
    assert [p.to_json() for p in f.proposals] == [
        {"queues": 20, "proof": proof("10", 2, 2)},
        {"replicas": 16, "proof": proof("16", 1, 1)},
        {"replicas": 8, "proof": proof("8", 2, 2)},
        {"queues": 10, "proof": proof("10", 1, 1)},
    ]
    assert "raise readQueueNums and writeQueueNums of TopicA to 20: with 20 queues" in f.hint
    assert "TopicA to 10, fewer than today's 16 (lower writeQueueNums first" in f.hint
    assert "run 8 consumers in G (2 consumers fewer than today: less consuming capacity)" in (
        f.hint
    )


def test_no_imbalance_below_threshold() -> None:
    three = run({T: {"queues": 16}}, {"G": group(*(consumer(f"c{i}", T) for i in range(3)))})
    assert "IMBALANCE" not in codes(three)
    ten = [consumer(f"c{i:02d}", T) for i in range(10)]
    relaxed = run(
        {T: {"queues": 16}}, {"G": group(*ten)}, options=DiagnoseOptions(max_imbalance=2.5)
    )
    assert "IMBALANCE" not in codes(relaxed)


# -- route: WRITE_EXCEEDS_READ / QUEUE_NOT_READABLE / NO_ROUTE ------------------------------------


def test_write_exceeds_read_names_stranded_queues() -> None:
    report = run({T: route(("broker-a", 4, 6, 6))}, {"G": group(consumer("c1", T))})
    f = only(report, Code.WRITE_EXCEEDS_READ)
    assert labels(f) == ["broker-a:4", "broker-a:5"]
    assert "-r 6 -w 6" in f.hint


def test_no_write_exceeds_read_when_equal_or_fewer() -> None:
    report = run({T: route(("broker-a", 6, 4, 6))}, {"G": group(consumer("c1", T))})
    assert "WRITE_EXCEEDS_READ" not in codes(report)


def test_queue_not_readable() -> None:
    report = run(
        {T: route(("broker-a", 2, 2, 6), ("broker-b", 2, 2, 2))},
        {"G": group(consumer("c1", T))},
    )
    f = only(report, Code.QUEUE_NOT_READABLE)
    assert labels(f) == ["broker-b:0", "broker-b:1"]
    assert "write-only" in f.message


def test_queue_not_readable_fix_by_perm() -> None:
    """Write-only: read back, and a drain is write off; no access: read back for what waits
    (4 drains it); one queue is "is", not "are"."""
    write_only = run(
        {T: route(("broker-a", 2, 2, 6), ("broker-b", 1, 1, 2))}, {"G": group(consumer("c1", T))}
    )
    f = only(write_only, Code.QUEUE_NOT_READABLE)
    assert "its 1 queue is left out of mqAll and consumed by nobody, while producers still " \
        "write to it" in f.message  # fmt: skip
    assert f.hint.startswith(f"restore read permission: mqadmin updateTopicPerm -t {T} ")
    assert "-k brokerPermission -v 6); to drain broker-b, take its write permission instead" \
        in f.hint  # fmt: skip
    closed = run(
        {T: route(("broker-a", 2, 2, 6), ("broker-b", 2, 2, 0))}, {"G": group(consumer("c1", T))}
    )
    g = only(closed, Code.QUEUE_NOT_READABLE)
    assert "its 2 queues are left out of mqAll and consumed by nobody" in g.message
    assert "producers" not in g.message
    assert g.hint.startswith("nothing new arrives there, but what waits is consumed only once ")
    assert "-p 4 to drain it (read-only), or 6" in g.hint and "brokerPermission -v 4)" in g.hint


def test_readable_brokers_give_no_queue_not_readable() -> None:
    report = run({T: route(("broker-a", 2, 2, 4))}, {"G": group(consumer("c1", T))})
    assert codes(report) == []


def test_no_route_is_a_finding_not_a_crash() -> None:
    report = run({}, {"G": group(consumer("c1", T), consumer("c2", T))})
    f = only(report, Code.NO_ROUTE)
    assert f.topic == T and f.consumers == ("c1", "c2")
    assert report.groups[0].topics[0].queues == ()


_CAPTURED = {
    "source": {"namesrv": ["10.0.0.1:9876"]},
    "brokers": {"broker-a": {"cluster": "C1", "addrs": {"0": "10.0.0.11:10911"}}},
}


def test_no_route_says_why_as_far_as_the_snapshot_knows() -> None:
    """A capture that asked the NameServer knows the topic does not exist (TOPIC_NOT_EXIST
    is no capture error), and knows the cluster to create it in; a failed route request
    leaves it open; a snapshot written by hand says neither."""
    groups = {"G": group(consumer("c1", T))}
    live = only(run({}, groups, extra=_CAPTURED), Code.NO_ROUTE)
    assert "the NameServer has no route for it: the topic does not exist," in live.message
    assert live.hint == (
        f"create the topic (mqadmin updateTopic -t {T} -c C1 -r 8 -w 8) or remove the subscription"
    )
    error = {"request": "GET_ROUTEINFO_BY_TOPIC", "message": "timed out", "topic": T}
    failed = only(run({}, groups, extra={**_CAPTURED, "errors": [error]}), Code.NO_ROUTE)
    assert "its route could not be read (see the capture errors)" in failed.message
    assert failed.hint.startswith(f"capture again; if {T} does not exist, create the topic")
    by_hand = only(run({}, groups), Code.NO_ROUTE)
    assert "the topic does not exist or its route was not read" in by_hand.message
    assert by_hand.hint.endswith(
        "-c <cluster> -r 8 -w 8) or remove the subscription; "
        "if the topic exists, capture the snapshot again"
    )


def test_no_route_while_clients_hold_queues_tells_a_deleted_topic_from_a_broker_gone() -> None:
    """Held queues mean the clients read a route before: on registered brokers the topic was
    deleted (re-create it as the clients knew it, or drop the subscription); on a broker the
    NameServer does not list, that broker is down."""
    held = queues(T, "broker-a", 0, 1, 2, 3)
    groups = {"G": group(consumer("c1", T, assigned=held))}
    deleted = only(run({}, groups, extra=_CAPTURED), Code.NO_ROUTE)
    assert (
        "while c1 still holds 4 queues of it (broker-a:0..3) from a route read before: "
        f"{T} was deleted from broker-a, which is registered" in deleted.message
    )
    assert f"'topic[{T}] not exist' in their log" in deleted.message
    assert "not reachable even if the topic is created again" in deleted.message
    assert deleted.hint == (
        f"if {T} was deleted on purpose, remove the subscription from the consumers of G; else "
        f"create it again as its clients knew it (mqadmin updateTopic -t {T} -c C1 -r 4 -w 4)"
    )
    on_b = {"G": group(consumer("c1", T, assigned=queues(T, "broker-b", 0, 1)))}
    gone = only(run({}, on_b, extra=_CAPTURED), Code.NO_ROUTE)
    assert "its broker broker-b is not registered with the NameServer" in gone.message
    assert gone.hint.startswith("bring broker-b back (or let it reach the NameServer)")


def test_no_route_of_a_pop_retry_topic_is_normal_and_never_to_be_created() -> None:
    """A 5.x client the brokers balance subscribes %RETRY%G_TopicA once it pulls TopicA;
    the brokers create that topic at the first POP retry: before, the hint said to create it."""
    retry = "%RETRY%G_" + T
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T), consumer("c2", T, retry))})
    f = only(report, Code.NO_ROUTE)
    assert (f.topic, f.consumers, f.severity) == (retry, ("c2",), Severity.info)
    assert f.message.startswith(f"1 consumer of G subscribes {retry}, the POP retry topic of {T}")
    assert f.hint.startswith("nothing to fix") and "updateTopic" not in f.hint


def test_no_route_of_the_groups_retry_topic_points_at_the_group_config() -> None:
    """The brokers create %RETRY%G at a heartbeat when G has a subscription group config."""
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T, "%RETRY%G"))})
    f = only(report, Code.NO_ROUTE)
    assert f.severity is Severity.info
    assert "mqadmin updateSubGroup -c <cluster> -g G" in f.hint and "updateTopic" not in f.hint


def test_no_route_of_another_groups_retry_topic_is_not_taken_for_a_pop_retry_topic() -> None:
    """%RETRY%G_X is G_X's retry topic unless G subscribes X."""
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T, "%RETRY%G_X"))})
    f = only(report, Code.NO_ROUTE)
    assert "POP retry topic" not in f.message
    assert "mqadmin updateTopic -t %RETRY%G_X" in f.hint


# -- NO_CONSUMERS ---------------------------------------------------------------------------------


def _offset(topic: str, qid: int, behind: int, broker: str = "broker-a") -> dict[str, object]:
    return {
        "topic": topic,
        "brokerName": broker,
        "queueId": qid,
        "brokerOffset": 1000 + behind,
        "consumerOffset": 1000,
    }


def test_no_consumers_for_an_empty_group() -> None:
    report = run({T: {"queues": 2}}, {"G": {"consumers": []}})
    f = only(report, Code.NO_CONSUMERS)
    assert f.topic is None
    assert f.message == "group G has no online consumer and no committed offsets"
    assert "deleteSubGroup" in f.hint and "start the consumers of G" in f.hint


def test_no_consumers_says_what_the_group_leaves_unconsumed() -> None:
    offsets = [_offset(T, 0, 1200), _offset(T, 1, 0), _offset("%RETRY%G", 0, 34)]
    brokers = {"broker-a": {"cluster": "ProdCluster", "addrs": {"0": "10.0.0.1:10911"}}}
    report = run({T: {"queues": 2}}, {"G": group(offsets=offsets)}, extra={"brokers": brokers})
    f = only(report, Code.NO_CONSUMERS)
    assert f.message == (
        "group G has no online consumer: it leaves 1,234 messages unconsumed on 2 topics: "
        f"{T} (1,200), %RETRY%G (34)"
    )
    assert labels(f) == ["broker-a:0", "broker-a:0"]  # T's and the retry topic's, not T:1
    # deleting is named as the last resort, with what it does not undo
    assert f.hint.startswith("start the consumers of G: nobody else reads those messages")
    assert "mqadmin deleteSubGroup -c ProdCluster -g G" in f.hint
    assert "committed offsets stay unless -r true" in f.hint


def test_no_consumers_with_caught_up_offsets_says_they_remain() -> None:
    report = run({T: {"queues": 1}}, {"G": group(offsets=[_offset(T, 0, 0)])})
    f = only(report, Code.NO_CONSUMERS)
    assert f"committed offsets on 1 topic ({T}) are all caught up" in f.message
    assert f"still has committed offsets on {T}: add -r true" in f.hint
    assert "-c <cluster>" in f.hint  # no broker table: the cluster is not known


def test_no_consumers_for_a_topic_with_offsets_nobody_subscribes() -> None:
    offsets = [
        {
            "topic": "Old",
            "brokerName": "broker-a",
            "queueId": 0,
            "brokerOffset": 90,
            "consumerOffset": 40,
        }
    ]
    report = run(
        {T: {"queues": 1}, "Old": {"queues": 1}},
        {"G": group(consumer("c1", T), offsets=offsets)},
    )
    f = only(report, Code.NO_CONSUMERS)
    assert f.topic == "Old" and "50 messages of lag" in f.message


def test_no_no_consumers_finding_for_a_normal_group() -> None:
    report = run({T: {"queues": 1}}, {"G": group(consumer("c1", T))})
    assert codes(report) == []


# -- LAG_SKEW -------------------------------------------------------------------------------------


def _offsets(lags: list[int]) -> list[dict[str, object]]:
    return [
        {
            "topic": T,
            "brokerName": "broker-a",
            "queueId": i,
            "brokerOffset": 10_000 + lag,
            "consumerOffset": 10_000,
        }
        for i, lag in enumerate(lags)
    ]


def test_lag_skew_names_the_slow_consumer() -> None:
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, assigned=q(0, 1)),
                consumer("c2", T, assigned=q(2, 3)),
                offsets=_offsets([10, 10, 10, 9_000]),
            )
        },
    )
    f = only(report, Code.LAG_SKEW)
    assert f.consumers == ("c2",)
    assert labels(f) == ["broker-a:2", "broker-a:3"]
    assert "9,010 of the 9,030" in f.message
    # no running info: nothing said of how it consumes, the general fix
    assert f.message.endswith("with 2 of 4 queues") and f.hint == GENERIC_HINT


def _paced(cid: str, held: list[dict[str, Any]], threads: int | None, rt: float, tps: float) -> Any:
    """A consumer whose running info reports its pool and how it consumes T."""
    props = {} if threads is None else {"PROP_THREADPOOL_CORE_SIZE": str(threads)}
    status = {T: {"consumeRT": rt, "consumeOKTPS": tps}}
    return consumer(cid, T, assigned=held, properties=props, status=status)


@pytest.mark.parametrize(
    ("slow", "fast", "said", "fix"),
    [
        (
            (1, 100.0, 10.0),
            (20, 0.002, 50.0),
            "; it consumes 10.0 msg/s at 100 ms per message with 1 consume thread: about "
            "15 min 1 s to catch up if nothing more arrives; its peer (c1): 0.002 ms per "
            "message, 20 threads",
            "it runs 1 consume thread against 20 on its peer: raise its consumeThreadMin to 20 "
            "(consumeThreadMax adds none: the pool's queue is unbounded); at 100 ms per message, "
            "20 threads consume about 200 msg/s, as long as a message takes no longer when more "
            "run at once (a listener waiting on I/O; not one using the CPU); its listener takes "
            "100 ms per message against 0.002 ms per message on its peer: find what it waits "
            "for on that host",
        ),
        (
            (20, 100.0, 200.0),
            (20, 10.0, 50.0),
            "with 20 consume threads: about 45 s to catch up",
            "its listener takes 100 ms per message against 10 ms per message on its peer",
        ),
        (
            (20, 10.0, 200.0),
            (20, 10.0, 50.0),
            "its peer (c1): 10 ms per message, 20 threads",
            "it consumes as fast as its peer, so more messages arrive on its queues than on "
            "theirs (hot message keys, or a producer's queue selector)",
        ),
        ((None, 0.0, 0.0), (None, 0.0, 0.0), "with 2 of 4 queues", GENERIC_HINT),
        (
            (1, 0.0, 0.0),
            (20, 0.0, 0.0),
            "with 2 of 4 queues; it runs 1 consume thread; its peer (c1): 20 threads",
            "against 20 on its peer: raise its consumeThreadMin to 20 (consumeThreadMax adds "
            "none: the pool's queue is unbounded)",
        ),
    ],
)
def test_lag_skew_says_how_the_consumer_consumes_next_to_its_peers(
    slow: tuple[int | None, float, float], fast: tuple[int | None, float, float], said: str,
    fix: str
) -> None:  # fmt: skip
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                _paced("c1", q(0, 1), *fast),
                _paced("c2", q(2, 3), *slow),
                offsets=_offsets([10, 10, 10, 9_000]),
            )
        },
    )
    f = only(report, Code.LAG_SKEW)
    assert said in f.message
    assert fix in f.hint


@pytest.mark.parametrize(
    ("threads", "fix"),
    [
        (
            1,
            "it runs 1 consume thread against 20 on its peer: raise its consumeThreadMin to 2 "
            "(consumeThreadMax adds none: the pool's queue is unbounded; orderly, it uses at most "
            "one per queue it holds, 2); at 100 ms per message, 2 threads consume about 20.0 msg/s",
        ),
        (2, "its listener takes 100 ms per message against 10 ms per message on its peer"),
    ],
)
def test_lag_skew_of_an_orderly_consumer_counts_one_thread_per_queue(
    threads: int, fix: str
) -> None:
    slow = _paced("c2", q(2, 3), threads, 100.0, 10.0)
    slow["consumeOrderly"] = True
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                _paced("c1", q(0, 1), 20, 10.0, 50.0), slow, offsets=_offsets([10, 10, 10, 9_000])
            )
        },
    )
    hint = only(report, Code.LAG_SKEW).hint
    assert hint.startswith(fix)


def test_no_lag_skew_when_even_or_small() -> None:
    even = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, assigned=q(0, 1)),
                consumer("c2", T, assigned=q(2, 3)),
                offsets=_offsets([5_000, 5_000, 5_000, 5_000]),
            )
        },
    )
    small = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, assigned=q(0, 1)),
                consumer("c2", T, assigned=q(2, 3)),
                offsets=_offsets([0, 0, 0, 900]),
            )
        },
    )
    assert codes(even) == [] and codes(small) == []


# -- DUPLICATE_CLIENT_ID --------------------------------------------------------------------------


def test_duplicate_client_id_and_the_slice_nobody_takes() -> None:
    report = run(
        {T: {"queues": 6}},
        {"G": group(consumer("a", T), consumer("b", T), consumer("b", T))},
    )
    f = only(report, Code.DUPLICATE_CLIENT_ID)
    assert f.consumers == ("b",)
    assert labels(f) == ["broker-a:4", "broker-a:5"]
    assert "slice of index 1" in f.message and "index 2 goes to nobody" in f.message
    unconsumed = only(report, Code.UNCONSUMED_QUEUE)
    assert labels(unconsumed) == ["broker-a:4", "broker-a:5"]


def test_duplicate_client_id_from_one_host_names_both_causes() -> None:
    """One host: several processes, or closed connections the broker still lists (a late
    heartbeat registers them again): the fix says how to tell them apart."""
    one_host = [consumer("b", T, clientAddr=f"10.0.0.2:{port}") for port in (5001, 5002)]
    report = run({T: {"queues": 6}}, {"G": group(consumer("a", T), *one_host)})
    f = only(report, Code.DUPLICATE_CLIENT_ID)
    assert "(10.0.0.2:5001, 10.0.0.2:5002): either 2 processes share it, or the broker" in (
        f.message
    )
    assert f.hint.startswith("capture again in 130 s: if b is listed once by then, those")
    assert "if it stays, give every process a unique instanceName" in f.hint


def test_duplicate_client_id_from_two_hosts_is_processes() -> None:
    two_hosts = [consumer("b", T, clientAddr=f"10.0.0.{i}:5001") for i in (2, 3)]
    report = run({T: {"queues": 6}}, {"G": group(consumer("a", T), *two_hosts)})
    f = only(report, Code.DUPLICATE_CLIENT_ID)
    assert "2 processes on 2 hosts share it; where cidAll lists it 2 times" in f.message
    assert f.hint.startswith("give every process a unique instanceName")


def test_an_id_one_broker_lists_more_often_is_one_client_with_closed_connections() -> None:
    """A client heartbeats to every broker of its topics, so processes sharing an id are
    listed alike; broker-a listing b twice and broker-b once is one client whose closed
    connection broker-a still lists: nothing to rename."""
    topics = {T: route(("broker-a", 3, 3, 6), ("broker-b", 3, 3, 6))}
    on_brokers = {"broker-a": {"clientIds": ["a", "b", "b"]}, "broker-b": {"clientIds": ["a", "b"]}}
    consumers = [consumer(c, T) for c in ("a", "b", "b")]
    f = only(run(topics, {"G": group(*consumers, onBrokers=on_brokers)}), Code.DUPLICATE_CLIENT_ID)
    assert (
        "the brokers list it unequally (broker-a 2 times, broker-b 1 time) and a client "
        "heartbeats to every broker of its topics, so it is one client and broker-a still "
        "lists connections it closed (a heartbeat handled"
    ) in f.message
    assert (
        "; a client takes cidAll from a broker of the topic at random, so on TopicA the "
        "allocations change with the broker it asks"
    ) in f.message
    assert f.hint.startswith(
        "nothing to rename: broker-a drops the closed connections within 130 s of their last "
        "heartbeat"
    )
    assert "look at the load of broker-a and the network" in f.hint

    alike = {"broker-a": {"clientIds": ["a", "b", "b"]}, "broker-b": {"clientIds": ["a", "b", "b"]}}
    f = only(run(topics, {"G": group(*consumers, onBrokers=alike)}), Code.DUPLICATE_CLIENT_ID)
    assert "either 2 processes share it, or the broker still lists connections" in f.message

    three = {"broker-a": {"clientIds": ["a", "b", "b", "b"]}, "broker-b": {"clientIds": ["b", "b"]}}
    consumers.append(consumer("b", T))
    f = only(run(topics, {"G": group(*consumers, onBrokers=three)}), Code.DUPLICATE_CLIENT_ID)
    assert "so 2 processes share it and broker-a still lists connections it closed" in f.message
    assert f.hint.startswith("give every process a unique instanceName")
    assert "; besides, broker-a drops the closed connections within 130 s" in f.hint


def test_closed_connections_stay_listed_for_the_brokers_own_channel_expiry() -> None:
    """A 5.1+ broker's channelExpiredTimeout, read with the capture, is the time the finding
    states; the longest of the brokers that keep closed connections; 120 s where unknown."""
    topics = {T: route(("broker-a", 3, 3, 6), ("broker-b", 3, 3, 6))}
    unequal = {"broker-a": {"clientIds": ["a", "b", "b"]}, "broker-b": {"clientIds": ["a", "b"]}}
    consumers = [consumer(c, T) for c in ("a", "b", "b")]

    def finding(expiry: dict[str, int | None], on_brokers: Any = unequal) -> Any:
        brokers = {
            b: {"addrs": {"0": f"10.0.0.{i}:10911"}, "config": {"channelExpiredTimeout": ms}}
            for i, (b, ms) in enumerate(expiry.items())
        }
        report = run(
            topics, {"G": group(*consumers, onBrokers=on_brokers)}, extra={"brokers": brokers}
        )
        return only(report, Code.DUPLICATE_CLIENT_ID)

    f = finding({"broker-a": 90_000, "broker-b": 300_000})  # broker-b keeps none closed
    assert "registers it again, for 90 s after that heartbeat)" in f.message
    assert "broker-a drops the closed connections within 100 s of their last" in f.hint
    f = finding({"broker-a": None, "broker-b": 300_000})
    assert "for 120 s after that heartbeat" in f.message and "within 130 s" in f.hint
    alike = {"broker-a": {"clientIds": ["a", "b", "b"]}, "broker-b": {"clientIds": ["a", "b", "b"]}}
    f = finding({"broker-a": 45_500, "broker-b": 60_000}, alike)  # either could: the longest
    assert "for 60 s after that heartbeat" in f.message
    assert f.hint.startswith("capture again in 70 s: if b is listed once by then")
    f = finding({"broker-a": 45_500}, {"broker-a": {"clientIds": ["a", "b", "b"]}})
    assert "for 45.5 s after that heartbeat" in f.message


def test_one_clients_queues_are_not_doubled_by_its_closed_connections() -> None:
    """The broker relays running info to one connection of an id, so each entry shows the same
    queues: two processes then hold them twice, one client with a closed connection once."""
    topics = {T: {"queues": 4}}  # cidAll [a, b, b]: a 0..1, b 2, the second b slot 3
    consumers = [consumer("a", T, assigned=q(0, 1)), consumer("b", T, assigned=q(2))]
    consumers.append(consumer("b", T, assigned=q(2)))
    unequal = {"broker-a": {"clientIds": ["a", "b", "b"]}, "broker-b": {"clientIds": ["a", "b"]}}
    alike = {"broker-a": {"clientIds": ["a", "b", "b"]}, "broker-b": {"clientIds": ["a", "b", "b"]}}
    one = run(topics, {"G": group(*consumers, onBrokers=unequal)})
    assert "DUPLICATE_ASSIGNMENT" not in codes(one)
    assert "DUPLICATE_CLIENT_ID" in codes(one)
    rows = {r.queue.queue_id: r for r in one.groups[0].topics[0].queues}
    assert rows[2].actual == ("b",) and rows[2].status is QueueStatus.ok
    two = run(topics, {"G": group(*consumers, onBrokers=alike)})
    doubled = only(two, Code.DUPLICATE_ASSIGNMENT)
    assert "by b (2 connections)" in doubled.message


def test_duplicate_client_id_that_loses_no_queue_says_so() -> None:
    """1 queue, cidAll [a, a, b]: a takes it, the second slot and b get nothing; listed once,
    b still gets nothing (1 queue, 2 ids), so nothing is lost or idle because of the id."""
    consumers = [consumer(c, T) for c in ("a", "a", "b")]
    report = run({T: {"queues": 1}}, {"G": group(*consumers)})
    f = only(report, Code.DUPLICATE_CLIENT_ID)
    assert f.message.endswith(
        "; no queue is lost at the moment; if they are separate processes, each consumes the "
        "same queues"
    )
    assert f.consumers == ("a",)
    idle = only(report, Code.IDLE_CONSUMER)
    assert idle.caused_by is None  # its own cause: fewer queues than client ids
    assert idle.hint.startswith("a consumer without a queue of its own stays idle")


def test_idle_and_imbalance_from_a_duplicated_id_are_its_consequences() -> None:
    """cidAll [a, a, b]: 2 queues leave b idle, 4 split 2 / 1; listed once, neither. No count
    is proposed: a count fitted to the repeated id would be wrong once it is gone."""
    consumers = [consumer(c, T) for c in ("a", "a", "b")]
    for n, code in ((2, Code.IDLE_CONSUMER), (4, Code.IMBALANCE)):
        report = run({T: {"queues": n}}, {"G": group(*consumers)})
        cause = only(report, Code.DUPLICATE_CLIENT_ID)
        effect = only(report, code)
        assert effect.caused_by == cause.id
        assert effect.proposals == ()
        assert effect.hint.startswith(f"caused by DUPLICATE_CLIENT_ID ({cause.id})")
        assert cause.consumers == (("a", "b") if code is Code.IDLE_CONSUMER else ("a",))
        effects = "idle because of it: TopicA: b" if n == 2 else "split unevenly because of it"
        assert effects in cause.message
        once = allocate(Avg(), [MessageQueue(T, "broker-a", i) for i in range(n)], ["a", "b"])
        assert {len(qs) for qs in once.values()} == {n // 2}  # the claim, checked


def test_imbalance_that_stays_with_every_id_once_is_not_blamed_on_the_duplicate() -> None:
    """cidAll [a, a, b, c], 5 queues: a 2, b 1, c 1; listed once, a 2, b 2, c 1: still uneven,
    so the IMBALANCE keeps its own proven proposals and no cause, although a is its heaviest."""
    consumers = [consumer(c, T) for c in ("a", "a", "b", "c")]
    report = run({T: {"queues": 5}}, {"G": group(*consumers)})
    imbalance = only(report, Code.IMBALANCE)
    assert imbalance.consumers == ("a",)
    assert imbalance.caused_by is None
    assert imbalance.proposals
    assert "split unevenly" not in only(report, Code.DUPLICATE_CLIENT_ID).message


def test_distinct_client_ids_are_fine() -> None:
    report = run({T: {"queues": 6}}, {"G": group(consumer("a", T), consumer("b", T))})
    assert codes(report) == []


# -- CLIENT_UNREACHABLE ---------------------------------------------------------------------------


def test_client_unreachable_on_a_live_capture_with_the_reason() -> None:
    extra = {
        "source": {"namesrv": ["127.0.0.1:9876"]},
        "errors": [
            {
                "target": "10.0.0.2:10911",
                "request": "GET_CONSUMER_RUNNING_INFO",
                "message": "c2: timed out after 5.0 s",
            }
        ],
    }
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, assigned=q(0)), consumer("c2", T))},
        extra=extra,
    )
    f = only(report, Code.CLIENT_UNREACHABLE)
    assert f.consumers == ("c2",)
    assert "timed out after 5.0 s" in f.message


def test_no_client_unreachable_for_hand_written_snapshots() -> None:
    report = run({T: {"queues": 2}}, {"G": group(consumer("c1", T), consumer("c2", T))})
    assert "CLIENT_UNREACHABLE" not in codes(report)


# -- BROADCASTING / POP / PROXY_CLIENTS ------------------------------------------------------------


def test_broadcasting_is_reported_and_not_allocated() -> None:
    report = run(
        {T: {"queues": 1}},
        {"G": group(*(consumer(f"c{i}", T) for i in range(3)), messageModel="BROADCASTING")},
    )
    assert codes(report) == ["BROADCASTING"]
    assert [c.expected for c in report.groups[0].topics[0].consumers] == [1, 1, 1]
    assert "each of its 3 consumers reads every queue" in report.findings[0].message
    alone = run({T: {"queues": 1}}, {"G": group(consumer("c1", T), messageModel="BROADCASTING")})
    assert "BROADCASTING mode: its one consumer reads every queue of" in alone.findings[0].message


def test_pop_clients_are_broker_assigned_and_a_plain_one_mixes_with_them() -> None:
    # CONSUME_POP or POP queues: the broker assigns (inferred); c2 balances itself
    report = run(
        {T: {"queues": 1}},
        {"G": group(consumer("c1", T, consumeType="CONSUME_POP"), consumer("c2", T))},
    )
    assert "BROKER_REBALANCE" in codes(report) and "MIXED_REBALANCE" in codes(report)
    pop_table = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, popAssigned=q(-1)), consumer("c2", T))},
    )
    assert "POP_MODE" in codes(pop_table) and "MIXED_REBALANCE" in codes(pop_table)


def test_proxy_clients() -> None:
    report = run(
        {T: {"queues": 1}},
        {
            "G": group(
                consumer("host-1@4242@0@lmr3x9k2ab", T), consumer("host-2@77@0@lmr3x9zz01", T)
            )
        },
    )
    f = only(report, Code.PROXY_CLIENTS)
    assert f.consumers == ("host-1@4242@0@lmr3x9k2ab", "host-2@77@0@lmr3x9zz01")
    assert codes(report) == ["PROXY_CLIENTS"]
    assert f.message.startswith("2 of 2 consumers of G are 5.x gRPC clients behind a proxy")
    # rmqlb shows their lag itself (was: "the proxy's metrics or mqadmin consumerProgress")
    assert f.hint == (
        "nothing to fix here: follow their progress by the group's lag (rmqlb offsets G lists "
        "it per queue)"
    )


def test_remoting_clients_pulling_what_proxy_clients_pop_is_a_mix() -> None:
    """A remoting client pulls its share (here all of T) while a gRPC client the Proxy
    serves pops any queue of T: each message can reach both. The gRPC client is no idle
    consumer: no strategy gives it queues (before, IDLE_CONSUMER said it got none under AVG)."""
    grpc = "host-1@4242@0@lmr3x9k2ab"
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("10.0.0.1@1#2", T, assigned=q(0, 1)), consumer(grpc, T))},
    )
    assert "IDLE_CONSUMER" not in codes(report)
    f = only(report, Code.MIXED_REBALANCE)
    assert f.severity is Severity.warning
    assert f.message.endswith(
        "with gRPC clients a Proxy serves (host-1@4242@0@lmr3x9k2ab: they pop any queue of "
        "it): 2 queues pulled by a client and popped by others (broker-a:0, broker-a:1)"
    )
    assert f.consumers == ("10.0.0.1@1#2", grpc)


def test_clients_a_broker_assigns_by_pull_also_pull_what_proxy_clients_pop() -> None:
    """A 5.x client with clientRebalance=false in PULL mode pulls what its broker assigns:
    the gRPC client pops those queues too."""
    grpc = "host-1@4242@0@lmr3x9k2ab"
    report = run(
        {T: {"queues": 2}},
        {
            "G": group(
                consumer(
                    "10.0.0.1@1#2",
                    T,
                    assigned=q(0, 1),
                    properties={"clientRebalance": "false"},
                ),
                consumer(grpc, T),
                onBrokers={"broker-a": {"clientIds": ["10.0.0.1@1#2"]}},
            )
        },
    )
    f = only(report, Code.MIXED_REBALANCE)
    assert f.severity is Severity.warning
    assert f.message.startswith("G mixes clients that pull their share of TopicA (10.0.0.1@1#2)")
    assert "2 queues pulled by a client and popped by others" in f.message


def test_one_proxy_client_is_one() -> None:
    report = run({T: {"queues": 1}}, {"G": group(consumer("host-1@4242@0@lmr3x9k2ab", T))})
    assert only(report, Code.PROXY_CLIENTS).message == (
        "1 of 1 consumer of G is a 5.x gRPC client behind a proxy (host-1@4242@0@lmr3x9k2ab): "
        "the broker cannot fetch its running info and it consumes by POP, so there is no "
        "client-side allocation to check"
    )
    assert only(report, Code.PROXY_CLIENTS).hint.startswith("nothing to fix here: follow its ")


def test_remoting_clients_are_neither_pop_nor_proxy() -> None:
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("10.0.0.1@1#2", T), consumer("10.0.0.2@STREAM@u@x", T))},
    )
    assert codes(report) == []


# -- ALLOCATION_FAILED ----------------------------------------------------------------------------


def test_custom_strategy_cannot_be_reproduced() -> None:
    cls = "com.example.MyAllocateStrategy@1f"
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T, properties={"allocateMessageQueueStrategy": cls}))},
    )
    f = only(report, Code.ALLOCATION_FAILED)
    assert f.severity is Severity.info
    assert "MyAllocateStrategy" in f.message


def test_machine_room_nearby_with_an_unknown_room_throws_like_java() -> None:
    strategy = {
        "name": "MACHINE_ROOM_NEARBY",
        "inner": {"name": "AVG"},
        "brokerRooms": {"broker-a": "hz"},
        "consumerRooms": {"c1": "hz"},
    }
    report = run(
        {T: {"queues": 2}},
        {"G": group(consumer("c1", T), consumer("c2", T), strategy=strategy)},
    )
    f = only(report, Code.ALLOCATION_FAILED)
    assert f.severity is Severity.error
    assert "Machine room is null for consumer id c2" in f.message


def test_a_consumers_lag_is_unknown_when_one_of_its_queues_is() -> None:
    """broker-b did not answer for queue 3: c2's lag is unknown, not the 7 it has on queue 2
    (before, the unread queue counted as 0); c1's is known."""
    offsets = [_offset(T, i, behind) for i, behind in enumerate((5, 6, 7))]
    report = run(
        {T: {"queues": 4}},
        {
            "G": group(
                consumer("c1", T, assigned=q(0, 1)),
                consumer("c2", T, assigned=q(2, 3)),
                offsets=offsets,
            )
        },
    )
    table = report.groups[0].topics[0]
    assert [r.lag for r in table.queues] == [5, 6, 7, None]
    assert [(c.client_id, c.lag) for c in table.consumers] == [("c1", 11), ("c2", None)]


def test_one_idle_consumer_among_enough_queues_is_singular() -> None:
    """CONSISTENT_HASH with one virtual node can leave a client without a queue although
    there are queues enough; the verb agrees with the one client."""
    ring = {"name": "CONSISTENT_HASH", "virtualNodeCnt": 1}
    pair = (consumer("x0", T, strategy=ring), consumer("x1", T, strategy=ring))
    idle = only(run({T: {"queues": 4}}, {"G": group(*pair)}), Code.IDLE_CONSUMER)
    assert idle.message.startswith(f"1 of 2 consumers subscribing {T} gets no queue under")


def test_expressions_merged_in_the_hint_keep_each_ones_tags() -> None:
    """'A||' lets tag A through, not every tag: the merged expression names A and B."""
    f = _expressions(("TagA||", 5), ("TagB", 9))
    assert "(for example 'TagA || TagB')" in f.hint
    f = _expressions(("TagA", 5), ("*", 9))
    assert "(for example '*')" in f.hint
