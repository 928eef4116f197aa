"""What ``explain --watch`` shows between polls: the status line of the redrawn screen and,
off a terminal, one block of changes per poll.

Like every renderer, names go through :mod:`rmqlb.render.safe` before they are shown.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rmqlb.humanize import duration, plural
from rmqlb.render.changes import ReportChanges, describe_changes
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


def poll_text(changes: ReportChanges, poll: int, stamp: str, fmt: Output) -> str:
    """One poll's changes for a pipe: a ``rmqlb.changes/1`` JSON line for ``json``, else a
    heading line and one indented line per change."""
    if fmt is Output.json:
        from rmqlb.render.json import changes_to_text  # noqa: PLC0415

        return changes_to_text(changes, poll)
    lines = [f"poll {poll} at {stamp}: {changes_summary(changes)}"]
    lines += [f"  {escape_controls(line)}" for line in describe_changes(changes)]
    return "\n".join(lines) + "\n"


def status_line(
    interval: float, poll: int, stamp: str, changes: ReportChanges | None, failure: str = ""
) -> RenderableType:
    """The dim line above a redrawn report; a failed poll adds a red second line."""
    from rich.text import Text  # noqa: PLC0415

    status = Text(
        f"watching every {duration(interval)} · poll {poll} at {stamp} · "
        f"{changes_summary(changes, marked=True)} · Ctrl-C stops",
        style="dim",
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
