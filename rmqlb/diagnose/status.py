"""The cluster overview behind ``rmqlb status``: one line per consumer group. Pure.

:func:`status` selects groups of a snapshot (names, glob patterns, a topic, system groups),
diagnoses them with the very engine behind ``rmqlb explain`` (:func:`~rmqlb.diagnose.diagnose`)
and sums each group up in a :class:`GroupStatus`: model, strategy (``mixed`` when its
clients disagree), consumers, topics, queues, total lag, what is stranded, consume rate, the
worst finding, and the capture errors that concern it. Lines are sorted worst first, then by
lag. The exit code is explain's, over the same findings.

**Stranded** messages sit in queues nobody consumes, computed from what the snapshot holds:

- queues of a subscribed topic that nobody holds, or that the allocation gives to a client
  that does not subscribe the topic (the ``unconsumed`` rows of explain's queue table);
- queues the group has committed offsets for that no subscriber can hold: topics nobody in
  the group subscribes (every topic, when no consumer is online), brokers whose queues are
  not readable, queue ids beyond ``readQueueNums``.

Their lag counts where the offsets know it; a stranded queue without a known lag is counted
apart (``unknown``), never as 0. Fuller offset collection refines the numbers through the
snapshot's offsets, not here.

Worked example: a group of 3 AVG consumers where only one subscribes ``RefundTopic`` (4
queues): AVG gives 3 of the 4 queues to the other two, so those 3 rows are ``unconsumed``;
with lags 1000, 1037 and 1500 the line says 3 stranded queues holding 3,537 messages, and
its worst finding is the SUBSCRIPTION_INCONSISTENT error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from rmqlb.diagnose.context import DiagnoseOptions, readable_spans
from rmqlb.diagnose.engine import diagnose
from rmqlb.diagnose.lookup import not_found
from rmqlb.diagnose.report import (
    Code,
    Finding,
    GroupReport,
    QueueStatus,
    Report,
    Severity,
    exit_code,
    finding_to_json,
)
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import RETRY_PREFIX, CaptureError, Group, MessageModel, Snapshot
from rmqlb.model.strategy import StrategySpec, describe, same_algorithm
from rmqlb.model.system import is_system_group

STATUS_FORMAT = "rmqlb.status/1"
#: Requests that find groups rather than describe one: their failures leave the group list
#: in doubt (the footer says so), never a particular line.
DISCOVERY_REQUESTS = frozenset(
    {
        "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
        "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
        "QUERY_TOPIC_CONSUME_BY_WHO",
    }
)
MIXED = "mixed"
GLOB_CHARS = frozenset("*?[")


#: Within one severity the finding that explains the others is the line's worst: a split
#: subscription before the unconsumed queues it causes, a strategy mix before its duplicates.
PRECEDENCE: tuple[Code, ...] = (
    Code.DUPLICATE_CLIENT_ID,
    Code.SUBSCRIPTION_INCONSISTENT,
    Code.STRATEGY_INCONSISTENT,
    Code.WRITE_EXCEEDS_READ,
    Code.NO_ROUTE,
    Code.ALLOCATION_FAILED,
    Code.UNCONSUMED_QUEUE,
    Code.DUPLICATE_ASSIGNMENT,
    Code.NO_CONSUMERS,
    Code.QUEUE_NOT_READABLE,
    Code.CLIENT_UNREACHABLE,
    Code.IDLE_CONSUMER,
    Code.LAG_SKEW,
    Code.ASSIGNMENT_MISMATCH,
    Code.IMBALANCE,
)


def worst_first(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first; within a severity, ordinary topics before retry topics, causes
    before symptoms (:data:`PRECEDENCE`), then by topic."""
    rank = {code: i for i, code in enumerate(PRECEDENCE)}
    return sorted(
        findings,
        key=lambda f: (
            -f.severity.rank,
            (f.topic or "").startswith(RETRY_PREFIX),
            rank.get(f.code, len(rank)),
            java_key(f.topic or ""),
        ),
    )


def is_pattern(name: str) -> bool:
    """Whether a ``-g`` value is a glob pattern (``order-*``) rather than a group name."""
    return any(ch in GLOB_CHARS for ch in name)


@dataclass(frozen=True, slots=True)
class Stranded:
    """Queues nobody consumes: how many, the messages in them where the lag is known, and
    how many of them have no known lag."""

    queues: int = 0
    messages: int = 0
    unknown: int = 0


