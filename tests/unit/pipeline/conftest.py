"""Helpers for the pipeline tests: snapshot builders and a *scripted* diagnoser.

The scripted diagnoser does no diagnosis at all: it reports exactly the findings a test
wrote into the consumers' ``properties`` (``"audit.test.findings": "CODE:severity:topic,..."``)
so the plumbing (split, keys, aggregation, persistence, flapping) is tested on its own. The
real engine is exercised by the end-to-end tests on the generated fleet.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rmqlb.diagnose.report import Code, Finding, GroupReport, Report, Severity
from rmqlb.model.snapshot import Snapshot

SCRIPT_KEY = "audit.test.findings"


def scripted_diagnoser(snapshot: Snapshot) -> Report:
    """Findings as scripted in the first consumer's properties; one group per unit."""
    findings = []
    reports = []
    for name, group in snapshot.groups.items():
        reports.append(GroupReport(name, group.message_model.value, "AVG", ()))
        script = group.consumers[0].properties.get(SCRIPT_KEY, "") if group.consumers else ""
        for item in filter(None, script.split(",")):
            code, severity, topic = item.split(":")
            findings.append(
                Finding(Code(code), Severity(severity), name, "scripted", "none", topic or None)
            )
    return Report(tuple(reports), tuple(findings))


def make_snapshot(
    captured_at: str,
    groups: dict[str, dict[str, Any]],
    namesrv: list[str] | None = None,
) -> dict[str, Any]:
    """A small valid snapshot; ``groups`` maps name -> {"findings": "...", "holders": [...]}."""
    topics: dict[str, Any] = {}
    out_groups: dict[str, Any] = {}
    for name, spec in groups.items():
        topic = f"T_{name}"
        topics[topic] = {"queues": 2}
        holders = spec.get("holders", ["c1", "c2"])
        consumers = []
        for i, cid in enumerate(sorted(set(holders))):
            consumer: dict[str, Any] = {
                "clientId": cid,
                "subscriptions": [topic],
                "assigned": [
                    {"topic": topic, "brokerName": "broker-a", "queueId": q}
                    for q, holder in enumerate(holders)
                    if holder == cid
                ],
            }
            if i == 0 and spec.get("findings"):
                consumer["properties"] = {SCRIPT_KEY: spec["findings"]}
            consumers.append(consumer)
        out_groups[name] = {"consumers": consumers}
    return {
        "format": "rmqlb.snapshot/1",
        "capturedAt": captured_at,
        "source": {"namesrv": namesrv or ["127.0.0.1:9876"]},
        "topics": topics,
        "groups": out_groups,
    }


@pytest.fixture
def write_snapshot(tmp_path: Path) -> Callable[..., Path]:
    """Write a snapshot dict to ``tmp_path/name`` and return the path."""

    def write(name: str, data: dict[str, Any]) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
        return path

    return write


@pytest.fixture
def snap() -> Callable[..., dict[str, Any]]:
    """:func:`make_snapshot`."""
    return make_snapshot


@pytest.fixture
def scripted() -> Callable[[Snapshot], Report]:
    """:func:`scripted_diagnoser`."""
    return scripted_diagnoser
