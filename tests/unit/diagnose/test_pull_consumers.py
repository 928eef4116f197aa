"""Pull consumers (DefaultLitePullConsumer, DefaultMQPullConsumer): what their running info
says of the queues they hold, and the queues they read by assign() without subscribing.

``examples/lite-pull-consumers.json`` is a real 4.9.8 capture: ``s1`` and ``s2`` subscribe
``LX`` (8 queues), ``a1`` assign()s ``broker-a:0`` only; AVG over the three gives ``a1``
``broker-a:0..2``. On the 5.1.4 kit the same three held (their own tables, read in the JVM)
``a1`` broker-a:0, ``s1`` broker-a:3 and broker-b:0..1, ``s2`` broker-b:2..3: the holdings the
5.1.4 variants below give them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stalled_polls import poll_doc

from rmqlb.cli import run
from rmqlb.diagnose import Code, QueueStatus, Severity, diagnose
from rmqlb.diagnose.balance import PULLS_ITSELF
from rmqlb.diagnose.context import DiagnoseOptions, PollHistory
from rmqlb.diagnose.status import stranded_by_topic
from rmqlb.model import Consumer
from rmqlb.model.snapshot import V5_1_1, lists_no_queues, pull_consumer_kind
from rmqlb.remoting.bodies import decode_consumer_running_info, encode_consumer_running_info
from rmqlb.remoting.codes import mq_version
from rmqlb.render._view import consumer_note
from rmqlb.snapshot import load_snapshot, parse_snapshot

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "lite-pull-consumers.json"
G, T = "GX", "LX"
A1, S1, S2 = (f"127.0.0.1@{n}@STREAM" for n in ("a1", "s1", "s2"))
V5_1_4 = mq_version(5, 1, 4)
#: What each client held on the 5.1.4 kit (its own table, read in the JVM).
HELD_5_1_4 = {
    A1: [("broker-a", 0)],
    S1: [("broker-a", 3), ("broker-b", 0), ("broker-b", 1)],
    S2: [("broker-b", 2), ("broker-b", 3)],
}
LITE = {"defaultLitePullConsumerImpl": "org.apache...DefaultLitePullConsumerImpl@1b2c3d"}
LEGACY = {"defaultMQPullConsumerImpl": "org.apache...DefaultMQPullConsumerImpl@4e5f6a"}


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return doc


def _as_5_1_4(doc: dict[str, Any], keep: tuple[str, ...] = (A1, S1, S2)) -> dict[str, Any]:
    """The capture as a 5.1.4 client answers: its running info lists what it holds."""
    group = doc["groups"][G]
    group["consumers"] = [c for c in group["consumers"] if c["clientId"] in keep]
    for c in group["consumers"]:
        c["version"] = V5_1_4
        c["properties"]["PROP_CLIENT_VERSION"] = "V5_1_4"
        c["assigned"] = [
            {"topic": T, "brokerName": b, "queueId": q} for b, q in HELD_5_1_4[c["clientId"]]
        ]
    return doc


@pytest.mark.parametrize(
    ("properties", "version", "consume_type", "silent"),
    [
        (LITE, mq_version(4, 9, 8), "CONSUME_ACTIVELY", True),
        (LITE, mq_version(5, 1, 0), None, True),
        (LITE, None, None, True),
        (LITE, V5_1_1, "CONSUME_ACTIVELY", False),
        (LITE, V5_1_4, None, False),
        (LEGACY, V5_1_4, None, True),  # no version of the legacy pull consumer lists its queues
        # a subclass of a pull consumer names no impl field; its consume type says it pulls
        ({}, mq_version(5, 0, 0), "CONSUME_ACTIVELY", True),
        ({}, V5_1_4, "CONSUME_ACTIVELY", False),
        ({"consumeThreadMin": "20"}, mq_version(4, 9, 8), "CONSUME_PASSIVELY", False),  # push
    ],
)
def test_which_clients_never_list_their_queues(
    properties: dict[str, str], version: int | None, consume_type: str | None, silent: bool
) -> None:
    assert lists_no_queues(properties, version, consume_type) is silent
    assert mq_version(5, 1, 1) == V5_1_1


def test_the_pull_consumer_kinds() -> None:
    assert pull_consumer_kind(LITE) == "DefaultLitePullConsumer"
    assert pull_consumer_kind(LEGACY) == "DefaultMQPullConsumer"
    assert pull_consumer_kind({}) is None


def test_lite_pull_clients_before_5_1_1_are_unreported_not_unreachable_nor_idle() -> None:
    """The real 4.9.8 capture: no queue of LX is called unconsumed, moved or stale on the
    strength of an empty mqTable; the queues are unknown, and the finding says why."""
    report = diagnose(parse_snapshot(_doc()))
    assert [(f.code, f.severity) for f in report.findings] == [
        (Code.SUBSCRIPTION_INCONSISTENT, Severity.error),
        (Code.QUEUES_UNREPORTED, Severity.info),
    ]
    split, unreported = report.findings
    assert split.queues == ()  # nothing known to be lost: a1 may assign() its share
    assert split.message == (
        f"2 of 3 consumers of {G} subscribe {T} and 1 does not ({A1}): it still counts in "
        f"cidAll, so the 3 queues of {T} that AVG gives it (broker-a:0..2) are read only where "
        f"{A1} assign()s them, which its running info does not say"
    )
    # lite pull subscribers send their subscription with each pull: no 'subscription not exist'
    assert "subscription not exist" not in split.message
    assert split.hint.startswith(f"move {A1} into a group of its own: it is a pull consumer")
    assert unreported.consumers == (A1, S1, S2)
    assert "DefaultLitePullConsumer V4_9_8" in unreported.message
    assert "what each holds is unknown" in unreported.message
    (table,) = report.groups[0].topics[:1]
    assert {q.status for q in table.queues} == {QueueStatus.unknown}
    assert [consumer_note(c, table) for c in table.consumers] == ["unreported"] * 3


def test_known_holdings_of_5_1_4_leave_only_the_unassigned_share_unconsumed() -> None:
    """As the 5.1.4 clients answered: a1 holds broker-a:0 of its share broker-a:0..2, so
    broker-a:1..2 are never consumed, and a1 holding what no strategy gave it is no
    mismatch (it chose it)."""
    report = diagnose(parse_snapshot(_as_5_1_4(_doc())))
    codes = [(f.code, f.topic, [q.label() for q in f.queues]) for f in report.findings]
    assert codes == [
        (Code.SUBSCRIPTION_INCONSISTENT, T, ["broker-a:1", "broker-a:2"]),
        (Code.UNCONSUMED_QUEUE, T, ["broker-a:1", "broker-a:2"]),
    ]
    assert report.findings[0].message.endswith(
        f"(broker-a:0..2): broker-a:1, broker-a:2 are never consumed; broker-a:0 is read by "
        f"{A1} itself, as its application assign()s it"
    )
    (table,) = report.groups[0].topics[:1]
    statuses = {q.queue.label(): q.status for q in table.queues}
    assert statuses["broker-a:0"] is QueueStatus.ok
    assert statuses["broker-a:1"] is statuses["broker-a:2"] is QueueStatus.unconsumed
    assert [consumer_note(c, table) for c in table.consumers] == ["2 queues never read", "", ""]


def test_a_group_of_assigning_clients_only_gets_no_advice_to_remove_its_offsets() -> None:
    """a1 alone subscribes nothing: its topic is known by the group's offsets only."""
    alone = _doc()
    alone["groups"][G]["consumers"] = [
        c for c in alone["groups"][G]["consumers"] if c["clientId"] == A1
    ]
    (no_consumers, _) = diagnose(parse_snapshot(alone)).findings
    assert (no_consumers.code, no_consumers.severity) == (Code.NO_CONSUMERS, Severity.info)
    assert no_consumers.message == (
        f"no consumer of {G} subscribes {T} although the group has offsets for it (40 messages "
        f"of lag), but {A1} is a pull consumer, which reads the queues its application "
        "assign()s: what it holds is unreported"
    )
    assert "remove" not in no_consumers.hint.replace("nothing to remove", "")
    # 5.1.4: it holds broker-a:0; broker-a:1..2 have messages nobody holds
    (known,) = diagnose(parse_snapshot(_as_5_1_4(_doc(), keep=(A1,)))).findings
    assert (known.code, known.severity) == (Code.NO_CONSUMERS, Severity.warning)
    assert [q.label() for q in known.queues] == ["broker-a:1", "broker-a:2"]
    assert known.message.endswith(
        "it holds broker-a:0; nobody holds broker-a:1, broker-a:2, where 40 messages wait"
    )
    assert known.hint == (
        f"nothing to remove: {T}'s queues are read where the application assign()s them; have "
        "the application assign() broker-a:1, broker-a:2 too: nobody reads the messages "
        "waiting there"
    )


