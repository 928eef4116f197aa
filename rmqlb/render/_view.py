"""Presentation decisions shared by every text renderer: which rows show, what a cell says.

Keeping them here means the Rich table, the plain/markdown text and the golden files agree
on wording; each renderer only decides how it looks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from rmqlb.diagnose.report import (
    ConsumerRow,
    Finding,
    GroupReport,
    InferenceStatus,
    QueueRow,
    QueueStatus,
    Report,
    Severity,
    TopicReport,
    exit_code,
    finding_depths,
    order_findings,
    row_fields,
)
from rmqlb.errors import ExitCode
from rmqlb.humanize import age, count, plural, rate
from rmqlb.jsontext import iso_ms
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import ProcessQueueState, QueueOffset, Rebalance
from rmqlb.remoting.codes import version_name
from rmqlb.render.failures import failure_summary
from rmqlb.render.options import RenderOptions
from rmqlb.render.styles import severity_count

CHANGED_MARK = "*"


@dataclass(frozen=True, slots=True)
class QueueView:
    """The queue rows to show, how many ok rows were left out, and how many more rows the
    ``max_rows`` cap left out."""

    rows: tuple[QueueRow, ...]
    hidden_ok: int
    show_lag: bool
    more: int = 0


def consumer_lag_shown(topic: TopicReport, queue_view: QueueView) -> bool:
    """Whether the consumer table has a lag column: where the queues' lag is shown, or some
    consumer's lag is known without it (a BROADCASTING client's own)."""
    return queue_view.show_lag or any(c.lag is not None for c in topic.consumers)


def queue_changed(options: RenderOptions, group: str, topic: str, row: QueueRow) -> bool:
    """Whether ``row`` changed owner since the last poll (always False outside --watch)."""
    return options.changes is not None and options.changes.queue_changed(group, topic, row.queue)


def queue_view(group: str, topic: TopicReport, options: RenderOptions) -> QueueView:
    """Rows to show: all of them for small topics or ``all_queues``; otherwise problem rows
    (and rows that changed since the last poll) only."""
    show_lag = any(r.lag is not None for r in topic.queues)
    if options.all_queues or len(topic.queues) <= options.large_topic:
        rows = tuple(topic.queues)
    else:
        rows = tuple(
            r
            for r in topic.queues
            if r.status is not QueueStatus.ok or queue_changed(options, group, topic.topic, r)
        )
    kept = capped(rows, options, lambda r: r.status is not QueueStatus.ok)
    return QueueView(kept, len(topic.queues) - len(rows), show_lag, len(rows) - len(kept))


T = TypeVar("T")


def capped(
    rows: tuple[T, ...], options: RenderOptions, problem: Callable[[T], bool]
) -> tuple[T, ...]:
    """At most ``options.max_rows`` of ``rows`` (all with ``all_queues``): the problem rows
    first, in their order.

    >>> capped((1, 2, 3, 4), RenderOptions(max_rows=2), lambda n: n % 2 == 0)
    (2, 4)
    >>> capped((1, 2, 3, 4), RenderOptions(max_rows=3), lambda n: n > 3)
    (1, 2, 4)
    """
    cap = options.max_rows
    if cap is None or options.all_queues or len(rows) <= cap:
        return rows
    order = sorted(range(len(rows)), key=lambda i: (not problem(rows[i]), i))
    return tuple(rows[i] for i in sorted(order[:cap]))


def topic_more_line(t: TopicReport) -> str:
    """The one line of a topic whose tables have no room at all."""
    counts = f"{plural(len(t.queues), 'queue')}, {plural(len(t.consumers), 'consumer')}"
    return f"… {counts} (taller window or --all-queues)"


def more_line(more: int, what: str) -> str:
    """The line under a table the terminal's height cut short.

    >>> more_line(12, "queue")
    '… 12 more queues (taller window or --all-queues)'
    """
    return f"… {more:,} more {what}{'' if more == 1 else 's'} (taller window or --all-queues)"


def captured_ms(captured_at: str | None) -> int | None:
    """The capture time (``2026-11-22T12:00:00Z``) in epoch ms: the "now" of every age."""
    if not captured_at:
        return None
    try:
        stamp = datetime.fromisoformat(captured_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return int(stamp.timestamp() * 1000)


def age_text(timestamp_ms: int, now_ms: int | None) -> str:
    """``12 s ago`` before the capture, ``never`` for 0, ``""`` without a capture time."""
    if not timestamp_ms:
        return "never"
    if now_ms is None:
        return ""
    return f"{age((now_ms - timestamp_ms) / 1000)} ago"


def _last_consumed(offset: QueueOffset, now_ms: int | None, absolute: bool = False) -> str:
    """``never`` with nothing committed; empty when the broker did not say (a queue consume
    stats left out); ``absolute``: the time too (``5 s ago, 11:59:55Z``)."""
    if offset.consumer_offset <= 0:
        return "never"
    if not offset.last_timestamp:
        return ""
    age = age_text(offset.last_timestamp, now_ms)
    if not absolute:
        return age
    stamp = iso_ms(offset.last_timestamp) or ""
    return f"{age}, {stamp}" if age else stamp


@dataclass(frozen=True, slots=True)
class DetailColumn:
    """A column both text renderers add the same way: its header and its cells."""

    header: str
    right: bool
    cells: tuple[str, ...]


def _holder_states(t: TopicReport) -> dict[MessageQueue, ProcessQueueState]:
    """Each held queue's state as its (first reporting) holder sees it."""
    out: dict[MessageQueue, ProcessQueueState] = {}
    for c in t.consumers:
        for state in c.process_queues(t.topic) or ():
            out.setdefault(state.queue, state)
    return out


