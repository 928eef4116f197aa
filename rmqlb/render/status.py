"""``rmqlb status`` in the four formats: one line per consumer group, worst first.

Like the report renderers, each format is chosen through the closed :class:`Output` enum
(:func:`render_status` ends in ``assert_never``); cell wording is shared here so the Rich
table, the plain and Markdown tables (:mod:`rmqlb.render.blocks`) and the golden files agree.
Rich and tabulate load only for the format that needs them.

Marks after a group name: ``!`` some of its data could not be captured (the partial-data
section lists the failed requests), ``*`` its line changed since the last ``--watch`` poll.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, assert_never, cast

from rmqlb.diagnose.report import exit_code
from rmqlb.diagnose.status import (
    GroupStatus,
    StatusReport,
    severity_counts,
    status_to_json,
    totals,
)
from rmqlb.errors import ExitCode
from rmqlb.humanize import duration, rate
from rmqlb.render.formats import Output
from rmqlb.render.safe import escape_json_controls, safe

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from rmqlb.render.blocks import Block, Cell
    from rmqlb.render.changes import StatusChanges

PARTIAL_MARK = "!"
CHANGED_MARK = "*"
"""Failed requests listed under the table; JSON lists every one."""


@dataclass(frozen=True, slots=True)
class StatusOptions:
    """How to render a status: ``fail_on`` feeds the exit-code line and ``exitCode``;
    ``changes`` marks lines that changed since the previous ``--watch`` poll; ``max_rows``
    caps the colour table's groups (the worst first; the others are counted), so that
    ``--watch`` fits the terminal; ``wide`` (``-o wide``) adds :data:`WIDE` to the table;
    ``headers`` False (``--no-headers``) leaves only the rows (a tab-separated line per group
    in ``plain`` and ``markdown``)."""

    fail_on: str = "error"
    changes: StatusChanges | None = None
    pretty_json: bool = True
    max_rows: int | None = None
    wide: bool = False
    headers: bool = True


# ----- cells -------------------------------------------------------------------------------


def count_text(n: int) -> str:
    """``12,345``."""
    return f"{n:,}"


def lag_text(lag: int | None, complete: bool = True) -> str:
    """Total lag, ``-`` when the group has no committed offsets at all; when some offsets
    could not be read, ``?`` (none known) or ``1,200+`` (a lower bound)."""
    if not complete:
        return "?" if lag is None else f"{lag:,}+"
    return "-" if lag is None else f"{lag:,}"


def stranded_text(line: GroupStatus) -> str:
    """Messages in queues nobody consumes: ``3,537``; ``?`` when none of those queues has a
    known lag, ``40+`` when some have not (how many queues: JSON ``stranded.queues``)."""
    s = line.stranded
    if not s.known:
        return "?"
    return f"{s.messages:,}+" if s.unknown or not s.complete else f"{s.messages:,}"


def tps_text(tps: float | None) -> str:
    """Consume rate, one decimal; ``-`` when no client reported one."""
    return rate(tps)


def worst_text(line: GroupStatus) -> str:
    """``error SUBSCRIPTION_INCONSISTENT`` or ``-``."""
    worst = line.worst
    return "-" if worst is None else f"{worst.severity.value} {worst.code.value}"


def message_text(line: GroupStatus) -> str:
    """The worst finding's one-line message, after its id and how many findings it causes:
    ``[G/F1, causes 2] ...``."""
    worst = line.worst
    if worst is None:
        return ""
    return f"[{worst_tag(line)}] {worst.message}"


def worst_tag(line: GroupStatus) -> str:
    """``G/F1`` or ``G/F1, causes 2``: the worst finding's id (as explain shows it) and its
    consequences."""
    worst = line.worst
    tag = (worst.id if worst is not None else None) or ""
    n = line.consequences
    return f"{tag}, causes {n}" if n else tag


def group_label(line: GroupStatus, options: StatusOptions) -> str:
    """The group name with its marks (``!`` partial, ``*`` changed)."""
    marks = ""
    if line.partial:
        marks += PARTIAL_MARK
    if options.changes is not None and options.changes.changed(line.group):
        marks += CHANGED_MARK
    return f"{line.group} {marks}" if marks else line.group


def title_line(report: StatusReport) -> str:
    """``Consumer groups · 5 of 7 shown (--problems)`` or ``Consumer groups · 7``."""
    n = len(report.lines)
    if report.hidden:
        shown = len(report.shown)
        return f"Consumer groups · {shown} of {n} shown (--problems hides the others)"
    return f"Consumer groups · {n}"


def summary_line(report: StatusReport) -> str:
    """The footer's first line: how many groups, how bad, how many consumers, and when or
    how fast the data was captured."""
    return "; ".join(summary_parts(report))


def summary_parts(report: StatusReport) -> list[str]:
    """The parts of :func:`summary_line` (a narrow screen breaks the line between them)."""
    t = totals(report)
    parts = [
        f"{t.groups} group{'s' if t.groups != 1 else ''}, {t.errors} with errors, "
        f"{t.warnings} with warnings" + (f", {t.partial} partial" if t.partial else ""),
        f"{t.consumers:,} consumer{'s' if t.consumers != 1 else ''}",
    ]
    if report.seconds is not None:
        parts.append(f"captured in {duration(report.seconds)}")
    elif report.captured_at:
        parts.append(f"captured at {report.captured_at}")
    return parts


def totals_line(report: StatusReport) -> str:
    """The footer's sums: lag, stranded messages, consume rate (when reported)."""
    return ", ".join(totals_parts(report))


