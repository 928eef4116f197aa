"""One real run of the installed console script and of ``python -m rmqlb``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ARGS = ["simulate", "--queues", "16", "--consumers", "3", "--output", "json"]


def _script() -> Path:
    script = Path(sys.executable).with_name("rmqlb")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    return script


def _check(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert [len(v) for v in answer["assignments"].values()] == [6, 5, 5]


def test_console_script_simulate() -> None:
    proc = subprocess.run(
        [str(_script()), *ARGS], capture_output=True, text=True, timeout=120, check=False
    )
    _check(proc)


def test_python_dash_m() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rmqlb", *ARGS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    _check(proc)


def test_console_script_bad_input_is_one_line() -> None:
    proc = subprocess.run(
        [str(_script()), "simulate", "--strategy", "NOPE"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "unknown strategy 'NOPE'" in proc.stderr
