"""BROADCAST_LAG: a client of a BROADCASTING group is behind on a topic.

In BROADCASTING every client consumes every message of the topic itself and keeps its own
offsets (``LocalFileOffsetStore``, on its disk): no broker has the group's progress, and
the others cannot take a slow client's share. A client's lag is what its running info
says it has yet to consume: over the queues it holds, the broker's max offset minus its
commit offset (:func:`rmqlb.diagnose.context.client_lag`).

A client is behind when that lag is at least ``min_lag`` messages (default 1,000), or when
messages wait for it (lag, or pulled messages in its cache) and it consumed none of them for
longer than ``stall_ms`` (judged on its own clock): stalled, an error, even where its lag is
unknown (a client that never finished a message has committed no offset). The finding says
whether its peers keep up (then the client itself is slow: its consume time per message,
``consumeRT``, is compared with theirs) or no client does (the producers outpace each one).

Worked example: ``c1`` and ``c2`` hold the 8 queues of ``T`` (max offsets 400 each);
``c1`` committed 400 on each, ``c2`` 150: ``c2`` is 2,000 messages behind, ``c1`` keeps up.
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqlb.diagnose.context import Mode, TopicContext
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import duration_text, id_text, rate_text, rt_text
from rmqlb.diagnose.rules.health import SHOWN, client_now
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import Consumer


@dataclass(frozen=True, slots=True)
class _Client:
    """One subscribing client with running info, and what it says of it."""

    consumer: Consumer
    lag: int | None  # ``None``: unknown (no commit offset yet, or no max offset)
    cached: int  # pulled messages waiting in its cache
    rate: float | None  # consumeOKTPS of the topic (``None``: not reported)
    rt_ms: float | None  # consumeRT of the topic, ms per message (``None``: not reported)
    idle_ms: int | None  # since it last consumed from a queue that waits (``None``: unknown)
    waiting: tuple[MessageQueue, ...]  # its queues with lag or cached messages
    failing: bool  # its listener failed messages lately (dropped in BROADCASTING)

    def stalled(self, stall_ms: int) -> bool:
        """Messages wait for it and it consumed none of them for longer than ``stall_ms``."""
        return self.idle_ms is not None and self.idle_ms > stall_ms


def _client(
    ctx: TopicContext, c: Consumer, lag: int | None, max_offsets: dict[MessageQueue, int]
) -> _Client:
    status = c.status.get(ctx.topic)
    states = [pq for pq in c.process_queues or () if pq.queue.topic == ctx.topic and not pq.dropped]
    waiting = [
        pq
        for pq in states
        if pq.cached_msg_count > 0 or (pq.lag(max_offsets.get(pq.queue)) or 0) > 0
    ]
    now = client_now(ctx.g.now_ms, c)
    newest = max((pq.last_consume_timestamp for pq in waiting), default=0)
    return _Client(
        c,
        lag,
        sum(pq.cached_msg_count for pq in states),
        status.consume_ok_tps if status is not None else None,
        status.consume_rt if status is not None else None,
        None if now is None or not newest else max(0, now - newest),
        tuple(sorted((pq.queue for pq in waiting), key=queue_sort_key)),
        status is not None and (status.consume_failed_tps > 0 or status.consume_failed_msgs > 0),
    )


def _behind_text(ctx: TopicContext, b: _Client) -> str:
    """``c2 is 2,000 messages behind (consumes 3.3 msg/s, 302 ms per message: about 10 min
    to catch up if nothing more arrives)``."""
    cid = b.consumer.client_id
    if b.idle_ms is not None and b.stalled(ctx.g.options.stall_ms):
        queues = plural(len(b.waiting), "queue")
        if b.lag is None:
            return (
                f"{cid} has consumed nothing from its {queues} for {duration_text(b.idle_ms)} "
                f"although {plural(b.cached, 'pulled message')} "
                f"{'waits' if b.cached == 1 else 'wait'} in its cache (its lag is unknown: it "
                "has committed no offset yet)"
            )
        return (
            f"{cid} is {plural(b.lag, 'message')} behind and has consumed nothing from its "
            f"{queues} that wait for {duration_text(b.idle_ms)}"
        )
    if b.lag is None:  # not reached: only a stalled client is behind without a known lag
        return f"{cid} is behind"
    facts: list[str] = []
    if b.rate is not None:
        facts.append(f"consumes {rate_text(b.rate)} msg/s")
    if b.rt_ms is not None and b.rt_ms > 0:
        facts.append(rt_text(b.rt_ms))
    said = ", ".join(facts)
    if b.rate:
        catch_up = duration_text(int(b.lag / b.rate * 1000))
        said += f": about {catch_up} to catch up if nothing more arrives"
    return f"{cid} is {plural(b.lag, 'message')} behind" + (f" ({said})" if said else "")


def check_broadcast_lag(ctx: TopicContext) -> list[Finding]:
    """BROADCAST_LAG for the topic of a BROADCASTING group when a client is behind."""
    g = ctx.g
    if g.mode is not Mode.BROADCASTING or ctx.retry:
        return []
    max_offsets = {o.queue: o.broker_offset for o in g.group.offsets if o.queue.topic == ctx.topic}
    known: dict[str, _Client] = {}
    for c, lag in zip(g.consumers, ctx.actual_lag, strict=True):
        cid = c.client_id
        if c.process_queues is not None and cid in ctx.subscribers and cid not in known:
            known[cid] = _client(ctx, c, lag, max_offsets)
    limit, stall = g.options.min_lag, g.options.stall_ms
    behind = sorted(
        (k for k in known.values() if (k.lag or 0) >= limit or k.stalled(stall)),
        key=lambda k: (-(k.lag or 0), java_key(k.consumer.client_id)),
    )
    if not behind:
        return []
    # a client whose listener fails is not up to date, it drops (CONSUME_FAILING says so)
    late = {id(b) for b in behind}
    keeping = [k for k in known.values() if k.lag is not None and id(k) not in late]
    keeping = [k for k in keeping if not k.failing]
    stalled = [b for b in behind if b.stalled(stall)]
    shown = "; ".join(_behind_text(ctx, b) for b in behind[:SHOWN])
    more = f"; and {len(behind) - SHOWN} more" if len(behind) > SHOWN else ""
    if keeping:
        rts = [k.rt_ms for k in keeping if k.rt_ms is not None]
        peers = id_text([k.consumer.client_id for k in keeping], SHOWN)
        rt = ""
        if rts:
            rt = f", {'' if len(rts) == 1 else 'at most '}{rt_text(max(rts))}"
        keeps = "consumer keeps" if len(keeping) == 1 else "consumers keep"
        others = f"; {len(keeping)} other {keeps} up ({peers}: under {limit:,} behind{rt})"
    else:
        others = (
            "; no consumer of the topic keeps up: the producers send faster than each "
            "client consumes"
        )
    message = (
        f"{len(behind)} of {len(known)} consumers of {g.name} "
        f"{'is' if len(behind) == 1 else 'are'} behind on {ctx.topic}: {shown}{more}{others}; "
        "in BROADCASTING each client consumes every message itself, so the others cannot "
        "take its share, and its offsets are its own (no broker has them)"
    )
    if stalled:
        hint = (
            "take a thread dump of the stalled client (jstack <pid>: a listener blocked on I/O "
            "or a lock shows in the ConsumeMessageThread_* threads) and read its GC log; "
        )
        if any(b.lag is None for b in stalled):
            hint += (
                "a client that has committed no offset starts where its consumeFromWhere says "
                "when restarted (CONSUME_FROM_LAST_OFFSET, the default: the newest message, "
                "skipping what waits), so fix what blocks it rather than restart it blind"
            )
        else:
            hint += (
                "restarted, it resumes from its own offsets "
                "(~/.rocketmq_offsets/<clientId>/<group>/offsets.json, written every 5 s)"
            )
    elif keeping:
        hint = (
            "find why that client is slower than its peers: its consume time per message "
            "(consumeRT), its host's load and GC pauses, its consumeThreadMin/Max; adding "
            "consumers does not help in BROADCASTING (each one consumes everything)"
        )
    else:
        hint = (
            "speed the listener up or raise consumeThreadMin/Max on every client; if each "
            "message needs processing once per group rather than once per client, consume in "
            "CLUSTERING, which splits the queues among the clients"
        )
    return [
        Finding(
            Code.BROADCAST_LAG,
            Severity.error if stalled else Severity.warning,
            g.name,
            message,
            hint,
            topic=ctx.topic,
            consumers=tuple(b.consumer.client_id for b in behind),
            queues=tuple(sorted({q for b in behind for q in b.waiting}, key=queue_sort_key)),
        )
    ]
