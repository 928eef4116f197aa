"""LAG_SKEW: one consumer holds most of a topic's lag (from the group's offsets).

A consumer's lag is the sum of ``brokerOffset - consumerOffset`` over the queues it holds
(what it actually holds when known, else what the strategy gives it). Worked example: 4
queues with lags 10, 10, 10 and 9,000, the last held by ``c2``: ``c2`` holds 99.7 % of the
lag with 1 of 4 queues, above the default share of 50 %.
"""

from __future__ import annotations

from rmqlb.diagnose.context import Mode, TopicContext
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.humanize import percent, plural
from rmqlb.model.queue import MessageQueue, queue_sort_key


def check_lag(ctx: TopicContext) -> list[Finding]:
    """One finding when a single consumer holds more than ``lag_skew_share`` of the lag."""
    g = ctx.g
    if ctx.lag is None or g.mode is not Mode.CLUSTERING:
        return []
    lag = ctx.lag
    total = sum(filter(None, lag))
    if total < g.options.min_lag or total <= 0:
        return []
    holdings: dict[str, tuple[MessageQueue, ...]] = {}
    per: dict[str, int] = {}
    by_expected: set[str] = set()
    for c, held, held_lag in zip(g.consumers, ctx.actual, ctx.actual_lag, strict=True):
        if c.client_id not in ctx.subscribers or c.client_id in holdings:
            continue
        if held is not None:
            holdings[c.client_id] = held
            per[c.client_id] = held_lag if held_lag is not None else ctx.total_lag(held)
        elif ctx.expected is not None:
            holdings[c.client_id] = tuple(ctx.expected.get(c.client_id, ()))
            per[c.client_id] = ctx.total_lag(holdings[c.client_id])
            by_expected.add(c.client_id)
    if len(holdings) < 2:
        return []
    top = max(per, key=lambda cid: per[cid])
    share = per[top] / total
    queue_share = len(holdings[top]) / max(len(ctx.mq_all), 1)
    if share <= g.options.lag_skew_share or share <= queue_share:
        return []
    basis = " (by expected assignment)" if top in by_expected else ""
    lagging = sorted((mq for mq in holdings[top] if ctx.total_lag((mq,)) > 0), key=queue_sort_key)
    return [
        Finding(
            Code.LAG_SKEW,
            Severity.warning,
            g.name,
            f"{top} holds {per[top]:,} of the {total:,} messages of lag on {ctx.topic} "
            f"({percent(per[top], total)}) with {len(holdings[top])} of "
            f"{plural(len(ctx.mq_all), 'queue')}{basis}",
            "that consumer is slow or stuck: check its consume thread pool and consume time, "
            "its logs for consume failures or flow control, and its host; if its queues just "
            "receive more messages, spread the message keys or add queues",
            topic=ctx.topic,
            consumers=(top,),
            queues=tuple(lagging),
        )
    ]
