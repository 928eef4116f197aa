"""``rmqlb offsets`` against the real ``mqadmin consumerProgress -g``, with and without
consumers.

The group consumes what was sent, then its only consumer stops cleanly (its offsets are
committed) and more messages arrive for nobody: both times every queue's max offset,
committed offset and lag must be what mqadmin prints.
"""

from __future__ import annotations

import json
from typing import Any

from conftest import Names
from realkit import Kit

Row = tuple[int, int, int]  # broker offset, consumer offset, diff


def offsets(kit: Kit, group: str, topic: str) -> dict[str, Any]:
    """``rmqlb offsets GROUP -n <kit> -t TOPIC -o json``, parsed."""
    done = kit.rmqlb("offsets", group, "-n", kit.namesrv, "-t", topic, "-o", "json", expect=(0,))
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def ours(doc: dict[str, Any]) -> dict[tuple[str, int], Row]:
    return {
        (q["brokerName"], q["queueId"]): (q["brokerOffset"], q["consumerOffset"], q["lag"])
        for q in doc["queues"]
    }


def mqadmin_progress(kit: Kit, group: str, topic: str) -> dict[tuple[str, int], Row]:
    """The rows of ``mqadmin consumerProgress -g GROUP`` for ``topic``: ``#Topic #Broker Name
    #QID #Broker Offset #Consumer Offset #Diff #LastTime``."""
    rows: dict[tuple[str, int], Row] = {}
    for line in kit.mqadmin("consumerProgress", "-g", group).splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[0] == topic:
            broker, qid, max_offset, committed, diff = fields[1:6]
            rows[(broker, int(qid))] = (int(max_offset), int(committed), int(diff))
    return rows


def test_offsets_agree_with_mqadmin_consumer_progress(kit: Kit, names: Names) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    jvm = kit.consumer("offsets", f"group={g};sub={t}:*;instance=o1")
    kit.wait_steady(g, jvm, consumers=1, queues={t: 8})
    kit.produce(t, 40)

    def consumed() -> dict[str, Any] | None:
        doc = offsets(kit, g, t)
        rows = doc["queues"]
        done = len(rows) == 8 and sum(q["brokerOffset"] for q in rows) == 40
        return doc if done and doc["totals"]["lag"] == 0 else None

    doc = kit.wait_for("the consumer to commit all 40 messages", consumed, timeout=60, every=1.0)
    assert doc["consumers"] == 1
    assert all(q["holders"] and len(q["holders"]) == 1 for q in doc["queues"])
    assert ours(doc) == mqadmin_progress(kit, g, t)

    kit.halt("offsets")  # a clean shutdown: offsets committed, then nobody consumes
    kit.produce(t, 24)

    def waiting() -> dict[str, Any] | None:
        doc = offsets(kit, g, t)
        return doc if doc["consumers"] == 0 and doc["totals"]["lag"] == 24 else None

    doc = kit.wait_for("24 messages to wait for nobody", waiting, timeout=60, every=1.0)
    assert all(q["holders"] == [] for q in doc["queues"])
    assert ours(doc) == mqadmin_progress(kit, g, t)
    text = kit.rmqlb("offsets", g, "-n", kit.namesrv, "-t", t, "--sort-by", "lag").stdout
    assert "Totals: 8 queues, lag 24, 0 consumers online" in text
