"""Plain text and Markdown reports, written from one :mod:`rmqlb.render.blocks` document.

Plain suits logs and pipes (no colour, no box drawing); Markdown (GitHub tables, headings,
one bullet per finding) pastes as-is into a pull-request comment or a wiki page. The two
differ only in how :func:`~rmqlb.render.blocks.to_text` lays the same blocks out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import IO

from rich.console import Console

from rmqlb.diagnose.report import Finding, GroupReport, QueueStatus, Report, TopicReport
from rmqlb.render import _view as v
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
from rmqlb.render.options import RenderOptions
from rmqlb.render.safe import safe


def _write(text: str, target: Console | IO[str]) -> None:
    if isinstance(target, Console):
        target.print(text, markup=False, highlight=False, soft_wrap=True, emoji=False, end="")
    else:
        target.write(text)


def _md_keep_code(text: str) -> str:
    """:func:`~rmqlb.render.blocks.md_escape`, except that `code spans` stay code spans."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code span at all
        return md_escape(text)
    return "".join(md_escape(p) if i % 2 == 0 else f"`{p}`" for i, p in enumerate(parts))


def _note(text: str) -> Line:
    """A remark under a table: italic in Markdown, with the flag as code."""
    return Line(text, md="_" + md_escape(text).replace("--all-queues", "`--all-queues`") + "_")


def _strong(text: str) -> Cell:
    """A cell that stands out: bold in Markdown."""
    return Cell(text, f"**{md_escape(text)}**")


def report_blocks(report: Report, options: RenderOptions) -> list[Block]:
    """The whole report as blocks: per group its topics (queue and consumer tables) and
    findings, then other findings, the partial-data notice and the summary."""
    doc: list[Block] = []
    per_group, rest = v.findings_by_group(report)
    if not report.groups and not report.findings:
        doc.append(Line("No consumer group matched."))
    for g in report.groups:
        doc += _group(g, per_group[g.group], options)
    if rest:
        doc += _findings(Heading("Other findings"), rest, options)
    if report.errors:
        line = v.partial_line(report)
        doc += [Heading("Partial data", 1), Line(line, md=f"> **{md_escape(line)}**")]
    summary, code = v.summary_line(report), v.exit_line(report, options.fail_on)
    code = code.removeprefix("exit ")
    doc.append(
        Line(
            f"Summary: {summary}\nExit code {code}",
            md=f"**Summary:** {md_escape(summary)}  \n**Exit code** {md_escape(code)}",
        )
    )
    return doc


def _group(g: GroupReport, findings: list[Finding], o: RenderOptions) -> list[Block]:
    doc: list[Block] = [Heading(v.group_header(g), 1, v.group_header(g, code_span))]
    note = v.inference_line(g)
    if note is not None:
        doc.append(Line(note, md=f"_{_md_keep_code(note)}_"))
    if not g.topics:
        doc.append(Line(v.no_topic_line(g)))
    for t in g.topics:
        doc += _topic(g.group, t, o)
    title = Heading(f"Findings for {g.group}", md=f"Findings for {code_span(g.group)}")
    return doc + _findings(title, findings, o)


def _topic(group: str, t: TopicReport, o: RenderOptions) -> list[Block]:
    doc: list[Block] = [Heading(v.topic_header(t), md=v.topic_header(t, code_span))]
    view = v.queue_view(group, t, o)
    details = v.queue_details(t, view.rows, o.now_ms, o)
    columns = (
        Column("queue", code=True),
        Column("expected", code=True),
        Column("actual", code=True),
        Column("status"),
        *([Column("lag", "right")] if view.show_lag else []),
        *(Column(d.header.lower(), "right" if d.right else "left") for d in details),
    )
    rows: list[tuple[str | Cell, ...]] = []
    for i, r in enumerate(view.rows):
        label = r.queue.label()
        if v.queue_changed(o, group, t.topic, r):
            label += " " + v.CHANGED_MARK
        actual = "\n".join(v.actual_list(r))
        cells: list[str | Cell] = [
            label,
            v.expected_text(r),
            Cell(actual, actual) if r.actual is None else actual,  # "unknown" is no id
            r.status.value if r.status is QueueStatus.ok else _strong(r.status.value),
        ]
        if view.show_lag:
            cells.append(v.lag_text(r.lag))
        rows.append((*cells, *(d.cells[i] for d in details)))
    if rows:
        doc.append(Table(columns, tuple(rows)))
    if view.hidden_ok:
        doc.append(_note(v.hidden_line(view.hidden_ok, len(t.queues))))
    if o.changes is not None and any(v.queue_changed(o, group, t.topic, r) for r in view.rows):
        doc.append(Line(f"{v.CHANGED_MARK} owner changed since the last poll"))
    return doc + _consumers(t, v.consumer_lag_shown(t, view), o)


