"""What --watch marks: queues that changed owner, new and cleared findings."""

from __future__ import annotations

from report_builders import C2, C3, queues, rebalance_report, settled_report

from rmqlb.diagnose.report import Code
from rmqlb.render.changes import describe_changes, diff_reports


def test_identical_reports_have_no_changes() -> None:
    changes = diff_reports(rebalance_report(), rebalance_report())
    assert changes.empty
    assert describe_changes(changes) == []


def test_settling_rebalance_moves_queues_and_clears_findings() -> None:
    before, after = rebalance_report(), settled_report()
    changes = diff_reports(before, after)
    moved = sorted(c.queue.queue_id for c in changes.queues)
    assert moved == [6, 7, 11, 12, 13, 14, 15]
    q11 = next(c for c in changes.queues if c.queue.queue_id == 11)
    assert (q11.before, q11.after, q11.kind) == ((C2, C3), (C3,), "moved")
    assert {f.code for f in changes.cleared_findings} == {
        Code.DUPLICATE_ASSIGNMENT,
        Code.UNCONSUMED_QUEUE,
        Code.ASSIGNMENT_MISMATCH,
    }
    assert changes.new_findings == ()
    mq6 = queues("lhy-test-topic", "broker-a", 7)[6]
    assert changes.queue_changed("lhy-test-consumerGroup", "lhy-test-topic", mq6)
    assert not changes.queue_changed("lhy-test-consumerGroup", "other", mq6)
    lines = describe_changes(changes)
    moved = f"queue lhy-test-consumerGroup lhy-test-topic broker-a:6, broker-a:7: nobody -> {C2}"
    assert moved in lines
    assert len([line for line in lines if line.startswith("queue ")]) == 2
    assert sum(line.startswith("cleared ") for line in lines) == 3


def test_reverse_direction_reports_new_findings() -> None:
    changes = diff_reports(settled_report(), rebalance_report())
    assert len(changes.new_findings) == 3
    assert all(changes.finding_is_new(f) for f in rebalance_report().findings)
    assert changes.cleared_findings == ()


def test_queues_added_to_and_removed_from_the_route() -> None:
    before, after = settled_report(), rebalance_report()
    # Drop the last queue from "after": it shows as removed; the reverse shows it added.
    g = after.groups[0]
    t = g.topics[0]
    shrunk = type(after)(
        (
            type(g)(
                g.group,
                g.message_model,
                g.strategy,
                (type(t)(t.topic, t.queues[:-1], t.consumers),),
            ),
        ),
        after.findings,
    )
    kinds = {c.queue.queue_id: c.kind for c in diff_reports(before, shrunk).queues}
    assert kinds[15] == "removed"
    kinds = {c.queue.queue_id: c.kind for c in diff_reports(shrunk, before).queues}
    assert kinds[15] == "added"
