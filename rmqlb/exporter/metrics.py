"""The metric families of one capture: what ``rmqlb exporter`` serves and ``status -o
openmetrics`` prints (docs/exporter.md lists them with their labels).

Every number comes from :func:`rmqlb.diagnose.status.status` (the lines of ``rmqlb status``
and the diagnosis behind them): nothing is derived twice. What could not be read is left out,
never written as 0: a lag whose offsets are incomplete, stranded messages whose lag or
holder is not known, the group series of a capture that failed.

Labels are bounded: group, topic, finding code, severity, queue status, broker name, request
name and a reason class. Client ids never become label values; queues only with
``per_queue``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily

from rmqlb.diagnose.report import QueueStatus, Severity

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from rmqlb.diagnose.status import GroupStatus, StatusReport
    from rmqlb.model.snapshot import BrokerInfo, CaptureError, Snapshot

PREFIX = "rmqlb"
#: Requests whose failure says nothing about offsets: a group's lag stays known without them.
NOT_OFFSETS = frozenset({"GET_CONSUMER_RUNNING_INFO"})
#: The ``severity`` values of ``rmqlb_group_root_cause``: "has a root-cause finding at least
#: this severe".
ROOT_CAUSE_LEVELS = (Severity.warning, Severity.error)
#: How a failed request's message is classed (the first phrase found wins): the ``reason``
#: label of ``rmqlb_capture_failed_requests``.
REASONS: tuple[tuple[str, str], ...] = (
    ("timed out", "timeout"),
    ("deadline", "deadline"),
    ("connection refused", "refused"),
    ("tls", "tls"),
    ("cannot connect", "unreachable"),
    ("connection lost", "connection_lost"),
    ("frame", "bad_frame"),
)
#: Reasons that mean the peer could not be read at all (its ``rmqlb_broker_up`` is 0).
TRANSPORT_REASONS = frozenset(
    {"timeout", "deadline", "refused", "tls", "unreachable", "connection_lost", "bad_frame"}
)
OTHER_REASON = "answer"
"""A peer that answered with an error code or an undecodable body."""


@dataclass(frozen=True, slots=True)
class Capture:
    """One capture and what became of it.

    ``report`` is ``None`` when the capture failed (``failure`` says why); ``duration`` is
    ``None`` for a snapshot file; ``last_success`` is the Unix time of the last capture that
    succeeded (this one's when it did), ``None`` before any did.
    """

    report: StatusReport | None
    brokers: Mapping[str, BrokerInfo] = field(default_factory=dict)
    namesrv: tuple[str, ...] = ()
    errors: tuple[CaptureError, ...] = ()
    duration: float | None = None
    finished: float | None = None
    last_success: float | None = None
    failure: str | None = None


def capture_of(
    report: StatusReport, snapshot: Snapshot, *, duration: float | None, finished: float
) -> Capture:
    """The :class:`Capture` of a ``status`` run over ``snapshot`` that ended at ``finished``
    (Unix time)."""
    source = snapshot.source
    return Capture(
        report=report,
        brokers=snapshot.brokers,
        namesrv=source.namesrv if source is not None else (),
        errors=snapshot.errors,
        duration=duration,
        finished=finished,
        last_success=finished,
    )


def reason(message: str) -> str:
    """The ``reason`` label of a failed request's message (:data:`REASONS`)."""
    lowered = message.lower()
    for phrase, name in REASONS:
        if phrase in lowered:
            return name
    return OTHER_REASON


def peer(target: str, brokers: Mapping[str, BrokerInfo], namesrv: Sequence[str]) -> str:
    """The ``broker`` label of a request's target: the broker name, ``namesrv``, or
    ``client`` for a client (reached through its broker; its id is never a label)."""
    first = target.split(" ", maxsplit=1)[0]
    for name, info in brokers.items():
        if first == name or first in info.addrs.values():
            return name
    if any(part in namesrv for part in first.split(",")):
        return "namesrv"
    return "client"


def _family(name: str, doc: str, labels: Sequence[str], unit: str = "") -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=labels, unit=unit)


def _offsets_complete(line: GroupStatus) -> bool:
    return not any(e.request not in NOT_OFFSETS for e in line.errors)