def _consumers(t: TopicReport, show_lag: bool, o: RenderOptions) -> list[Block]:
    if not t.consumers:
        return [Line("No consumer in this group.")]
    view = v.consumer_view(t, o)
    details = v.consumer_details(t, [c for c, _ in view.rows], o.wide)
    columns = (
        Column("client id", code=True),
        Column("subscribes"),
        Column("strategy"),
        Column("expected", "right"),
        Column("actual", "right"),
        *([Column("lag", "right")] if show_lag else []),
        *(Column(d.header.lower(), "right" if d.right else "left") for d in details),
        Column("note"),
    )
    rows: list[tuple[str | Cell, ...]] = []
    for i, (c, remark) in enumerate(view.rows):
        cells = [
            c.client_id,
            "yes" if c.subscribes else "no",
            c.strategy or "?",
            v.expected_count_text(c),
            v.count_text(c.actual),
            *([v.lag_text(c.lag)] if show_lag else []),
            *(d.cells[i] for d in details),
        ]
        rows.append((*cells, _strong(remark) if remark else ""))
    doc: list[Block] = [Table(columns, tuple(rows))] if rows else []
    if view.hidden:
        doc.append(_note(v.hidden_consumers_line(view.hidden, len(t.consumers))))
    return doc


def _findings(title: Heading, findings: list[Finding], o: RenderOptions) -> list[Block]:
    """The findings under ``title``: one entry each (nested under its cause), its fix below."""
    if not findings:
        return [title, Line("No findings.")]
    plain: list[str] = []
    md: list[str] = []
    for line in v.finding_lines(findings):
        f = line.finding
        new = o.changes is not None and o.changes.finding_is_new(f)
        tags = [t for t in (line.tag, "new" if new else "") if t]
        tag = f" ({'; '.join(tags)})" if tags else ""
        pad = "    " * line.depth
        where = f" {v.finding_where(f)}" if f.topic else ""
        plain += [f"{pad}[{f.severity.value}] {f.code.value}{where}{tag}", f"{pad}  {f.message}"]
        pad = "  " * line.depth
        where = f" · topic {code_span(f.topic)}" if f.topic else ""
        md.append(
            f"{pad}- **{f.severity.value}** {code_span(f.code.value)}{where}{md_escape(tag)}: "
            f"{md_escape(f.message)}"
        )
        if f.hint:
            plain.append(f"{'    ' * line.depth}  fix: {f.hint}")
            md.append(f"{pad}  - Fix: {md_escape(f.hint)}")
    doc: list[Block] = [title, Line("\n".join(plain), md="\n".join(md))]
    if o.changes is not None and o.changes.cleared_findings:
        cleared = [
            f"cleared since the last poll: {f.code.value} {f.group}"
            + (f" {v.finding_where(f)}" if f.topic else "")
            for f in o.changes.cleared_findings
        ]
        doc.append(Line("\n".join(cleared), md="\n".join("- " + md_escape(c) for c in cleared)))
    return doc


class _TextReport:
    """The report through :func:`report_blocks`, laid out as plain text or Markdown."""

    markdown = False

    def to_text(self, report: Report, options: RenderOptions) -> str:
        """The whole report as one string ending in a newline, names shown through
        :func:`~rmqlb.render.safe.safe` (control characters visible)."""
        report, options = safe(report), safe(options)
        options = replace(options, now_ms=v.captured_ms(report.captured_at))
        return to_text(report_blocks(report, options), markdown=self.markdown, spaced=True)

    def render(self, report: Report, target: Console | IO[str], options: RenderOptions) -> None:
        """Write the report to ``target`` (a stream, or a Console's stream)."""
        _write(self.to_text(report, options), target)


class PlainRenderer(_TextReport):
    """Plain text: headings underlined, ``simple`` tables, no colour."""

    markdown = False


class MarkdownRenderer(_TextReport):
    """GitHub-flavoured Markdown: headings, pipe tables, one bullet per finding."""

    markdown = True