def queue_details(
    t: TopicReport, rows: Sequence[QueueRow], now_ms: int | None, options: RenderOptions
) -> list[DetailColumn]:
    """Offsets columns of the queue table (when offsets are known): the committed offset
    (``never`` when the group never committed one: its lag counts from the min offset) and
    how long ago the last consumed message was stored; with ``--all-queues`` also the
    holder's cached messages and last pull."""
    out: list[DetailColumn] = []
    if any(r.offset is not None for r in rows):
        out.append(
            DetailColumn(
                "Committed",
                True,
                tuple(
                    ""
                    if r.offset is None
                    else count(r.offset.consumer_offset)
                    if r.offset.committed
                    else "never"
                    for r in rows
                ),
            )
        )
        out.append(
            DetailColumn(
                "Last consumed",
                True,
                tuple(
                    "" if r.offset is None else _last_consumed(r.offset, now_ms, options.wide)
                    for r in rows
                ),
            )
        )
    states = _holder_states(t) if options.all_queues or options.wide else {}
    if states:
        held = [states.get(r.queue) for r in rows]
        out.append(
            DetailColumn(
                "Cached", True, tuple("" if s is None else count(s.cached_msg_count) for s in held)
            )
        )
        out.append(
            DetailColumn(
                "Last pull",
                True,
                tuple("" if s is None else age_text(s.last_pull_timestamp, now_ms) for s in held),
            )
        )
        if options.wide:
            out.append(
                DetailColumn(
                    "Locked",
                    False,
                    tuple("" if s is None else "yes" if s.locked else "no" for s in held),
                )
            )
    return out


def balance_text(c: ConsumerRow) -> str:
    """Who balances the client: ``client``, ``broker`` or ``proxy``, ``(inferred)`` when
    the client did not report it."""
    who = c.balanced_by.value
    return who if c.balance_inferred is None else f"{who} (inferred)"


def consumer_details(
    t: TopicReport, rows: Sequence[ConsumerRow], wide: bool = False
) -> list[DetailColumn]:
    """Who balances each client (when a broker or a Proxy balances one of them, or
    ``wide``), where it runs and how fast it consumes this topic (live captures)."""
    out: list[DetailColumn] = []
    if wide or any(c.balanced_by is not Rebalance.CLIENT for c in t.consumers):
        out.append(DetailColumn("Balanced by", False, tuple(balance_text(c) for c in rows)))
    if not any(c.consumer is not None and c.consumer.client_addr for c in rows):
        return out
    addrs = tuple((c.consumer.client_addr or "") if c.consumer else "" for c in rows)
    versions = tuple(
        version_name(c.consumer.version) if c.consumer and c.consumer.version is not None else ""
        for c in rows
    )
    out += [DetailColumn("Address", False, addrs), DetailColumn("Version", False, versions)]
    status = [c.status(t.topic) for c in rows]
    if any(s is not None for s in status):
        out.append(
            DetailColumn(
                "TPS",
                True,
                tuple(rate(None if s is None else s.consume_ok_tps, "") for s in status),
            )
        )
        out.append(
            DetailColumn(
                "Failed TPS",
                True,
                tuple(rate(None if s is None else s.consume_failed_tps, "") for s in status),
            )
        )
    return out


def hidden_line(hidden: int, total: int) -> str:
    """The line that replaces the ok rows of a large topic."""
    rows = "row" if hidden == 1 else "rows"
    return f"{hidden} of {total} queues are ok; their {rows} are hidden (--all-queues shows them)"


