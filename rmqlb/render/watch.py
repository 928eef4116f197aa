"""What ``--watch`` shows between polls (explain and status): the status line of the
redrawn screen and, off a terminal, one block of changes per poll.

Like every renderer, names go through :mod:`rmqlb.render.safe` before they are shown.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rmqlb.humanize import duration, plural
from rmqlb.render.changes import ReportChanges
from rmqlb.render.formats import Output
from rmqlb.render.safe import escape_controls

if TYPE_CHECKING:
    from rich.console import RenderableType

    from rmqlb.diagnose.report import Report
    from rmqlb.render.options import RenderOptions


def changes_summary(changes: ReportChanges | None, marked: bool = False) -> str:
    """``7 queues changed owner, 0 new finding(s), 1 cleared``; ``first poll`` for none.

    >>> changes_summary(None), changes_summary(ReportChanges())
    ('first poll', '0 queues changed owner, 0 new findings, 0 cleared')
    """
    if changes is None:
        return "first poll"
    moved = len(changes.queues)
    return (
        f"{plural(moved, 'queue')} changed owner"
        f"{' (marked *)' if marked and moved else ''}, "
        f"{plural(len(changes.new_findings), 'new finding')}, "
        f"{len(changes.cleared_findings)} cleared"
    )


def poll_text(poll: int, stamp: str, summary: str, lines: Sequence[str]) -> str:
    """One poll's changes off a terminal: a heading line, then one indented line per change
    (control characters visible).

    >>> print(poll_text(2, "12:00:05", "1 queue changed owner", ["queue G T broker-a:3"]), end="")
    poll 2 at 12:00:05: 1 queue changed owner
      queue G T broker-a:3
    """
    out = [f"poll {poll} at {stamp}: {escape_controls(summary)}"]
    out += [f"  {escape_controls(line)}" for line in lines]
    return "\n".join(out) + "\n"


STATUS_LINES = 2
"""Lines kept for the watch line over the redrawn report (one line, cut at the screen's
edge) and the line the terminal's cursor ends on."""


def status_line(
    interval: float, poll: int, stamp: str, summary: str, failure: str = ""
) -> RenderableType:
    """The dim line above a redrawn result (``summary``: what changed); a failed poll adds a
    red second line."""
    from rich.text import Text  # noqa: PLC0415

    status = Text(
        f"watching every {duration(interval)} · poll {poll} at {stamp} · "
        f"{escape_controls(summary)} · Ctrl-C stops",
        style="dim",
        no_wrap=True,
        overflow="ellipsis",
    )
    if failure:
        status.append("\n" + escape_controls(failure), style="bold red")
    return status


def report_renderable(
    report: Report, fmt: Output, options: RenderOptions, width: int
) -> RenderableType:
    """The report as one Rich renderable (for ``rich.live.Live``) in format ``fmt``."""
    from rich.text import Text  # noqa: PLC0415

    from rmqlb.render import render  # noqa: PLC0415
    from rmqlb.render.rich import build  # noqa: PLC0415

    if fmt is Output.table:
        return build(report, options, width)
    buffer = io.StringIO()
    render(report, fmt, buffer, options)
    return Text(buffer.getvalue().rstrip("\n"))
