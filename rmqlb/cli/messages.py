"""Lines on stderr: errors, warnings and progress notes, terminal-safe.

Messages often echo input (a file name, a group, a client id, a broker's remark), so every
line goes through :func:`~rmqlb.render.safe.escape_controls` on its way out, and no line is
longer than :data:`LINE_CAP` characters (a 15 MB remark stays a short line).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rmqlb.render.safe import cap, escape_controls

if TYPE_CHECKING:
    from rmqlb.model.snapshot import CaptureError

__all__ = ["FAILURE_LINES", "LINE_CAP", "error", "report_failures", "say"]

#: The longest line of a message on stderr, in characters.
LINE_CAP = 2000


def say(message: str, prefix: str = "rmqlb") -> None:
    """``prefix: message`` on stderr (continuation lines kept), control characters visible,
    each line capped at :data:`LINE_CAP` characters."""
    lines = escape_controls(message).split("\n")
    if any(len(line) > LINE_CAP for line in lines):
        lines = [cap(line, LINE_CAP) for line in lines]
    text = "\n".join(lines)
    sys.stderr.write(f"{prefix}: {text}\n")


#: The most distinct failures listed on stderr after a capture; JSON output and a saved
#: snapshot keep every one.
FAILURE_LINES = 20


def report_failures(errors: Sequence[CaptureError], prefix: str = "rmqlb") -> None:
    """The failed requests of a capture on stderr, each distinct failure once, at most
    :data:`FAILURE_LINES` of them (thousands of silent clients are thousands of lines)."""
    if not errors:
        return
    from rmqlb.humanize import plural
    from rmqlb.render.failures import failure_lines, failure_summary

    found = failure_lines(errors)
    shown = found[:FAILURE_LINES]
    if len(found) > len(shown):
        more = plural(len(found) - len(shown), "more distinct failure")
        shown.append(f"... and {more} (JSON output and dumped snapshots list them all)")
    lines = "".join(f"\n  {line}" for line in shown)
    say(f"partial data: {failure_summary(errors)}:{lines}", prefix=prefix)


def error(message: str) -> None:
    """``rmqlb: error: message`` on stderr: the one line a failing command prints."""
    say(f"error: {message}")
