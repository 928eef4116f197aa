"""The closed set of report formats (``--output``).

Kept in its own tiny module so the CLI can import the enum at start-up without pulling in
Rich or tabulate; :func:`rmqlb.render.get_renderer` maps every member to an implementation.
"""

from __future__ import annotations

from enum import StrEnum


class Output(StrEnum):
    """``--output``: the report formats. ``wide`` is ``table`` with every column
    (kubectl's convention): the CLI resolves it to ``table`` and a wide flag, so renderers
    treat it as ``table``."""

    table = "table"
    wide = "wide"
    plain = "plain"
    markdown = "markdown"
    json = "json"


class StatusOutput(StrEnum):
    """``status --output``: the report formats, and the metrics of ``rmqlb exporter`` once
    (``openmetrics``, for node_exporter's textfile collector)."""

    table = "table"
    wide = "wide"
    plain = "plain"
    markdown = "markdown"
    json = "json"
    openmetrics = "openmetrics"
