"""Conventions every command shares (design §3): ``--fail-on``, ``-o/--output``, ``--out``,
bare ``rmqlb``, completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rmqlb.cli import run
from rmqlb.failon import FailOn, gate

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

BROADCASTING_YAML = """\
version: 1
topics:
  T:
    queues: 4
groups:
  G:
    messageModel: BROADCASTING
    members:
      svc:
        replicas: 2
        subscriptions:
          T: "*"
"""


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "NAMESRV_ADDR", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("fail_on", list(FailOn))
@pytest.mark.parametrize("severity", ["error", "warning", "info"])
def test_the_gate(fail_on: FailOn, severity: str) -> None:
    ranks = {"error": 2, "warning": 1, "info": 0, "never": 3}
    fails = ranks[severity] >= ranks[fail_on.value]
    assert fail_on.fails(severity) is fails
    assert int(gate([severity], fail_on)) == (1 if fails else 0)
    assert int(gate([severity], fail_on, partial=True)) == (1 if fails else 4)
    assert int(gate([], fail_on, partial=True)) == 4


@pytest.mark.parametrize("fail_on", list(FailOn))
def test_every_command_accepts_every_fail_on_value(
    fail_on: FailOn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An info-only input on each command with --fail-on: exit 1 only for ``info``."""
    config = tmp_path / "broadcasting.yaml"
    config.write_text(BROADCASTING_YAML, encoding="utf-8")
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    doc = json.loads((EXAMPLES / "broadcasting.json").read_text(encoding="utf-8"))
    for minute in range(3):
        doc["capturedAt"] = f"2026-11-22T12:0{minute}:00Z"
        (fleet / f"s{minute}.json").write_text(json.dumps(doc), encoding="utf-8")
    expected = 1 if fail_on is FailOn.info else 0
    runs = {
        "explain": ["explain", "--dump", str(EXAMPLES / "broadcasting.json")],
        "check": ["check", str(config)],
        "audit": ["audit", str(fleet), "--engine", "local"],
    }
    for name, argv in runs.items():
        code = run([*argv, "-o", "json", "--fail-on", fail_on.value])
        out, err = capsys.readouterr()
        assert code == expected, (name, err)
        severities = {f["severity"] for f in json.loads(out)["findings"]}
        assert severities == {"info"}, name


def test_fail_on_refuses_other_values(capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["explain", "--dump", str(EXAMPLES / "healthy.json"), "--fail-on", "notice"])
    assert code == 2
    assert "error, warning, info, never" in capsys.readouterr().err.replace("'", "")
