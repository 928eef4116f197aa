"""The one-line progress display of a long audit, redrawn in place on a terminal's stderr.

Only numbers computed by the engine reach it (no path or name from the input), so there is
nothing to escape. It redraws at most every ``interval`` seconds, and :meth:`ProgressLine.close`
erases the line so that the report starts on a clean one.

>>> from rmqlb.pipeline.progress import AuditProgress
>>> progress_text(AuditProgress("reading", 4.0, files_read=10, files_total=40,
...     bytes_read=250, bytes_total=1000, snapshots=10, group_snapshots=5000))
'audit: reading 10/40 files (25%), 10 snapshots, 5,000 group snapshots, 4 s, ETA 12 s'
>>> progress_text(AuditProgress("read + diagnose (Spark)", 0.5, tasks_done=0, tasks_total=8))
'audit: read + diagnose (Spark) 0/8 tasks (0%), 500 ms'
"""

from __future__ import annotations

import time
from typing import TextIO

from rmqlb.humanize import duration, plural
from rmqlb.pipeline.progress import AuditProgress

_ERASE = "\r\x1b[2K"


def progress_text(p: AuditProgress) -> str:
    """The line for one progress report."""
    parts = [f"audit: {p.phase}"]
    done = p.fraction
    share = "" if done is None else f" ({done:.0%})"
    if p.files_total is not None:
        parts[0] += f" {p.files_read:,}/{p.files_total:,} files{share}"
    elif p.tasks_total is not None:
        parts[0] += f" {p.tasks_done:,}/{p.tasks_total:,} tasks{share}"
    if p.snapshots:
        parts.append(plural(p.snapshots, "snapshot"))
    if p.group_snapshots:
        parts.append(plural(p.group_snapshots, "group snapshot"))
    parts.append(duration(p.elapsed))
    eta = p.eta
    if eta is not None and done is not None and done < 1.0:
        parts.append(f"ETA {duration(eta)}")
    return ", ".join(parts)


class ProgressLine:
    """A :data:`~rmqlb.pipeline.progress.ProgressSink` that redraws one line of ``stream``."""

    def __init__(self, stream: TextIO, interval: float = 0.25) -> None:
        self.stream = stream
        self.interval = interval
        self._last = float("-inf")
        self._shown = False

    def __call__(self, progress: AuditProgress) -> None:
        """Redraw the line, unless it was drawn less than ``interval`` seconds ago."""
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        self.stream.write(_ERASE + progress_text(progress))
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        """Erase the line (if one was drawn)."""
        if self._shown:
            self.stream.write(_ERASE)
            self.stream.flush()
            self._shown = False