@dataclass(frozen=True, slots=True)
class GroupStatus:
    """One line of the overview (``findings`` most severe first; ``errors``: the capture
    failures that leave this line incomplete; ``consume_tps``: the ``consumeOKTPS`` its
    clients report in their running info, summed over clients and topics, ``None`` when no
    client reported one)."""

    group: str
    message_model: str
    strategy: str
    consumers: int
    topics: int
    queues: int
    lag: int | None
    stranded: Stranded
    consume_tps: float | None
    findings: tuple[Finding, ...] = ()
    errors: tuple[CaptureError, ...] = ()

    @property
    def worst(self) -> Finding | None:
        """The most severe finding, ``None`` when there is none."""
        return self.findings[0] if self.findings else None

    @property
    def rank(self) -> int:
        """2 error, 1 warning, 0 info, -1 no finding."""
        return self.findings[0].severity.rank if self.findings else -1

    @property
    def partial(self) -> bool:
        """Some data of this group could not be captured."""
        return bool(self.errors)

    @property
    def problem(self) -> bool:
        """A warning or an error, or incomplete data: what ``--problems`` keeps."""
        return self.rank >= Severity.warning.rank or self.partial


@dataclass(frozen=True, slots=True)
class StatusReport:
    """The overview: a line per selected group, worst first, the diagnosis behind them
    (exit codes come from ``report``), and the capture errors that concern them.

    ``problems``: only lines with a warning, an error or partial data are *shown*; totals
    and the exit code still cover every line.
    """

    lines: tuple[GroupStatus, ...]
    report: Report
    problems: bool = False
    captured_at: str | None = None
    seconds: float | None = None
    errors: tuple[CaptureError, ...] = field(default=())

    @property
    def shown(self) -> tuple[GroupStatus, ...]:
        """The lines to show."""
        return tuple(s for s in self.lines if s.problem) if self.problems else self.lines

    @property
    def hidden(self) -> int:
        """How many lines ``problems`` leaves out."""
        return len(self.lines) - len(self.shown)

    @property
    def show_tps(self) -> bool:
        """Whether any line has a consume rate (else the column is left out)."""
        return any(line.consume_tps is not None for line in self.lines)


def consumes(group: Group, topic: str) -> bool:
    """Whether ``group`` consumes ``topic``: a client subscribes it or the group has
    committed offsets for it (what QUERY_TOPIC_CONSUME_BY_WHO answers)."""
    return any(c.subscribes(topic) for c in group.consumers) or any(
        o.queue.topic == topic for o in group.offsets
    )


def select_groups(
    snapshot: Snapshot,
    *,
    names: Sequence[str] = (),
    topic: str | None = None,
    system: bool = False,
) -> list[str]:
    """The groups of ``snapshot`` a status asks for, in Java order.

    ``names`` are group names or glob patterns; a name that is in no group of the snapshot is
    a :class:`~rmqlb.errors.GroupNotFound` (did you mean ...), a pattern may match nothing.
    System groups only when ``system`` or named. ``topic``: only groups consuming it.
    """
    literal = [n for n in names if not is_pattern(n)]
    patterns = [n for n in names if is_pattern(n)]
    for name in literal:
        if name not in snapshot.groups:
            raise not_found(name, snapshot.groups, where="in the snapshot")
    chosen: list[str] = []
    for name in sorted(snapshot.groups, key=java_key):
        if names and name not in literal and not any(fnmatchcase(name, p) for p in patterns):
            continue
        if not system and name not in literal and is_system_group(name):
            continue
        if topic is not None and not consumes(snapshot.groups[name], topic):
            continue
        chosen.append(name)
    return chosen


def _strategy_label(group: Group, report: GroupReport) -> str:
    """The strategy the clients run: ``mixed`` when they disagree, ``-`` when nothing is
    allocated on the client side by one (broadcasting) or nothing is known; pop and proxy
    groups say so (the broker assigns)."""
    if report.strategy == "BROADCASTING":
        return "-"
    if report.strategy in ("POP", "PROXY"):
        return report.strategy
    reported: list[StrategySpec] = []
    for c in group.consumers:
        if c.strategy is not None and not any(same_algorithm(c.strategy, s) for s in reported):
            reported.append(c.strategy)
    if len(reported) > 1:
        return MIXED
    if group.consumers:
        return report.strategy
    return describe(group.strategy) if group.strategy is not None else "-"


def _topics_and_queues(snapshot: Snapshot, group: Group, report: GroupReport) -> tuple[int, int]:
    """Ordinary (not retry) topics the group subscribes or has offsets for, and their
    queues: the readable ones of a subscribed topic's route, else the ones with offsets."""
    subscribed = [t.topic for t in report.topics if not t.retry]
    queues = 0
    for name in subscribed:
        route = snapshot.topics.get(name)
        queues += readable_spans(route)[1] if route is not None else 0
    seen = set(subscribed)
    extra: set[MessageQueue] = set()
    for o in group.offsets:
        name = o.queue.topic
        if name not in seen and not name.startswith(RETRY_PREFIX):
            extra.add(o.queue)
    return len(seen | {q.topic for q in extra}), queues + len(extra)


