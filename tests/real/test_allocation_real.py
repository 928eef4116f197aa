"""``rmqlb explain`` against real Java consumers: allocation scenarios.

Every test starts real push consumers, waits (by polling their state files) until the group
has settled, runs ``rmqlb explain -n ... -o json`` as a separate process, and compares:
``actual`` with what every client holds, ``expected`` with what every client's own strategy
allocates it from its own inputs, and the finding codes with the situation.
"""

from __future__ import annotations

from conftest import Names
from realkit import (
    Kit,
    assert_actual_is_truth,
    assert_expected_is_truth,
    finding_codes,
    findings,
    report_actual,
    report_topic,
)

RETRY = "%RETRY%"


def test_healthy_group_over_two_brokers(kit: Kit, names: Names) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=4)
    spec = f"group={g};sub={t}:*"
    a = kit.consumer("healthy-a", spec, f"{spec};instance=second")
    b = kit.consumer("healthy-b", f"{spec};instance=third")
    kit.wait(g, a, b, consumers=3, queues={t: 8})
    states = kit.truth(g, a, b)

    report = kit.explain(g)

    assert report["_exit"] == 0, report["_stderr"]
    assert finding_codes(report) == set()
    for topic in (t, RETRY + g):
        assert_actual_is_truth(report, states, g, topic)
        assert_expected_is_truth(report, states, g, topic)
    assert len(report_topic(report, g, t)["queues"]) == 8


def test_more_consumers_than_queues(kit: Kit, names: Names) -> None:
    g, t = names.group, names.topic
    kit.topic(t, read=1)
    spec = f"group={g};sub={t}:*"
    jvm = kit.consumer("idle", *(f"{spec};instance=c{i}" for i in range(4)))
    kit.wait(g, jvm, consumers=4, queues={t: 2})
    states = kit.truth(g, jvm)

    report = kit.explain(g)

    assert_actual_is_truth(report, states, g, t)
    assert_expected_is_truth(report, states, g, t)
    idle = findings(report, "IDLE_CONSUMER")
    assert {f["topic"] for f in idle} >= {t}
    idle_clients = {c for f in idle if f["topic"] == t for c in f["consumers"]}
    holders = {c for cs in report_actual(report, g, t).values() for c in cs}
    assert idle_clients == set(states) - holders
    assert len(idle_clients) == 2
    assert report["_exit"] == 0  # warnings do not fail the default --fail-on error