def totals_parts(report: StatusReport) -> list[str]:
    """The parts of :func:`totals_line`."""
    t = totals(report)
    lag = f"{t.lag:,}" + ("" if t.lag_complete else "+")
    stranded = f"{t.stranded:,}" + ("" if t.stranded_complete else "+")
    parts = [f"lag {lag}", f"stranded {stranded}"]
    if not (t.lag_complete and t.stranded_complete):
        parts[-1] += " (+: more where offsets or holders could not be read)"
    if t.consume_tps is not None:
        parts.append(f"consuming {t.consume_tps:,.1f} msg/s")
    return parts


def exit_line(report: StatusReport, fail_on: str) -> str:
    """``Exit code 1: findings at or above --fail-on error`` (the same rule as explain)."""
    from rmqlb.render._view import exit_reason  # noqa: PLC0415  (text formats only, not JSON)

    code = exit_code(report.report, fail_on)
    return f"Exit code {int(code)}: {exit_reason(code, fail_on)}"


def partial_lines(report: StatusReport) -> list[str]:
    """The partial-data note (empty when complete). The failed requests themselves are listed
    once, on stderr, by the command (:func:`rmqlb.render.failures.failure_lines`), and all of
    them in JSON."""
    errors = report.errors
    if not errors:
        return []
    from rmqlb.render.failures import failure_summary  # noqa: PLC0415  (text formats only)

    return [
        f"partial data: {failure_summary(errors)} (listed on stderr); lines marked "
        f"{PARTIAL_MARK} may be incomplete and groups may be missing"
    ]


HEADERS = ("group", "model", "strategy", "consumers", "topics", "queues", "lag", "stranded")
WIDE = ("findings", "versions", "last consumed")
"""What ``-o wide`` adds after the rate: findings by severity, client versions, the newest
consumed message's age and time."""
RIGHT = {"consumers", "topics", "queues", "lag", "stranded", "tps", "findings", "last consumed"}


def findings_text(line: GroupStatus) -> str:
    """Errors, warnings, infos: ``2/1/0``."""
    n = severity_counts(line.findings)
    return f"{n['error']}/{n['warning']}/{n['info']}"


def versions_text(line: GroupStatus) -> str:
    """``V4_9_8, V5_1_4``; ``-`` when no consumer reported one."""
    from rmqlb.remoting.codes import version_name  # noqa: PLC0415

    return ", ".join(version_name(v) for v in line.versions) or "-"


def last_consumed_text(line: GroupStatus, captured_at: str | None) -> str:
    """``12 min ago, 2026-11-22T11:48:00Z``; ``never`` when no message was consumed."""
    from rmqlb.jsontext import iso_ms  # noqa: PLC0415
    from rmqlb.render._view import age_text, captured_ms  # noqa: PLC0415

    if line.last_consumed_ms is None:
        return "never"
    age = age_text(line.last_consumed_ms, captured_ms(captured_at))
    stamp = iso_ms(line.last_consumed_ms) or ""
    return f"{age}, {stamp}" if age else stamp


def row_cells(
    line: GroupStatus, options: StatusOptions, show_tps: bool, captured_at: str | None = None
) -> list[str]:
    """The text cells of one line, in :data:`HEADERS` order (then tps, the :data:`WIDE`
    cells with ``options.wide``, finding, message)."""
    cells = [
        group_label(line, options),
        line.message_model,
        line.strategy,
        count_text(line.consumers),
        count_text(line.topics),
        count_text(line.queues),
        lag_text(line.lag, line.lag_complete),
        stranded_text(line),
    ]
    if show_tps:
        cells.append(tps_text(line.consume_tps))
    if options.wide:
        cells += [findings_text(line), versions_text(line), last_consumed_text(line, captured_at)]
    cells += [worst_text(line), message_text(line)]
    return cells


def headers(show_tps: bool, wide: bool = False) -> list[str]:
    """Column names: :data:`HEADERS`, ``tps`` when any line has a rate, :data:`WIDE` when
    ``wide``, finding, message."""
    extra = [*(["tps"] if show_tps else []), *(WIDE if wide else ())]
    return [*HEADERS, *extra, "worst finding", "message"]


