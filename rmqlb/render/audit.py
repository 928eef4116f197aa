"""``rmqlb audit``'s summary on stdout: headline, findings by code and by cluster, top
offenders, worst groups, flapping groups, as :mod:`rmqlb.render.blocks`.

The same blocks become Rich tables, plain tabulate tables or Markdown: no format draws
boxes but the colour one. JSON (``rmqlb.audit/1``) is :func:`summary_text`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rmqlb.humanize import count, percent, plural
from rmqlb.render.blocks import Block, Column, Heading, Line, Table, to_text, write_rich
from rmqlb.render.formats import Output
from rmqlb.render.safe import escape_json_controls
from rmqlb.render.styles import SEVERITY_STYLE

if TYPE_CHECKING:
    from rich.console import Console

    from rmqlb.pipeline.result import AuditResult


def _columns(names: tuple[str, ...], numbers: tuple[str, ...] = ()) -> tuple[Column, ...]:
    """Name columns (identifiers, never cut) then right-aligned number columns."""
    return (
        *(Column(n, key=True) for n in names),
        *(Column(n, justify="right") for n in numbers),
    )


def summary_blocks(result: AuditResult, top: int) -> list[Block]:
    """Every section of the summary, in order."""
    from rmqlb.pipeline.result import top_offenders  # noqa: PLC0415

    persistent = sum(1 for f in result.findings if f.persistence == "persistent")
    headline = (
        f"Audited {plural(result.snapshots, 'snapshot')}, {plural(result.groups, 'group')} "
        f"(engine {result.engine}): {plural(len(result.findings), 'finding')}, "
        f"{persistent} persistent, {plural(len(result.flapping), 'flapping group')}"
        + (f", {result.problem_count} inputs skipped" if result.problem_count else "")
    )
    blocks: list[Block] = [Line(headline)]
    if not result.findings and not result.flapping:
        return [*blocks, Line("No problems found.")]
    if result.findings:
        blocks += [
            Heading("Findings by code"),
            Table(
                _columns(("code",), ("persistent", "transient")),
                tuple(
                    (code, count(c["persistent"]), count(c["transient"]))
                    for code, c in result.by_code().items()
                ),
            ),
            Heading("Findings by cluster"),
            Table(
                _columns(("cluster",), ("error", "warning", "info")),
                tuple(
                    (cluster, count(s["error"]), count(s["warning"]), count(s["info"]))
                    for cluster, s in result.by_cluster().items()
                ),
            ),
        ]
        offenders = top_offenders(result, top)
        columns: tuple[Column, ...] = (
            Column("cluster", key=True),
            Column("group", key=True),
            Column("severity"),
            Column("persistent codes", wrap=True),
            Column("transient codes", wrap=True),
            Column("share", justify="right"),
            Column("last seen"),
        )
        blocks += [
            Heading(f"Top offenders (first {top} groups; persistent and most severe first)"),
            Table(
                columns,
                tuple(
                    (
                        o.cluster,
                        o.group,
                        o.severity,
                        ", ".join(o.persistent) or "-",
                        ", ".join(o.transient) or "-",
                        percent(o.share, 1),
                        o.last_seen,
                    )
                    for o in offenders
                ),
                tuple(SEVERITY_STYLE.get(o.severity) for o in offenders),
            ),
        ]
    for title, rows in (
        ("Worst groups by unconsumed queues (latest snapshot)", result.worst_by_unconsumed),
        ("Worst groups by lag (latest snapshot)", result.worst_by_lag),
    ):
        if rows:
            columns = (
                *_columns(("cluster", "group"), ("unconsumed", "lag", "findings")),
                Column("last seen"),
            )
            blocks += [
                Heading(title),
                Table(
                    columns,
                    tuple(
                        (
                            g.cluster,
                            g.group,
                            count(g.unconsumed),
                            count(g.lag, "-"),
                            count(g.findings),
                            g.last_seen,
                        )
                        for g in rows[:top]
                    ),
                ),
            ]
    if result.flapping:
        blocks += [
            Heading("Flapping groups (assignment changes)"),
            Table(
                _columns(("cluster", "group"), ("changes",)),
                tuple((f.cluster, f.group, count(f.changes)) for f in result.flapping[:top]),
            ),
        ]
    return blocks


def summary_text(result: AuditResult) -> str:
    """The ``rmqlb.audit/1`` document as indented JSON text, terminal-safe."""
    from rmqlb.pipeline import summary_json  # noqa: PLC0415

    text = json.dumps(summary_json(result), indent=2, ensure_ascii=False)
    return escape_json_controls(text) + "\n"


def write_summary(result: AuditResult, fmt: Output, console: Console, top: int) -> None:
    """The summary in ``fmt`` on ``console`` (its stream for the text formats)."""
    if fmt is Output.json:
        console.file.write(summary_text(result))
    elif fmt is Output.table:
        write_rich(summary_blocks(result, top), console)
    else:
        console.file.write(to_text(summary_blocks(result, top), markdown=fmt is Output.markdown))
