"""The per-queue lists of a topic context agree with a plain per-queue computation."""

from __future__ import annotations

from typing import Any

import pytest
from diagnose_builders import consumer, group, queues, route, snapshot

from rmqlb.diagnose.context import DiagnoseOptions, group_context, topic_context

STRATEGIES: list[dict[str, Any]] = [
    {"name": "AVG"},
    {"name": "AVG_BY_CIRCLE"},
    {"name": "CONSISTENT_HASH", "virtualNodeCnt": 3},
]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s["name"])
def test_owner_and_held_index_match_a_plain_computation(strategy: dict[str, Any]) -> None:
    topics = {
        "T": route(("broker-b", 5, 5, 6), ("broker-a", 4, 4, 6), ("broker-c", 3, 3, 2)),
        "U": {"queues": 2},
    }
    snap = snapshot(
        topics,
        {
            "G": group(
                consumer(
                    "c1",
                    "T",
                    "U",
                    assigned=queues("T", "broker-a", 0, 1, 2) + queues("U", "broker-a", 0),
                ),
                consumer(
                    "c2", "T", assigned=queues("T", "broker-b", 4, 0) + queues("T", "broker-c", 1)
                ),
                consumer("c3", "T", assigned=queues("T", "broker-a", 1)),
                consumer("c4", "T"),
                strategy=strategy,
            )
        },
    )
    g = group_context(snap, snap.groups["G"], None, DiagnoseOptions())
    ctx = topic_context(g, "T")
    assert ctx.expected is not None
    plain_owner = [None] * len(ctx.mq_all)
    for cid, held in ctx.expected.items():
        for mq in held:
            plain_owner[ctx.mq_all.index(mq)] = cid
    assert ctx.owner == plain_owner
    # c1 keeps only its T queues; c2 holds a queue of a non-readable broker; c4: unknown
    assert [None if a is None else [q.label() for q in a] for a in ctx.actual] == [
        ["broker-a:0", "broker-a:1", "broker-a:2"],
        ["broker-b:4", "broker-b:0", "broker-c:1"],
        ["broker-a:1"],
        None,
    ]
    assert ctx.held_index == [[0, 1, 2], None, [1], None]
    assert [q.label() for q in ctx.extra] == ["broker-c:1"]
    assert ctx.holders(1) == ["c1", "c3"]