def _assigning(doc: dict[str, Any], held: dict[str, list[tuple[str, int]]]) -> dict[str, Any]:
    """The 5.1.4 capture of a1 alone, with more clients like it that hold ``held``."""
    group = _as_5_1_4(doc, keep=(A1,))["groups"][G]
    (a1,) = group["consumers"]
    group["consumers"] = []
    for cid, queues in held.items():
        client = json.loads(json.dumps(a1))
        client["clientId"] = cid
        client["assigned"] = [{"topic": T, "brokerName": b, "queueId": q} for b, q in queues]
        group["consumers"].append(client)
    return doc


def test_a_queue_two_clients_assign_is_read_twice_for_good() -> None:
    """Nobody subscribes LX: a1 and a2 both assign() broker-a:1, so both read all of it, and
    no rebalance ends that; in BROADCASTING each client reading every queue is the model."""
    a2 = A1.replace("a1", "a2")
    held = {A1: [("broker-a", 0), ("broker-a", 1)], a2: [("broker-a", 1)]}
    doc = _assigning(_doc(), held)
    report = diagnose(parse_snapshot(doc))
    codes = [(f.code, f.severity) for f in report.findings]
    assert codes == [
        (Code.DUPLICATE_ASSIGNMENT, Severity.error),
        (Code.NO_CONSUMERS, Severity.warning),
    ]
    (doubled, _) = report.findings
    assert [q.label() for q in doubled.queues] == ["broker-a:1"]
    assert doubled.consumers == (A1, a2)
    assert doubled.message == (
        f"1 queue of {T} is held by more than one consumer (broker-a:1 by {A1} and {a2}): "
        "their messages are consumed more than once"
    )
    assert doubled.hint == (
        f"{A1}, {a2} assign() broker-a:1 each, so this lasts (no rebalance moves a queue a pull "
        "consumer assign()s): have the applications assign() each queue to one consumer of the "
        "group only"
    )
    apart = _assigning(_doc(), {A1: [("broker-a", 0)], a2: [("broker-a", 1)]})
    assert [f.code for f in diagnose(parse_snapshot(apart)).findings] == [Code.NO_CONSUMERS]
    doc["groups"][G]["messageModel"] = "BROADCASTING"
    for c in doc["groups"][G]["consumers"]:
        c["properties"]["messageModel"] = "BROADCASTING"
    codes_broadcasting = {f.code for f in diagnose(parse_snapshot(doc)).findings}
    assert Code.DUPLICATE_ASSIGNMENT not in codes_broadcasting


