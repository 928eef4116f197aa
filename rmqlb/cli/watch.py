"""``--watch``: poll, analyse, show and mark what changed, for ``explain`` and ``status``.

One loop for both commands; a :class:`WatchView` says how its results are compared, shown
and summed up. On a terminal the output is redrawn in place (Rich Live) under a status line;
anywhere else the first poll is shown whole and every later poll prints a heading line and
its changes, one line each (one JSON object per poll with ``--output json``, with its time,
its changes and its failure). A poll that fails after the first is reported on stderr and
the previous result is kept. Ctrl-C stops with exit 0; ``count`` stops after that many polls
with the last poll's exit code: the last result's, or the failure's (3 when the cluster
could not be reached).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from rmqlb.cli.messages import say
from rmqlb.errors import InputError, RmqlbError

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

R = TypeVar("R")
R_contra = TypeVar("R_contra", contravariant=True)
C = TypeVar("C")

sleep: Callable[[float], None] = time.sleep
"""The pause between polls (a seam: tests replace it to change what the next poll sees)."""


class WatchView(Protocol, Generic[R_contra, C]):
    """What ``--watch`` needs to know about one command's results and changes ``C``."""

    def diff(self, before: R_contra, after: R_contra) -> C:
        """What changed between two polls."""

    def empty(self, changes: C) -> bool:
        """Whether nothing changed."""

    def summary(self, changes: C | None, marked: bool) -> str:
        """The changes in a few words (``first poll`` for the first)."""

    def renderable(self, result: R_contra, changes: C | None, console: Console) -> RenderableType:
        """The whole result, changes marked, for the terminal's redraw."""

    def show(self, result: R_contra, changes: C | None, console: Console) -> None:
        """Write the whole result (the first poll off a terminal)."""

    def lines(self, changes: C) -> list[str]:
        """One plain line per change."""

    def to_json(self, changes: C, poll: int) -> dict[str, Any]:
        """One poll's changes as a JSON object."""

    def exit_code(self, result: R_contra) -> int:
        """The exit code ``result`` gives."""


def watch(
    poll: Callable[[], R],
    view: WatchView[R, C],
    console: Console,
    *,
    json_output: bool,
    interval: float,
    count: int | None,
    redraw: bool,
) -> int:
    """Poll every ``interval`` seconds until Ctrl-C (exit 0) or ``count`` polls (the last
    result's exit code); see the module docstring."""
    import json
    from contextlib import nullcontext

    from rich.console import Group
    from rich.live import Live

    from rmqlb.render.screen import Trimmed
    from rmqlb.render.watch import poll_text, status_line

    previous: R | None = None
    failed: RmqlbError | None = None  # the last poll's failure
    polls = 0
    live = (
        Live(console=console, auto_refresh=False, transient=False, redirect_stderr=False)
        if redraw
        else None
    )
    try:
        with live if live is not None else nullcontext():
            while True:
                polls += 1
                now = time.time()
                stamp = time.strftime("%H:%M:%S", time.localtime(now))
                failure = ""
                failed = None
                try:
                    result = poll()
                except RmqlbError as exc:
                    if previous is None:
                        raise
                    failure = f"poll {polls} failed, keeping the last report: {exc}"
                    say(failure)
                    failed, result = exc, previous
                changes = view.diff(previous, result) if previous is not None else None
                if live is not None:
                    status = status_line(
                        interval, polls, stamp, view.summary(changes, True), failure
                    )
                    screen = Group(status, view.renderable(result, changes, console))
                    live.update(Trimmed(screen), refresh=True)
                elif changes is None:
                    view.show(result, None, console)
                else:
                    out = console.file
                    if json_output:
                        document = {
                            **view.to_json(changes, polls),
                            "time": iso_time(now),
                            "error": str(failed) if failed is not None else None,
                        }
                        out.write(json.dumps(document) + "\n")
                    else:
                        summary = (
                            f"failed: {failed}"
                            if failed is not None
                            else view.summary(changes, False)
                        )
                        out.write(poll_text(polls, stamp, summary, view.lines(changes)))
                    out.flush()
                previous = result
                if count is not None and polls >= count:
                    break
                sleep(interval)
    except KeyboardInterrupt:
        return 0
    if previous is None:  # pragma: no cover - the loop always polls at least once
        raise InputError("no poll completed")
    if failed is not None:
        return int(failed.exit_code)
    return view.exit_code(previous)


def iso_time(epoch: float) -> str:
    """``2026-11-22T12:00:05Z``: the one time format of JSON documents (UTC, seconds).

    >>> iso_time(1795348805.4)
    '2026-11-22T12:00:05Z'
    """
    from datetime import UTC, datetime

    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
