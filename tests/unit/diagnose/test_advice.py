"""Advice one can act on: the root cause leads everywhere, ids mean one finding in every
command, nothing confident or destructive on data that could not be read, stalls judged on
the client's own clock, percentages that do not round to 0 or 100 %."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.diagnose import diagnose
from rmqlb.diagnose.report import Code, report_to_json
from rmqlb.diagnose.status import status, status_to_json
from rmqlb.errors import InputError
from rmqlb.model.snapshot import CaptureError
from rmqlb.render._view import finding_lines
from rmqlb.snapshot import load_snapshot, parse_snapshot

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"


@pytest.mark.parametrize("name", ["16-queues-3-consumers-rebalancing.json", "stale-client.json"])
def test_status_worst_is_the_root_cause_explain_leads_with(name: str) -> None:
    snapshot = load_snapshot(EXAMPLES / name)
    (line,) = status(snapshot).lines
    assert line.worst is not None and line.worst.code is Code.STALE_ALLOCATION
    assert line.worst.caused_by is None and line.consequences >= 1
    first = diagnose(snapshot).findings[0]
    assert (first.id, first.code) == (line.worst.id, line.worst.code)
    doc = status_to_json(status(snapshot))
    assert doc["groups"][0]["worst"]["id"] == first.id
    assert doc["groups"][0]["worstConsequences"] == line.consequences


def test_within_a_severity_the_finding_with_an_effect_leads_and_fixes_are_not_repeated() -> None:
    report = diagnose(load_snapshot(DEMO), groups=["ShipmentGroup"])
    findings = list(report.findings)
    first = findings[0]
    assert (first.code, first.topic) == (Code.STRATEGY_INCONSISTENT, "ShipmentTopic")
    retry = next(f for f in findings if f.topic == "%RETRY%ShipmentGroup")
    assert findings.index(retry) > findings.index(first)
    # one fix per cause: the retry topic's refers to the first instead of repeating it
    assert retry.hint == f"the same fix as STRATEGY_INCONSISTENT ({first.id})"
    fixes = [f.hint for f in findings if f.hint.startswith("finish the rolling deploy")]
    assert len(fixes) == 1


def test_ids_are_group_qualified_shown_on_every_finding_and_the_same_in_status() -> None:
    snapshot = load_snapshot(DEMO)
    report = diagnose(snapshot)
    ids = [f.id for f in report.findings]
    assert all(
        i is not None and i.startswith(f"{f.group}/F")
        for i, f in zip(ids, report.findings, strict=True)
    )
    assert len(set(ids)) == len(ids)
    # the same id means the same finding whichever groups a command selects
    for line in status(snapshot).lines:
        if line.worst is None:
            continue
        alone = diagnose(snapshot, groups=[line.group]).findings
        by_id = {f.id: f for f in report.findings}
        assert by_id[line.worst.id] == alone[0] == line.worst
    # text: every finding is tagged with its id, every "caused by" names a shown id
    tags = [fl.tag for fl in finding_lines(list(report.findings))]
    assert all(tags)
    shown = set(ids)
    for f in report.findings:
        if f.caused_by is not None:
            assert f.caused_by in shown and f.caused_by in f.hint


def _demo_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DEMO.read_text())
    return doc


def _broker_b_down(doc: dict[str, Any]) -> dict[str, Any]:
    """The demo as a capture with broker-b unreachable: its offsets are missing and the
    requests that asked for them failed."""
    out = copy.deepcopy(doc)
    errors = []
    for name, group in out["groups"].items():
        group["offsets"] = [o for o in group.get("offsets", []) if o["brokerName"] != "broker-b"]
        errors.append(
            {
                "target": "broker-b (10.0.0.12:10911)",
                "request": "GET_CONSUME_STATS",
                "message": "connection refused",
                "group": name,
            }
        )
    out["errors"] = errors
    return out


def test_broker_down_no_delete_advice_and_unknown_numbers() -> None:
    snapshot = parse_snapshot(_broker_b_down(_demo_doc()), "demo")
    report = diagnose(snapshot, groups=["AuditGroup"])
    (finding,) = [f for f in report.findings if f.code is Code.NO_CONSUMERS]
    assert "delete" not in finding.message
    assert "no committed offsets" not in finding.message
    assert "deleteSubGroup" not in finding.hint and "do not delete" in finding.hint
    doc = status_to_json(status(snapshot))
    audit = next(g for g in doc["groups"] if g["group"] == "AuditGroup")
    assert audit["lag"] is None and audit["lagComplete"] is False
    assert audit["stranded"]["messages"] is None and audit["stranded"]["complete"] is False
    assert doc["totals"]["lagComplete"] is False and doc["totals"]["strandedComplete"] is False
    assert doc["exitCode"] in (1, 4)


def test_complete_captures_keep_the_delete_advice_for_a_retired_group() -> None:
    report = diagnose(load_snapshot(DEMO), groups=["AuditGroup"])
    (finding,) = [f for f in report.findings if f.code is Code.NO_CONSUMERS]
    assert "deleteSubGroup" in finding.hint  # complete data: the documented advice stands


def test_evidence_of_consumption_is_never_no_consumers_with_delete_advice() -> None:
    doc = _demo_doc()
    captured = parse_snapshot(doc, "demo").captured_at
    assert captured is not None
    from rmqlb.diagnose.context import epoch_ms

    now = epoch_ms(captured)
    assert now is not None
    for o in doc["groups"]["AuditGroup"]["offsets"]:
        o["lastTimestamp"] = now - 5_000  # consumed 5 s before the capture: a proxy client
    report = diagnose(parse_snapshot(doc, "demo"), groups=["AuditGroup"])
    # on a 5.x cluster the finding is PROXY_CONSUMED, elsewhere NO_CONSUMERS: neither deletes
    (finding,) = [f for f in report.findings if f.code in (Code.NO_CONSUMERS, Code.PROXY_CONSUMED)]
    assert "deleteSubGroup" not in finding.hint and "delete" not in finding.message
    assert "5 s before the capture" in finding.message


def test_unknown_topics_are_input_errors_with_did_you_mean() -> None:
    snapshot = load_snapshot(DEMO)
    for call in (
        lambda: status(snapshot, topic="RefundTopc"),
        lambda: diagnose(snapshot, topic="RefundTopc"),
    ):
        with pytest.raises(InputError, match="did you mean 'RefundTopic'"):
            call()


def test_percentages_never_round_to_the_ends() -> None:
    from rmqlb.humanize import percent

    assert percent(192_000, 192_120) == "99.9%"
    assert percent(1, 100_000) == "<0.1%"
    assert percent(3, 3) == "100%" and percent(0, 3) == "0%"
    report = diagnose(load_snapshot(EXAMPLES / "lag-skew.json"))
    skew = [f for f in report.findings if f.code is Code.LAG_SKEW]
    assert skew and all("(100%)" not in f.message for f in skew)


def _stuck_doc(rate: float, shift_ms: int, client: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((EXAMPLES / "slow-and-stuck-consumers.json").read_text())
    for c in doc["groups"]["payment-event-consumer"]["consumers"]:
        if c["clientId"] != client:
            continue
        c["status"]["PaymentEventTopic"]["consumeOKTPS"] = rate
        for pq in c["processQueues"]:
            for key in ("lastPullTimestamp", "lastConsumeTimestamp"):
                if pq[key]:
                    pq[key] += shift_ms
    return doc


def _stalled(doc: dict[str, Any]) -> set[str]:
    report = diagnose(parse_snapshot(doc, "stuck"))
    return {c for f in report.findings if f.code is Code.CONSUMER_STALLED for c in f.consumers}


def test_a_client_clock_behind_the_capture_host_is_judged_on_its_own_clock() -> None:
    busy = "10.0.5.11@7101#5120003391200"
    assert busy not in _stalled(_stuck_doc(305.2, 0, busy))
    # ten minutes behind while it consumes 305 msg/s: not stalled
    assert busy not in _stalled(_stuck_doc(305.2, -600_000, busy))
    # the really stuck client, reporting no consume rate, stays stalled
    stuck = "10.0.5.13@7103#5120009977100"
    assert stuck in _stalled(_stuck_doc(0.0, 0, stuck))
    # a consume rate above zero is never contradicted by a stall of the whole client
    assert stuck not in _stalled(_stuck_doc(250.0, 0, stuck))


def test_capture_errors_json_keep_the_full_list() -> None:
    snapshot = parse_snapshot(_broker_b_down(_demo_doc()), "demo")
    doc = report_to_json(diagnose(snapshot))
    assert len(doc["errors"]) == len(snapshot.errors) == len(_demo_doc()["groups"])
    assert all(isinstance(e, dict) and e["request"] for e in doc["errors"])
    assert isinstance(snapshot.errors[0], CaptureError)


def test_a_topic_filter_keeps_the_ids_of_the_whole_group() -> None:
    snapshot = load_snapshot(DEMO)
    whole = {f.id: f for f in diagnose(snapshot, groups=["ShipmentGroup"]).findings}
    retry = diagnose(snapshot, groups=["ShipmentGroup"], topic="%RETRY%ShipmentGroup")
    (only,) = retry.findings
    assert whole[only.id].code is only.code and whole[only.id].topic == only.topic
    # the fix it shared with a finding not shown is spelled out, not referred to
    assert only.hint.startswith("finish the rolling deploy")
    assert [t.topic for g in retry.groups for t in g.topics] == ["%RETRY%ShipmentGroup"]


def test_offsets_that_moved_between_two_polls_are_evidence_of_consumption() -> None:
    from rmqlb.diagnose.context import DiagnoseOptions
    from rmqlb.diagnose.status import moved_offsets

    doc = _demo_doc()
    for o in doc["groups"]["AuditGroup"]["offsets"]:
        o["lastTimestamp"] = 0  # nothing recent to go by
    first = parse_snapshot(doc, "poll 1")
    seen: dict[str, Any] = {}
    assert moved_offsets(seen, first) == frozenset()
    for o in doc["groups"]["AuditGroup"]["offsets"]:
        o["consumerOffset"] += 5  # a proxy client the brokers do not list consumed
    second = parse_snapshot(doc, "poll 2")
    moving = moved_offsets(seen, second)
    assert moving == {"AuditGroup"}
    report = status(second, names=["AuditGroup"], options=DiagnoseOptions(moving=moving))
    worst = report.lines[0].worst
    assert worst is not None and worst.code is Code.NO_CONSUMERS
    assert "deleteSubGroup" not in worst.hint and "moved between two polls" in worst.message
