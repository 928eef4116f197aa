"""The colour report: Rich tables per group and topic, findings, summary.

:func:`build` returns one renderable, so ``--watch`` can hand it to ``rich.live.Live`` and
redraw in place; :class:`RichRenderer` prints it on an injected Console.
"""

from __future__ import annotations

from dataclasses import replace
from typing import IO

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from rmqlb.diagnose.report import (
    ConsumerRow,
    Finding,
    GroupReport,
    QueueRow,
    QueueStatus,
    Report,
    Severity,
    TopicReport,
    exit_code,
)
from rmqlb.errors import ExitCode
from rmqlb.humanize import plural
from rmqlb.render import _view as v
from rmqlb.render.options import RenderOptions
from rmqlb.render.safe import safe
from rmqlb.render.screen import Trimmed
from rmqlb.render.styles import SEVERITY_BADGE, SEVERITY_STYLE, severity_count
from rmqlb.render.table import Column, fit_table, layout

STATUS_STYLE: dict[QueueStatus, str] = {
    QueueStatus.ok: "green",
    QueueStatus.moved: "yellow",
    QueueStatus.unknown: "yellow",
    QueueStatus.unconsumed: "bold red",
    QueueStatus.duplicate: "bold red",
}
CHANGED_STYLE = "bold magenta"


def _group_header(g: GroupReport) -> Text:
    return Text.assemble(
        ("Group ", "bold"),
        (g.group, "bold cyan"),
        " · ",
        (g.message_model, "cyan"),
        " · strategy ",
        (g.strategy, "bold"),
    )


def _topic_header(t: TopicReport) -> Text:
    marker = "\x00"
    before, _, after = v.topic_header(t, lambda _: marker).partition(marker)
    return Text.assemble((before, "bold"), (t.topic, "bold cyan"), (after, "bold"))


def _detail_columns(details: list[v.DetailColumn]) -> list[Column]:
    """Detail columns give way as the console narrows, the last first."""
    return [
        Column(d.header, justify="right" if d.right else "left", give_way=len(details) - i)
        for i, d in enumerate(details)
    ]


def _short_names(t: TopicReport, rows: tuple[QueueRow, ...]) -> dict[str, str]:
    """``c1``, ``c2`` … for the client ids, in the consumer table's order, then any other
    holder: what the queue table shows when the full ids leave it no room."""
    names: dict[str, str] = {}
    ids = [c.client_id for c in t.consumers]
    ids += [cid for r in rows for cid in (r.expected, *(r.actual or ())) if cid]
    for cid in ids:
        names.setdefault(cid, f"c{len(names) + 1}")
    return names


def _queue_table(
    group: str, t: TopicReport, o: RenderOptions, width: int
) -> tuple[list[RenderableType], dict[str, str]]:
    """The queue table, and the short names it uses for client ids (empty: full ids)."""
    view = v.queue_view(group, t, o)
    out: list[RenderableType] = []
    used: dict[str, str] = {}
    if view.rows:
        # under --watch, room for the " *" mark so the columns stay put from poll to poll
        marks = 2 if o.changes is not None else 0
        label_width = max(cell_len(r.queue.label()) for r in view.rows) + marks
        columns = [
            Column("Queue", min_width=label_width),
            Column("Expected", key=True),
            Column("Actual", key=True),
            Column("Status"),
            *([Column("Lag", justify="right")] if view.show_lag else []),
        ]
        details = v.queue_details(t, view.rows, o.now_ms, o)
        columns += _detail_columns(details)
        styles = ["bold" if v.queue_changed(o, group, t.topic, r) else None for r in view.rows]
        rows = _queue_rows(group, t, view, details, o, names={})
        fitted = layout(columns, rows, width)
        # short names when the ids leave no room for a table (or, -o wide, for a column)
        if fitted is None or (o.wide and len(fitted[0]) < len(columns)):
            names = _short_names(t, view.rows)
            short = _queue_rows(group, t, view, details, o, names=names)
            better = layout(columns, short, width)
            if better is not None and (fitted is None or len(better[0]) > len(fitted[0])):
                rows, used = short, names
        out.append(fit_table(columns, rows, width, row_styles=styles))
    if view.hidden_ok:
        out.append(Text(v.hidden_line(view.hidden_ok, len(t.queues)), style="dim italic"))
    if view.more:
        out.append(Text(v.more_line(view.more, "queue"), style="dim italic"))
    if o.changes is not None and any(v.queue_changed(o, group, t.topic, r) for r in view.rows):
        out.append(Text(f"{v.CHANGED_MARK} owner changed since the last poll", style=CHANGED_STYLE))
    return out, used


