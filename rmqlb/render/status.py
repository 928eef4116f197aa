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
from rmqlb.diagnose.status import GroupStatus, StatusReport, status_to_json, totals
from rmqlb.errors import ExitCode
from rmqlb.humanize import duration
from rmqlb.render._view import exit_reason
from rmqlb.render.blocks import (
    Block,
    Cell,
    Column,
    Heading,
    Line,
    Table,
    code_span,
    md_escape,
    to_text,
)
from rmqlb.render.formats import Output
from rmqlb.render.safe import escape_json_controls, safe

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from rmqlb.render.changes import StatusChanges

PARTIAL_MARK = "!"
CHANGED_MARK = "*"
MAX_ERRORS_SHOWN = 10
"""Failed requests listed under the table; JSON lists every one."""


@dataclass(frozen=True, slots=True)
class StatusOptions:
    """How to render a status: ``fail_on`` feeds the exit-code line and ``exitCode``;
    ``changes`` marks lines that changed since the previous ``--watch`` poll."""

    fail_on: str = "error"
    changes: StatusChanges | None = None
    pretty_json: bool = True


# ----- cells -------------------------------------------------------------------------------


def count_text(n: int) -> str:
    """``12,345``."""
    return f"{n:,}"


def lag_text(lag: int | None) -> str:
    """Total lag, ``-`` when the group has no committed offsets at all."""
    return "-" if lag is None else f"{lag:,}"


def stranded_text(line: GroupStatus) -> str:
    """Messages in queues nobody consumes: ``3,537``; ``?`` when none of those queues has a
    known lag, ``40+`` when some have not (how many queues: JSON ``stranded.queues``)."""
    s = line.stranded
    if s.queues and s.unknown == s.queues:
        return "?"
    return f"{s.messages:,}+" if s.unknown else f"{s.messages:,}"


def tps_text(tps: float | None) -> str:
    """Consume rate, one decimal; ``-`` when no client reported one."""
    return "-" if tps is None else f"{tps:,.1f}"


def worst_text(line: GroupStatus) -> str:
    """``error SUBSCRIPTION_INCONSISTENT`` or ``-``."""
    worst = line.worst
    return "-" if worst is None else f"{worst.severity.value} {worst.code.value}"


def message_text(line: GroupStatus) -> str:
    """The worst finding's one-line message (with its topic when it has one)."""
    worst = line.worst
    if worst is None:
        return ""
    return worst.message


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
    return "; ".join(parts)


def totals_line(report: StatusReport) -> str:
    """The footer's sums: lag, stranded messages, consume rate (when reported)."""
    t = totals(report)
    text = f"lag {t.lag:,}, stranded {t.stranded:,}"
    if t.consume_tps is not None:
        text += f", consuming {t.consume_tps:,.1f} msg/s"
    return text


def exit_line(report: StatusReport, fail_on: str) -> str:
    """``Exit code 1: findings at or above --fail-on error`` (the same rule as explain)."""
    code = exit_code(report.report, fail_on)
    return f"Exit code {int(code)}: {exit_reason(code, fail_on)}"


def partial_lines(report: StatusReport) -> list[str]:
    """The partial-data section: a head line, then at most :data:`MAX_ERRORS_SHOWN` failed
    requests (empty when complete)."""
    errors = report.errors
    if not errors:
        return []
    n = len(errors)
    out = [
        f"partial data: {n} request{'s' if n != 1 else ''} failed while capturing; lines "
        f"marked {PARTIAL_MARK} may be incomplete and groups may be missing"
    ]
    for e in errors[:MAX_ERRORS_SHOWN]:
        about = e.group or e.topic
        where = f" [{about}]" if about else ""
        out.append(f"{e.target} {e.request}{where}: {e.message}")
    if n > MAX_ERRORS_SHOWN:
        out.append(f"... and {n - MAX_ERRORS_SHOWN} more (-o json lists them all)")
    return out


HEADERS = ("group", "model", "strategy", "consumers", "topics", "queues", "lag", "stranded")
RIGHT = {"consumers", "topics", "queues", "lag", "stranded", "tps"}


def row_cells(line: GroupStatus, options: StatusOptions, show_tps: bool) -> list[str]:
    """The text cells of one line, in :data:`HEADERS` order (then tps, finding, message)."""
    cells = [
        group_label(line, options),
        line.message_model,
        line.strategy,
        count_text(line.consumers),
        count_text(line.topics),
        count_text(line.queues),
        lag_text(line.lag),
        stranded_text(line),
    ]
    if show_tps:
        cells.append(tps_text(line.consume_tps))
    cells += [worst_text(line), message_text(line)]
    return cells


