"""What an audit produces, independent of the engine, and the ``summary.json`` contract.

Both engines fill the same :class:`AuditResult`; :func:`summary_json` turns it into the
``rmqlb.audit/1`` document, so identical results give byte-identical summaries.

Classification rules (documented in ``docs/audit.md``):

* a finding is **persistent** when it is present in each of the group's last *N*
  snapshots (``--persistent-window``, default 3; a group seen fewer than *N* times must have
  it in all of its snapshots), otherwise **transient**;
* ``share`` = snapshots with the finding / snapshots of the group;
* a group **flaps** when its actual-assignment fingerprint differs between consecutive
  snapshots (both known) more than *K* times (``--flap-threshold``, default 2) over the
  audited snapshots.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from rmqlb.errors import ExitCode
from rmqlb.failon import SEVERITY_RANK, gate

AUDIT_FORMAT: Final = "rmqlb.audit/1"
PERSISTENT: Final = "persistent"
TRANSIENT: Final = "transient"
_RANK: Final = SEVERITY_RANK


@dataclass(frozen=True, slots=True)
class AuditOptions:
    """The knobs of an audit (CLI flags)."""

    persistent_window: int = 3
    flap_threshold: int = 2
    cluster_from: str | None = None
    top: int = 20


@dataclass(frozen=True, slots=True)
class FindingSummary:
    """One (cluster, group, topic, code) over the audited snapshots."""

    cluster: str
    group: str
    topic: str | None
    code: str
    severity: str
    first_seen: str
    last_seen: str
    snapshots: int
    share: float
    persistence: str

    def to_json(self) -> dict[str, Any]:
        """The ``findings[]`` entry of ``summary.json``."""
        return {
            "cluster": self.cluster,
            "group": self.group,
            "topic": self.topic,
            "code": self.code,
            "severity": self.severity,
            "firstSeen": self.first_seen,
            "lastSeen": self.last_seen,
            "snapshots": self.snapshots,
            "share": round(self.share, 6),
            "persistence": self.persistence,
        }


@dataclass(frozen=True, slots=True)
class Flapping:
    """A group whose assignment changed more than the threshold."""

    cluster: str
    group: str
    changes: int

    def to_json(self) -> dict[str, Any]:
        """The ``flapping[]`` entry of ``summary.json``."""
        return {"cluster": self.cluster, "group": self.group, "changes": self.changes}


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """One (cluster, group): its latest state and its history (the ``groups/`` table)."""

    cluster: str
    group: str
    snapshots: int
    first_seen: str
    last_seen: str
    unconsumed: int  # unconsumed queues in the latest snapshot
    lag: int | None  # total lag in the latest snapshot (None: no offsets)
    max_unconsumed: int
    max_lag: int | None
    changes: int
    findings: int  # distinct (topic, code) findings in the latest snapshot
    worst: str | None  # worst severity in the latest snapshot


@dataclass(frozen=True, slots=True)
class InputProblem:
    """An input record or group the audit had to skip."""

    path: str | None
    group: str | None
    message: str


@dataclass(slots=True)
class AuditResult:
    """Everything an audit found; ``findings`` and ``flapping`` in contract order."""

    snapshots: int
    groups: int
    findings: list[FindingSummary]
    flapping: list[Flapping]
    worst_by_unconsumed: list[GroupSummary]
    worst_by_lag: list[GroupSummary]
    timeline: list[tuple[str, str, int]]  # (minute, code, findings present that minute)
    problems: list[InputProblem]
    problem_count: int
    engine: str = "local"
    timings: dict[str, float] = field(default_factory=dict)

    def by_code(self) -> dict[str, dict[str, int]]:
        """``{code: {"persistent": n, "transient": m}}`` over the findings."""
        out: dict[str, dict[str, int]] = {}
        for f in self.findings:
            counts = out.setdefault(f.code, {PERSISTENT: 0, TRANSIENT: 0})
            counts[f.persistence] += 1
        return dict(sorted(out.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])))

    def by_cluster(self) -> dict[str, dict[str, int]]:
        """``{cluster: {"error": n, "warning": m, "info": k}}`` over the findings."""
        out: dict[str, dict[str, int]] = {}
        for f in self.findings:
            counts = out.setdefault(f.cluster, {"error": 0, "warning": 0, "info": 0})
            counts[f.severity] += 1
        return dict(sorted(out.items()))


def finding_order(f: FindingSummary) -> tuple[Any, ...]:
    """Contract order: persistent first, most severe first, then cluster/group/topic/code."""
    return (
        f.persistence != PERSISTENT,
        -_RANK.get(f.severity, 0),
        f.cluster,
        f.group,
        f.topic or "",
        f.code,
    )


def flapping_order(f: Flapping) -> tuple[Any, ...]:
    """Most changes first, then cluster and group."""
    return (-f.changes, f.cluster, f.group)


def classify(recent: int, group_snapshots: int, window: int) -> str:
    """``persistent`` when the finding is in every one of the last ``window`` snapshots.

    >>> classify(3, 10, 3), classify(2, 10, 3), classify(2, 2, 3)
    ('persistent', 'transient', 'persistent')
    """
    return PERSISTENT if recent >= min(window, group_snapshots) else TRANSIENT


def summary_json(result: AuditResult) -> dict[str, Any]:
    """The ``rmqlb.audit/1`` document (``summary.json``)."""
    return {
        "format": AUDIT_FORMAT,
        "snapshots": result.snapshots,
        "groups": result.groups,
        "findings": [f.to_json() for f in sorted(result.findings, key=finding_order)],
        "flapping": [f.to_json() for f in sorted(result.flapping, key=flapping_order)],
    }


def exit_code(result: AuditResult, fail_on: str) -> ExitCode:
    """``rmqlb audit``'s exit code: 1 for a *persistent* finding at least as severe as
    ``fail_on`` (see :mod:`rmqlb.failon`), else 4 when inputs were
    skipped, else 0. Transient findings and flapping never fail an audit."""
    persistent = (f.severity for f in result.findings if f.persistence == PERSISTENT)
    return gate(persistent, fail_on, partial=bool(result.problem_count))


@dataclass
class Offender:
    """One group of the top-offender table: its codes, split by persistence."""

    cluster: str
    group: str
    severity: str
    persistent: list[str] = field(default_factory=list)
    transient: list[str] = field(default_factory=list)
    share: float = 0.0
    last_seen: str = ""


def top_offenders(result: AuditResult, top: int) -> list[Offender]:
    """Groups in the order of their first finding (persistent, most severe first), with
    their distinct codes; ``share`` is the largest share of any of their findings."""
    by_group: dict[tuple[str, str], Offender] = {}
    for f in sorted(result.findings, key=finding_order):
        o = by_group.get((f.cluster, f.group))
        if o is None:
            if len(by_group) == top:
                continue
            o = by_group[(f.cluster, f.group)] = Offender(f.cluster, f.group, f.severity)
        codes = o.persistent if f.persistence == PERSISTENT else o.transient
        if f.code not in codes:
            codes.append(f.code)
        o.share = max(o.share, f.share)
        o.last_seen = max(o.last_seen, f.last_seen)
    return list(by_group.values())


def worst(groups: Iterable[GroupSummary], by: str, top: int) -> list[GroupSummary]:
    """The ``top`` groups with the most unconsumed queues (``by="unconsumed"``) or lag."""
    if by == "unconsumed":
        ranked = [g for g in groups if g.unconsumed > 0]
        ranked.sort(key=lambda g: (-g.unconsumed, -(g.lag or 0), g.cluster, g.group))
    else:
        ranked = [g for g in groups if (g.lag or 0) > 0]
        ranked.sort(key=lambda g: (-(g.lag or 0), -g.unconsumed, g.cluster, g.group))
    return ranked[:top]