def _stranded(group: Group, report: GroupReport) -> Stranded:
    queues = messages = unknown = 0
    covered: set[MessageQueue] = set()
    for t in report.topics:
        for row in t.queues:
            covered.add(row.queue)
            if row.status is not QueueStatus.unconsumed:
                continue
            queues += 1
            if row.lag is None:
                unknown += 1
            else:
                messages += row.lag
    for o in group.offsets:
        if o.queue not in covered:
            covered.add(o.queue)
            queues += 1
            messages += o.lag
    return Stranded(queues, messages, unknown)


def _topics_of(name: str, group: Group) -> set[str]:
    return {RETRY_PREFIX + name} | {s.topic for c in group.consumers for s in c.subscriptions}


class ErrorIndex:
    """A snapshot's capture errors by the group, topic or client they are about, built once
    per overview: finding each line's errors by scanning them all made a 1,000-group
    capture that ran into its deadline (thousands of errors) quadratic."""

    def __init__(self, errors: Iterable[CaptureError]) -> None:
        self._by: dict[tuple[str, str], list[tuple[int, CaptureError]]] = {}
        for i, e in enumerate(errors):
            if e.group is not None:
                key = ("group", e.group)
            elif e.topic is not None:
                if e.request in DISCOVERY_REQUESTS:
                    continue
                key = ("topic", e.topic)
            else:
                key = ("client", e.target)
            self._by.setdefault(key, []).append((i, e))

    def of(self, name: str, group: Group) -> tuple[CaptureError, ...]:
        """Failures that leave this group's line incomplete: requests about the group (or,
        in snapshots that do not say, about one of its clients), and requests about one of
        its topics (its route, its offsets) that failed; in capture order."""
        keys = [("group", name)]
        keys += [("topic", t) for t in _topics_of(name, group)]
        keys += [("client", c.client_id) for c in group.consumers]
        found = {i: e for key in keys for i, e in self._by.get(key, ())}
        return tuple(found[i] for i in sorted(found))


def _lag(group: Group) -> int | None:
    """Total lag over the group's offsets; ``None`` when none is known. A BROADCASTING group
    keeps its offsets in its clients: the broker's never-committed rows say nothing of it."""
    offsets = group.offsets
    if group.message_model is MessageModel.BROADCASTING:
        offsets = tuple(o for o in offsets if o.committed)
    return sum(o.lag for o in offsets) if offsets else None


def group_status(
    snapshot: Snapshot,
    report: GroupReport,
    findings: Sequence[Finding],
    errors: ErrorIndex | None = None,
) -> GroupStatus:
    """The overview line of one diagnosed group (``errors``: the snapshot's, indexed)."""
    group = snapshot.groups[report.group]
    topics, queues = _topics_and_queues(snapshot, group, report)
    rates = [
        sum(st.consume_ok_tps for st in c.status.values()) for c in group.consumers if c.status
    ]
    return GroupStatus(
        group=report.group,
        message_model=report.message_model,
        strategy=_strategy_label(group, report),
        consumers=len(group.consumers),
        topics=topics,
        queues=queues,
        lag=_lag(group),
        stranded=_stranded(group, report),
        consume_tps=round(sum(rates), 3) if rates else None,
        findings=tuple(worst_first(findings)),
        errors=(errors or ErrorIndex(snapshot.errors)).of(report.group, group),
    )


def _relevant_errors(snapshot: Snapshot, names: Iterable[str]) -> tuple[CaptureError, ...]:
    """Capture errors about the selected groups or their topics, and those about nothing in
    particular (the group list). An error that names neither group nor topic (snapshots that
    do not say) but targets a client belongs to that client's group."""
    chosen = set(names)
    topics: set[str] = set()
    for name in chosen:
        topics |= _topics_of(name, snapshot.groups[name])
    owners: dict[str, set[str]] = {}
    for name, g in snapshot.groups.items():
        for c in g.consumers:
            owners.setdefault(c.client_id, set()).add(name)

    def relevant(e: CaptureError) -> bool:
        if e.group is not None:
            return e.group in chosen
        if e.topic is not None and e.request not in DISCOVERY_REQUESTS:
            return e.topic in topics
        if e.topic is None and e.target in owners:
            return bool(owners[e.target] & chosen)
        return True

    return tuple(e for e in snapshot.errors if relevant(e))


