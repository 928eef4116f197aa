"""The pre-commit hook definition runs `rmqlb check` on the files it is meant for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]


def hook() -> dict[str, object]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hooks, list) and len(hooks) == 1
    return dict(hooks[0])


def test_hook_runs_rmqlb_check() -> None:
    h = hook()
    assert h["id"] == "rmqlb-check"
    assert h["entry"] == "rmqlb check"
    assert h["language"] == "python"
    assert h["pass_filenames"] is True


@pytest.mark.parametrize(
    ("path", "matches"),
    [
        ("rmqlb.yaml", True),
        ("deploy/rmqlb-orders.yml", True),
        ("orders.rmqlb.yaml", True),
        ("broker-a/store/config/topics.json", True),
        ("store/config/subscriptionGroup.json", True),
        ("export/metadata.json", True),
        ("values.yaml", False),
        ("topics.json.bak", False),
    ],
)
def test_hook_file_pattern(path: str, matches: bool) -> None:
    pattern = hook()["files"]
    assert isinstance(pattern, str)
    assert bool(re.search(pattern, path)) is matches