def legend(report: StatusReport, options: StatusOptions) -> list[str]:
    """What the marks mean, for the marks that appear."""
    out = []
    if any(line.partial for line in report.shown):
        out.append(f"{PARTIAL_MARK} some data of this group could not be captured")
    if options.changes is not None and any(options.changes.changed(s.group) for s in report.shown):
        out.append(f"{CHANGED_MARK} changed since the last poll")
    if options.changes is not None and options.changes.removed:
        gone = ", ".join(c.group for c in options.changes.removed)
        out.append(f"gone since the last poll: {gone}")
    return out


# ----- formats -----------------------------------------------------------------------------


def status_blocks(report: StatusReport, options: StatusOptions) -> list[Block]:
    """The overview as :mod:`rmqlb.render.blocks`: title, one table row per group, the
    legend of the marks, failed requests, summary."""
    from rmqlb.render import blocks as b  # noqa: PLC0415  (text formats only, not JSON)

    show_tps = report.show_tps
    head = headers(show_tps)
    doc: list[Block] = [b.Heading(title_line(report), 1)]
    if report.shown:
        columns = tuple(
            b.Column(h, "right" if h in RIGHT else "left", code=h == "group") for h in head
        )
        rows: list[tuple[str | Cell, ...]] = []
        for line in report.shown:
            *cells, worst_cell, message = row_cells(line, options, show_tps)
            finding: str | Cell = worst_cell
            worst = line.worst  # its code as code in Markdown
            if worst is not None:
                finding = b.Cell(
                    worst_cell, f"{worst.severity.value} {b.code_span(worst.code.value)}"
                )
            rows.append((*cells, finding, message))
        doc.append(b.Table(columns, tuple(rows)))
    else:
        doc.append(b.Line("No consumer group matched."))
    notes = legend(report, options)
    if notes:
        italic = "  \n".join(f"_{b.md_escape(n)}_" for n in notes)
        doc.append(b.Line("\n".join(notes), md=italic))
    for note in partial_lines(report):
        doc.append(b.Line(note, md=f"> **{b.md_escape(note)}**"))
    summary, sums = summary_line(report), totals_line(report)
    code = exit_line(report, options.fail_on)
    doc.append(
        b.Line(
            f"Summary: {summary}\nTotals: {sums}\n{code}",
            md=f"**Summary:** {b.md_escape(summary)}  \n**Totals:** {b.md_escape(sums)}  \n"
            f"**{b.md_escape(code)}**",
        )
    )
    return doc


GAP = "  "  # between two columns
TITLES = {"tps": "TPS", "findings": "E/W/I"}
GIVE_WAY = ("model", "strategy", *reversed(WIDE), "topics", "queues", "tps", "consumers")
"""The columns a narrow console drops, first to last (``-o wide``'s own after Strategy, the
last of them first); group, lag and stranded always stay (and the worst finding, on its own
line under each row)."""


def fitting_columns(titles: list[str], widths: list[int], width: int) -> list[int]:
    """The indices of the columns kept on a console ``width`` cells wide.

    >>> fitting_columns(["group", "model", "lag"], [10, 12, 5], 31)
    [0, 1, 2]
    >>> fitting_columns(["group", "model", "lag"], [10, 12, 5], 20)
    [0, 2]
    """
    kept = list(range(len(titles)))
    for name in GIVE_WAY:
        if sum(widths[i] for i in kept) + len(GAP) * (len(kept) - 1) <= width:
            break
        if name in titles:
            kept.remove(titles.index(name))
    return kept


