"""QUEUE_STALLED: queues nobody is known to hold whose committed offset stood still between
two polls while messages waited there, as the group consumed the topic's other queues.
A queue never committed at either poll stood still too: a client that takes a queue commits
its starting offset within 5 s, even with nothing to consume.

Where the clients' held queues are not known (remoting clients connected through a Proxy,
which relays no running-info request; pull consumers whose running info lists no queue;
clients whose running info could not be read), the
offsets of two polls still tell a queue nobody consumes from a slow one: the earlier poll
is at least ``stall_ms`` (60 s) older (:class:`~rmqlb.diagnose.context.PollHistory`), the
messages already waited then, and a push consumer commits every 5 s. That the topic's other
queues advanced meanwhile says the group itself consumes, so the queue is left out: its
holder does not consume it (stopped, stuck on a message), or nobody holds it (a client
running another strategy than its group's leaves some queues to nobody and takes others
twice). Only for groups whose clients balance themselves (CLUSTERING): a broker or a Proxy
that assigns the queues says who holds them, or pops any.
"""

from __future__ import annotations

from rmqlb.diagnose.balance import through_proxy_remoting
from rmqlb.diagnose.context import Mode, TopicContext
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import id_text, queue_text
from rmqlb.humanize import plural
from rmqlb.model.queue import MessageQueue


def check_stalled_queues(ctx: TopicContext) -> list[Finding]:
    """QUEUE_STALLED for the topic's queues of unknown holder that did not advance."""
    g = ctx.g
    earlier = g.options.earlier
    if earlier is None or g.mode is not Mode.CLUSTERING or ctx.offsets is None:
        return []
    before = earlier.offsets.get(g.name)
    if not before or ctx.actual_known:
        return []
    stalled: list[int] = []
    advanced = 0
    for i, (mq, now) in enumerate(zip(ctx.mq_all, ctx.offsets, strict=True)):
        then = before.get(mq)
        if now is None or then is None:
            continue
        if now.consumer_offset > then.consumer_offset:
            advanced += 1
        elif now.consumer_offset == then.consumer_offset and then.lag > 0 and ctx.holder[i] is None:
            stalled.append(i)  # (never committed at either: a holder commits within 5 s)
    if not stalled or not advanced:
        return []
    then_waiting = sum(o.lag for o in (before.get(ctx.mq_all[i]) for i in stalled) if o is not None)
    return [_finding(ctx, stalled, advanced, then_waiting, earlier.captured_ms)]


def _finding(
    ctx: TopicContext, stalled: list[int], advanced: int, then_waiting: int, then_ms: int
) -> Finding:
    g = ctx.g
    now_ms = g.now_ms
    queues = [ctx.mq_all[i] for i in stalled]
    waiting = sum(lag or 0 for lag in (ctx.lag[i] for i in stalled)) if ctx.lag else 0
    one = len(queues) == 1
    it, its = ("it", "its") if one else ("them", "their")
    apart = f" {(now_ms - then_ms) // 1000:,} s apart" if now_ms is not None else ""
    owners: dict[str, list[MessageQueue]] = {}
    for i in stalled:
        owner = ctx.owner[i]
        if owner is not None:
            owners.setdefault(owner, []).append(ctx.mq_all[i])
    expected = ""
    if owners:
        parts = [f"{queue_text(qs, 4)} to {cid}" for cid, qs in owners.items()]
        assumed = " (assumed: no client reported its strategy)"
        by = g.strategy_label + (assumed if g.strategy_source == "default" else "")
        expected = f"; {by} gives {'; '.join(parts)}"
    start = f"the logs of the clients of {g.name}"
    if owners:
        holders = "holder" if len(owners) == 1 else "holders"
        start = f"the log of {its} expected {holders} ({id_text(owners, 4)})"
    unknown = [c for c in g.consumers if c.assigned is None]
    why = "the running info of some clients was not captured"
    if unknown and all(map(through_proxy_remoting, unknown)):
        why = "they connect through a Proxy, which relays no running-info request"
    elif unknown and all(c.queues_unreported for c in unknown):
        why = "they are pull consumers whose running info lists no queue"
    return Finding(
        Code.QUEUE_STALLED,
        Severity.error,
        g.name,
        f"{plural(len(queues), 'queue')} of {ctx.topic} ({queue_text(queues, 4)}) did not "
        f"advance between two polls{apart}, though {then_waiting:,} messages waited there "
        f"already at the first ({waiting:,} now), while the group consumed "
        f"{plural(advanced, 'other queue')} "
        f"of the topic: nobody consumes {it}. Who holds {it} is not known ({why}){expected}",
        f"find what holds {queue_text(queues, 4)} and why {'it does' if one else 'they do'} "
        f"not consume {it}: start with {start}; a client "
        "running another strategy than the rest of the group leaves some queues to nobody "
        f"and takes others twice: compare the allocateMessageQueueStrategy of every client "
        f"of {g.name}",
        topic=ctx.topic,
        consumers=tuple(owners),
        queues=tuple(queues),
    )