@dataclass(frozen=True, slots=True)
class ConsumerView:
    """The consumer rows to show (with their notes) and how many unremarkable ones were left out."""

    rows: tuple[tuple[ConsumerRow, str], ...]
    hidden: int
    more: int = 0


def consumer_view(t: TopicReport, options: RenderOptions) -> ConsumerView:
    """Every consumer for ordinary groups; for more than ``large_topic`` consumers (and no
    ``all_queues``) only those with a note (idle, not subscribed, mismatch, unreachable)."""
    rows = tuple((c, consumer_note(c, t)) for c in t.consumers)
    shown = rows
    if not options.all_queues and len(rows) > options.large_topic:
        shown = tuple(r for r in rows if r[1])
    kept = capped(shown, options, lambda r: bool(r[1]))
    return ConsumerView(kept, len(rows) - len(shown), len(shown) - len(kept))


def hidden_consumers_line(hidden: int, total: int) -> str:
    """The line that replaces the unremarkable consumer rows of a large group."""
    rows = "row" if hidden == 1 else "rows"
    return (
        f"{hidden} of {total} consumers hold what they should; their {rows} are hidden "
        "(--all-queues shows them)"
    )


def expected_text(row: QueueRow) -> str:
    """The expected consumer, ``-`` when the queue is expected to fall to nobody."""
    return row.expected if row.expected is not None else "-"


def actual_list(row: QueueRow, name: Callable[[str], str] = str) -> list[str]:
    """The actual holders as cell lines (each client id once, shown by ``name``, with its
    count when on several connections): ``unknown`` when not known, ``-`` when nobody."""
    if row.actual is None:
        return ["unknown"]
    if not row.actual:
        return ["-"]
    counts = Counter(row.actual)
    return [name(c) if n == 1 else f"{name(c)} ({n} connections)" for c, n in counts.items()]


def lag_text(lag: int | None) -> str:
    """Lag as a cell: thousands separated, or empty when unknown."""
    return count(lag, "")


def count_text(n: int | None) -> str:
    """A queue count, ``?`` when unknown."""
    return count(n)


def expected_count_text(c: ConsumerRow) -> str:
    """A consumer's expected queue count; ``-`` for a gRPC client, whose queues its Proxy
    picks as it pops (no allocation predicts them)."""
    return "-" if c.balanced_by is Rebalance.PROXY else count(c.expected)


def consumer_note(c: ConsumerRow, t: TopicReport) -> str:
    """Why a consumer row deserves attention, or ``""``.

    ``idle``: subscribes but gets no queue (expected or actual); ``N queues never read``:
    takes a share of the queues without subscribing, so that share is never consumed;
    ``mismatch``: holds a different number of queues than expected; ``unreachable``: its
    actual assignment is unknown (``via Proxy``: a remoting client connected through a
    Proxy, which relays no running-info request; ``unreported``: a pull consumer whose
    running info lists no queue). Nobody is called idle on a retry topic:
    it usually has one queue, so all consumers but one hold none of it by design; nor is a
    gRPC client, which pops whatever its Proxy gives it (nothing is expected of it in
    particular).
    """
    if not c.subscribes:
        pulls = c.consumer is not None and c.consumer.pulls_actively  # may assign() queues
        if pulls and c.actual is None:
            return "unreported"
        unread = c.expected
        if unread and pulls:
            unread = sum(  # its share left unconsumed: what it holds of it, it reads
                1
                for _, expected, _, status, *_ in row_fields(t.queues)
                if expected == c.client_id and status is QueueStatus.unconsumed
            )
        return f"{plural(unread, 'queue')} never read" if unread > 0 else ""
    if c.balanced_by is Rebalance.PROXY:
        return ""
    if (c.expected == 0 or c.actual == 0) and not t.retry:
        return "idle"
    if c.actual is None:
        if c.consumer is not None and c.consumer.proxy:
            return "via Proxy"
        if c.consumer is not None and c.consumer.queues_unreported:
            return "unreported"
        return "unreachable"
    if c.actual != c.expected:
        return "mismatch"
    return ""


def _same(text: str) -> str:
    return text


def group_header(g: GroupReport, name: Callable[[str], str] = _same) -> str:
    """``Group G · CLUSTERING · strategy AVG``; ``name`` formats the group and strategy."""
    return f"Group {name(g.group)} · {g.message_model} · strategy {name(g.strategy)}"