def _group_families(report: StatusReport, per_queue: bool) -> Iterator[Metric]:
    g = ("group",)
    gt = ("group", "topic")
    info = _family("group_info", "A consumer group (always 1).", (*g, "model", "strategy"))
    consumers = _family("group_consumers", "Consumers online.", g)
    lag = _family(
        "group_lag_messages",
        "Messages not yet consumed (known only; BROADCASTING: its most behind client's).",
        g,
    )
    stranded = _family("group_stranded_messages", "Messages in queues nobody consumes.", g)
    stranded_q = _family("group_stranded_queues", "Queues nobody consumes.", g)
    rate = _family(
        "group_consume_rate_messages_per_second",
        "Messages per second consumed: the clients' consumeOKTPS, else the brokers' consumeTps.",
        g,
    )
    partial = _family("group_partial", "1 when some data of the group was not read.", g)
    findings = _family("group_findings", "Findings by code and severity.", (*g, "code", "severity"))
    worst = _family(
        "group_worst_finding",
        "1 for the group's worst finding (status's choice: causes before symptoms).",
        (*g, "code", "severity"),
    )
    root = _family(
        "group_root_cause",
        "1 when a root-cause finding (caused by no other) is at least this severe.",
        (*g, "severity"),
    )
    t_lag = _family("topic_lag_messages", "Messages not yet consumed (known only).", gt)
    t_stranded = _family("topic_stranded_messages", "Messages in queues nobody consumes.", gt)
    t_queues = _family("topic_queues", "Queues by status.", (*gt, "status"))
    q_lag = _family(
        "queue_lag_messages",
        "Lag of one queue (--per-queue only).",
        (*gt, "broker", "queue", "status"),
    )
    reports = {r.group: r for r in report.report.groups}
    for line in report.lines:
        name = line.group
        info.add_metric([name, line.message_model, line.strategy], 1)
        consumers.add_metric([name], line.consumers)
        complete = _offsets_complete(line)
        if line.lag is not None and complete and line.lag_complete:
            lag.add_metric([name], line.lag)
        if complete and line.stranded.complete and line.stranded.unknown == 0:
            stranded.add_metric([name], line.stranded.messages)
        stranded_q.add_metric([name], line.stranded.queues)
        if line.consume_tps is not None:
            rate.add_metric([name], line.consume_tps)
        partial.add_metric([name], int(line.partial))
        counts: dict[tuple[str, str], int] = {}
        for f in line.findings:
            key = (f.code.value, f.severity.value)
            counts[key] = counts.get(key, 0) + 1
        for (code, severity), n in sorted(counts.items()):
            findings.add_metric([name, code, severity], n)
        if line.worst is not None:
            worst.add_metric([name, line.worst.code.value, line.worst.severity.value], 1)
        roots = [f.severity.rank for f in line.findings if f.caused_by is None]
        for level in ROOT_CAUSE_LEVELS:
            root.add_metric([name, level.value], int(any(r >= level.rank for r in roots)))
        for t in reports[name].topics:
            statuses = {s.value: 0 for s in QueueStatus}
            for row in t.queues:
                statuses[row.status.value] += 1
                if per_queue and row.lag is not None:
                    mq = row.queue
                    q_lag.add_metric(
                        [name, t.topic, mq.broker_name, str(mq.queue_id), row.status.value],
                        row.lag,
                    )
            for status, n in statuses.items():
                t_queues.add_metric([name, t.topic, status], n)
            if complete and t.queues and all(row.lag is not None for row in t.queues):
                t_lag.add_metric([name, t.topic], t.lag or 0)
        for topic, s in sorted(line.stranded_topics.items()):
            if complete and s.complete and s.unknown == 0:
                t_stranded.add_metric([name, topic], s.messages)
    yield from (info, consumers, lag, stranded, stranded_q, rate, partial, findings, worst, root)
    yield from (t_lag, t_stranded, t_queues)
    if per_queue:
        yield q_lag


def families(
    capture: Capture, *, now: float | None = None, per_queue: bool = False
) -> list[Metric]:
    """Every family of ``capture``; ``now`` (Unix time) adds the age of the last success."""
    up = _family("up", "1 when the last capture reached the cluster.", ())
    up.add_metric([], int(capture.report is not None))
    out: list[Metric] = [up]
    if capture.duration is not None:
        took = _family("capture_duration", "How long the last capture took.", (), "seconds")
        took.add_metric([], capture.duration)
        out.append(took)
    if capture.last_success is not None:
        when = _family(
            "last_success_timestamp",
            "Unix time the last capture that succeeded ended.",
            (),
            "seconds",
        )
        when.add_metric([], capture.last_success)
        out.append(when)
        if now is not None:
            age = _family("last_success_age", "Age of the data served.", (), "seconds")
            age.add_metric([], max(0.0, now - capture.last_success))
            out.append(age)
    failed = _family(
        "capture_failed_requests",
        "Requests of the last capture that failed.",
        ("broker", "request", "reason"),
    )
    down: set[str] = set()
    counts: dict[tuple[str, str, str], int] = {}
    for e in capture.errors:
        who, why = peer(e.target, capture.brokers, capture.namesrv), reason(e.message)
        counts[(who, e.request, why)] = counts.get((who, e.request, why), 0) + 1
        if why in TRANSPORT_REASONS:
            down.add(who)
    for labels, n in sorted(counts.items()):
        failed.add_metric(list(labels), n)
    out.append(failed)
    if capture.report is None:
        return out
    broker_up = _family("broker_up", "0 when a broker could not be read.", ("broker",))
    for name in sorted(capture.brokers):
        broker_up.add_metric([name], int(name not in down))
    out.append(broker_up)
    out.extend(_group_families(capture.report, per_queue))
    return out


__all__ = ["Capture", "capture_of", "families", "peer", "reason"]
