"""The ``--fail-on`` gate, and the exit code every command computes with it (design §3).

One place for both, so ``explain``, ``check``, ``audit`` and ``demo`` accept the same four
values and agree on what they mean::

    --fail-on error     exit 1 for an error
    --fail-on warning   exit 1 for a warning or an error
    --fail-on info      exit 1 for any finding
    --fail-on never     never exit 1 for findings

Otherwise the exit code is 4 when the data was partial, else 0. Kept free of heavy imports:
the CLI reads the enum at start-up.

>>> FailOn.warning.fails("error"), FailOn.warning.fails("info"), FailOn.never.fails("error")
(True, False, False)
>>> int(gate(["info"], "info")), int(gate(["info"], "warning", partial=True))
(1, 4)
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from rmqlb.errors import ExitCode

__all__ = ["SEVERITY_RANK", "FailOn", "gate"]

SEVERITY_RANK = {"error": 2, "warning": 1, "info": 0}
"""Severities by how bad they are (``Severity.rank`` agrees)."""


class FailOn(StrEnum):
    """``--fail-on``: the lowest severity that makes the exit code 1."""

    error = "error"
    warning = "warning"
    info = "info"
    never = "never"

    @property
    def threshold(self) -> int:
        """The lowest severity rank that fails; above every rank for ``never``."""
        return SEVERITY_RANK.get(self.value, len(SEVERITY_RANK))

    def fails(self, severity: str) -> bool:
        """Whether a finding of ``severity`` (``"error"``, a ``Severity`` ...) fails the run."""
        return SEVERITY_RANK[str(severity)] >= self.threshold


def gate(severities: Iterable[str], fail_on: FailOn | str, *, partial: bool = False) -> ExitCode:
    """1 when one of ``severities`` fails ``fail_on``, else 4 when ``partial``, else 0."""
    rule = FailOn(fail_on)
    if any(map(rule.fails, severities)):
        return ExitCode.FINDINGS
    if partial:
        return ExitCode.PARTIAL
    return ExitCode.OK