def inference_settled(g: GroupReport) -> bool:
    """Whether the group's strategy parameters are known (inferred or confirmed), so nothing
    in its report rests on a guess."""
    return g.inference is None or g.inference.status in (
        InferenceStatus.inferred,
        InferenceStatus.confirmed,
    )


def no_topic_line(g: GroupReport) -> str:
    """What stands for the tables of a group no client subscribes a topic of (nobody online,
    say), pointing at its lag queue by queue where it has some."""
    line = "No topic to allocate for this group."
    if g.unsubscribed_lag:
        line += f" Its lag, {g.unsubscribed_lag:,}, queue by queue: rmqlb offsets {g.group}"
    return line


def inference_line(g: GroupReport) -> str | None:
    """The note on strategy parameters the clients do not report (``None`` when stated),
    e.g. ``note: virtual nodes: 5, inferred from what the 3 clients hold — ...``."""
    return None if g.inference is None else f"note: {g.inference.note}"


def topic_header(t: TopicReport, name: Callable[[str], str] = _same) -> str:
    """``Topic T · 16 queues · 3 consumers``; retry topics say so; rows outside the route's
    readable queues are counted apart (``12 queues (4 readable)``, the count ``status``
    gives); ``name`` formats the topic."""
    kind = "Retry topic" if t.retry else "Topic"
    subscribers = sum(1 for c in t.consumers if c.subscribes)
    queues, consumers = plural(len(t.queues), "queue"), plural(len(t.consumers), "consumer")
    if t.readable is not None and t.readable != len(t.queues):
        queues += f" ({t.readable} readable)"
    text = f"{kind} {name(t.topic)} · {queues} · {consumers}"
    if subscribers != len(t.consumers):
        text += f", {subscribers} subscribing"
    return text


def findings_by_group(report: Report) -> tuple[dict[str, list[Finding]], list[Finding]]:
    """Findings per reported group and those of groups without tables, in report order:
    causes first, each followed by its consequences, otherwise most severe first."""
    names = {g.group for g in report.groups}
    per: dict[str, list[Finding]] = {name: [] for name in names}
    rest: list[Finding] = []
    for f in order_findings(report.findings):
        (per[f.group] if f.group in names else rest).append(f)
    return per, rest


@dataclass(frozen=True, slots=True)
class FindingLine:
    """A finding as a renderer lays it out: how deep under its cause, and its link tag."""

    finding: Finding
    depth: int
    tag: str


def finding_lines(findings: Sequence[Finding]) -> list[FindingLine]:
    """``findings`` (in report order) with their depth under their causes and a tag: the id
    (``G/F1``), with ``caused by G/F1`` for a consequence; ``""`` when it has no id."""
    out: list[FindingLine] = []
    for f, depth in zip(findings, finding_depths(findings), strict=True):
        tag = f"{f.id}, caused by {f.caused_by}" if f.caused_by is not None else f.id or ""
        out.append(FindingLine(f, depth, tag))
    return out


def finding_where(f: Finding) -> str:
    """``topic T`` or ``""``."""
    return f"topic {f.topic}" if f.topic else ""


def severity_counts(findings: Sequence[Finding]) -> str:
    """``1 error, 2 warnings, 0 info``."""
    counts = Counter(f.severity for f in findings)
    return ", ".join(severity_count(counts[s], s) for s in Severity)


def exit_reason(code: ExitCode, fail_on: str) -> str:
    """Why a report exits with ``code``, e.g. ``findings at or above --fail-on error``."""
    if code is ExitCode.FINDINGS:
        return f"findings at or above --fail-on {fail_on}"
    if code is ExitCode.PARTIAL:
        return f"partial data, no finding at or above --fail-on {fail_on}"
    return f"no finding at or above --fail-on {fail_on}"


def exit_line(report: Report, fail_on: str) -> str:
    """What the exit code will be and why, e.g. ``exit 1: findings at or above --fail-on
    error``."""
    code = exit_code(report, fail_on)
    return f"exit {int(code)}: {exit_reason(code, fail_on)}"


def summary_line(report: Report) -> str:
    """The footer's first line: counts by severity, e.g. ``3 findings: 2 errors, ...``."""
    return f"{plural(len(report.findings), 'finding')}: {severity_counts(report.findings)}"


def partial_line(report: Report) -> str:
    """The "partial data" note (empty when complete). The failed requests themselves are
    listed once, on stderr, by the command that read the snapshot
    (:func:`rmqlb.render.failures.failure_lines`)."""
    if not report.errors:
        return ""
    return (
        f"partial data: {failure_summary(report.errors)} (listed on stderr); "
        "the tables above may be incomplete"
    )