def build(  # names are shown through safe(): control characters visible
    report: StatusReport, options: StatusOptions | None = None, width: int = 100
) -> RenderableType:
    """The colour overview as one renderable (what ``--watch`` redraws in place).

    One row per group with its numbers, and under it its worst finding (severity, code,
    topic, message): group names and numbers are never cut, only lines longer than the
    console ``width`` end in an ellipsis.
    """
    from rich.console import Group  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    from rmqlb.render.screen import join_fitting  # noqa: PLC0415
    from rmqlb.render.styles import SEVERITY_BADGE  # noqa: PLC0415

    report = safe(report)

    o = options or StatusOptions()
    show_tps = report.show_tps
    parts: list[RenderableType] = [Text(title_line(report), style="bold")] if o.headers else []
    if report.shown:
        titles = headers(show_tps, o.wide)[:-2]  # the worst finding goes under the row
        rows = [row_cells(line, o, show_tps, report.captured_at)[:-2] for line in report.shown]
        widths = [
            max(len(TITLES.get(t, t)), *(len(row[i]) for row in rows)) for i, t in enumerate(titles)
        ]
        kept = fitting_columns(titles, widths, width)
        titles = [titles[i] for i in kept]
        widths = [widths[i] for i in kept]
        rows = [[row[i] for i in kept] for row in rows]

        def cell(text: str, i: int) -> str:
            if titles[i] in RIGHT:
                return text.rjust(widths[i])
            return text.ljust(widths[i])

        head = GAP.join(cell(TITLES.get(t, t.capitalize()), i) for i, t in enumerate(titles))
        if o.headers:
            parts.append(Text(head, style="bold", no_wrap=True, overflow="ellipsis"))
            parts.append(Text("─" * min(width, len(head)), no_wrap=True))
        cap = len(rows) if o.max_rows is None else o.max_rows
        for line, cells in zip(report.shown[:cap], rows[:cap], strict=True):
            row = Text(no_wrap=True, overflow="ellipsis")
            row.append(cell(cells[0], 0), style="bold cyan" if line.rank >= 1 else "cyan")
            for i in range(1, len(cells)):
                style = "bold red" if titles[i] == "stranded" and line.stranded.messages else ""
                row.append(GAP)
                row.append(cell(cells[i], i), style=style)
            parts.append(row)
            worst = line.worst
            if worst is not None:
                finding = Text("  ", no_wrap=True, overflow="ellipsis")
                finding.append(f" {worst.severity.value} ", SEVERITY_BADGE[worst.severity])
                finding.append(f" {worst.code.value}", style="bold")
                if worst.topic:
                    finding.append(f" {worst.topic}", style="cyan")
                finding.append(f" [{worst_tag(line)}]", style="bold")
                finding.append(f": {worst.message}", style="dim")
                parts.append(finding)
        more = len(rows) - cap
        if more > 0:
            groups = "group" if more == 1 else "groups"
            parts.append(Text(f"… {more:,} more {groups} (taller window)", style="dim italic"))
    elif o.headers:
        parts.append(Text("No consumer group matched.", style="yellow"))
    if not o.headers:
        return Group(*parts)
    for note in legend(report, o):
        parts.append(Text(note, style="dim italic"))
    for note in partial_lines(report):
        parts.append(Text(note, style="bold red"))
    code = exit_code(report.report, o.fail_on)
    parts.append(Text(""))
    footer = Text.assemble(
        ("Summary: ", "bold"),
        join_fitting(summary_parts(report), width, first=len("Summary: ")),
        "\n",
        ("Totals: ", "bold"),
        join_fitting(totals_parts(report), width, first=len("Totals: "), sep=", "),
        "\n",
    )
    footer.append(
        exit_line(report, o.fail_on),
        style="red" if code is ExitCode.FINDINGS else "yellow" if code else "green",
    )
    parts.append(footer)
    return Group(*parts)


def to_json_text(report: StatusReport, options: StatusOptions) -> str:
    """The ``rmqlb.status/1`` document as text (indented when ``pretty_json``)."""
    from rmqlb.jsontext import dumps  # noqa: PLC0415

    document: dict[str, Any] = status_to_json(report, options.fail_on)
    indent = 2 if options.pretty_json else None
    return escape_json_controls(dumps(document, indent=indent)) + "\n"


def render_status(
    report: StatusReport,
    fmt: Output,
    target: Console | IO[str],
    options: StatusOptions | None = None,
) -> None:
    """Write ``report`` in format ``fmt`` to ``target`` (a Rich console for tables)."""
    o = options or StatusOptions()
    if fmt is Output.table or fmt is Output.wide:
        from rich.console import Console  # noqa: PLC0415

        console = (
            target
            if isinstance(target, Console)
            else Console(file=target, color_system=None, highlight=False)
        )
        from rmqlb.render.screen import Trimmed  # noqa: PLC0415

        console.print(Trimmed(build(report, o, console.width)), highlight=False)
        return
    if (fmt is Output.plain or fmt is Output.markdown) and not o.headers:
        from rmqlb.render.safe import escape_controls  # noqa: PLC0415

        rows = (row_cells(line, o, report.show_tps, report.captured_at) for line in report.shown)
        text = "".join("\t".join(escape_controls(c) for c in row) + "\n" for row in rows)
    elif fmt is Output.plain or fmt is Output.markdown:
        from rmqlb.render.blocks import to_text  # noqa: PLC0415  (text formats only)

        blocks = status_blocks(report, o)
        text = to_text(blocks, markdown=fmt is Output.markdown, spaced=True)
    elif fmt is Output.json:
        text = to_json_text(report, o)
    else:
        assert_never(fmt)
    rich_console = sys.modules.get("rich.console")
    if rich_console is not None and isinstance(target, rich_console.Console):
        target.file.write(text)
    else:
        cast("IO[str]", target).write(text)
