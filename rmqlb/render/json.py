"""``--output json``: the ``rmqlb.report/1`` contract, written by ``report_to_json``."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Any, cast

from rmqlb.diagnose.report import Report, report_to_text
from rmqlb.render.options import RenderOptions
from rmqlb.render.safe import escape_json_controls

if TYPE_CHECKING:
    from rich.console import Console

    from rmqlb.render.changes import ReportChanges

# ``--output json`` needs neither Rich nor the change tracker: both load only when used.


def to_text(report: Report, options: RenderOptions) -> str:
    """The report document (indented when ``options.pretty_json``), ending in a newline;
    DEL and C1 characters in names are written as ``\\u`` escapes like C0 ones."""
    indent = 2 if options.pretty_json else None
    return escape_json_controls(report_to_text(report, options.fail_on, indent=indent)) + "\n"


def changes_to_json(changes: ReportChanges, poll: int) -> dict[str, Any]:
    """One ``--watch`` poll's changes as a JSON object (one line per poll off a terminal)."""
    from rmqlb.render.changes import describe_changes  # noqa: PLC0415

    return {
        "format": "rmqlb.changes/1",
        "poll": poll,
        "queues": [
            {
                "group": c.group,
                "topic": c.topic,
                "brokerName": c.queue.broker_name,
                "queueId": c.queue.queue_id,
                "kind": c.kind,
                "before": list(c.before) if c.before is not None else None,
                "after": list(c.after) if c.after is not None else None,
            }
            for c in changes.queues
        ],
        "newFindings": [
            {"code": f.code.value, "group": f.group, "topic": f.topic, "message": f.message}
            for f in changes.new_findings
        ],
        "clearedFindings": [
            {"code": f.code.value, "group": f.group, "topic": f.topic}
            for f in changes.cleared_findings
        ],
        "summary": describe_changes(changes),
    }


class JsonRenderer:
    """The report contract as JSON; never coloured, whatever the console says."""

    def to_text(self, report: Report, options: RenderOptions) -> str:
        """The JSON document as text."""
        return to_text(report, options)

    def render(self, report: Report, target: Console | IO[str], options: RenderOptions) -> None:
        """Write the document to ``target``."""
        text = to_text(report, options)
        # A Rich console can only exist once rich.console is loaded: no need to load it here.
        rich_console = sys.modules.get("rich.console")
        if rich_console is not None and isinstance(target, rich_console.Console):
            target.file.write(text)
        else:
            cast("IO[str]", target).write(text)
