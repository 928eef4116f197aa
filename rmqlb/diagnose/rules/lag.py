"""LAG_SKEW: one consumer holds most of a topic's lag (from the group's offsets).

A consumer's lag is the sum of ``brokerOffset - consumerOffset`` over the queues it holds
(what it actually holds when known, else what the strategy gives it). Worked example: 4
queues with lags 10, 10, 10 and 9,000, the last held by ``c2``: ``c2`` holds 99.7 % of the
lag with 1 of 4 queues, above the default share of 50 %.

Where the clients' running info says how they consume the topic, the finding compares the
consumer with its peers and its fix follows the cause: fewer consume threads than theirs
(raise them: at its consume time, N threads consume about N × 1000 / consumeRT messages a
second), a listener slower per message than theirs (look at that host), or neither (more
messages arrive on its queues). On the real 4.9.8 kit a client of 1 thread at 100 ms per
message consumed 7 to 10 msg/s next to a peer of 20 threads at 0.002 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqlb.diagnose.context import Mode, TopicContext, cluster_name
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import duration_text, id_text, rate_text, rt_text
from rmqlb.diagnose.rules.health import consume_threads, is_orderly
from rmqlb.humanize import percent, plural
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import Consumer, Rebalance

#: A listener this many times slower per message than its slowest peer is the cause.
SLOWER_RT = 2.0
#: The generic fix, when the clients' running info does not say why.
GENERIC_HINT = (
    "that consumer is slow or stuck: check its consume thread pool and consume time, "
    "its logs for consume failures or flow control, and its host; if its queues just "
    "receive more messages, spread the message keys or add queues"
)


@dataclass(frozen=True, slots=True)
class _Pace:
    """How a consumer consumes the topic, by its running info: its consume threads, its
    time per message (``None``: no sample of its statistics yet) and its rate."""

    threads: int | None
    rt_ms: float | None
    rate: float

    @classmethod
    def of(cls, c: Consumer, topic: str) -> _Pace | None:
        """``c``'s pace on ``topic`` (``None``: its running info has no statistics of it)."""
        status = c.status.get(topic)
        if status is None:
            return None
        rt = status.consume_rt if status.consume_rt > 0 else None
        return cls(consume_threads(c), rt, status.consume_ok_tps)

    def text(self, lag: int) -> str:
        """``; it consumes 8.6 msg/s at 100 ms per message with 1 consume thread: about
        3 min to catch up if nothing more arrives`` (what is known of it)."""
        facts = []
        if self.rt_ms is not None or self.rate > 0:  # else no sample of its statistics yet
            facts.append(f"consumes {rate_text(self.rate)} msg/s")
        if self.rt_ms is not None:
            facts.append(f"at {rt_text(self.rt_ms)}")
        if self.threads is not None:
            facts.append(f"{'with ' if facts else 'runs '}{plural(self.threads, 'consume thread')}")
        text = f"; it {' '.join(facts)}" if facts else ""
        if self.rate > 0:
            catch_up = duration_text(int(lag / self.rate * 1000))
            text += f": about {catch_up} to catch up if nothing more arrives"
        return text


def _causes(mine: _Pace, peers: list[_Pace], held: int, orderly: bool, one: bool) -> list[str]:
    """What differs from ``peers`` (``one``: a single peer), as fixes: fewer consume threads
    (an orderly consumer uses at most one per queue it holds, ``held``), a slower listener."""
    on_peers = "on its peer" if one else "on its peers"
    threads = [p.threads for p in peers if p.threads is not None]
    rts = [p.rt_ms for p in peers if p.rt_ms is not None]
    out = []
    useful = min(max(threads, default=0), held) if orderly else max(threads, default=0)
    if mine.threads is not None and mine.threads < useful:
        cause = (
            f"it runs {plural(mine.threads, 'consume thread')} against {max(threads)} "
            f"{on_peers}: raise its consumeThreadMin to {useful} (consumeThreadMax adds none: "
            "the pool's queue is unbounded"
            + (f"; orderly, it uses at most one per queue it holds, {held})" if orderly else ")")
        )
        if mine.rt_ms is not None:
            cause += (
                f"; at {rt_text(mine.rt_ms)}, {useful} threads consume about "
                f"{rate_text(useful * 1000 / mine.rt_ms)} msg/s, as long as a message takes no "
                "longer when more run at once (a listener waiting on I/O; not one using the CPU)"
            )
        out.append(cause)
    if mine.rt_ms is not None and rts and mine.rt_ms > SLOWER_RT * max(rts):
        out.append(
            f"its listener takes {rt_text(mine.rt_ms)} against {rt_text(max(rts))} {on_peers}: "
            "find what it waits for on that host (a thread dump of its "
            "ConsumeMessageThread_* threads, its GC log, the host's load)"
        )
    return out


