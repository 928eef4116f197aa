"""The series ``rmqlb exporter`` publishes (from the exporter's own families, not a copy of a
list) and the shipped Grafana dashboard's PromQL: shared by the tests of the alert rules and
the dashboard, and by the real test that runs every query against a real Prometheus."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from rmqlb.diagnose.status import status
from rmqlb.exporter.metrics import capture_of
from rmqlb.exporter.server import CaptureCollector, Exporter, openmetrics
from rmqlb.model.snapshot import CaptureError
from rmqlb.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "examples" / "grafana" / "rmqlb-dashboard.json"
#: Labels Prometheus adds to every scraped series.
TARGET_LABELS = frozenset({"job", "instance"})


def _panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in items:
        yield panel
        yield from _panels(panel.get("panels", []))


def queries(dashboard: Path = DASHBOARD) -> list[tuple[str, str, str]]:
    """Every query as ``(panel title or variable name, expr, legendFormat)``; a variable's
    ``label_values(SELECTOR, LABEL)`` as ``(name, SELECTOR, "{{LABEL}}")``."""
    doc = json.loads(dashboard.read_text(encoding="utf-8"))
    out = []
    for var in doc["templating"]["list"]:
        if var["type"] == "query":
            found = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", var["query"]["query"])
            assert found, var["query"]
            out.append((var["name"], found.group(1), "{{" + found.group(2) + "}}"))
    for panel in _panels(doc["panels"]):
        for target in panel.get("targets", []):
            out.append((panel["title"], target["expr"], target.get("legendFormat", "")))
    return out


def substitute(expr: str, **values: str) -> str:
    """``expr`` with Grafana's variables replaced: ``$NAME`` by ``values[NAME]`` (default
    ``.*``, every value) and ``$__rate_interval`` by ``1m``."""
    expr = expr.replace("$__rate_interval", "1m")
    return re.sub(r"\$(\w+)", lambda m: values.get(m.group(1), ".*"), expr)


def published() -> dict[str, set[str]]:
    """Every series name the exporter serves (as Prometheus stores it: a counter with its
    ``_total``) with its label names, from a capture that has every family: groups, a failed
    request and ``--per-queue``."""
    snapshot = load_snapshot(ROOT / "rmqlb" / "data" / "demo-snapshot.json")
    broker = next(iter(snapshot.brokers))
    failed = CaptureError(broker, "GET_CONSUME_STATS", "timed out after 3 s")
    capture = capture_of(status(snapshot), snapshot, duration=1.0, finished=1.0)
    every = dataclasses.replace(capture, errors=(failed,))
    exporter = Exporter(lambda last: every, interval=1.0, clock=lambda: 2.0)
    exporter.run_once()
    families = list(CaptureCollector(exporter, per_queue=True).collect())
    out: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(openmetrics(families).decode()):
        assert family.samples, f"{family.name}: no sample, so no labels to check against"
        for sample in family.samples:
            out.setdefault(sample.name, set()).update(sample.labels)
    return out
