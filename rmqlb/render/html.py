"""``--report FILE``: one self-contained HTML page (plotly.js inlined, no network needed).

Two charts and a table: findings present per code over time, findings per cluster by
severity, and the top 20 findings (persistent and most severe first) as a plain HTML table,
so no row is ever cut off. Plotly is imported here only, when a report is asked for.

Cluster and group names come from the snapshots: they are shown with control characters made
visible (:func:`rmqlb.render.safe.safe`) and HTML-escaped, in the table and in the charts
(plotly reads labels as a subset of HTML).
"""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path

from rmqlb.errors import InputError
from rmqlb.pipeline.result import AuditResult
from rmqlb.render.safe import safe

TOP = 20
_COLOURS = {"error": "#d62728", "warning": "#ff7f0e", "info": "#1f77b4"}


def render_html_report(result: AuditResult) -> str:
    """The report page as a string."""
    import plotly.graph_objects as go  # noqa: PLC0415

    result = safe(result)
    by_code: dict[str, tuple[list[str], list[int]]] = defaultdict(lambda: ([], []))
    for minute, code, count in result.timeline:
        xs, ys = by_code[code]
        xs.append(minute.replace("T", " ").rstrip("Z"))  # a form plotly reads as a date
        ys.append(count)
    timeline = go.Figure()
    for code in sorted(by_code):
        xs, ys = by_code[code]
        timeline.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=code))
    timeline.update_layout(
        title="Findings present per snapshot, by code",
        xaxis_title="capturedAt, per minute (UTC)",
        yaxis_title="(group, topic) findings",
        height=420,
    )

    clusters = result.by_cluster()
    bars = go.Figure()
    for severity in ("error", "warning", "info"):
        bars.add_trace(
            go.Bar(
                x=[html.escape(c) for c in clusters],
                y=[counts[severity] for counts in clusters.values()],
                name=severity,
                marker_color=_COLOURS[severity],
            )
        )
    bars.update_layout(
        title="Findings per cluster", barmode="stack", yaxis_title="findings", height=380
    )

    parts = [
        timeline.to_html(full_html=False, include_plotlyjs=True),
        bars.to_html(full_html=False, include_plotlyjs=False),
        _top_table(result),
    ]
    persistent = sum(1 for f in result.findings if f.persistence == "persistent")
    flapping = "".join(
        f"<li>{html.escape(f.cluster)} / {html.escape(f.group)}: {f.changes} changes</li>"
        for f in result.flapping[:TOP]
    )
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        "<title>rmqlb fleet audit</title>"
        "<style>body{font-family:sans-serif;margin:2em}"
        "table{border-collapse:collapse}th,td{text-align:left;padding:.2em .8em;"
        "border-bottom:1px solid #ddd}td.n{text-align:right}</style></head><body>"
        "<h1>rmqlb fleet audit</h1>"
        f"<p>{result.snapshots} snapshots, {result.groups} groups, "
        f"{len(result.findings)} findings ({persistent} persistent), "
        f"{len(result.flapping)} flapping groups.</p>"
        + "".join(parts)
        + (f"<h2>Flapping groups</h2><ul>{flapping}</ul>" if flapping else "")
        + "</body></html>\n"
    )


_TOP_HEADER = (
    "cluster",
    "group",
    "topic",
    "code",
    "severity",
    "persistence",
    "snapshots",
    "share",
    "first seen",
    "last seen",
)


def _top_table(result: AuditResult) -> str:
    """The first :data:`TOP` findings as an HTML table, every cell escaped."""
    rows = []
    for f in result.findings[:TOP]:
        cells = (
            f.cluster,
            f.group,
            f.topic or "-",
            f.code,
            f.severity,
            f.persistence,
            str(f.snapshots),
            f"{f.share:.0%}",
            f.first_seen,
            f.last_seen,
        )
        rows.append(
            "<tr>"
            + "".join(
                f"<td{' class=n' if i in (6, 7) else ''}>{html.escape(c)}</td>"
                for i, c in enumerate(cells)
            )
            + "</tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in _TOP_HEADER)
    return (
        f"<h2>Top {TOP} findings</h2>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def write_html_report(result: AuditResult, path: Path) -> Path:
    """Write :func:`render_html_report` to ``path``."""
    try:
        import plotly  # noqa: F401, PLC0415
    except ImportError:
        raise InputError("--report needs plotly: pip install 'rmqlb[spark]'") from None
    from rmqlb.fileio import write_atomic  # noqa: PLC0415

    write_atomic(path, render_html_report(result), what="--report")
    return path
