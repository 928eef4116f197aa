"""What to show in a rendered report (kept free of heavy imports: the CLI loads it early)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rmqlb.render.changes import ReportChanges

LARGE_TOPIC_QUEUES = 32
"""A topic with more queues than this shows only its problem rows unless ``all_queues``."""


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How to render a report (what to show, not how it looks).

    ``fail_on`` only feeds the footer's exit-code line and the JSON ``exitCode``;
    ``large_topic`` is the queue (or consumer) count above which unremarkable rows are
    hidden unless ``all_queues``;
    ``changes`` (from :func:`rmqlb.render.changes.diff_reports`) marks what moved since the
    previous ``--watch`` poll. ``pretty_json`` indents the JSON document (the CLI turns it
    off when stdout is not a terminal: compact JSON is several times faster to write).
    ``now_ms`` is the moment ages are measured from (the renderers set it to the capture
    time of the report). ``max_rows`` caps the rows of each queue and consumer table (what
    ``--watch`` sets so that a report fits the terminal), problem rows kept first; the
    others are counted in one line. ``brief_findings`` shows each finding's message on one
    line cut at the screen's edge, without its fix (the last resort of ``--watch`` on a short
    terminal). ``wide`` (``-o wide``) adds the holders' process-queue columns (cached,
    last pull, locked) and the absolute times beside the ages; on a narrow console they give
    way like the other detail columns.
    """

    fail_on: str = "error"
    all_queues: bool = False
    large_topic: int = LARGE_TOPIC_QUEUES
    changes: ReportChanges | None = None
    pretty_json: bool = True
    now_ms: int | None = None
    max_rows: int | None = None
    brief_findings: bool = False
    wide: bool = False
