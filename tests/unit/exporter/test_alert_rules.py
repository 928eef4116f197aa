"""The shipped alert rules: ``promtool check rules`` and ``promtool test rules`` (their unit
tests on synthetic series), and every metric they use is one the exporter publishes."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from exporter_series import published

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "examples" / "prometheus"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not installed (Debian: apt-get install prometheus)"
)


def _promtool(*args: str) -> str:
    assert PROMTOOL is not None
    done = subprocess.run(
        [PROMTOOL, *args], cwd=RULES, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@needs_promtool
def test_promtool_checks_the_rules() -> None:
    assert "SUCCESS: 9 rules found" in _promtool("check", "rules", "alerts.yml")


@needs_promtool
def test_promtool_runs_the_rule_unit_tests() -> None:
    assert "SUCCESS" in _promtool("test", "rules", "alerts.test.yml")


def test_the_rules_use_only_published_metrics() -> None:
    text = (RULES / "alerts.yml").read_text(encoding="utf-8")
    used = set(re.findall(r"\brmqlb_[a-z_]+", text))
    assert used
    assert used <= published().keys(), used - published().keys()


def test_every_alert_names_its_group_and_finding_and_points_at_explain() -> None:
    import yaml

    doc = yaml.safe_load((RULES / "alerts.yml").read_text(encoding="utf-8"))
    (group,) = doc["groups"]
    for rule in group["rules"]:
        notes = rule["annotations"]
        assert "rmqlb explain" in notes["runbook"], rule["alert"]
        if "group" in rule["expr"] and "rmqlb_up" not in rule["expr"]:
            assert "{{ $labels.group }}" in notes["summary"], rule["alert"]
            assert "{{ $labels.group }}" in notes["runbook"], rule["alert"]
