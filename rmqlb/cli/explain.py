"""``rmqlb explain``: expected vs actual queue ownership per group and topic, with findings.

The command is thin: acquire a snapshot (a ``--dump`` file or a live cluster), hand it to
:func:`rmqlb.diagnose.diagnose`, render the report, return the exit code (design §3).
``--watch`` repeats the acquire/diagnose/render cycle and marks what changed
(:mod:`rmqlb.cli.watch`, shared with ``rmqlb status``).
"""

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rmqlb.cli.app import app
from rmqlb.cli.complete import complete_group, complete_topic
from rmqlb.cli.messages import report_failures
from rmqlb.cli.options import (
    AllGroupsOption,
    Connection,
    CountOption,
    Display,
    DumpOption,
    FailOn,
    FailOnOption,
    GroupOption,
    Inputs,
    Output,
    WatchOption,
    check_source,
    make_console,
    resolve_output,
    shared_options,
)

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from rmqlb.diagnose.report import Report
    from rmqlb.model.snapshot import Snapshot
    from rmqlb.render import RenderOptions
    from rmqlb.render.changes import ReportChanges


@app.command()
@shared_options
def explain(  # noqa: PLR0917  (typer maps every option to a parameter)
    ctx: typer.Context,
    groups: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="GROUP...",
            help="Consumer groups to explain (default: every group in the snapshot).",
            show_default=False,
            autocompletion=complete_group,
        ),
    ] = None,
    dump: DumpOption = None,
    connection: Connection = Connection(),
    group: GroupOption = None,
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            "-t",
            metavar="TOPIC",
            help="Only this topic.",
            show_default=False,
            autocompletion=complete_topic,
        ),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy",
            metavar="SPEC",
            help="Strategy for 'expected', e.g. AVG or CONSISTENT_HASH:vnodes=20 "
            "(default: the group's, else the one its clients report, else AVG). Parameters "
            "given here are never overridden; those the clients do not report are inferred "
            "from what they hold.",
            show_default=False,
        ),
    ] = None,
    display: Display = Display(),
    inputs: Inputs = Inputs(),
    fail_on: FailOnOption = FailOn.error,
    all_queues: Annotated[
        bool,
        typer.Option(
            "--all-queues", help="Show every queue row of large topics, not only problems."
        ),
    ] = False,
    max_imbalance: Annotated[
        float | None,
        typer.Option(
            "--max-imbalance",
            min=1.0,
            metavar="RATIO",
            help="Report IMBALANCE when max/min queues per consumer exceeds this ratio.",
            show_default=False,
        ),
    ] = None,
    watch: WatchOption = None,
    count: CountOption = None,
    all_groups: AllGroupsOption = False,
) -> int:
    """Explain who should hold which queue, who does, and every problem with its fix.

    Reads a snapshot (--dump FILE) or a live cluster (-n ADDR, default $NAMESRV_ADDR).

    Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it,
    2 bad input, 3 cluster unreachable, 4 partial data.
    """
    from typer._click.exceptions import UsageError

    from rmqlb.diagnose.report import exit_code
    from rmqlb.render import RenderOptions

    groups = [*(groups or ()), *(group or ())] or None
    check_source(ctx, dump, connection)
    if count is not None and watch is None:
        raise UsageError("--count only makes sense with --watch", ctx)
    if watch is not None and dump == "-":
        raise UsageError("--watch cannot re-read stdin: give --dump a file", ctx)

    if dump is not None:
        source = dump

        def acquire() -> "Snapshot":
            return _load_dump(source)

    else:
        live = connection.live(
            groups=tuple(groups or ()),
            all_groups=all_groups,
            progress=watch is None,  # a progress bar would fight the --watch redraw
        )

        def acquire() -> "Snapshot":
            from rmqlb.cli.live import snapshot_from_cluster

            return snapshot_from_cluster(live)

    analyse = _analyser(groups, topic, strategy, max_imbalance, polls=watch is not None)
    fmt = resolve_output(display.output)
    options = RenderOptions(
        fail_on=fail_on.value,
        all_queues=all_queues,
        pretty_json=sys.stdout.isatty(),
        wide=display.wide,
    )
    if watch is not None:
        from rmqlb.cli.watch import watch as watch_loop

        view = ExplainWatch(fmt, options)
        return watch_loop(
            lambda: view.poll(analyse(acquire())),
            view,
            make_console(display.color),
            json_output=fmt is Output.json,
            interval=watch,
            count=count,
            redraw=sys.stdout.isatty(),
        )
    report = analyse(acquire())
    report_failures(report.errors)
    if fmt is Output.table:
        _render(report, fmt, make_console(display.color), options)
    else:  # text formats go straight to stdout: no Rich console to load and build
        from rmqlb.render import render

        render(report, fmt, sys.stdout, options)
    return int(exit_code(report, fail_on.value))


# ----- acquisition and analysis ------------------------------------------------------------