def headers(show_tps: bool) -> list[str]:
    """Column names: :data:`HEADERS`, ``tps`` when any line has a rate, finding, message."""
    return [*HEADERS, *(["tps"] if show_tps else []), "worst finding", "message"]


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
    show_tps = report.show_tps
    head = headers(show_tps)
    doc: list[Block] = [Heading(title_line(report), 1)]
    if report.shown:
        columns = tuple(
            Column(h, "right" if h in RIGHT else "left", code=h == "group") for h in head
        )
        rows: list[tuple[str | Cell, ...]] = []
        for line in report.shown:
            *cells, worst_cell, message = row_cells(line, options, show_tps)
            finding: str | Cell = worst_cell
            worst = line.worst  # its code as code in Markdown
            if worst is not None:
                finding = Cell(worst_cell, f"{worst.severity.value} {code_span(worst.code.value)}")
            rows.append((*cells, finding, message))
        doc.append(Table(columns, tuple(rows)))
    else:
        doc.append(Line("No consumer group matched."))
    notes = legend(report, options)
    if notes:
        italic = "  \n".join(f"_{md_escape(n)}_" for n in notes)
        doc.append(Line("\n".join(notes), md=italic))
    partial = partial_lines(report)
    if partial:
        head_line, *items = partial
        doc.append(
            Line(
                "\n".join([head_line, *(f"  - {i}" for i in items)]),
                md="\n".join(
                    [f"> **{md_escape(head_line)}**", ">", *(f"> - {md_escape(i)}" for i in items)]
                ),
            )
        )
    summary, sums = summary_line(report), totals_line(report)
    code = exit_line(report, options.fail_on)
    doc.append(
        Line(
            f"Summary: {summary}\nTotals: {sums}\n{code}",
            md=f"**Summary:** {md_escape(summary)}  \n**Totals:** {md_escape(sums)}  \n"
            f"**{md_escape(code)}**",
        )
    )
    return doc


GAP = "  "  # between two columns
TITLES = {"tps": "TPS"}


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

    from rmqlb.render.styles import SEVERITY_BADGE  # noqa: PLC0415

    report = safe(report)

    o = options or StatusOptions()
    show_tps = report.show_tps
    parts: list[RenderableType] = [Text(title_line(report), style="bold")]
    if report.shown:
        titles = headers(show_tps)[:-2]  # the worst finding goes under the row
        rows = [row_cells(line, o, show_tps)[:-2] for line in report.shown]
        widths = [max(len(t), *(len(row[i]) for row in rows)) for i, t in enumerate(titles)]

        def cell(text: str, i: int) -> str:
            if titles[i] in RIGHT:
                return text.rjust(widths[i])
            return text.ljust(widths[i])

        head = GAP.join(cell(TITLES.get(t, t.capitalize()), i) for i, t in enumerate(titles))
        parts.append(Text(head, style="bold", no_wrap=True, overflow="ellipsis"))
        parts.append(Text("─" * min(width, len(head)), no_wrap=True))
        for line, cells in zip(report.shown, rows, strict=True):
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
                finding.append(f": {worst.message}", style="dim")
                parts.append(finding)
    else:
        parts.append(Text("No consumer group matched.", style="yellow"))
    for note in legend(report, o):
        parts.append(Text(note, style="dim italic"))
    partial = partial_lines(report)
    if partial:
        from rich.panel import Panel  # noqa: PLC0415

        body = Text(partial[0], style="bold")
        for item in partial[1:]:
            body.append("\n  - " + item, style="")
        parts.append(Panel(body, title="partial data", border_style="red", expand=False))
    code = exit_code(report.report, o.fail_on)
    parts.append(Text(""))
    footer = Text.assemble(
        ("Summary: ", "bold"),
        summary_line(report),
        "\n",
        ("Totals: ", "bold"),
        totals_line(report),
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
    if fmt is Output.table:
        from rich.console import Console  # noqa: PLC0415

        console = (
            target
            if isinstance(target, Console)
            else Console(file=target, color_system=None, highlight=False)
        )
        console.print(build(report, o, console.width), highlight=False)
        return
    if fmt is Output.plain or fmt is Output.markdown:
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
