"""``--output json``: the ``rmqlb.report/1`` contract, written by ``report_to_json``."""

from __future__ import annotations

from typing import IO, Any

from rich.console import Console

from rmqlb.diagnose.report import Report, report_to_text
from rmqlb.render.changes import ReportChanges, describe_changes
from rmqlb.render.options import RenderOptions


def to_text(report: Report, options: RenderOptions) -> str:
    """The report document (indented when ``options.pretty_json``), ending in a newline."""
    indent = 2 if options.pretty_json else None
    return report_to_text(report, options.fail_on, indent=indent) + "\n"


def changes_to_json(changes: ReportChanges, poll: int) -> dict[str, Any]:
    """One ``--watch`` poll's changes as a JSON object (one line per poll off a terminal)."""
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
        if isinstance(target, Console):
            target.file.write(text)
        else:
            target.write(text)