def test_a_topic_read_only_by_assign_has_a_table_without_expected_holders() -> None:
    """No strategy allocates LX: each row says who holds it (ok, duplicate, unconsumed),
    nothing is expected of anyone, and no allocation finding is drawn from it; ``--topic``
    takes it, and ``status`` counts as stranded only what waits where nobody holds."""
    a2 = A1.replace("a1", "a2")
    held = {A1: [("broker-a", 0), ("broker-a", 1)], a2: [("broker-a", 1)]}
    snapshot = parse_snapshot(_assigning(_doc(), held))
    report = diagnose(snapshot)
    (table,) = report.groups[0].topics
    assert table.topic == T
    rows = {q.queue.label(): (q.expected, q.actual, q.status) for q in table.queues}
    assert rows["broker-a:0"] == (None, (A1,), QueueStatus.ok)
    assert rows["broker-a:1"] == (None, (A1, a2), QueueStatus.duplicate)
    assert rows["broker-a:2"] == (None, (), QueueStatus.unconsumed)
    assert {c.client_id: (c.subscribes, c.expected, c.actual) for c in table.consumers} == {
        A1: (False, 0, 2),
        a2: (False, 0, 1),
    }
    assert [consumer_note(c, table) for c in table.consumers] == ["", ""]
    assert {f.code for f in report.findings} == {Code.DUPLICATE_ASSIGNMENT, Code.NO_CONSUMERS}
    assert diagnose(snapshot, topic=T).groups[0].topics == (table,)
    status = stranded_by_topic(snapshot.groups[G], report.groups[0])
    assert status[T].messages == 20  # broker-a:2's; broker-a:1's are read (twice)
    # before 5.1.1 what a1 holds is unreported: every row unknown, nothing stranded for sure
    unreported = _doc()
    unreported["groups"][G]["consumers"] = [
        c for c in unreported["groups"][G]["consumers"] if c["clientId"] == A1
    ]
    (table,) = diagnose(parse_snapshot(unreported)).groups[0].topics
    assert {q.status for q in table.queues} == {QueueStatus.unknown}
    assert [consumer_note(c, table) for c in table.consumers] == ["unreported"]


