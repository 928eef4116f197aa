"""Small builders for diagnosis tests: JSON-shaped snapshot pieces, parsed like a file."""

from __future__ import annotations

from typing import Any

from rmqlb.diagnose import Code, Finding, Report, diagnose
from rmqlb.model import Snapshot
from rmqlb.snapshot import parse_snapshot

FORMAT = "rmqlb.snapshot/1"


def queues(topic: str, broker: str, *ids: int) -> list[dict[str, Any]]:
    """Queue references ``[{"topic","brokerName","queueId"}]``."""
    return [{"topic": topic, "brokerName": broker, "queueId": i} for i in ids]


def route(*datas: tuple[str, int, int, int]) -> dict[str, Any]:
    """A topic route from ``(broker, read, write, perm)`` tuples."""
    return {
        "queueDatas": [
            {"brokerName": b, "readQueueNums": r, "writeQueueNums": w, "perm": p}
            for b, r, w, p in datas
        ]
    }


def consumer(
    client_id: str,
    *topics: str,
    assigned: list[dict[str, Any]] | None = None,
    strategy: str | dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A consumer subscribing ``topics`` (every tag), optionally with its assignment."""
    out: dict[str, Any] = {"clientId": client_id, "subscriptions": list(topics)}
    if assigned is not None:
        out["assigned"] = assigned
    if strategy is not None:
        out["strategy"] = {"name": strategy} if isinstance(strategy, str) else strategy
    out.update(extra)
    return out


def snapshot(topics: dict[str, Any], groups: dict[str, Any], **extra: Any) -> Snapshot:
    """Parse a document built from the pieces above."""
    return parse_snapshot({"format": FORMAT, "topics": topics, "groups": groups, **extra})


def group(*consumers: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A CLUSTERING group of ``consumers``."""
    return {"consumers": list(consumers), **extra}


def run(topics: dict[str, Any], groups: dict[str, Any], **kwargs: Any) -> Report:
    """Diagnose the snapshot built from ``topics`` and ``groups``."""
    extra = kwargs.pop("extra", {})
    return diagnose(snapshot(topics, groups, **extra), **kwargs)


def codes(report: Report) -> list[str]:
    """The finding codes, in report order."""
    return [f.code.value for f in report.findings]


def only(report: Report, code: Code) -> Finding:
    """The single finding with ``code``."""
    found = [f for f in report.findings if f.code is code]
    assert len(found) == 1, f"expected one {code}, got {codes(report)}"
    return found[0]


def labels(finding: Finding) -> list[str]:
    """``broker-a:3`` labels of a finding's queues."""
    return [q.label() for q in finding.queues]
