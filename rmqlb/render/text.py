"""Plain text and Markdown reports, laid out with tabulate.

Plain suits logs and pipes (no colour, no box drawing); Markdown (GitHub tables, headings,
one bullet per finding) pastes as-is into a pull-request comment or a wiki page.
"""

from __future__ import annotations

from dataclasses import replace
from typing import IO

from rich.console import Console
from tabulate import tabulate

from rmqlb.diagnose.report import Finding, GroupReport, Report, TopicReport
from rmqlb.render import _view as v
from rmqlb.render.options import RenderOptions
from rmqlb.render.safe import safe

_QUEUE_HEADERS = ["queue", "expected", "actual", "status"]
_CONSUMER_HEADERS = ["client id", "subscribes", "strategy", "expected", "actual"]


def _write(text: str, target: Console | IO[str]) -> None:
    if isinstance(target, Console):
        target.print(text, markup=False, highlight=False, soft_wrap=True, emoji=False, end="")
    else:
        target.write(text)


def _md(text: str) -> str:
    """Escape what Markdown would otherwise read as emphasis, HTML, code or a cell border."""
    for ch in ("\\", "`", "*", "<", "|"):
        text = text.replace(ch, "\\" + ch)
    return text


def _md_keep_code(text: str) -> str:
    """:func:`_md`, except that `code spans` stay code spans."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code span at all
        return _md(text)
    return "".join(_md(p) if i % 2 == 0 else f"`{p}`" for i, p in enumerate(parts))


def _code(text: str) -> str:
    """An inline code span (pipes escaped so it survives inside a table cell)."""
    return "`" + text.replace("|", "\\|") + "`"


class _TextReport:
    """Shared walk over the report; :class:`PlainRenderer` and :class:`MarkdownRenderer`
    override the few places where the two differ."""

    markdown = False

    def to_text(self, report: Report, options: RenderOptions) -> str:
        """The whole report as one string ending in a newline, names shown through
        :func:`~rmqlb.render.safe.safe` (control characters visible)."""
        report, options = safe(report), safe(options)
        options = replace(options, now_ms=v.captured_ms(report.captured_at))
        lines: list[str] = []
        per_group, rest = v.findings_by_group(report)
        if not report.groups and not report.findings:
            lines += ["No consumer group matched.", ""]
        for g in report.groups:
            lines += self._group(g, per_group[g.group], options)
        if rest:
            lines += self._findings("Other findings", rest, options)
        if report.errors:
            lines += self._partial(report)
        lines += self._footer(report, options)
        return "\n".join(lines).rstrip("\n") + "\n"

    def render(self, report: Report, target: Console | IO[str], options: RenderOptions) -> None:
        """Write the report to ``target`` (a stream, or a Console's stream)."""
        _write(self.to_text(report, options), target)

    # ----- pieces -------------------------------------------------------------------------

    def _heading(self, level: int, text: str) -> list[str]:
        if self.markdown:
            return ["#" * (level + 1) + " " + text, ""]
        if level == 1:
            return [text, "=" * len(text), ""]
        return [text, "-" * len(text), ""]

    def _group(self, g: GroupReport, findings: list[Finding], o: RenderOptions) -> list[str]:
        head = v.group_header(g, _code) if self.markdown else v.group_header(g)
        lines = self._heading(1, head)
        note = v.inference_line(g)
        if note is not None:
            lines += [f"_{_md_keep_code(note)}_" if self.markdown else note, ""]
        if not g.topics:
            lines += ["No topic to allocate for this group.", ""]
        for t in g.topics:
            lines += self._topic(g.group, t, o)
        title = f"Findings for {_code(g.group) if self.markdown else g.group}"
        lines += self._findings(title, findings, o)
        return lines

    def _topic(self, group: str, t: TopicReport, o: RenderOptions) -> list[str]:
        head = v.topic_header(t, _code) if self.markdown else v.topic_header(t)
        lines = self._heading(2, head)
        view = v.queue_view(group, t, o)
        details = v.queue_details(t, view.rows, o.now_ms, o)
        headers = list(_QUEUE_HEADERS) + (["lag"] if view.show_lag else [])
        headers += [d.header.lower() for d in details]
        rows: list[list[str]] = []
        for r in view.rows:
            label = r.queue.label()
            if v.queue_changed(o, group, t.topic, r):
                label += " " + v.CHANGED_MARK
            cells = [label, v.expected_text(r), "\n".join(v.actual_list(r)), r.status.value]
            if self.markdown:
                cells = [_code(c) if c not in ("-", "unknown") else c for c in cells[:3]] + [
                    f"**{cells[3]}**" if r.status.value != "ok" else cells[3]
                ]
                if r.actual is not None and len(r.actual) > 1:
                    cells[2] = "<br>".join(_code(a) for a in r.actual)
            if view.show_lag:
                cells.append(v.lag_text(r.lag))
            cells += [d.cells[len(rows)] for d in details]
            rows.append(cells)
        align = ["left"] * 4 + (["right"] if view.show_lag else [])
        align += ["right" if d.right else "left" for d in details]
        if rows:
            lines += self._table(rows, headers, align)
        if view.hidden_ok:
            lines += [self._note(v.hidden_line(view.hidden_ok, len(t.queues))), ""]
        if o.changes is not None and any(v.queue_changed(o, group, t.topic, r) for r in view.rows):
            lines += [f"{v.CHANGED_MARK} owner changed since the last poll", ""]
        lines += self._consumers(t, view.show_lag, o)
        return lines

    def _consumers(self, t: TopicReport, show_lag: bool, o: RenderOptions) -> list[str]:
        if not t.consumers:
            return ["No consumer in this group.", ""]
        view = v.consumer_view(t, o)
        details = v.consumer_details(t, [c for c, _ in view.rows])
        headers = [
            *_CONSUMER_HEADERS,
            *(["lag"] if show_lag else []),
            *(d.header.lower() for d in details),
            "note",
        ]
        rows: list[list[str]] = []
        for c, remark in view.rows:
            cid = _code(c.client_id) if self.markdown else c.client_id
            note = f"**{remark}**" if self.markdown and remark else remark
            cells = [
                cid,
                "yes" if c.subscribes else "no",
                c.strategy or "?",
                str(c.expected),
                v.count_text(c.actual),
            ]
            if show_lag:
                cells.append(v.lag_text(c.lag))
            cells += [d.cells[len(rows)] for d in details]
            cells.append(note)
            rows.append(cells)
        align = ["left", "left", "left", "right", "right", *(["right"] if show_lag else [])]
        align += [*("right" if d.right else "left" for d in details), "left"]
        lines = self._table(rows, headers, align) if rows else []
        if view.hidden:
            lines += [self._note(v.hidden_consumers_line(view.hidden, len(t.consumers))), ""]
        return lines

    def _note(self, text: str) -> str:
        """A remark under a table: italic in Markdown, with the flag as code."""
        if not self.markdown:
            return text
        return "_" + _md(text).replace("--all-queues", "`--all-queues`") + "_"

    def _table(self, rows: list[list[str]], headers: list[str], align: list[str]) -> list[str]:
        text = tabulate(
            rows,
            headers=headers,
            tablefmt="pipe" if self.markdown else "simple",
            disable_numparse=True,
            colalign=align,
        )
        return [*text.splitlines(), ""]

    def _findings(self, title: str, findings: list[Finding], o: RenderOptions) -> list[str]:
        lines = self._heading(2, title)
        if not findings:
            return [*lines, "No findings.", ""]
        for line in v.finding_lines(findings):
            f = line.finding
            new = o.changes is not None and o.changes.finding_is_new(f)
            tags = [t for t in (line.tag, "new" if new else "") if t]
            tag = f" ({'; '.join(tags)})" if tags else ""
            if self.markdown:
                pad = "  " * line.depth
                where = f" · topic {_code(f.topic)}" if f.topic else ""
                lines.append(
                    f"{pad}- **{f.severity.value}** {_code(f.code.value)}{where}{tag}: "
                    f"{_md(f.message)}"
                )
                if f.hint:
                    lines.append(f"{pad}  - Fix: {_md(f.hint)}")
            else:
                pad = "    " * line.depth
                where = f" {v.finding_where(f)}" if f.topic else ""
                lines.append(f"{pad}[{f.severity.value}] {f.code.value}{where}{tag}")
                lines.append(f"{pad}  {f.message}")
                if f.hint:
                    lines.append(f"{pad}  fix: {f.hint}")
        if o.changes is not None and o.changes.cleared_findings:
            lines.append("")
            for f in o.changes.cleared_findings:
                where = f" {v.finding_where(f)}" if f.topic else ""
                bullet = "- " if self.markdown else ""
                lines.append(
                    f"{bullet}cleared since the last poll: {f.code.value} {f.group}{where}"
                )
        return [*lines, ""]

    def _partial(self, report: Report) -> list[str]:
        line = v.partial_line(report)
        if self.markdown:
            return [*self._heading(1, "Partial data"), f"> **{_md(line)}**", ""]
        return [*self._heading(1, "Partial data"), line, ""]

    def _footer(self, report: Report, o: RenderOptions) -> list[str]:
        line, code = v.summary_line(report), v.exit_line(report, o.fail_on)
        if self.markdown:
            return [
                f"**Summary:** {_md(line)}  ",
                f"**Exit code** {_md(code.removeprefix('exit '))}",
            ]
        return [f"Summary: {line}", f"Exit code {code.removeprefix('exit ')}"]


class PlainRenderer(_TextReport):
    """Plain text: headings underlined, ``simple`` tables, no colour."""

    markdown = False


class MarkdownRenderer(_TextReport):
    """GitHub-flavoured Markdown: headings, pipe tables, one bullet per finding."""

    markdown = True
