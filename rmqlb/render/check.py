"""Render a :class:`~rmqlb.check.rules.CheckResult`: findings with ``file:line`` in the four
report formats, and the ``--explain-counts`` allocation tables.

- ``plain``: compiler-style lines (``file:line: severity CODE group/topic: message``), which
  editors and CI logs link to the file;
- ``markdown``: a GitHub table, for pull-request comments;
- ``table``: a Rich table (colours from the console);
- ``json``: the ``rmqlb.check/1`` document (see ``docs/check.md``).

Nothing here decides what is a finding; it only lays results out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from rich import box
from rich.console import Console
from rich.text import Text

from rmqlb.check.rules import CheckFinding, CheckResult, CountAllocation, CountsTable
from rmqlb.diagnose.report import Severity
from rmqlb.failon import FailOn
from rmqlb.humanize import count, plural
from rmqlb.model.queue import MessageQueue, queue_ranges
from rmqlb.render.blocks import Block, Column, Heading, Line, Table, md_escape, to_text, write_rich
from rmqlb.render.formats import Output
from rmqlb.render.safe import escape_json_controls, safe
from rmqlb.render.styles import SEVERITY_STYLE, severity_count
from rmqlb.render.table import fit_table

CHECK_FORMAT = "rmqlb.check/1"


def compact_queues(queues: Sequence[MessageQueue]) -> str:
    """Queues as :func:`rmqlb.model.queue.queue_ranges` spells them everywhere, ``-`` for none.

    >>> compact_queues([MessageQueue("T", "b", i) for i in (0, 1, 2, 5)])
    'b:0..2, b:5'
    """
    return queue_ranges(queues) or "-"


def where(f: CheckFinding) -> str:
    """``group/topic``, ``group`` or, about a topic itself, ``topic``."""
    if f.group is None:
        return f.topic or ""
    return f"{f.group}/{f.topic}" if f.topic else f.group


def tag(f: CheckFinding) -> str:
    """`` (G/F2, caused by G/F1)``, `` (G/F1)`` or ``""``: the id, as in explain."""
    if f.id is None:
        return ""
    return f" ({f.id}, caused by {f.caused_by})" if f.caused_by else f" ({f.id})"


def summary(result: CheckResult, fail_on: str) -> str:
    """One closing line: what was checked, what was found, the exit code."""
    counts = {s: sum(1 for f in result.findings if f.severity is s) for s in Severity}
    files = len(result.config.files)
    topics = sum(1 for c in result.cases if c.group is None)
    groups = len({c.group for c in result.cases if c.group is not None})
    found = ", ".join(severity_count(n, s) for s, n in counts.items() if n) or "no findings"
    code = int(result.exit_code(fail_on))
    return (
        f"rmqlb check: {plural(files, 'file')}, {plural(topics, 'topic')}, "
        f"{plural(groups, 'group')}, {plural(len(result.cases), 'case')}: {found} (exit {code})"
    )


# --------------------------------------------------------------------------- findings


def plain_text(result: CheckResult, fail_on: str) -> str:
    """Compiler-style lines, one finding each, its hint indented below."""
    result = safe(result)
    lines = []
    for f in result.findings:
        lines.append(f"{f.loc}: {f.severity.value} {f.code} {where(f)}{tag(f)}: {f.message}")
        lines.append(f"    hint: {f.hint}")
    lines.append(summary(result, fail_on))
    return "\n".join(lines) + "\n"


FINDING_COLUMNS = (
    Column("severity"),
    Column("code", code=True),
    Column("where", code=True),
    Column("group/topic"),
    Column("finding"),
    Column("fix"),
)


def markdown_blocks(result: CheckResult, fail_on: str) -> list[Block]:
    """The findings as a table under a heading, the summary in italics."""
    doc: list[Block] = [Heading("rmqlb check", 1)]
    if result.findings:
        rows = tuple(
            (f.severity.value, f.code, str(f.loc), where(f) + tag(f), f.message, f.hint)
            for f in result.findings
        )
        doc.append(Table(FINDING_COLUMNS, rows))
    line = summary(result, fail_on)
    return [*doc, Line(line, md=f"_{md_escape(line)}_")]


def markdown_text(result: CheckResult, fail_on: str) -> str:
    """A GitHub-flavoured Markdown report."""
    return to_text(markdown_blocks(result, fail_on), markdown=True)


def json_document(result: CheckResult, fail_on: str) -> dict[str, Any]:
    """The ``rmqlb.check/1`` document."""

    def finding(f: CheckFinding) -> dict[str, Any]:
        return {
            "code": f.code,
            "severity": f.severity.value,
            "file": f.loc.file,
            "line": f.loc.line,
            "group": f.group,
            "topic": f.topic,
            "consumerCounts": list(f.counts),
            "consumers": list(f.consumers),
            "queues": [{"brokerName": q.broker_name, "queueId": q.queue_id} for q in f.queues],
            "message": f.message,
            "hint": f.hint,
            "proposals": [p.to_json() for p in f.proposals],
            "id": f.id,
            "causedBy": f.caused_by,
        }

    rule = FailOn(fail_on)
    doc: dict[str, Any] = {
        "format": CHECK_FORMAT,
        "files": list(result.config.files),
        "findings": [finding(f) for f in result.findings],
        "cases": [
            {
                "group": c.group,
                "topic": c.topic,
                "file": c.loc.file,
                "line": c.loc.line,
                "consumerCounts": list(c.counts),
                "status": "failed" if any(rule.fails(f.severity) for f in c.findings) else "passed",
                "findings": len(c.findings),
            }
            for c in result.cases
        ],
        "exitCode": int(result.exit_code(fail_on)),
        "allocations": None,  # --explain-counts
    }
    if result.counts:
        doc["allocations"] = [
            {
                "group": t.group,
                "topic": t.topic,
                "strategy": t.strategy,
                "readableQueues": t.readable_queues,
                "counts": [
                    {
                        "consumers": row.total,
                        "replicas": dict(row.replicas),
                        "assignments": {
                            cid: [
                                {"brokerName": q.broker_name, "queueId": q.queue_id} for q in queues
                            ]
                            for cid, _, queues in row.assignments
                        },
                    }
                    for row in t.rows
                ],
            }
            for t in result.counts
        ]
    return doc


def rich_findings(result: CheckResult, console: Console, fail_on: str) -> None:
    """A Rich table of the findings (severity | code, place, finding, fix), then the summary.

    The ``file:line`` and names are never cut: on a narrow console the table is stacked."""
    result = safe(result)
    if result.findings:
        columns = [Column("severity"), Column("finding", wrap=True, key=True)]
        rows = []
        for f in result.findings:
            body = Text()
            body.append(f.code, style="bold")
            body.append(f"  {f.loc}", style="underline")
            body.append(f"  {where(f)}{tag(f)}\n")
            body.append(f.message)
            body.append("\nfix: " + f.hint, style="dim")
            rows.append([Text(f.severity.value, style=SEVERITY_STYLE[f.severity]), body])
        console.print(
            fit_table(
                columns,
                rows,
                console.width,
                title=Text("rmqlb check"),
                box=box.HEAVY_HEAD,
                show_lines=True,
            )
        )
    style = "bold red" if result.exit_code(fail_on) else "green"
    console.print(Text(summary(result, fail_on), style=style))


# --------------------------------------------------------------------------- explain-counts


def _spread(row: CountAllocation) -> tuple[str, int, str]:
    sizes = sorted((len(q) for _, _, q in row.assignments), reverse=True)
    idle = sum(1 for s in sizes if s == 0)
    busy = [s for s in sizes if s]
    ratio = f"{busy[0] / busy[-1]:.2f}" if busy else "-"
    return " ".join(map(str, sizes)), idle, ratio


def _count_rows(table: CountsTable) -> list[list[str]]:
    rows = []
    for row in table.rows:
        sizes, idle, ratio = _spread(row)
        members = ", ".join(f"{name}={n}" for name, n in row.replicas)
        rows.append([count(row.total), members, sizes, count(idle), ratio])
    return rows


def _detail_rows(row: CountAllocation) -> list[list[str]]:
    return [
        [cid, member, count(len(queues)), compact_queues(queues)]
        for cid, member, queues in row.assignments
    ]


def _counts_title(table: CountsTable) -> str:
    queues = f"{table.readable_queues} readable queues" if table.declared else "topic not declared"
    return f"{table.group} / {table.topic}: {queues}, strategy {table.strategy}"


COUNT_COLUMNS = (
    Column("consumers", "right"),
    Column("replicas", wrap=True),
    Column("queues per consumer"),
    Column("idle", "right"),
    Column("max/min", "right"),
)
DETAIL_COLUMNS = (
    Column("client id", key=True),
    Column("member"),
    Column("queues", "right"),
    Column("which", wrap=True),
)


def counts_blocks(result: CheckResult) -> list[Block]:
    """``--explain-counts``: per group and topic a row per consumer count, then each
    count's allocation (idle rows yellow on a console)."""
    doc: list[Block] = []
    for table in result.counts:
        doc.append(Heading(_counts_title(table)))
        if not table.rows:
            doc.append(
                Line("(no allocation: the topic is not declared or the group has no consumers)")
            )
            continue
        values = _count_rows(table)
        idle = tuple("yellow" if row[3] != "0" else None for row in values)
        doc.append(Table(COUNT_COLUMNS, tuple(map(tuple, values)), idle))
        for row in table.rows:
            details = _detail_rows(row)
            empty = tuple("yellow" if d[2] == "0" else None for d in details)
            doc += [
                Heading(f"{row.total} consumers", 3),
                Table(DETAIL_COLUMNS, tuple(map(tuple, details)), empty),
            ]
    return doc


def write_check(
    result: CheckResult,
    fmt: Output | str,
    target: Console | IO[str],
    fail_on: str,
) -> None:
    """Write ``result`` in ``fmt`` (an :class:`~rmqlb.render.formats.Output`) to a console
    (``table``) or a stream."""
    fmt = Output(fmt)

    def emit(text: str) -> None:
        if isinstance(target, Console):
            target.file.write(text)
        else:
            target.write(text)

    if fmt is Output.json:
        text = json.dumps(json_document(result, fail_on), indent=2, ensure_ascii=False)
        emit(escape_json_controls(text) + "\n")
    elif fmt is Output.table and isinstance(target, Console):
        if result.counts:
            write_rich(counts_blocks(result), target)
            target.print()
        rich_findings(result, target, fail_on)
    elif fmt is Output.markdown:
        doc = [*counts_blocks(result), *markdown_blocks(result, fail_on)]
        emit(to_text(doc, markdown=True))
    else:
        counts = to_text(counts_blocks(result), markdown=False, spaced=True) + "\n"
        emit((counts if result.counts else "") + plain_text(result, fail_on))
