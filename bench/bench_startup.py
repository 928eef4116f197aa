"""Cold start: ``rmqlb --help`` in a fresh interpreter vs importing typer and rich.console.

Both run as subprocesses (best of 5), so interpreter start-up is in both and cancels out
of the question "what does rmqlb add on top of its two unavoidable imports?". Target 1.5.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench._util import BenchResult, best_of_pair, ms, user_env


def _rmqlb_command() -> list[str]:
    script = Path(sys.executable).with_name("rmqlb")
    if script.exists():
        return [str(script), "--help"]
    return [sys.executable, "-m", "rmqlb", "--help"]


def _quiet(cmd: list[str]) -> None:
    # No ``timeout=``: with one, ``Popen.wait`` polls with sleeps growing to 50 ms, which
    # rounded both sides up to the next poll (a 60 ms start measured 114 ms).
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=user_env())


def run() -> list[BenchResult]:
    """The start-up ratio."""
    cli = _rmqlb_command()
    floor = [sys.executable, "-c", "import typer, rich.console"]
    _quiet(cli)  # warm the page cache and .pyc files for both
    _quiet(floor)
    took, base = best_of_pair(lambda: _quiet(cli), lambda: _quiet(floor), 5)
    return [
        BenchResult(
            "rmqlb --help cold start",
            took / base,
            1.5,
            f"{ms(took)} vs import typer, rich.console {ms(base)}",
        )
    ]