def _load_dump(source: str) -> "Snapshot":
    """The snapshot in ``source`` (a path, or ``-`` for stdin)."""
    from rmqlb.snapshot import load_snapshot

    return load_snapshot(source)


def _analyser(
    groups: list[str] | None,
    topic: str | None,
    strategy: str | None,
    max_imbalance: float | None,
    *,
    polls: bool = False,
) -> "Callable[[Snapshot], Report]":
    """``snapshot -> report`` with the command's filters and thresholds bound; ``polls``:
    each snapshot is compared with an earlier one (``--watch``: QUEUE_STALLED)."""
    from dataclasses import replace

    from rmqlb.diagnose import DiagnoseOptions, diagnose
    from rmqlb.diagnose.context import PollHistory
    from rmqlb.model.strategy import Params, parse_strategy_spec

    # CONSISTENT_HASH without vnodes names the strategy, not the count: it may be inferred
    spec = parse_strategy_spec(strategy, absent=Params.UNKNOWN) if strategy is not None else None
    options = (
        DiagnoseOptions() if max_imbalance is None else DiagnoseOptions(max_imbalance=max_imbalance)
    )
    wanted = list(groups) if groups else None
    history = PollHistory() if polls else None

    def analyse(snapshot: "Snapshot") -> "Report":
        opts = options if history is None else replace(options, earlier=history.earlier(snapshot))
        return diagnose(snapshot, groups=wanted, topic=topic, strategy=spec, options=opts)

    return analyse


# ----- output ------------------------------------------------------------------------------


def _render(report: "Report", fmt: Output, console: "Console", options: "RenderOptions") -> None:
    """One report on stdout: tables through the console, text formats straight to the stream."""
    from rmqlb.render import render

    render(report, fmt, console if fmt is Output.table else console.file, options)


class ExplainWatch:
    """``explain --watch``: reports compared queue by queue and finding by finding.

    The capture failures of a poll are listed on stderr when they differ from the last ones
    listed (:meth:`poll`); names in change lines are shown with control characters visible.
    """

    def __init__(self, fmt: Output, options: "RenderOptions") -> None:
        self.fmt = fmt
        self.options = options
        self.listed: object = None  # the capture failures last listed on stderr

    def poll(self, report: "Report") -> "Report":
        """List ``report``'s capture failures on stderr unless they were just listed."""
        if report.errors != self.listed:
            report_failures(report.errors)
            self.listed = report.errors
        return report

    def diff(self, before: "Report", after: "Report") -> "ReportChanges":
        """Queues that changed hands, findings new or cleared."""
        from rmqlb.render.changes import diff_reports

        return diff_reports(before, after)

    def empty(self, changes: "ReportChanges") -> bool:
        """Whether nothing changed."""
        return changes.empty

    def summary(self, changes: "ReportChanges | None", marked: bool) -> str:
        """``2 queues changed owner, 1 new finding, 0 cleared``."""
        from rmqlb.render.watch import changes_summary

        return changes_summary(changes, marked)

    def _options(self, changes: "ReportChanges | None") -> "RenderOptions":
        import dataclasses

        return dataclasses.replace(self.options, changes=changes)

    def renderable(
        self, result: "Report", changes: "ReportChanges | None", console: "Console"
    ) -> "RenderableType":
        """The report as one Rich renderable, for ``rich.live.Live``: as a table its tables
        give way (rows counted, problems kept first) so that it fits the terminal under the
        watch line."""
        import dataclasses

        from rmqlb.render.screen import fit_height
        from rmqlb.render.watch import STATUS_LINES, report_renderable

        options = self._options(changes)
        if self.fmt is not Output.table or options.all_queues:
            return report_renderable(result, self.fmt, options, console.width)
        most = max(
            (len(t.queues) + len(t.consumers) for g in result.groups for t in g.topics), default=0
        )
        return fit_height(
            lambda rows, brief: report_renderable(
                result,
                self.fmt,
                dataclasses.replace(options, max_rows=rows, brief_findings=brief),
                console.width,
            ),
            console,
            console.height - STATUS_LINES,
            most,
        )

    def show(self, result: "Report", changes: "ReportChanges | None", console: "Console") -> None:
        """The whole report on the console."""
        _render(result, self.fmt, console, self._options(changes))

    def lines(self, changes: "ReportChanges") -> list[str]:
        """One line per queue run and finding that changed (control characters visible)."""
        from rmqlb.render.changes import describe_changes
        from rmqlb.render.safe import escape_controls

        return [escape_controls(line) for line in describe_changes(changes)]

    def to_json(self, changes: "ReportChanges", poll: int) -> dict[str, Any]:
        """An ``rmqlb.changes/1`` object."""
        from rmqlb.render.json import changes_to_json

        return changes_to_json(changes, poll)

    def exit_code(self, result: "Report") -> int:
        """Explain's exit code for ``result``."""
        from rmqlb.diagnose.report import exit_code

        return int(exit_code(result, self.options.fail_on))
