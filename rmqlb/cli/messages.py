"""Lines on stderr: errors, warnings and progress notes, terminal-safe.

Messages often echo input (a file name, a group, a client id, a broker's remark), so every
line goes through :func:`~rmqlb.render.safe.escape_controls` on its way out.
"""

from __future__ import annotations

import sys

from rmqlb.render.safe import escape_controls

__all__ = ["error", "say"]


def say(message: str, prefix: str = "rmqlb") -> None:
    """``prefix: message`` on stderr (continuation lines kept), control characters visible."""
    sys.stderr.write(f"{prefix}: {escape_controls(message)}\n")


def error(message: str) -> None:
    """``rmqlb: error: message`` on stderr: the one line a failing command prints."""
    say(f"error: {message}")
