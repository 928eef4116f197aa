"""Run rmqlb in a child process and measure what a hostile input costs it.

:func:`rmqlb_child` returns the exit code, stdout, stderr, wall time and the child's peak
resident memory (from ``wait4``), so a test can bound all of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str
    seconds: float
    max_rss_mib: float

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def rmqlb_child(
    args: Sequence[str],
    *,
    stdin: int | None = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
    timeout: float = 60.0,
    signal_after: tuple[float, int] | None = None,
    preexec: Callable[[], None] | None = None,
    cwd: str | None = None,
) -> Outcome:
    """``python -m rmqlb ARGS`` in a child; ``signal_after=(seconds, SIG)`` sends a signal."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full_env.pop("RMQLB_TRACEBACK", None)
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rmqlb", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full_env,
        preexec_fn=preexec,  # noqa: PLW1509 - only resource limits, set in the child
        cwd=cwd,
    )
    chunks: dict[str, bytes] = {}

    def drain(name: str, stream: IO[bytes]) -> None:
        with stream:
            chunks[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=("out", proc.stdout), daemon=True),
        threading.Thread(target=drain, args=("err", proc.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if signal_after is not None:
        time.sleep(signal_after[0])
        proc.send_signal(signal_after[1])
    status, usage = _wait(proc, start + timeout)
    seconds = time.monotonic() - start
    for reader in readers:
        reader.join(10)
    if status is None:
        raise AssertionError(f"rmqlb {' '.join(args)} did not end within {timeout} s")
    code = os.waitstatus_to_exitcode(status)
    return Outcome(
        code,
        chunks.get("out", b"").decode("utf-8", "replace"),
        chunks.get("err", b"").decode("utf-8", "replace"),
        seconds,
        usage.ru_maxrss / 1024,  # KiB on Linux
    )


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> tuple[int | None, Any]:
    """The child's wait status and resource usage (``wait4``), or ``None`` after killing
    it at ``deadline``."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return status, usage
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            proc.returncode = -9
            return None, None
        time.sleep(0.02)


__all__ = ["ROOT", "Outcome", "rmqlb_child"]