def _queue_rows(
    group: str,
    t: TopicReport,
    view: v.QueueView,
    details: list[v.DetailColumn],
    o: RenderOptions,
    *,
    names: dict[str, str],
) -> list[list[Text]]:
    """The cells of the queue table, client ids replaced by ``names`` where given."""
    rows: list[list[Text]] = []
    for r in view.rows:
        style = STATUS_STYLE[r.status]
        label = Text(r.queue.label())
        if v.queue_changed(o, group, t.topic, r):
            label.append(" " + v.CHANGED_MARK, style=CHANGED_STYLE)
        expected = Text(
            names.get(v.expected_text(r), v.expected_text(r)),
            style="dim" if r.expected is None else "",
        )
        actual = Text(
            "\n".join(v.actual_list(r, lambda a: names.get(a, a))),
            style="" if r.status is QueueStatus.ok else style,
        )
        cells = [label, expected, actual, Text(r.status.value, style=style)]
        if view.show_lag:
            cells.append(Text(v.lag_text(r.lag)))
        cells += [Text(d.cells[len(rows)]) for d in details]
        rows.append(cells)
    return rows


def _consumer_style(c: ConsumerRow, note: str) -> str:
    if not note:
        return ""
    return "bold red" if not c.subscribes else "bold yellow" if note == "idle" else "yellow"


def _consumer_table(
    t: TopicReport, show_lag: bool, width: int, o: RenderOptions, names: dict[str, str]
) -> list[RenderableType]:
    """The consumer table; with ``names`` (the queue table's short names) a first column
    gives each row its name, and the names of holders not in the table are spelled out."""
    out: list[RenderableType] = []
    view = v.consumer_view(t, o)
    rows = view.rows
    if names:  # every consumer the queue table names gets its row
        rows = tuple((c, v.consumer_note(c, t)) for c in t.consumers)
        rows = tuple(
            (c, note) for c, note in rows if (c, note) in view.rows or c.client_id in names
        )
    if not t.consumers:
        out.append(Text("No consumer in this group.", style="yellow"))
    elif rows:
        out.append(_consumer_rows(t, rows, show_lag, width, names, wide=o.wide))
    if t.consumers and view.hidden:
        out.append(Text(v.hidden_consumers_line(view.hidden, len(t.consumers)), style="dim italic"))
    more = len(t.consumers) - view.hidden - len(rows)
    if t.consumers and more > 0:
        out.append(Text(v.more_line(more, "consumer"), style="dim italic"))
    consumers = {c.client_id for c in t.consumers}
    for cid, name in names.items():
        if cid not in consumers:
            note = ("  holds a queue, not a consumer of this topic", "dim")
            out.append(Text.assemble((name, "bold"), "  ", cid, note))
    return out


def _consumer_rows(
    t: TopicReport,
    rows: tuple[tuple[ConsumerRow, str], ...],
    show_lag: bool,
    width: int,
    names: dict[str, str],
    *,
    wide: bool,
) -> RenderableType:
    details = v.consumer_details(t, [c for c, _ in rows], wide)
    columns = [
        *([Column("#")] if names else []),
        Column("Client ID", key=True),
        Column("Subscribes"),
        # the same strategy on every row is the group's (its header says it): it may go
        Column(
            "Strategy",
            give_way=len(details) + 1 if len({c.strategy for c, _ in rows}) == 1 else 0,
        ),
        Column("Expected", justify="right"),
        Column("Actual", justify="right"),
        *([Column("Lag", justify="right")] if show_lag else []),
        *_detail_columns(details),
        Column("Note", wrap=True),
    ]
    cells: list[list[Text]] = []
    for c, note in rows:
        row = [
            *([Text(names.get(c.client_id, ""), style="bold")] if names else []),
            Text(c.client_id),
            Text("yes") if c.subscribes else Text("no", style="red"),
            Text(c.strategy or "?"),
            Text(v.expected_count_text(c)),
            Text(v.count_text(c.actual)),
        ]
        if show_lag:
            row.append(Text(v.lag_text(c.lag)))
        row += [Text(d.cells[len(cells)]) for d in details]
        row.append(Text(note))
        cells.append(row)
    styles = [_consumer_style(c, note) or None for c, note in rows]
    if names and layout(columns, cells, width) is None:  # stacked: each record under its id
        columns[0], columns[1] = columns[1], columns[0]
        cells = [[row[1], row[0], *row[2:]] for row in cells]
    return fit_table(columns, cells, width, row_styles=styles)