def status(
    snapshot: Snapshot,
    *,
    names: Sequence[str] = (),
    topic: str | None = None,
    system: bool = False,
    problems: bool = False,
    strategy: StrategySpec | None = None,
    options: DiagnoseOptions | None = None,
    seconds: float | None = None,
) -> StatusReport:
    """The overview of ``snapshot`` (see the module docstring); ``seconds`` is how long the
    capture took, when known."""
    chosen = select_groups(snapshot, names=names, topic=topic, system=system)
    errors = _relevant_errors(snapshot, chosen)
    if chosen:
        full = diagnose(snapshot, groups=chosen, strategy=strategy, options=options)
        report = Report(full.groups, full.findings, errors)
    else:
        report = Report((), (), errors)
    per_group: dict[str, list[Finding]] = {g.group: [] for g in report.groups}
    for f in report.findings:
        per_group[f.group].append(f)
    index = ErrorIndex(snapshot.errors)
    lines = [group_status(snapshot, g, per_group[g.group], index) for g in report.groups]
    lines.sort(key=lambda s: (-s.rank, -(s.lag or 0), java_key(s.group)))
    return StatusReport(
        lines=tuple(lines),
        report=report,
        problems=problems,
        captured_at=snapshot.captured_at,
        seconds=seconds,
        errors=errors,
    )


# ----- the JSON contract -------------------------------------------------------------------


def _severity_counts(findings: Sequence[Finding]) -> dict[str, int]:
    counts = {s.value: 0 for s in Severity}
    for f in findings:
        counts[f.severity.value] += 1
    return counts


def _error_json(e: CaptureError) -> dict[str, Any]:
    return {
        "target": e.target,
        "request": e.request,
        "message": e.message,
        "group": e.group,
        "topic": e.topic,
    }


def line_to_json(line: GroupStatus) -> dict[str, Any]:
    """One group's line in the ``rmqlb.status/1`` contract."""
    worst = line.worst
    return {
        "group": line.group,
        "messageModel": line.message_model,
        "strategy": line.strategy,
        "consumers": line.consumers,
        "topics": line.topics,
        "queues": line.queues,
        "lag": line.lag,
        "stranded": {
            "queues": line.stranded.queues,
            "messages": line.stranded.messages,
            "unknownQueues": line.stranded.unknown,
        },
        "consumeTps": line.consume_tps,
        "findings": _severity_counts(line.findings),
        "worst": finding_to_json(worst) if worst is not None else None,
        "partial": [_error_json(e) for e in line.errors],
    }


@dataclass(frozen=True, slots=True)
class Totals:
    """The footer's sums over every line (shown or not)."""

    groups: int
    errors: int
    warnings: int
    consumers: int
    lag: int
    stranded: int
    partial: int
    consume_tps: float | None


def totals(report: StatusReport) -> Totals:
    """Sums over every line of the report."""
    lines = report.lines
    rates = [s.consume_tps for s in lines if s.consume_tps is not None]
    return Totals(
        groups=len(lines),
        errors=sum(1 for s in lines if s.rank == Severity.error.rank),
        warnings=sum(1 for s in lines if s.rank == Severity.warning.rank),
        consumers=sum(s.consumers for s in lines),
        lag=sum(s.lag or 0 for s in lines),
        stranded=sum(s.stranded.messages for s in lines),
        partial=sum(1 for s in lines if s.partial),
        consume_tps=round(sum(rates), 3) if rates else None,
    )


def status_to_json(report: StatusReport, fail_on: str = "error") -> dict[str, Any]:
    """The ``rmqlb.status/1`` document (scripts and CI depend on it)."""
    t = totals(report)
    return {
        "format": STATUS_FORMAT,
        "capturedAt": report.captured_at,
        "captureSeconds": report.seconds,
        "groups": [line_to_json(s) for s in report.shown],
        "totals": {
            "groups": t.groups,
            "hidden": report.hidden,
            "withErrors": t.errors,
            "withWarnings": t.warnings,
            "partial": t.partial,
            "consumers": t.consumers,
            "lag": t.lag,
            "strandedMessages": t.stranded,
            "consumeTps": t.consume_tps,
        },
        "errors": [_error_json(e) for e in report.errors],
        "exitCode": int(exit_code(report.report, fail_on)),
    }


__all__ = [
    "MIXED",
    "STATUS_FORMAT",
    "GroupStatus",
    "StatusReport",
    "Stranded",
    "Totals",
    "consumes",
    "group_status",
    "is_pattern",
    "line_to_json",
    "select_groups",
    "status",
    "status_to_json",
    "totals",
]
