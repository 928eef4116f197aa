"""The colours every command gives severities, and the one way to count findings.

>>> severity_count(1, "error"), severity_count(2, "warning"), severity_count(3, "info")
('1 error', '2 warnings', '3 info')
"""

from __future__ import annotations

from rmqlb.humanize import plural

__all__ = ["SEVERITY_BADGE", "SEVERITY_STYLE", "severity_count"]

SEVERITY_STYLE: dict[str, str] = {"error": "bold red", "warning": "yellow", "info": "cyan"}
"""A severity word or count in colour (check, audit, explain's summary)."""

SEVERITY_BADGE: dict[str, str] = {
    "error": "bold white on red",
    "warning": "bold black on yellow",
    "info": "bold white on blue",
}
"""The badge in front of each finding of explain's colour report."""


def severity_count(n: int, severity: str) -> str:
    """``n`` findings of ``severity``: ``2 warnings``; ``info`` takes no plural."""
    return plural(n, str(severity), "info" if severity == "info" else None)
