"""The shipped Grafana dashboard (examples/grafana/rmqlb-dashboard.json): every query parses
(``promtool check rules``) and names only series and labels the exporter publishes. The real
suite runs each query against a real Prometheus scraping the exporter."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from exporter_series import DASHBOARD, TARGET_LABELS, published, queries, substitute

PROMTOOL = shutil.which("promtool")
SELECTOR = re.compile(r"\b(rmqlb_\w+)\s*(?:\{([^}]*)\})?")
MATCHER = re.compile(r"(\w+)\s*(?:=~|!~|!=|=)")
GROUPING = re.compile(r"\bby\s*\(([^)]*)\)")
LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def _names(clause: str) -> set[str]:
    return {n.strip() for n in clause.split(",") if n.strip()}


def test_every_query_names_only_published_series_and_labels() -> None:
    series = published()
    found = queries()
    assert len(found) >= 15
    for where, expr, legend in found:
        used = SELECTOR.findall(expr)
        assert used, f"{where}: {expr} names no rmqlb series"
        available = set(TARGET_LABELS)
        for name, matchers in used:
            assert name in series, f"{where}: {name} is not a series the exporter publishes"
            labels = series[name] | TARGET_LABELS
            unknown = set(MATCHER.findall(matchers)) - labels
            assert not unknown, f"{where}: {name} has no label {unknown}"
            available |= labels
        groupings = [_names(c) for c in GROUPING.findall(expr)]
        for names in groupings:
            assert names <= available, f"{where}: grouped by {names - available}"
        shown = groupings[0] if groupings else available  # the outermost aggregation's
        assert set(LEGEND.findall(legend)) <= shown, f"{where}: legend {legend!r}"


def test_panels_are_well_formed() -> None:
    doc = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in doc["templating"]["list"]}
    assert {"datasource", "job", "group", "topic"} <= variables
    for panel in doc["panels"]:
        assert {"x", "y", "w", "h"} <= panel["gridPos"].keys()
        for target in panel.get("targets", []):
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert set(re.findall(r"\$(\w+)", target["expr"])) <= variables | {"__rate_interval"}


@pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not installed (Debian: apt-get install prometheus)"
)
def test_promtool_parses_every_query(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    rules = [
        {"record": f"dashboard:query_{i}", "expr": substitute(expr)}
        for i, (_, expr, _) in enumerate(queries())
    ]
    path = tmp_path / "queries.yml"
    path.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))  # YAML
    done = subprocess.run(
        [PROMTOOL, "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules)} rules found" in done.stdout
