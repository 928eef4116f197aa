"""``rmqlb check``: catch load-balancing mistakes in declared topic/group configs.

Inputs (auto-detected, several at once): rmqlb's own YAML, a broker's ``topics.json`` /
``subscriptionGroup.json`` and mqadmin's ``exportMetadata`` ``metadata.json``. Each declared
group becomes synthetic snapshots, one per consumer count to consider, diagnosed by
:func:`rmqlb.diagnose.diagnose`; every finding points at the line that declared it.

    config = load_files(["topics.yaml"])
    result = run_check(config, CheckOptions(max_imbalance=1.5))
"""

from __future__ import annotations

from rmqlb.check.decl import CheckConfig, GroupDecl, Loc, MemberDecl, TopicDecl
from rmqlb.check.loader import load_files
from rmqlb.check.rules import (
    CaseResult,
    CheckFinding,
    CheckOptions,
    CheckResult,
    CountsTable,
    run_check,
)

__all__ = [
    "CaseResult",
    "CheckConfig",
    "CheckFinding",
    "CheckOptions",
    "CheckResult",
    "CountsTable",
    "GroupDecl",
    "Loc",
    "MemberDecl",
    "TopicDecl",
    "load_files",
    "run_check",
]