def _finding(line: v.FindingLine, o: RenderOptions) -> RenderableType:
    f = line.finding
    head = Text.assemble(
        ("↳ " if line.depth else "", "dim"),
        (f" {f.severity.value.upper()} ", SEVERITY_BADGE[f.severity]),
        " ",
        (f.code.value, "bold"),
    )
    if f.topic:
        head.append(f"  {v.finding_where(f)}", style="cyan")
    if line.tag:
        head.append(f"  {line.tag}", style="dim")
    if o.changes is not None and o.changes.finding_is_new(f):
        head.append("  new", style=CHANGED_STYLE)
    body = 2 + (2 if line.depth else 0)
    message = Text(f.message, no_wrap=o.brief_findings, overflow="ellipsis")
    lines: list[RenderableType] = [head, Padding(message, (0, 0, 0, body))]
    if f.hint and not o.brief_findings:
        lines.append(Padding(Text.assemble(("fix: ", "bold green"), f.hint), (0, 0, 0, body)))
    group = Group(*lines)
    return Padding(group, (0, 0, 0, 4 * line.depth - 2)) if line.depth else group


def _findings(title: Text, findings: list[Finding], o: RenderOptions) -> list[RenderableType]:
    out: list[RenderableType] = [title]
    if not findings:
        out.append(Text("No findings.", style="green"))
    out += [_finding(line, o) for line in v.finding_lines(findings)]
    if o.changes is not None:
        for f in o.changes.cleared_findings:
            where = f" {v.finding_where(f)}" if f.topic else ""
            out.append(
                Text(f"cleared since the last poll: {f.code.value} {f.group}{where}", CHANGED_STYLE)
            )
    out.append(Text(""))
    return out


def _footer(report: Report, o: RenderOptions) -> Text:
    counts = {s: sum(1 for f in report.findings if f.severity is s) for s in Severity}
    text = Text("Summary: ", style="bold")
    n = len(report.findings)
    text.append(f"{plural(n, 'finding')}: ")
    for i, severity in enumerate(Severity):
        if i:
            text.append(", ")
        count = counts[severity]
        text.append(
            severity_count(count, severity), style=SEVERITY_STYLE[severity] if count else ""
        )
    code = exit_code(report, o.fail_on)
    text.append("\nExit code ", style="bold")
    text.append(
        v.exit_line(report, o.fail_on).removeprefix("exit "),
        style="red" if code is ExitCode.FINDINGS else "yellow" if code else "green",
    )
    return text


def build(report: Report, options: RenderOptions | None = None, width: int = 100) -> RenderableType:
    """The whole colour report as one renderable, laid out for a console ``width`` wide.

    Names are shown through :func:`~rmqlb.render.safe.safe` (control characters visible) and
    as :class:`~rich.text.Text`, never as Rich markup.
    """
    report, o = safe(report), safe(options or RenderOptions())
    o = replace(o, now_ms=v.captured_ms(report.captured_at))
    parts: list[RenderableType] = []
    per_group, rest = v.findings_by_group(report)
    if not report.groups and not report.findings:
        parts.append(Text("No consumer group matched.", style="yellow"))
    for g in report.groups:
        parts += [_group_header(g), Text("")]
        note = v.inference_line(g)
        if note is not None:
            parts += [
                Text(note, style="cyan" if v.inference_settled(g) else "yellow"),
                Text(""),
            ]
        if not g.topics:
            parts += [Text(v.no_topic_line(g), style="dim"), Text("")]
        for t in g.topics:
            view = v.queue_view(g.group, t, o)
            parts.append(_topic_header(t))
            if o.max_rows == 0:  # no room for any row: one line for the topic's tables
                parts.append(Text(v.topic_more_line(t), style="dim italic"))
                continue
            queue_table, names = _queue_table(g.group, t, o, width)
            parts += queue_table
            parts += [
                Text(""),
                *_consumer_table(t, v.consumer_lag_shown(t, view), width, o, names),
                Text(""),
            ]
        if o.max_rows == 0 and g.topics:
            parts.append(Text(""))
        parts += _findings(Text(f"Findings for {g.group}", style="bold"), per_group[g.group], o)
    if rest:
        parts += _findings(Text("Other findings", style="bold"), rest, o)
    if report.errors:
        parts += [Text(v.partial_line(report), style="bold red"), Text("")]
    parts.append(_footer(report, o))
    return Group(*parts)


class RichRenderer:
    """Colour tables on a Rich console (colours follow the console's settings)."""

    def render(self, report: Report, target: Console | IO[str], options: RenderOptions) -> None:
        """Print the report on ``target`` (a stream gets a colourless console)."""
        console = (
            target
            if isinstance(target, Console)
            else Console(file=target, color_system=None, highlight=False)
        )
        console.print(Trimmed(build(report, options, console.width)), highlight=False)
