"""Causes before consequences: the links between findings, their order and their ids."""

from __future__ import annotations

import json

from diagnose_builders import consumer, group, queues, run, snapshot
from hypothesis import given
from hypothesis import strategies as st

from rmqlb.diagnose import Code, DiagnoseOptions, Finding, Severity, report_to_json
from rmqlb.diagnose.causes import arrange, link_causes
from rmqlb.diagnose.context import GroupContext, group_context
from rmqlb.diagnose.report import finding_depths, order_findings, sort_findings, tree_order
from rmqlb.model import MessageQueue

T = "TopicA"


def mq(i: int, topic: str = T) -> MessageQueue:
    return MessageQueue(topic, "broker-a", i)


def finding(
    code: Code,
    severity: Severity = Severity.error,
    *,
    topic: str | None = T,
    consumers: tuple[str, ...] = (),
    queues_: tuple[MessageQueue, ...] = (),
    group_name: str = "G",
) -> Finding:
    return Finding(code, severity, group_name, f"{code.value} message", "its own fix", topic,
                   consumers, queues_)  # fmt: skip


def context() -> GroupContext:
    snap = snapshot({T: {"queues": 4}}, {"G": group(consumer("c1", T), consumer("c2", T))})
    return group_context(snap, snap.groups["G"], None, DiagnoseOptions())


def test_links_need_a_known_pair_the_same_topic_and_evidence() -> None:
    stale = finding(Code.STALE_ALLOCATION, consumers=("c1",), queues_=(mq(2), mq(3)))
    findings = [
        finding(Code.DUPLICATE_ASSIGNMENT, consumers=("c1", "c2"), queues_=(mq(2), mq(3))),
        finding(Code.DUPLICATE_ASSIGNMENT, topic="TopicB", queues_=(mq(2, "TopicB"),)),
        finding(Code.UNCONSUMED_QUEUE, queues_=(mq(1),)),  # not among the stale queues
        finding(Code.ASSIGNMENT_MISMATCH, Severity.warning, consumers=("c1",)),
        finding(Code.ASSIGNMENT_MISMATCH, Severity.warning, consumers=("c1", "c2")),
        finding(Code.IMBALANCE, Severity.warning, consumers=("c1",)),  # no such pair
        stale,
    ]
    assert link_causes(context(), findings) == [6, None, None, 6, None, None, None]


def test_the_most_basic_cause_wins_and_group_wide_causes_reach_every_topic() -> None:
    dup_id = finding(Code.DUPLICATE_CLIENT_ID, topic=None, consumers=("c1",), queues_=(mq(0),))
    stale = finding(Code.STALE_ALLOCATION, consumers=("c1",), queues_=(mq(0),))
    effect = finding(Code.DUPLICATE_ASSIGNMENT, consumers=("c1",), queues_=(mq(0),))
    assert link_causes(context(), [stale, effect, dup_id]) == [None, 2, None]
    stalled = finding(Code.CONSUMER_STALLED, consumers=("c1",))
    unreachable = finding(Code.CLIENT_UNREACHABLE, Severity.warning, topic=None, consumers=("c1",))
    assert link_causes(context(), [unreachable, stalled]) == [1, None]


def test_arrange_numbers_in_report_order_and_hands_the_cause_s_fix_down() -> None:
    stale = finding(Code.STALE_ALLOCATION, Severity.warning, consumers=("c1",), queues_=(mq(0),))
    dup = finding(Code.DUPLICATE_ASSIGNMENT, consumers=("c1", "c2"), queues_=(mq(0),))
    other = finding(Code.WRITE_EXCEEDS_READ, queues_=(mq(9),))
    out = arrange([dup, other, stale], [2, None, None])
    # the tree ranks by its most severe finding (the error under the warning), then by code
    assert [(f.id, f.code, f.caused_by) for f in out] == [
        ("G/F1", Code.STALE_ALLOCATION, None),
        ("G/F2", Code.DUPLICATE_ASSIGNMENT, "G/F1"),
        ("G/F3", Code.WRITE_EXCEEDS_READ, None),
    ]
    assert out[0].hint == "its own fix" and out[2].hint == "its own fix"
    assert out[1].hint == (
        "caused by STALE_ALLOCATION (G/F1): c1 allocates from outdated inputs; fixing that "
        "clears this too"
    )
    assert finding_depths(out) == [0, 1, 0]
    assert order_findings(reversed(out)) == out


def test_json_carries_ids_and_links() -> None:
    first = consumer("first", T, assigned=queues(T, "broker-a", 0, 1, 2, 3))
    second = consumer("second", T, assigned=queues(T, "broker-a", 2, 3))
    doc = report_to_json(run({T: {"queues": 4}}, {"G": group(first, second)}))
    rows = [(f["id"], f["code"], f["causedBy"]) for f in doc["findings"]]
    assert rows == [
        ("G/F1", "STALE_ALLOCATION", None),
        ("G/F2", "DUPLICATE_ASSIGNMENT", "G/F1"),
        ("G/F3", "ASSIGNMENT_MISMATCH", "G/F1"),
    ]
    assert json.loads(json.dumps(doc)) == doc


# -- tree order, as a property --------------------------------------------------------------------

CODES = list(Code)


@st.composite
def forests(draw: st.DrawFn) -> tuple[list[Finding], list[int | None]]:
    n = draw(st.integers(0, 12))
    findings = [
        finding(
            draw(st.sampled_from(CODES)),
            draw(st.sampled_from(list(Severity))),
            topic=draw(st.sampled_from([None, "A", "B"])),
            group_name=draw(st.sampled_from(["G", "H"])),
        )
        for _ in range(n)
    ]
    # a parent always has a smaller index before shuffling: no cycles
    parents: list[int | None] = [
        None if i == 0 else draw(st.one_of(st.none(), st.integers(0, i - 1))) for i in range(n)
    ]
    order = draw(st.permutations(range(n)))
    where = {old: new for new, old in enumerate(order)}
    shuffled = [findings[old] for old in order]
    links = [None if parents[old] is None else where[parents[old]] for old in order]  # type: ignore[index]
    return shuffled, links


@given(forests())
def test_tree_order_puts_each_subtree_after_its_cause(
    forest: tuple[list[Finding], list[int | None]],
) -> None:
    findings, parents = forest
    order = tree_order(findings, parents)
    assert sorted(order) == list(range(len(findings)))
    at = {i: pos for pos, i in enumerate(order)}
    for child, parent in enumerate(parents):
        if parent is not None:
            assert at[parent] < at[child]

    # a subtree is contiguous: everything between a cause and its last descendant descends
    # from it
    def ancestors(i: int) -> set[int]:
        out: set[int] = set()
        while parents[i] is not None:
            i = parents[i]  # type: ignore[assignment]
            out.add(i)
        return out

    for pos, i in enumerate(order):
        if pos + 1 < len(order):
            nxt = order[pos + 1]
            assert parents[nxt] is None or parents[nxt] in ancestors(nxt) & ({i} | ancestors(i))
    if all(p is None for p in parents):
        assert [findings[i] for i in order] == sort_findings(findings)