def test_a_queue_a_client_assigns_while_a_subscriber_holds_it_is_read_twice() -> None:
    """a1 assign()s broker-a:3, which AVG gives s1: the fix is a1's, not a rebalance."""
    doc = _as_5_1_4(_doc())
    (a1,) = [c for c in doc["groups"][G]["consumers"] if c["clientId"] == A1]
    a1["assigned"] = [{"topic": T, "brokerName": "broker-a", "queueId": 3}]
    (doubled,) = [
        f for f in diagnose(parse_snapshot(doc)).findings if f.code is Code.DUPLICATE_ASSIGNMENT
    ]
    assert doubled.consumers == (A1, S1)
    assert doubled.message.endswith("their messages are consumed more than once")
    assert doubled.hint == (
        f"{A1} assign()s broker-a:3 while the subscribers of {T} allocate it among themselves, "
        f"so this lasts: have the application assign() only queues no subscriber reads, or move "
        f"{A1} into a group of its own"
    )


def test_a_legacy_pull_consumer_of_any_version_is_unreported() -> None:
    doc = _doc()
    for c in doc["groups"][G]["consumers"]:
        props = {k: v for k, v in c["properties"].items() if k != "defaultLitePullConsumerImpl"}
        c["properties"] = {**props, **LEGACY}
        c["version"] = V5_1_4
    (unreported,) = [
        f for f in diagnose(parse_snapshot(doc)).findings if f.code is Code.QUEUES_UNREPORTED
    ]
    assert "(DefaultMQPullConsumer: " in unreported.message
    assert "DefaultMQPullConsumer is deprecated" in unreported.hint


def test_running_info_as_a_lite_pull_client_before_5_1_1_answers() -> None:
    """The fake answers like the real client: an empty mqTable and no status table."""
    snapshot = parse_snapshot(_doc())
    group = snapshot.groups[G]
    consumer = next(c for c in group.consumers if c.client_id == S1)
    assert consumer.assigned is None and consumer.queues_unreported
    body = encode_consumer_running_info(consumer, group)
    raw = json.loads(body)
    assert raw["mqTable"] == {} and raw["statusTable"] == {}
    info = decode_consumer_running_info(body)
    assert info.assigned == () and info.consume_type == "CONSUME_ACTIVELY"


def test_a_queue_an_unreported_pull_consumer_leaves_stalls_over_two_polls() -> None:
    """QUEUE_STALLED names why its holder is unknown."""
    client: dict[str, Any] = {
        "proxy": None,
        "version": mq_version(4, 9, 8),
        "consumeType": "CONSUME_ACTIVELY",
        "properties": LITE,
    }
    history = PollHistory()
    findings = []
    for seconds, committed in ((0, [10, 10, 10, 10]), (61, [50, 50, 10, 50])):
        poll = parse_snapshot(poll_doc(seconds, committed, **client))
        findings = diagnose(poll, options=DiagnoseOptions(earlier=history.earlier(poll))).findings
    (stalled,) = [f for f in findings if f.code is Code.QUEUE_STALLED]
    assert "(they are pull consumers whose running info lists no queue)" in stalled.message
    assert not any(f.code is Code.CLIENT_UNREACHABLE for f in findings)


