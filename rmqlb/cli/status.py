"""``rmqlb status``: every consumer group of the cluster on one screen, worst first.

Thin, like explain: acquire a snapshot (``--dump`` or a live cluster, where the collector
discovers every group the brokers know), hand it to :func:`rmqlb.diagnose.status.status`
(which runs explain's diagnosis), render with :mod:`rmqlb.render.status`, return explain's
exit code. ``--watch`` runs the loop of :mod:`rmqlb.cli.watch`.
"""

import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rmqlb.cli.app import app
from rmqlb.cli.options import (
    Connection,
    ConsumersOfTopicOption,
    CountOption,
    DumpOption,
    FailOn,
    FailOnOption,
    GroupGlobArguments,
    GroupOption,
    Inputs,
    NoHeadersOption,
    Output,
    StatusDisplay,
    WatchOption,
    check_source,
    make_console,
    resolve_output,
    shared_options,
)
from rmqlb.render.formats import StatusOutput

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console, RenderableType

    from rmqlb.diagnose.status import StatusReport
    from rmqlb.model.snapshot import Snapshot
    from rmqlb.render.changes import StatusChanges
    from rmqlb.render.status import StatusOptions


@app.command()
@shared_options
def status(  # noqa: PLR0917  (typer maps every option to a parameter)
    ctx: typer.Context,
    groups: GroupGlobArguments = None,
    group: GroupOption = None,
    dump: DumpOption = None,
    connection: Connection = Connection(),
    topic: ConsumersOfTopicOption = None,
    problems: Annotated[
        bool,
        typer.Option(
            "--problems", help="Only groups with a warning or an error, or with partial data."
        ),
    ] = False,
    system: Annotated[
        bool,
        typer.Option("--system", help="Show RocketMQ's built-in groups too (TOOLS_CONSUMER ...)."),
    ] = False,
    sort_by: Annotated[
        str,
        typer.Option(
            "--sort-by",
            metavar="worst|lag|stranded|tps|name",
            help="Line order: worst (severity, then lag), lag, stranded or tps (largest "
            "first), name.",
        ),
    ] = "worst",
    no_headers: NoHeadersOption = False,
    display: StatusDisplay = StatusDisplay(),
    inputs: Inputs = Inputs(),
    fail_on: FailOnOption = FailOn.error,
    watch: WatchOption = None,
    count: CountOption = None,
) -> int:
    """Every consumer group on one line, worst first: consumers, lag, stranded messages,
    the worst finding.

    Reads a live cluster (-n ADDR, default $NAMESRV_ADDR) or a snapshot (--dump FILE). A
    group name that exists nowhere is exit 2 with the closest known name.

    Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it,
    2 bad input, 3 cluster unreachable, 4 partial data.
    """
    from typer._click.exceptions import UsageError

    from rmqlb.diagnose.status import SORT_KEYS, is_pattern
    from rmqlb.errors import InputError
    from rmqlb.render.status import StatusOptions

    if sort_by not in SORT_KEYS:
        raise InputError(f"--sort-by {sort_by}: expected one of {', '.join(SORT_KEYS)}")
    names = [*(groups or ()), *(group or ())]
    check_source(ctx, dump, connection)
    if count is not None and watch is None:
        raise UsageError("--count only makes sense with --watch", ctx)
    if watch is not None and display.output is StatusOutput.openmetrics:
        raise UsageError("-o openmetrics writes the metrics once: leave out --watch", ctx)
    if watch is not None and dump == "-":
        raise UsageError("--watch cannot re-read stdin: give --dump a file", ctx)

    acquire: Callable[[], Snapshot]
    live = dump is None
    if dump is not None:
        from rmqlb.cli.explain import _load_dump  # a live capture has no use for it

        source = dump

        def acquire() -> "Snapshot":
            return _load_dump(source)

    else:
        options = connection.live(
            groups=tuple(n for n in names if not is_pattern(n)),
            patterns=tuple(n for n in names if is_pattern(n)),
            topic=topic,
            system=system,
            progress=watch is None,
        )

        def acquire() -> "Snapshot":
            from rmqlb.cli.live import snapshot_from_cluster

            return snapshot_from_cluster(options)

    committed: dict[str, dict[Any, int]] = {}
    from rmqlb.diagnose.context import PollHistory  # (every run diagnoses: no extra import)

    history = PollHistory() if watch is not None else None

    def capture() -> "tuple[Snapshot, StatusReport]":
        from rmqlb.diagnose.context import DiagnoseOptions
        from rmqlb.diagnose.status import moved_offsets
        from rmqlb.diagnose.status import status as summarize

        start = time.perf_counter()
        snapshot = acquire()
        took = time.perf_counter() - start if live else None
        # --watch: offsets that moved since the last poll are evidence of consumption
        moving = moved_offsets(committed, snapshot)
        earlier = None if history is None else history.earlier(snapshot)
        report = summarize(
            snapshot,
            names=names,
            topic=topic,
            system=system,
            problems=problems,
            seconds=took,
            options=DiagnoseOptions(moving=moving, earlier=earlier),
            sort_by=sort_by,
        )
        return snapshot, report

    def poll() -> "StatusReport":
        return capture()[1]

    output = display.output
    if output is StatusOutput.openmetrics:
        return _openmetrics(*capture(), live=live, fail_on=fail_on.value)
    fmt = resolve_output(Output(output.value) if output is not None else None)
    render_options = StatusOptions(
        fail_on=fail_on.value,
        pretty_json=sys.stdout.isatty(),
        wide=output is StatusOutput.wide,
        headers=not no_headers,
    )
    view = StatusWatch(fmt, render_options)
    if watch is not None:
        from rmqlb.cli.watch import watch as watch_loop

        return watch_loop(
            poll,
            view,
            make_console(display.color),
            json_output=fmt is Output.json,
            interval=watch,
            count=count,
            redraw=sys.stdout.isatty(),
        )
    report = poll()
    from rmqlb.cli.messages import report_failures

    report_failures(report.errors)
    if fmt is Output.table or fmt is Output.wide:
        view.show(report, None, make_console(display.color))
    else:  # text formats go straight to stdout: no Rich console to load and build
        from rmqlb.render.status import render_status

        render_status(report, fmt, sys.stdout, render_options)
    return view.exit_code(report)