def _pace(
    ctx: TopicContext, top: Consumer, lag: int, held: int, peers: list[Consumer]
) -> tuple[str, str]:
    """What the running info says of how ``top`` (holding ``held`` queues) consumes next to
    ``peers`` (the text added to the message, empty when it says nothing), and the fix for
    that cause."""
    pop = _pop_instead(ctx, [top, *peers])
    mine = _Pace.of(top, ctx.topic)
    if mine is None:
        return "", GENERIC_HINT + pop
    text = mine.text(lag)
    paces = [p for p in (_Pace.of(c, ctx.topic) for c in peers) if p is not None]
    rts = [p.rt_ms for p in paces if p.rt_ms is not None]
    threads = [p.threads for p in paces if p.threads is not None]
    if not rts and not threads:
        return text, GENERIC_HINT + pop
    one = len(peers) == 1
    seen = []
    if rts:
        seen.append(f"{'' if len(rts) == 1 else 'at most '}{rt_text(max(rts))}")
    if threads:
        seen.append(plural(max(threads), "thread"))
    ids = id_text([p.client_id for p in peers], 3)
    text += f"; {'its peer' if one else 'its peers'} ({ids}): {', '.join(seen)}"
    causes = _causes(mine, paces, held, is_orderly(top), one)
    if causes:
        return text, "; ".join(causes) + pop
    return text, (
        f"it consumes as fast as {'its peer' if one else 'its peers'}, so more messages arrive "
        "on its queues than on theirs (hot message keys, or a producer's queue selector): "
        f"spread the keys, or add queues{pop}"
    )


def _pop_instead(ctx: TopicContext, holders: list[Consumer]) -> str:
    """Where the brokers balance every holder and serve the topic by PULL (5.x), the other
    way out: serve it by POP, so that every client pops every queue and the faster ones take
    what a slow one cannot (seen on the real 5.1.4 kit: by PULL a client of one thread at
    50 ms a message held its 1,181 messages of lag for minutes; switched to POP, that lag
    was gone within 8 s, and of 3,000 messages sent next about 2,750 went to its peer, all
    consumed within about 20 s). Not for orderly clients: POP gives a queue's messages to
    any client."""
    g = ctx.g
    if ctx.shared or any(
        g.balanced_by(c.client_id) is not Rebalance.BROKER or is_orderly(c) for c in holders
    ):
        return ""
    return (
        f"; or, since the brokers balance {g.name}, have them serve {ctx.topic} by POP "
        f"(mqadmin setConsumeMode -c {cluster_name(g.snapshot)} -t {ctx.topic} -g {g.name} "
        "-m POP -q 0): every client then pops every queue, and the faster ones take what a "
        "slow one cannot, at the price of any order within a queue"
    )


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
    consumers = {c.client_id: c for c in g.consumers}
    peers = [consumers[cid] for cid in holdings if cid != top and holdings[cid]]
    pace, hint = _pace(ctx, consumers[top], per[top], len(holdings[top]), peers)
    return [
        Finding(
            Code.LAG_SKEW,
            Severity.warning,
            g.name,
            f"{top} holds {per[top]:,} of the {total:,} messages of lag on {ctx.topic} "
            f"({percent(per[top], total)}) with {len(holdings[top])} of "
            f"{plural(len(ctx.mq_all), 'queue')}{basis}{pace}",
            hint,
            topic=ctx.topic,
            consumers=(top,),
            queues=tuple(lagging),
        )
    ]
