"""``diagnose(snapshot)``: expected vs actual per (group, topic), and every finding.

Pure: no I/O, no printing. For each selected group and each topic its consumers subscribe
(retry topics ``%RETRY%<group>`` last, flagged ``retry``), the engine builds one
:class:`~rmqlb.diagnose.context.TopicContext` (the expected allocation runs once, over the
whole group), derives the queue and consumer tables, and runs the rule families of
:mod:`rmqlb.diagnose.rules`.

Worked example: 4 queues, 6 consumers, AVG. ``cidAll`` sorted gives ``c1..c6``; AVG gives
``c1..c4`` one queue each and ``c5``/``c6`` nothing, so the report has four ``ok`` queue rows
(when the clients hold what they should) and one IDLE_CONSUMER finding naming ``c5, c6``
with the hint to raise the queue count to 6 or 12.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import compress, repeat
from operator import is_, is_not, ne
from typing import cast

from rmqlb.diagnose._fast import new_consumer_row
from rmqlb.diagnose.causes import arrange, link_causes, same_fix_of
from rmqlb.diagnose.context import (
    DiagnoseOptions,
    GroupContext,
    Mode,
    TopicContext,
    group_context,
    topic_context,
)
from rmqlb.diagnose.lookup import known_topics, not_found, topic_not_found
from rmqlb.diagnose.report import (
    ConsumerRow,
    Finding,
    GroupReport,
    InferenceStatus,
    QueueRows,
    QueueStatus,
    Report,
    TopicReport,
)
from rmqlb.diagnose.rules import GROUP_RULES, TOPIC_RULES
from rmqlb.errors import InputError
from rmqlb.model._fast import gc_paused
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import Snapshot
from rmqlb.model.strategy import Params, StrategySpec, describe, params_of, with_params

__all__ = ["DiagnoseOptions", "diagnose", "record_inferred"]


def _queue_rows(ctx: TopicContext) -> QueueRows:
    """One row per queue of ``mq_all`` (then the held queues outside it), as columns.

    Most rows of a big topic are held by exactly their expected consumer: those columns are
    built in C (``zip(holder)`` gives the 1-tuples) and only the other rows run the full
    decision in Python. The context's own lists (``mq_all``, ``owner``, lags, offsets) are
    the other columns: nothing changes them once built.
    """
    mq_all = ctx.mq_all
    owner = ctx.owner
    holder = ctx.holder
    more = ctx.more_holders
    subscribers = ctx.subscribers
    unreported = ctx.g.unreported  # pull consumers: may read what they do not subscribe
    all_known = ctx.actual_known and bool(ctx.actual)
    check = ctx.checks_allocation
    # several holders of a queue are normal: broadcasting, or POP served by a broker
    broadcasting = ctx.g.mode is Mode.BROADCASTING or ctx.shared
    moved, unconsumed, duplicate, unknown = (
        QueueStatus.moved,
        QueueStatus.unconsumed,
        QueueStatus.duplicate,
        QueueStatus.unknown,
    )
    ok = QueueStatus.ok
    n = len(mq_all)
    # (holder,) per row; the rows nobody holds are among the special ones, rewritten below
    actual_col = cast("list[tuple[str, ...] | None]", list(zip(holder)))
    status_col = [ok] * n
    special: Iterable[int]
    if broadcasting:
        special = range(n)
    else:  # not held, held by another than expected, or held twice
        special = {
            *compress(range(n), map(ne, holder, owner)),
            *compress(range(n), map(is_, holder, repeat(None))),
            *more,
        }
    actual: tuple[str, ...] | None
    for i in special:
        expected = owner[i]
        first = holder[i]
        if first is None:
            if all_known:
                actual, status = (), unconsumed
            elif check and (
                expected is None or (expected not in subscribers and expected not in unreported)
            ):
                actual, status = None, unconsumed
            else:
                actual, status = None, unknown
        elif i in more:
            actual = (first, *more[i])
            doubled = ctx.g.mode is not Mode.BROADCASTING and ctx.doubled(actual)
            status = duplicate if doubled else ok
        else:
            actual = (first,)
            status = ok if (broadcasting or not check or first == expected) else moved
        actual_col[i] = actual
        status_col[i] = status
    wide = ctx.g.broadcasters
    if wide:  # read by BROADCASTING clients only: none commits the group's offsets there
        for i, readers in enumerate(actual_col):
            if readers and wide.issuperset(readers):
                status_col[i] = unconsumed
    # the brokers may expect several clients to hold one queue: POP, or brokers that give
    # every client every queue (serverLoadBalancerEnable=false)
    expected_col = _shared_owners(ctx) if ctx.broker_side is not None else owner
    if not ctx.extra and not ctx.outside_offsets:
        return QueueRows(mq_all, expected_col, actual_col, status_col, ctx.lag, ctx.offsets)
    # then the queues outside mqAll: held (stale, or a broker no longer readable), or only
    # written to (no consumer is given them: unconsumed), in queue order
    outside = {o.queue: o for o in ctx.outside_offsets}
    queues, expected_col = [*mq_all], [*expected_col]
    lags, offsets = [*(ctx.lag or [None] * n)], [*(ctx.offsets or [None] * n)]
    for mq in sorted(ctx.extra.keys() | outside.keys(), key=queue_sort_key):
        held = ctx.extra.get(mq)
        if held is not None:
            actual = tuple(held)
            status = duplicate if len(held) > 1 and not broadcasting else moved
        elif all_known or check:
            actual, status = (() if all_known else None), unconsumed
        else:
            actual, status = None, unknown
        o = outside.get(mq)
        queues.append(mq)
        expected_col.append(None)
        actual_col.append(actual)
        status_col.append(status)
        lags.append(None if o is None else o.lag)
        offsets.append(o)
    return QueueRows(
        queues,
        expected_col,
        actual_col,
        status_col,
        None if ctx.lag is None else lags,
        None if ctx.offsets is None else offsets,
    )


def _shared_owners(ctx: TopicContext) -> list[str | None]:
    """The expected column of a topic the brokers assign: a queue several clients are
    expected to hold (popped by several, or given to all) has no one expected holder
    (``None``, as under BROADCASTING; the consumer rows count each client's share), the
    others keep theirs."""
    poppers = [0] * len(ctx.mq_all)
    for queues in (ctx.expected or {}).values():
        for mq in queues:
            i = ctx.index(mq)
            if i is not None:
                poppers[i] += 1
    return [None if n > 1 else cid for cid, n in zip(ctx.owner, poppers, strict=True)]


def _consumer_rows(ctx: TopicContext) -> tuple[ConsumerRow, ...]:
    rows: list[ConsumerRow] = []
    broadcasting = ctx.g.mode is Mode.BROADCASTING
    # consumers share strategy objects (the parser reuses equal ones): describe each once
    labels: dict[int, str] = {}
    for c, held, lag in zip(ctx.g.consumers, ctx.actual, ctx.actual_lag, strict=True):
        subscribes = c.client_id in ctx.subscribers and c.subscribes(ctx.topic)
        if broadcasting:
            expected = len(ctx.mq_all) if subscribes else 0
        else:
            expected = ctx.expected_count(c.client_id)
        spec = c.strategy
        label: str | None = None
        if spec is not None:
            label = labels.get(id(spec))
            if label is None:
                label = labels[id(spec)] = describe(spec)
        rows.append(
            new_consumer_row(
                c.client_id,
                subscribes,
                label,
                expected,
                len(held) if held is not None else None,
                lag,
                c,
                ctx.g.balanced_by(c.client_id),
                (ctx.g.balance_why or {}).get(c.client_id),
            )
        )
    return tuple(rows)


def _finding_lags(
    group: str, contexts: Iterable[TopicContext], findings: Iterable[Finding]
) -> dict[tuple[str, MessageQueue], int]:
    """The known lag of each queue ``findings`` name in ``contexts``, by group and queue:
    what :func:`~rmqlb.diagnose.causes.arrange` weighs findings by (looked up per named
    queue, not gathered from every queue row)."""
    by_topic = {ctx.topic: ctx for ctx in contexts}
    out: dict[tuple[str, MessageQueue], int] = {}
    for f in findings:
        for mq in f.queues:
            ctx = by_topic.get(mq.topic)
            if ctx is None or ctx.lag is None:
                continue
            i = ctx.index(mq)
            lag = None if i is None else ctx.lag[i]
            if lag is not None:
                out[group, mq] = lag
    return out


def _unsubscribed_lag(g: GroupContext, contexts: Sequence[TopicContext]) -> int | None:
    """The lag of ``g``'s offsets on topics without a context (``None``: none). Every offset
    of a context's topic is in it (``offsets``, ``outside_offsets``): when they account for
    all of the group's, no offset is looked at (a big topic's 100,000)."""
    offsets = g.group.offsets
    # known offsets counted by identity: list.count(None) calls each offset's __eq__
    counted = sum(
        sum(map(is_not, ctx.offsets, repeat(None))) + len(ctx.outside_offsets)
        for ctx in contexts
        if ctx.offsets is not None
    )
    if counted == len(offsets):
        return None
    topics = {ctx.topic for ctx in contexts}
    lags = [o.lag for o in offsets if o.queue.topic not in topics]
    return sum(lags) if lags else None


def _diagnose_group(
    g: GroupContext, topic: str | None
) -> tuple[GroupReport, list[Finding], list[int | None], dict[tuple[str, MessageQueue], int]]:
    """The report of ``g`` (every topic), its findings, the position of each one's cause
    and the lags of the queues they name in ``topic`` (every topic when ``None``)."""
    findings: list[Finding] = []
    contexts = [topic_context(g, t) for t in g.subscribed_topics()]
    contexts += [topic_context(g, t, assigned=True) for t in g.assigned_topics()]
    for rule in GROUP_RULES:
        findings.extend(rule(g, contexts, topic))
    reports: list[TopicReport] = []
    for ctx in contexts:
        for topic_rule in TOPIC_RULES:
            findings.extend(topic_rule(ctx))
        reports.append(
            TopicReport(
                topic=ctx.topic,
                queues=_queue_rows(ctx),
                consumers=_consumer_rows(ctx),
                retry=ctx.retry,
                readable=len(ctx.mq_all),
            )
        )
    model = g.group.consumed_model.value
    label = describe(g.strategy) if g.mode is Mode.CLUSTERING else g.mode.value
    if g.mode is Mode.BROADCASTING:
        label = "BROADCASTING"
    report = GroupReport(
        g.name,
        model,
        label,
        tuple(reports),
        g.inference,
        complete=not g.offsets_unknown,
        unsubscribed_lag=None if g.mode is Mode.BROADCASTING else _unsubscribed_lag(g, contexts),
    )
    shown = [ctx for ctx in contexts if topic is None or ctx.topic == topic]
    return report, findings, link_causes(g, findings), _finding_lags(g.name, shown, findings)


def _check_topic(snapshot: Snapshot, contexts: Sequence[GroupContext], topic: str) -> None:
    """Refuse ``topic`` unless one of the groups subscribes it or assign()s its queues."""
    read = {s.topic for g in contexts for c in g.consumers for s in c.subscriptions}
    read = read.union(*(g.assigned_topics() for g in contexts))
    if topic in read:
        return
    if topic not in known_topics(snapshot):
        raise topic_not_found(topic, known_topics(snapshot))
    known = ", ".join(sorted(read, key=java_key)[:10]) or "none"
    raise InputError(f"topic {topic!r} is not subscribed by the selected groups (topics: {known})")


def diagnose(
    snapshot: Snapshot,
    *,
    groups: Sequence[str] | None = None,
    topic: str | None = None,
    strategy: StrategySpec | None = None,
    options: DiagnoseOptions | None = None,
) -> Report:
    """Diagnose ``snapshot``: tables per (group, topic) and findings, most severe first.

    ``groups`` limits the groups (an unknown name is a :class:`~rmqlb.errors.GroupNotFound`
    naming the closest known one); ``topic``
    limits the topics; ``strategy`` overrides the strategy used for *expected*.
    """
    opts = options or DiagnoseOptions()
    if groups:
        missing = [name for name in groups if name not in snapshot.groups]
        if missing:
            raise not_found(missing[0], snapshot.groups, where="in the snapshot")
        names = list(dict.fromkeys(groups))
    else:
        names = sorted(snapshot.groups, key=java_key)
    group_reports: list[GroupReport] = []
    findings: list[Finding] = []
    parents: list[int | None] = []
    lag: dict[tuple[str, MessageQueue], int] = {}
    with gc_paused():
        contexts = [
            group_context(snapshot, snapshot.groups[name], strategy, opts) for name in names
        ]
        if topic is not None:
            _check_topic(snapshot, contexts, topic)
        for g in contexts:
            # every topic is diagnosed even with ``topic``: a finding's id numbers it among
            # all of its group's findings, whichever topics a command shows
            report, found, links, lags = _diagnose_group(g, topic)
            if topic is not None:
                kept = tuple(t for t in report.topics if t.topic == topic)
                report = replace(report, topics=kept, unsubscribed_lag=None)
            group_reports.append(report)
            offset = len(findings)
            findings.extend(found)
            parents.extend(None if p is None else p + offset for p in links)
            lag.update(lags)
    arranged = arrange(findings, parents, lag)
    if topic is not None:
        arranged = _about(arranged, topic)
    return Report(
        tuple(group_reports),
        tuple(arranged),
        snapshot.errors,
        captured_at=snapshot.captured_at,
    )


def _about(findings: Sequence[Finding], topic: str) -> list[Finding]:
    """The findings about ``topic`` or about their whole group, with the causes they name
    (ids unchanged); a fix that referred to a finding left out is spelled out again."""
    by_id = {f.id: f for f in findings}
    keep = {f.id for f in findings if f.topic in (None, topic)}
    for f in findings:
        if f.id in keep:
            up = f.caused_by
            while up is not None and up not in keep and up in by_id:
                keep.add(up)
                up = by_id[up].caused_by
    out: list[Finding] = []
    for f in findings:
        if f.id not in keep:
            continue
        ref = same_fix_of(f)
        if ref is not None and ref not in keep and ref in by_id:
            out.append(replace(f, hint=by_id[ref].hint, proposals=by_id[ref].proposals))
        else:
            out.append(f)
    return out


def record_inferred(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` with the strategy parameters inferred from what the clients hold written
    into each group's strategy, marked inferred (what ``rmqlb dump`` saves).

    Only exact inferences are recorded, and never over a group strategy with stated
    parameters. A snapshot redacted afterwards keeps them although client ids change, and
    ``explain --dump`` reports them as inferred, like ``explain -n``.
    """
    groups = dict(snapshot.groups)
    for name, group in snapshot.groups.items():
        if group.strategy is not None and params_of(group.strategy) is not Params.UNKNOWN:
            continue
        g = group_context(snapshot, group, None, DiagnoseOptions())
        if g.inference is not None and g.inference.status is InferenceStatus.inferred:
            groups[name] = replace(group, strategy=with_params(g.strategy, Params.INFERRED))
    if groups == snapshot.groups:
        return snapshot
    return replace(snapshot, groups=groups)
