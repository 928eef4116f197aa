"""``make demo`` installs the package alone; ``make test`` the test, Spark and dev extras.

Read from ``make -n`` (commands printed, nothing run) for a virtualenv that does not exist.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(target: str, tmp_path: Path) -> list[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in done.stdout.splitlines() if "pip install" in line]


def test_demo_installs_only_the_package(tmp_path: Path) -> None:
    installs = _dry_run("demo", tmp_path)
    assert installs[-1].endswith("pip install --quiet -e .")
    assert not any("[" in line for line in installs)


@pytest.mark.parametrize("target", ["test", "install", "lint", "bench"])
def test_test_targets_install_every_extra(tmp_path: Path, target: str) -> None:
    installs = _dry_run(target, tmp_path)
    assert installs[-1].endswith("pip install --quiet -e '.[test,spark,dev]'")
