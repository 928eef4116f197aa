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

from collections.abc import Sequence

from rmqlb.diagnose._fast import new_row
from rmqlb.diagnose.context import (
    DiagnoseOptions,
    GroupContext,
    Mode,
    TopicContext,
    group_context,
    topic_context,
)
from rmqlb.diagnose.report import (
    ConsumerRow,
    Finding,
    GroupReport,
    QueueRow,
    QueueStatus,
    Report,
    TopicReport,
    sort_findings,
)
from rmqlb.diagnose.rules import GROUP_RULES, TOPIC_RULES
from rmqlb.errors import InputError
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import Snapshot
from rmqlb.model.strategy import StrategySpec, describe
from rmqlb.snapshot._fast import gc_paused

__all__ = ["DiagnoseOptions", "diagnose"]


def _queue_rows(ctx: TopicContext) -> tuple[QueueRow, ...]:
    owner = ctx.owner
    holder = ctx.holder
    more = ctx.more_holders
    lag = ctx.lag
    subscribers = ctx.subscribers
    all_known = ctx.actual_known and bool(ctx.actual)
    check = ctx.checks_allocation
    broadcasting = ctx.g.mode is Mode.BROADCASTING
    ok, moved, unconsumed, duplicate, unknown = (
        QueueStatus.ok,
        QueueStatus.moved,
        QueueStatus.unconsumed,
        QueueStatus.duplicate,
        QueueStatus.unknown,
    )
    rows: list[QueueRow] = []
    append = rows.append
    make = new_row
    for i, mq in enumerate(ctx.mq_all):
        expected = owner[i]
        first = holder[i]
        actual: tuple[str, ...] | None
        if first is not None and first == expected and not broadcasting and i not in more:
            # the common case first: held by exactly its expected consumer
            append(make(mq, expected, (first,), ok, None if lag is None else lag[i]))
            continue
        if first is None:
            if all_known:
                actual, status = (), unconsumed
            elif check and (expected is None or expected not in subscribers):
                actual, status = None, unconsumed
            else:
                actual, status = None, unknown
        elif i in more:
            actual = (first, *more[i])
            status = ok if broadcasting else duplicate
        else:
            actual = (first,)
            status = ok if (broadcasting or not check or first == expected) else moved
        append(make(mq, expected, actual, status, None if lag is None else lag[i]))
    for mq, held in ctx.extra.items():
        status = duplicate if len(held) > 1 and not broadcasting else moved
        append(QueueRow(mq, None, tuple(held), status, None))
    return tuple(rows)


def _consumer_rows(ctx: TopicContext) -> tuple[ConsumerRow, ...]:
    rows: list[ConsumerRow] = []
    broadcasting = ctx.g.mode is Mode.BROADCASTING
    for c, held, lag in zip(ctx.g.consumers, ctx.actual, ctx.actual_lag, strict=True):
        subscribes = c.client_id in ctx.subscribers and c.subscribes(ctx.topic)
        if broadcasting:
            expected = len(ctx.mq_all) if subscribes else 0
        else:
            expected = ctx.expected_count(c.client_id)
        rows.append(
            ConsumerRow(
                client_id=c.client_id,
                subscribes=subscribes,
                strategy=describe(c.strategy) if c.strategy is not None else None,
                expected=expected,
                actual=len(held) if held is not None else None,
                lag=lag,
            )
        )
    return tuple(rows)


def _diagnose_group(g: GroupContext, topic: str | None) -> tuple[GroupReport, list[Finding]]:
    findings: list[Finding] = []
    topics = g.subscribed_topics()
    if topic is not None:
        topics = [t for t in topics if t == topic]
    contexts = [topic_context(g, t) for t in topics]
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
            )
        )
    model = g.group.message_model.value
    label = describe(g.strategy) if g.mode is Mode.CLUSTERING else g.mode.value
    if g.mode is Mode.BROADCASTING:
        label = "BROADCASTING"
    return GroupReport(g.name, model, label, tuple(reports)), findings


def diagnose(
    snapshot: Snapshot,
    *,
    groups: Sequence[str] | None = None,
    topic: str | None = None,
    strategy: StrategySpec | None = None,
    options: DiagnoseOptions | None = None,
) -> Report:
    """Diagnose ``snapshot``: tables per (group, topic) and findings, most severe first.

    ``groups`` limits the groups (an unknown name is an :class:`InputError`); ``topic``
    limits the topics; ``strategy`` overrides the strategy used for *expected*.
    """
    opts = options or DiagnoseOptions()
    if groups:
        missing = [name for name in groups if name not in snapshot.groups]
        if missing:
            known = ", ".join(sorted(snapshot.groups, key=java_key)[:10]) or "none"
            raise InputError(f"group {missing[0]!r} not in the snapshot (groups: {known})")
        names = list(dict.fromkeys(groups))
    else:
        names = sorted(snapshot.groups, key=java_key)
    if topic is not None:
        subscribed = {
            s.topic
            for name in names
            for c in snapshot.groups[name].consumers
            for s in c.subscriptions
        }
        if topic not in subscribed:
            known = ", ".join(sorted(subscribed, key=java_key)[:10]) or "none"
            raise InputError(
                f"topic {topic!r} is not subscribed by the selected groups (topics: {known})"
            )
    group_reports: list[GroupReport] = []
    findings: list[Finding] = []
    with gc_paused():
        for name in names:
            g = group_context(snapshot, snapshot.groups[name], strategy, opts)
            report, found = _diagnose_group(g, topic)
            group_reports.append(report)
            findings.extend(found)
    return Report(tuple(group_reports), tuple(sort_findings(findings)), snapshot.errors)