def _openmetrics(snapshot: "Snapshot", report: "StatusReport", *, live: bool, fail_on: str) -> int:
    """The metrics of one capture on stdout (a snapshot file's: as of its ``capturedAt``);
    explain's exit code."""
    from rmqlb.diagnose.context import epoch_ms
    from rmqlb.diagnose.report import exit_code
    from rmqlb.exporter.metrics import capture_of, families
    from rmqlb.exporter.server import openmetrics

    stamp = epoch_ms(snapshot.captured_at)
    finished = time.time() if live or stamp is None else stamp / 1000
    capture = capture_of(report, snapshot, duration=report.seconds, finished=finished)
    sys.stdout.flush()
    sys.stdout.buffer.write(openmetrics(families(capture)))
    sys.stdout.buffer.flush()
    return int(exit_code(report.report, fail_on))


class StatusWatch:
    """``status`` for ``--watch`` (and a single run): lines compared group by group."""

    def __init__(self, fmt: Output, options: "StatusOptions") -> None:
        self.fmt = fmt
        self.options = options

    def _options(self, changes: "StatusChanges | None") -> "StatusOptions":
        import dataclasses

        return dataclasses.replace(self.options, changes=changes)

    def diff(self, before: "StatusReport", after: "StatusReport") -> "StatusChanges":
        """Groups new, gone or changed."""
        from rmqlb.render.changes import diff_status

        return diff_status(before, after)

    def empty(self, changes: "StatusChanges") -> bool:
        """Whether nothing changed."""
        return changes.empty

    def summary(self, changes: "StatusChanges | None", marked: bool) -> str:
        """``2 groups changed (marked *), 1 new, 0 gone``."""
        if changes is None:
            return "first poll"
        changed = sum(1 for c in changes.lines if c.kind == "changed")
        added = sum(1 for c in changes.lines if c.kind == "added")
        mark = " (marked *)" if marked and changed + added else ""
        return (
            f"{changed} group{'s' if changed != 1 else ''} changed{mark}, {added} new, "
            f"{len(changes.removed)} gone"
        )

    def renderable(
        self, result: "StatusReport", changes: "StatusChanges | None", console: "Console"
    ) -> "RenderableType":
        """The overview as one Rich renderable, for the redraw."""
        import io

        from rich.text import Text

        from rmqlb.render.status import build, render_status

        if self.fmt is Output.table:
            import dataclasses

            from rmqlb.render.screen import fit_height
            from rmqlb.render.watch import STATUS_LINES

            options = self._options(changes)
            return fit_height(
                lambda rows, _brief: build(
                    result, dataclasses.replace(options, max_rows=rows), console.width
                ),
                console,
                console.height - STATUS_LINES,
                len(result.shown),
            )
        buffer = io.StringIO()
        render_status(result, self.fmt, buffer, self._options(changes))
        return Text(buffer.getvalue().rstrip("\n"))

    def show(
        self, result: "StatusReport", changes: "StatusChanges | None", console: "Console"
    ) -> None:
        """The whole overview on stdout (text formats straight to the stream)."""
        from rmqlb.render.status import render_status

        target = console if self.fmt is Output.table else console.file
        render_status(result, self.fmt, target, self._options(changes))

    def lines(self, changes: "StatusChanges") -> list[str]:
        """One line per changed group."""
        from rmqlb.render.changes import describe_status_changes

        return describe_status_changes(changes)

    def to_json(self, changes: "StatusChanges", poll: int) -> dict[str, Any]:
        """An ``rmqlb.status-changes/1`` object."""
        return {
            "format": "rmqlb.status-changes/1",
            "poll": poll,
            "groups": [
                {"group": c.group, "kind": c.kind, "what": list(c.what)} for c in changes.lines
            ],
        }

    def exit_code(self, result: "StatusReport") -> int:
        """Explain's exit code over every selected group."""
        from rmqlb.diagnose.report import exit_code

        return int(exit_code(result.report, self.options.fail_on))