def test_a_consumer_reports_unreported_only_when_its_queues_are_unknown() -> None:
    lite = Consumer("c", properties=LITE, version=mq_version(4, 9, 8))
    assert lite.queues_unreported and lite.pulls_actively
    holds_none = Consumer("c", properties=LITE, version=mq_version(4, 9, 8), assigned=())
    assert not holds_none.queues_unreported
    assert Consumer("c", consume_type="CONSUME_ACTIVELY").pulls_actively
    assert not Consumer("c", consume_type="CONSUME_PASSIVELY").pulls_actively


def test_the_catalogue_quotes_real_output() -> None:
    """docs/findings.md's QUEUES_UNREPORTED section: each quoted message (and fix, where
    quoted) comes out of the engine for the example or its 5.1.4 variants."""
    doc = (EXAMPLE.parents[1] / "docs" / "findings.md").read_text(encoding="utf-8")
    alone = _as_5_1_4(_doc(), keep=(A1,))
    quoted = {
        Code.QUEUES_UNREPORTED: (_doc(), True),
        Code.SUBSCRIPTION_INCONSISTENT: (_doc(), True),
        Code.NO_CONSUMERS: (alone, True),
    }
    for code, (snapshot, with_fix) in quoted.items():
        (f,) = [f for f in diagnose(parse_snapshot(snapshot)).findings if f.code is code]
        assert f"> {f.message}\n" in doc
        if with_fix:
            assert f"> {f.message}\n>\n> fix: {f.hint}\n" in doc
    known = diagnose(parse_snapshot(_as_5_1_4(_doc()))).findings[0]
    assert f"> {known.message}\n" in doc
    a2 = A1.replace("a1", "a2")
    twice = _assigning(_doc(), {A1: [("broker-a", 0), ("broker-a", 1)], a2: [("broker-a", 1)]})
    doubled = diagnose(parse_snapshot(twice)).findings[0]
    assert f"> {doubled.message}\n>\n> fix: {doubled.hint}\n" in doc
    stalled = diagnose(load_snapshot(EXAMPLE.with_name("stalled-lite-pull.json"))).findings[0]
    assert f"> {stalled.message}\n>\n> fix: {stalled.hint}\n" in doc


def test_a_pull_consumer_is_said_to_balance_itself_as_a_pull_consumer() -> None:
    """Not "clientRebalance not reported": only a push consumer can ask a broker."""
    report = diagnose(parse_snapshot(_as_5_1_4(_doc())))
    (table,) = report.groups[0].topics[:1]
    assert {(c.balanced_by.value, c.balance_inferred) for c in table.consumers} == {
        ("client", PULLS_ITSELF)
    }


def test_client_and_offsets_say_why_the_holders_are_unknown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["client", S1, "-d", str(EXAMPLE), "-o", "plain"]) == 0
    out = capsys.readouterr().out
    assert (
        "held queues: unknown (its running info lists no queue: a DefaultLitePullConsumer "
        "before 5.1.1, or a DefaultMQPullConsumer)" in out
    )
    assert "pull consumer balances itself" in out
    assert run(["offsets", G, "-d", str(EXAMPLE), "-o", "plain"]) == 0
    out = capsys.readouterr().out
    assert "holder ?: 3 pull consumers list no queue in their running info (a " in out


def test_a_broadcasting_group_of_lite_pull_consumers_says_why_its_queues_are_unknown() -> None:
    """As two 4.9.8 BROADCASTING lite pull consumers answered on the kit: each reads every
    queue, and their running info lists none of them nor their own offsets."""
    doc = _doc()
    group = doc["groups"][G]
    group["messageModel"] = "BROADCASTING"
    group["consumers"] = [c for c in group["consumers"] if c["clientId"] != A1]
    for c in group["consumers"]:
        c["properties"]["messageModel"] = "BROADCASTING"
    found = diagnose(parse_snapshot(doc)).findings
    assert [f.code for f in found] == [Code.BROADCASTING, Code.QUEUES_UNREPORTED]
    assert "each reads every queue of what they subscribe (BROADCASTING)" in found[1].message
    assert found[1].hint.startswith(
        "nothing to fix here: in BROADCASTING each client keeps its own offsets"
    )
