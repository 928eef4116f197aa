"""Advice on partial data against a real RocketMQ cluster: a broker that stops answering
while the only messages of a group wait on it; a broker added to a topic while the group's
consumers are gone."""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import pytest
from conftest import Names
from realkit import Kit, findings, report_topic


def _broker_pid(kit: Kit, broker: str) -> int:
    return int((kit.rmq_dir / "pids" / f"{broker}.pid").read_text().strip())


def test_broker_down_with_the_only_waiting_messages_gives_no_delete_advice(
    kit: Kit, names: Names
) -> None:
    """broker-b hangs (SIGSTOP: the NameServer still lists it) while the group's consumer is
    gone and its 40 waiting messages all sit on broker-b: the lag is unknown, nothing advises
    deleting the group, and the exit code says partial data."""
    g, t = names.group, names.topic
    kit.topic(t, read=4, brokers=("broker-b",))
    jvm = kit.consumer("advice-gone", f"group={g};sub={t}:*;instance=gone")
    kit.wait(g, jvm, consumers=1, queues={t: 4})
    kit.halt("advice-gone")  # a clean shutdown: offsets committed, channel closed
    kit.produce(t, 40)
    pid = _broker_pid(kit, "broker-b")
    os.kill(pid, signal.SIGSTOP)
    try:
        report = kit.explain(g, "--timeout", "2")
        done = kit.rmqlb("status", "-n", kit.namesrv, g, "--timeout", "2", "-o", "json")
    finally:
        os.kill(pid, signal.SIGCONT)
        kit.wait_for("broker-b to answer again", lambda: "broker-b" in kit.brokers_registered())
    assert report["_exit"] == 4, report["findings"]
    assert report["errors"] and all("broker-b" in e["target"] for e in report["errors"])
    (gone,) = findings(report, "NO_CONSUMERS")
    assert "deleteSubGroup" not in gone["hint"] and "do not delete" in gone["hint"]
    assert "no committed offsets" not in gone["message"]
    assert "unknown" in gone["message"]
    assert done.returncode == 4
    doc: dict[str, Any] = json.loads(done.stdout)
    (line,) = doc["groups"]
    assert line["lag"] is None and line["lagComplete"] is False
    assert line["stranded"]["messages"] is None
    # the failures: one line per broker and reason on stderr, all of them in JSON
    failed = [x for x in done.stderr.splitlines() if "broker-b" in x and "GET_" in x]
    assert 1 <= len(failed) <= len({e["message"] for e in doc["errors"]}), done.stderr
    assert len(doc["errors"]) >= 1


def test_a_consumer_holding_queues_of_a_hung_broker_has_unknown_lag(kit: Kit, names: Names) -> None:
    """broker-b hangs: the lag of its queues is unknown, and so is every consumer's that
    holds one (before, the unread queues counted as 0); a consumer holding only broker-a's
    queues keeps its number."""
    g, t = names.group, names.topic
    kit.topic(t, read=2)
    spec = f"group={g};sub={t}:*"
    jvm = kit.consumer("lag-hung", *(f"{spec};instance=h{i}" for i in (1, 2, 3)))
    kit.wait(g, jvm, consumers=3, queues={t: 4})
    held = {cid: {q["brokerName"] for q in s["held"] if q["topic"] == t}
            for cid, s in kit.truth(g, jvm).items()}  # fmt: skip
    pid = _broker_pid(kit, "broker-b")
    os.kill(pid, signal.SIGSTOP)
    try:
        report = kit.explain(g, "--timeout", "2")
    finally:
        os.kill(pid, signal.SIGCONT)
        kit.wait_for("broker-b to answer again", lambda: "broker-b" in kit.brokers_registered())
    assert report["_exit"] == 4
    rows = {c["clientId"]: c["lag"] for c in report_topic(report, g, t)["consumers"]}
    assert {cid for cid, lag in rows.items() if lag is None} == {
        cid for cid, brokers in held.items() if "broker-b" in brokers
    }
    assert any(lag is not None for lag in rows.values())  # AVG gives h1 broker-a's two


@pytest.mark.versions("4.9.8", "5.1.4")
def test_messages_on_a_broker_added_while_nobody_consumes_are_counted(
    kit: Kit, names: Names
) -> None:
    """The group consumed its topic on broker-a and stopped; the topic was then created on
    broker-b too and 80 messages sent, 40 to broker-b's queues, which the group never
    committed. Consume stats list broker-a's queues only (caught up): before, rmqlb said the
    group was all caught up and, on 4.9.8, advised deleting it."""
    g, t = names.group, names.topic
    kit.topic(t, read=4, brokers=("broker-a",))
    jvm = kit.consumer("added-later", f"group={g};sub={t}:*;instance=gone")
    kit.wait(g, jvm, consumers=1, queues={t: 4})
    kit.produce(t, 20)

    def caught_up() -> dict[str, Any] | None:
        report = kit.explain(g)
        return report if report["groups"][0]["lag"] == 0 else None

    kit.wait_for("the consumer to consume its 20 messages", caught_up)
    kit.halt("added-later")  # a clean shutdown: offsets committed, channel closed
    kit.topic(t, read=4, brokers=("broker-b",))
    kit.produce(t, 80)  # 10 per queue of the 8

    report = kit.explain(g)
    (gone,) = findings(report, "NO_CONSUMERS")
    assert f"it leaves 80 messages unconsumed on 1 topic: {t} (80)" in gone["message"]
    assert "are all caught up" not in gone["message"]
    assert report["groups"][0]["lag"] == 80  # known without a consumer, not null
    done = kit.rmqlb("status", "-n", kit.namesrv, g, "-o", "json", expect=(0, 1))
    (line,) = json.loads(done.stdout)["groups"]
    assert (line["lag"], line["stranded"]["messages"]) == (80, 80)
