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
  not readable, queue ids beyond ``readQueueNums``; and those of its topics it never
  committed that hold messages (one never committed and empty strands nothing).

Their lag counts where the offsets know it; a stranded queue without a known lag is counted
apart (``unknown``), never as 0. A queue holding messages whose holder nobody could read (a
consumer's running info failed, a pull consumer that does not report its queues) may be
stranded too, unless a message of it was consumed within 10 minutes of the capture: the
count is then incomplete, a lower bound, never a claim that nothing is stranded. Fuller
offset collection refines the numbers through the snapshot's offsets, not here.

Worked example: a group of 3 AVG consumers where only one subscribes ``RefundTopic`` (4
queues): AVG gives 3 of the 4 queues to the other two, so those 3 rows are ``unconsumed``;
with lags 1000, 1037 and 1500 the line says 3 stranded queues holding 3,537 messages, and
its worst finding is the SUBSCRIPTION_INCONSISTENT error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from rmqlb.diagnose.balance import consumed_recently
from rmqlb.diagnose.context import (
    DISCOVERY_REQUESTS,
    OFFSET_REQUESTS,
    DiagnoseOptions,
    epoch_ms,
    group_errors,
    group_topics,
    readable_spans,
)
from rmqlb.diagnose.engine import diagnose
from rmqlb.diagnose.lookup import known_topics, not_found, topic_not_found
from rmqlb.diagnose.report import (
    Finding,
    GroupReport,
    QueueStatus,
    Report,
    Severity,
    exit_code,
    finding_to_json,
    order_findings,
)
from rmqlb.jsontext import iso_ms
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import RETRY_PREFIX, CaptureError, Group, MessageModel, Snapshot
from rmqlb.model.strategy import StrategySpec, describe, same_algorithm
from rmqlb.model.system import is_system_group
from rmqlb.remoting.codes import version_name

STATUS_FORMAT = "rmqlb.status/1"
MIXED = "mixed"
GLOB_CHARS = frozenset("*?[")


def worst_first(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` in report order (:func:`~rmqlb.diagnose.report.order_findings`): the
    group's root cause with the most at stake first, each cause followed by the findings it
    causes; the first is the line's worst finding."""
    if isinstance(findings, Sequence) and len(findings) < 2:  # nothing to order
        return list(findings)
    return order_findings(findings)


def is_pattern(name: str) -> bool:
    """Whether a ``-g`` value is a glob pattern (``order-*``) rather than a group name."""
    return any(ch in GLOB_CHARS for ch in name)


@dataclass(frozen=True, slots=True)
class Stranded:
    """Queues nobody consumes: how many, the messages in them where the lag is known, how
    many of them have no known lag, and whether the count is whole (``complete`` false: more
    may be stranded, where offsets could not be read or where a queue holding messages has a
    holder nobody could read)."""

    queues: int = 0
    messages: int = 0
    unknown: int = 0
    complete: bool = True

    @property
    def known(self) -> bool:
        """Whether any stranded message count is known (else the number is unknown)."""
        if self.messages:
            return True
        return self.complete and not (self.queues and self.unknown == self.queues)


@dataclass(frozen=True, slots=True)
class GroupStatus:
    """One line of the overview (``findings`` most severe first; ``errors``: the capture
    failures that leave this line incomplete; ``consume_tps``: the ``consumeOKTPS`` its
    clients report in their running info, summed over clients and topics, else (no client
    reported one: a group consumed through a Proxy) what the brokers count it fetching,
    ``None`` when neither is known; ``lag_complete`` false: some offsets could not be read,
    so ``lag`` is a lower bound, or unknown when ``None``; ``stranded_topics``:
    ``stranded`` topic by topic; ``versions``: the distinct client versions its consumers
    report, oldest first; ``last_consumed_ms``: the newest store time of a consumed message
    over its committed offsets, ``None`` when none is known)."""

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
    lag_complete: bool = True
    stranded_topics: Mapping[str, Stranded] = field(default_factory=dict)
    versions: tuple[int, ...] = ()
    last_consumed_ms: int | None = None

    @property
    def worst(self) -> Finding | None:
        """The group's root cause with the most at stake (the first finding in report order:
        the most severe tree, then the largest impact), ``None`` when there is none."""
        return self.findings[0] if self.findings else None

    @property
    def consequences(self) -> int:
        """How many findings the worst one causes (directly or down a chain)."""
        worst = self.worst
        if worst is None or worst.id is None:
            return 0
        parent = {f.id: f.caused_by for f in self.findings if f.id is not None}
        n = 0
        for f in self.findings[1:]:
            seen: set[str] = set()
            up = f.caused_by
            while up is not None and up not in seen:
                if up == worst.id:
                    n += 1
                    break
                seen.add(up)
                up = parent.get(up)
        return n

    @property
    def rank(self) -> int:
        """2 error, 1 warning, 0 info, -1 no finding."""
        return max((f.severity.rank for f in self.findings), default=-1)

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


def moved_offsets(before: dict[str, dict[MessageQueue, int]], snapshot: Snapshot) -> frozenset[str]:
    """The groups whose committed offsets moved since ``before`` (the last poll of
    ``--watch``), which is updated to ``snapshot``'s offsets in place."""
    moved: set[str] = set()
    for name, group in snapshot.groups.items():
        now = {o.queue: o.consumer_offset for o in group.offsets if o.committed}
        old = before.get(name)
        if old is not None and any(old.get(q, v) != v for q, v in now.items()):
            moved.add(name)
        before[name] = now
    return frozenset(moved)


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
    if topic is not None and topic not in (known := known_topics(snapshot)):
        raise topic_not_found(topic, known)
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


def stranded_by_topic(
    group: Group, report: GroupReport, now_ms: int | None = None
) -> dict[str, Stranded]:
    """What is stranded (see the module docstring), topic by topic; topics with nothing
    stranded are left out, unless a queue of theirs may be stranded: its holder is unknown
    and it holds messages (or an unknown lag) none of which was consumed within
    :data:`~rmqlb.diagnose.balance.RECENT_MS` before ``now_ms`` (the capture), which makes
    that topic's count incomplete."""
    counts: dict[str, list[int]] = {}
    covered: set[MessageQueue] = set()
    unconsumed, unknown = QueueStatus.unconsumed, QueueStatus.unknown
    for t in report.topics:
        for row in t.queues:
            covered.add(row.queue)
            status = row.status
            if status is unknown and row.lag != 0:
                o = row.offset
                if o is None or now_ms is None or not consumed_recently(o, now_ms):
                    counts.setdefault(t.topic, [0, 0, 0, 0])[3] = 1  # may be stranded
            if status is not unconsumed:
                continue
            c = counts.setdefault(t.topic, [0, 0, 0, 0])
            c[0] += 1
            if row.lag is None:
                c[2] += 1
            else:
                c[1] += row.lag
    for o in group.offsets:
        if o.queue not in covered:
            covered.add(o.queue)
            if not (o.committed or o.lag):
                continue  # never committed and holding nothing: strands nothing
            c = counts.setdefault(o.queue.topic, [0, 0, 0, 0])
            c[0] += 1
            c[1] += o.lag
    return {topic: Stranded(c[0], c[1], c[2], not c[3]) for topic, c in counts.items()}


def _stranded(by_topic: Mapping[str, Stranded], offsets_complete: bool) -> Stranded:
    """The group's sum of its topics' stranded counts; complete only when every offset was
    read and every topic's count is complete."""
    parts = by_topic.values()
    return Stranded(
        sum(s.queues for s in parts),
        sum(s.messages for s in parts),
        sum(s.unknown for s in parts),
        offsets_complete and all(s.complete for s in parts),
    )


def _lag(group: Group) -> int | None:
    """Total lag over the group's offsets; ``None`` when none is known. A BROADCASTING group
    keeps its offsets in its clients: the broker's never-committed rows say nothing of it
    (with consumers, its lag is theirs: :meth:`GroupReport.broadcast_lag`)."""
    offsets = group.offsets
    if group.consumed_model is MessageModel.BROADCASTING:
        offsets = tuple(o for o in offsets if o.committed)
    return sum(o.lag for o in offsets) if offsets else None


def _last_consumed(group: Group) -> int | None:
    """The newest store time of a consumed message over the group's committed offsets."""
    return max(
        (o.last_timestamp for o in group.offsets if o.committed and o.last_timestamp),
        default=None,
    )


def _offsets_only(
    group: Group,
) -> tuple[int, int, dict[str, Stranded], int | None, int | None]:
    """Topics, queues, stranded by topic, lag and last consumed time of a group diagnosed
    without any topic table (no subscribed topic: its offsets are all it has, every queue
    with an offset is stranded, a queue listed twice counts once), in one pass over its
    offsets: equal to what :func:`_topics_and_queues`, :func:`stranded_by_topic`,
    :func:`_lag` and :func:`_last_consumed` give for it."""
    counts: dict[str, list[int]] = {}
    seen: set[MessageQueue] = set()
    extra_topics: set[str] = set()
    extra = 0
    total = 0
    last: int | None = None
    broadcasting = group.consumed_model is MessageModel.BROADCASTING
    lagged = False
    for o in group.offsets:
        committed = o.consumer_offset >= 0
        lag = o.lag
        if committed or not broadcasting:
            total += lag
            lagged = True
        stamp = o.last_timestamp
        if committed and stamp and (last is None or stamp > last):
            last = stamp
        q = o.queue
        before = len(seen)
        seen.add(q)  # one hash of the queue, not two (``in`` then ``add``)
        if len(seen) == before:
            continue
        topic = q.topic
        if not topic.startswith(RETRY_PREFIX):
            extra_topics.add(topic)
            extra += 1
        if not (committed or lag):
            continue  # never committed and holding nothing: strands nothing
        c = counts.get(topic)
        if c is None:
            counts[topic] = c = [0, 0]
        c[0] += 1
        c[1] += lag
    by_topic = {topic: Stranded(c[0], c[1], 0) for topic, c in counts.items()}
    return len(extra_topics), extra, by_topic, total if lagged else None, last


def group_status(
    snapshot: Snapshot,
    report: GroupReport,
    findings: Sequence[Finding],
    now_ms: int | None = None,
) -> GroupStatus:
    """The overview line of one diagnosed group, captured at ``now_ms``."""
    group = snapshot.groups[report.group]
    if report.topics:
        topics, queues = _topics_and_queues(snapshot, group, report)
        by_topic = stranded_by_topic(group, report, now_ms)
        lag, every = report.broadcast_lag() if report.broadcasting else (_lag(group), True)
        last_consumed = _last_consumed(group)
    else:  # most groups of a big cluster: configs and offsets only, no consumer
        topics, queues, by_topic, lag, last_consumed = _offsets_only(group)
        every = True
    errors = group_errors(snapshot, group)
    complete = not any(e.request in OFFSET_REQUESTS for e in errors)
    lag_complete = complete and every
    consumers = group.consumers
    rates = [sum(st.consume_ok_tps for st in c.status.values()) for c in consumers if c.status]
    return GroupStatus(
        group=report.group,
        message_model=report.message_model,
        strategy=_strategy_label(group, report),
        consumers=len(consumers),
        topics=topics,
        queues=queues,
        lag=lag,
        stranded=_stranded(by_topic, complete),
        lag_complete=lag_complete,
        consume_tps=round(sum(rates), 3) if rates else group.broker_consume_tps,
        findings=tuple(worst_first(findings)),
        errors=errors,
        stranded_topics=by_topic,
        versions=tuple(sorted({c.version for c in consumers if c.version is not None})),
        last_consumed_ms=last_consumed,
    )


def _relevant_errors(snapshot: Snapshot, names: Iterable[str]) -> tuple[CaptureError, ...]:
    """Capture errors about the selected groups or their topics, and those about nothing in
    particular (the group list). An error that names neither group nor topic (snapshots that
    do not say) but targets a client belongs to that client's group."""
    if not snapshot.errors:  # the usual capture: nothing to sort out
        return ()
    chosen = set(names)
    topics: set[str] = set()
    for name in chosen:
        topics |= group_topics(snapshot.groups[name])
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


SORT_KEYS = ("worst", "lag", "stranded", "tps", "name")
"""``status --sort-by`` values: worst severity first (then lag), lag, stranded messages and
consume rate (largest first), name (Java's order); ties go by name."""


def sort_key(by: str) -> Callable[[GroupStatus], Any]:
    """The order of :data:`SORT_KEYS` value ``by``: unknown numbers after known ones."""
    if by == "lag":
        return lambda s: (s.lag is None, -(s.lag or 0), java_key(s.group))
    if by == "stranded":
        return lambda s: (not s.stranded.known, -s.stranded.messages, java_key(s.group))
    if by == "tps":
        return lambda s: (s.consume_tps is None, -(s.consume_tps or 0), java_key(s.group))
    if by == "name":
        return lambda s: java_key(s.group)
    return lambda s: (-s.rank, -(s.lag or 0), java_key(s.group))


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
    sort_by: str = "worst",
) -> StatusReport:
    """The overview of ``snapshot`` (see the module docstring), its lines in the order of
    ``sort_by`` (one of :data:`SORT_KEYS`); ``seconds`` is how long the capture took, when
    known."""
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
    now_ms = epoch_ms(snapshot.captured_at)
    lines = [group_status(snapshot, g, per_group[g.group], now_ms) for g in report.groups]
    lines.sort(key=sort_key(sort_by))
    return StatusReport(
        lines=tuple(lines),
        report=report,
        problems=problems,
        captured_at=snapshot.captured_at,
        seconds=seconds,
        errors=errors,
    )


# ----- the JSON contract -------------------------------------------------------------------


_SEVERITIES = tuple(s.value for s in Severity)


def severity_counts(findings: Sequence[Finding]) -> dict[str, int]:
    """How many findings of each severity: ``{"error": 2, "warning": 1, "info": 0}``."""
    counts = dict.fromkeys(_SEVERITIES, 0)
    for f in findings:
        counts[f.severity] += 1  # a member is its value: the same key
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
    """One group's line in the ``rmqlb.status/1`` contract. A number the capture could not
    fully read is ``null``; what was read of it is ``lagKnown`` / ``knownMessages``."""
    worst = line.worst
    stranded_complete = line.stranded.complete and not line.stranded.unknown
    return {
        "group": line.group,
        "messageModel": line.message_model,
        "strategy": None if line.strategy == "-" else line.strategy,  # no sentinel in JSON
        "consumers": line.consumers,
        "topics": line.topics,
        "queues": line.queues,
        "lag": line.lag if line.lag_complete else None,
        "lagKnown": line.lag,
        "lagComplete": line.lag_complete,
        "stranded": {
            "queues": line.stranded.queues,
            "messages": line.stranded.messages if stranded_complete else None,
            "knownMessages": line.stranded.messages if line.stranded.known else None,
            "unknownQueues": line.stranded.unknown,
            "complete": stranded_complete,
        },
        "consumeTps": line.consume_tps,
        "versions": [version_name(v) for v in line.versions],
        "lastConsumed": iso_ms(line.last_consumed_ms),
        "findings": severity_counts(line.findings),
        "worst": finding_to_json(worst) if worst is not None else None,
        "worstConsequences": line.consequences,
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
    lag_complete: bool = True
    stranded_complete: bool = True


def totals(report: StatusReport) -> Totals:
    """Sums over every line of the report."""
    lines = report.lines
    rates = [s.consume_tps for s in lines if s.consume_tps is not None]
    ranks = [s.rank for s in lines]
    return Totals(
        groups=len(lines),
        errors=ranks.count(Severity.error.rank),
        warnings=ranks.count(Severity.warning.rank),
        consumers=sum(s.consumers for s in lines),
        lag=sum(s.lag or 0 for s in lines),
        stranded=sum(s.stranded.messages for s in lines),
        partial=sum(1 for s in lines if s.partial),
        consume_tps=round(sum(rates), 3) if rates else None,
        lag_complete=all(s.lag_complete for s in lines),
        stranded_complete=all(s.stranded.complete and not s.stranded.unknown for s in lines),
    )


def status_to_json(report: StatusReport, fail_on: str = "error") -> dict[str, Any]:
    """The ``rmqlb.status/1`` document (scripts and CI depend on it)."""
    t = totals(report)
    return {
        "format": STATUS_FORMAT,
        "capturedAt": report.captured_at,
        "captureSeconds": None if report.seconds is None else round(report.seconds, 3),
        "groups": [line_to_json(s) for s in report.shown],
        "totals": {
            "groups": t.groups,
            "hidden": report.hidden,
            "withErrors": t.errors,
            "withWarnings": t.warnings,
            "partial": t.partial,
            "consumers": t.consumers,
            "lag": t.lag if t.lag_complete else None,
            "lagKnown": t.lag,
            "lagComplete": t.lag_complete,
            "strandedMessages": t.stranded if t.stranded_complete else None,
            "strandedKnown": t.stranded,
            "strandedComplete": t.stranded_complete,
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
    "moved_offsets",
    "select_groups",
    "status",
    "status_to_json",
    "stranded_by_topic",
    "totals",
]
