"""Holder health, from the clients' running info: CONSUMER_STALLED, FLOW_CONTROLLED,
CONSUME_FAILING and ORDERLY_LOCK_LOST; and POP_RETRY_TOO_LONG.

A push client reports, for every queue it holds, its process-queue state (cached messages,
the offset it would commit, when it last pulled, consumed and locked the queue, on its own
clock) and, per topic, its consume statistics of the last minute. One snapshot cannot show
that an offset *stands still*; what it can show, the rules use:

- the client's last pull / consume / lock times against the capture time (``capturedAt``),
  or against the client's newest timestamp when its clock runs ahead, or behind while it
  reports a consume rate: a stall is judged on the client's own clock;
- the queue's lag from the broker's offsets;
- the client's in-memory commit offset against the broker's committed one: a client that
  made progress since its last commit (every 5 s) holds a greater offset than the broker.

Java facts behind the thresholds (4.9.x ``DefaultMQPushConsumerImpl``, ``ProcessQueue``):
a pull is re-run every 50 ms while the queue is flow controlled and every 3 s after an
error, each run refreshing the last pull time, so a queue with lag whose last pull is more
than ``pullInterval`` + one minute old has a stopped pull loop; flow control starts when the
cached count exceeds ``pullThresholdForQueue`` (default 1000) or the cached size exceeds
``pullThresholdSizeForQueue`` (default 100 MiB); an orderly client consumes a queue only
while it holds the broker lock and renewed it less than 30 s ago
(``rocketmq.client.rebalance.lockMaxLiveTime``); the broker frees a lock 60 s after its last
renewal (``rocketmq.broker.rebalance.lockMaxLiveTime``) and drops a client whose channel is
silent for 120 s.

Worked example: a client holds ``broker-a:0`` with 5,000 messages of lag, its last pull 5
minutes before the capture and its commit offset equal to the broker's: CONSUMER_STALLED
(pull loop stopped). Another caches 1,032 messages of ``broker-a:1`` with the default
threshold of 1000: FLOW_CONTROLLED.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rmqlb.diagnose.context import Mode, TopicContext, errors_about, pops_topic
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import duration_text, id_text, queue_text, rate_text
from rmqlb.diagnose.rules.deadletters import dead_letter_fix
from rmqlb.diagnose.rules.waiting import waiting_text
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import (
    DLQ_PREFIX,
    RETRY_PREFIX,
    V5_0_0,
    V5_1_0,
    Consumer,
    ProcessQueueState,
    Rebalance,
    pop_retry_topic,
)

PULL_THRESHOLD_FOR_QUEUE = 1000
PULL_THRESHOLD_SIZE_FOR_QUEUE_MIB = 100
CLIENT_LOCK_MAX_LIVE_MS = 30_000
BROKER_LOCK_MAX_LIVE_MS = 60_000
DEFAULT_MAX_RECONSUME_TIMES = 16
#: A 5.x push client that pops acknowledges (drops) a message it failed more than
#: maxReconsumeTimes times once it is older than twice its longest ``popDelayLevel``, 2 h
#: (``ConsumeMessagePopConcurrentlyService.checkNeedAckOrDelay``, 5.0 and 5.1).
POP_DROP_AGE_MS = 2 * 7200 * 1000
PROP_CONSUME_ORDERLY = "PROP_CONSUMEORDERLY"  # sic: ConsumerRunningInfo.PROP_CONSUME_ORDERLY
PROP_THREADPOOL_CORE_SIZE = "PROP_THREADPOOL_CORE_SIZE"
SHOWN = 3  # clients described one by one in a message


def int_property(c: Consumer, name: str) -> int | None:
    """An integer running-info property of ``c`` (``None``: absent or not a number)."""
    raw = c.properties.get(name)
    if raw is None:
        return None
    try:
        return int(raw.strip())
    except ValueError:
        return None


def is_orderly(c: Consumer) -> bool:
    """Whether ``c`` consumes orderly (``consumeOrderly`` or its running-info property)."""
    return bool(c.consume_orderly) or c.properties.get(PROP_CONSUME_ORDERLY) == "true"


def _held_states(c: Consumer, topic: str) -> list[ProcessQueueState]:
    """``c``'s process queues of ``topic`` that are still in use (not dropped)."""
    return [pq for pq in c.process_queues or () if pq.queue.topic == topic and not pq.dropped]


def consume_rate(c: Consumer) -> float:
    """The client's consumeOKTPS over every topic it reports (0: none reported)."""
    return sum(st.consume_ok_tps for st in c.status.values())


def client_now(now_ms: int | None, c: Consumer) -> int | None:
    """The reference time for the client's own timestamps: the capture time, or the client's
    newest timestamp (any queue it holds) when its clock runs ahead of the capturing host's,
    or behind it while the client shows it consumes (a consume rate above zero): its newest
    pull or consume then happened just now on its own clock."""
    if now_ms is None:
        return None
    newest = max(
        (
            max(pq.last_pull_timestamp, pq.last_consume_timestamp, pq.last_lock_timestamp)
            for pq in c.process_queues or ()
            if not pq.dropped
        ),
        default=0,
    )
    if newest > now_ms or (newest > 0 and consume_rate(c) > 0):
        return newest
    return now_ms


def _lag_of(ctx: TopicContext, mq: MessageQueue) -> int | None:
    if ctx.lag is None:
        return None
    i = ctx.index(mq)
    return None if i is None else ctx.lag[i]


def _lock_lost(pq: ProcessQueueState, now: int | None) -> bool:
    """The client does not consume this orderly queue: not locked, or its lock not renewed
    for longer than the client's 30 s (``ProcessQueue.isLockExpired``)."""
    if not pq.locked:
        return True
    return (
        now is not None
        and pq.last_lock_timestamp > 0
        and (now - pq.last_lock_timestamp > CLIENT_LOCK_MAX_LIVE_MS)
    )


def _with_states(ctx: TopicContext) -> Iterator[tuple[Consumer, list[ProcessQueueState]]]:
    """Each distinct subscribing client of the topic that reported process queues for it."""
    seen: set[str] = set()
    for c in ctx.g.consumers:
        if c.process_queues is None or c.client_id in seen or c.client_id not in ctx.subscribers:
            continue
        seen.add(c.client_id)
        states = _held_states(c, ctx.topic)
        if states:
            yield c, states


# -- CONSUMER_STALLED ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Stall:
    """A client's stalled queues of one topic, and the words for them."""

    client_id: str
    text: str
    queues: tuple[MessageQueue, ...]
    silent: bool
    #: A pull consumer: its application takes messages by poll(), not a listener.
    pulls: bool = False


def _silent_stall(ctx: TopicContext, c: Consumer) -> _Stall | None:
    """A client that did not answer while the queues it should hold (and nobody else does)
    have lag."""
    if ctx.expected is None or ctx.lag is None:
        return None
    errors = errors_about(ctx.g.snapshot, c)
    if not errors:
        return None
    waiting: list[MessageQueue] = []
    lag = 0
    for mq in ctx.expected.get(c.client_id, ()):
        i = ctx.index(mq)
        if i is None or ctx.holder[i] is not None:
            continue
        queue_lag = ctx.lag[i] or 0
        if queue_lag > 0:
            waiting.append(mq)
            lag += queue_lag
    if not waiting:
        return None
    reason = "; ".join(dict.fromkeys(f"{e.request}: {e.message}" for e in errors))
    return _Stall(
        c.client_id,
        f"{c.client_id} did not answer ({reason}) while the "
        f"{plural(len(waiting), 'queue')} it should hold and nobody else holds "
        f"({queue_text(waiting, 4)}) have {lag:,} messages of lag",
        tuple(waiting),
        True,
    )


def _running_stall(
    ctx: TopicContext, c: Consumer, states: list[ProcessQueueState]
) -> _Stall | None:
    """A client whose pull loop or consumption stopped on queues with lag."""
    now = client_now(ctx.g.now_ms, c)
    if now is None:
        return None
    stall = ctx.g.options.stall_ms
    interval = max(0, int_property(c, "pullInterval") or 0)
    orderly = is_orderly(c)
    unpulled: list[tuple[MessageQueue, int, int]] = []
    unconsumed: list[tuple[MessageQueue, int, int]] = []
    for pq in states:
        lag = _lag_of(ctx, pq.queue)
        if not lag:
            continue
        offset = ctx.offset(pq.queue)
        if offset is not None and max(pq.commit_offset, 0) > max(offset.consumer_offset, 0):
            continue  # the client got further than the broker knows: it moves
        if pq.last_pull_timestamp > 0 and now - pq.last_pull_timestamp > interval + stall:
            unpulled.append((pq.queue, now - pq.last_pull_timestamp, lag))
        elif (
            pq.cached_msg_count > 0
            and pq.last_consume_timestamp > 0
            and now - pq.last_consume_timestamp > stall
            and not (orderly and _lock_lost(pq, now))  # ORDERLY_LOCK_LOST says why
        ):
            unconsumed.append((pq.queue, now - pq.last_consume_timestamp, pq.cached_msg_count))
    parts: list[str] = []
    if unpulled:
        oldest = max(age for _, age, _ in unpulled)
        lag = sum(v for _, _, v in unpulled)
        parts.append(
            f"has not pulled {len(unpulled)} of its {plural(len(states), 'queue')} of "
            f"{ctx.topic} for up to {duration_text(oldest)} "
            f"({queue_text([q for q, _, _ in unpulled], 4)}; pullInterval {interval} ms) "
            f"although they have {lag:,} messages of lag and its commit offsets are no further "
            "than the broker's"
        )
    if unconsumed:
        oldest = max(age for _, age, _ in unconsumed)
        cached = sum(v for _, _, v in unconsumed)
        taken = (
            "has given its application nothing through poll()"
            if c.pulls_actively
            else "has consumed nothing"
        )
        parts.append(
            f"{taken} from {plural(len(unconsumed), 'queue')} for up to "
            f"{duration_text(oldest)} although {cached:,} pulled messages wait in its cache "
            f"({queue_text([q for q, _, _ in unconsumed], 4)})"
        )
    if not parts:
        return None
    queues = tuple(sorted({q for q, _, _ in unpulled + unconsumed}, key=queue_sort_key))
    rate = consume_rate(c)
    elsewhere = (
        f", while it consumes {rate_text(rate)} msg/s from its other queues (judged on its "
        "own clock)"
        if rate > 0
        else ""
    )
    text = f"{c.client_id} {' and '.join(parts)}{elsewhere}"
    return _Stall(c.client_id, text, queues, False, pulls=c.pulls_actively)


def _stalled(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    stalls: list[_Stall] = []
    seen: set[str] = set()
    for c in g.consumers:
        cid = c.client_id
        if cid in seen:
            continue
        if cid not in ctx.subscribers and (cid not in g.pullers or not _held_states(c, ctx.topic)):
            continue  # (a pull consumer also reads the queues its application assign()s)
        seen.add(cid)
        if c.assigned is None:
            found = _silent_stall(ctx, c)
        else:
            states = _held_states(c, ctx.topic)
            if not states:
                continue
            found = _running_stall(ctx, c, states)
        if found is not None:
            stalls.append(found)
    if not stalls:
        return []
    ids = [s.client_id for s in stalls]
    shown = "; ".join(s.text for s in stalls[:SHOWN])
    more = f"; and {len(stalls) - SHOWN} more" if len(stalls) > SHOWN else ""
    silent = any(s.silent for s in stalls)
    running = any(not s.silent for s in stalls)
    broker = []
    if silent:
        broker.append(
            "the broker keeps listing a silent client until its channel has been quiet for "
            "about 120 s, and its queues wait for it meanwhile"
        )
    if running and all(s.client_id not in ctx.subscribers for s in stalls if not s.silent):
        broker.append(
            "no rebalance moves the queues a pull consumer assign()s, so nobody else reads them "
            "meanwhile"
        )
    elif running:
        broker.append(
            "a client that still sends heartbeats stays in the consumer list, so the broker "
            "never hands its queues to the others"
        )
    basis = (
        " (one snapshot: rmqlb compares the client's last pull and consume times, on its own "
        "clock, with the capture time)"
        if running
        else ""
    )
    hint = (
        "take a thread dump of the client (jstack <pid>: a listener blocked on I/O or a lock "
        "shows in the ConsumeMessageThread_* threads, a stuck pull loop in PullMessageService) "
        "and read its GC log for long pauses; restarting it hands its queues to the other "
        "consumers at their next rebalance"
    )
    if running and all(s.pulls for s in stalls if not s.silent):
        hint = _pull_stall_hint(ctx, [s for s in stalls if not s.silent])
    if silent:
        hint += "; a frozen process (GC pause, SIGSTOP, a hung host) answers no request at all"
    queues = sorted({q for s in stalls for q in s.queues}, key=queue_sort_key)
    return [
        Finding(
            Code.CONSUMER_STALLED,
            Severity.error,
            g.name,
            f"{len(stalls)} of {plural(len(seen), 'consumer')} of {ctx.topic} "
            f"{'is' if len(stalls) == 1 else 'are'} stalled: {shown}{more}; "
            f"{'; '.join(broker)}{basis}",
            hint,
            topic=ctx.topic,
            consumers=tuple(ids),
            queues=tuple(queues),
        )
    ]


def _pull_stall_hint(ctx: TopicContext, stalls: list[_Stall]) -> str:
    """The fix of pull consumers whose application stopped taking what they pulled."""
    assigning = [s.client_id for s in stalls if s.client_id not in ctx.subscribers]
    restart = (
        "restarted, it reads the queues its application assign()s from their committed offsets"
        if assigning
        else "restarting it hands its queues to the other consumers at their next rebalance"
    )
    return (
        "take a thread dump of the client (jstack <pid>): the application thread that calls "
        "poll() shows where it is stuck (a pull consumer pulls ahead into its cache, up to "
        "pullThresholdForQueue, and waits there until poll() takes it), and read its GC log "
        f"for long pauses; {restart}"
    )


# -- FLOW_CONTROLLED -------------------------------------------------------------------------


def consume_threads(c: Consumer) -> int | None:
    """The threads of its consume pool (its core size, or consumeThreadMin; ``None``:
    not reported)."""
    return int_property(c, PROP_THREADPOOL_CORE_SIZE) or int_property(c, "consumeThreadMin")


def _flow_controlled(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    parts: list[str] = []
    ids: list[str] = []
    queues: list[MessageQueue] = []
    threads_seen: list[int] = []
    for c, states in _with_states(ctx):
        count_limit = int_property(c, "pullThresholdForQueue")
        size_limit = int_property(c, "pullThresholdSizeForQueue")
        count_text = f"{count_limit:,}" if count_limit is not None else "1,000 (default)"
        size_text = f"{size_limit:,}" if size_limit is not None else "100 (default)"
        count_limit = PULL_THRESHOLD_FOR_QUEUE if count_limit is None else count_limit
        size_limit = PULL_THRESHOLD_SIZE_FOR_QUEUE_MIB if size_limit is None else size_limit
        full = [
            pq
            for pq in states
            if pq.cached_msg_count > count_limit or pq.cached_msg_size_mib > size_limit
        ]
        if not full:
            continue
        ids.append(c.client_id)
        mine = [pq.queue for pq in full]
        queues.extend(mine)
        if len(parts) >= SHOWN:
            continue
        cached = sum(pq.cached_msg_count for pq in full)
        size = sum(pq.cached_msg_size_mib for pq in full)
        by_size = any(pq.cached_msg_size_mib > size_limit for pq in full)
        limit = (
            f"pullThresholdSizeForQueue {size_text} MiB"
            if by_size and not any(pq.cached_msg_count > count_limit for pq in full)
            else f"pullThresholdForQueue {count_text}"
        )
        text = (
            f"{c.client_id} caches {cached:,} messages ({size:,} MiB) on "
            f"{len(full)} of its {plural(len(states), 'queue')} ({queue_text(mine, 4)}), "
            f"over {limit}"
        )
        lag = sum(_lag_of(ctx, mq) or 0 for mq in mine)
        status = c.status.get(ctx.topic)
        threads = consume_threads(c)
        if threads:
            threads_seen.append(threads)
        if status is not None and (status.consume_ok_tps or status.pull_tps):
            rate = (
                f"; it pulls {rate_text(status.pull_tps)} msg/s and consumes "
                f"{rate_text(status.consume_ok_tps)} msg/s"
            )
            if status.consume_rt > 0:
                rate += f" at {status.consume_rt:,.0f} ms a message"
                if threads:
                    capacity = threads * 1000 / status.consume_rt
                    rate += (
                        f" with {threads} consume threads (at most about "
                        f"{rate_text(capacity)} msg/s)"
                    )
            if lag and status.consume_ok_tps > 0:
                rate += (
                    f"; the {lag:,} messages of lag there take about "
                    f"{duration_text(int(lag / status.consume_ok_tps * 1000))} at that rate "
                    "even if producers stopped now"
                )
            text += rate
        elif lag:
            text += f"; {lag:,} messages of lag wait on those queues"
        parts.append(text)
    if not ids:
        return []
    more = f"; and {len(ids) - len(parts)} more" if len(ids) > len(parts) else ""
    now = f"now {threads_seen[0]}" if threads_seen else "default 20"
    return [
        Finding(
            Code.FLOW_CONTROLLED,
            Severity.warning,
            g.name,
            f"{plural(len(ids), 'consumer')} of {ctx.topic} {'is' if len(ids) == 1 else 'are'} "
            f"flow controlled: {'; '.join(parts)}{more}; a client stops pulling a queue whose "
            "cache is full until it drains, so these consumers are slower than the producers",
            f"make the consumer faster: more consume threads (consumeThreadMin, {now}; "
            "consumeThreadMax adds none, the pool's queue is unbounded), a faster listener "
            "(look at its consume time), or more consumers with at least as many queues as "
            "consumers; raising pullThresholdForQueue only buys memory, not speed",
            topic=ctx.topic,
            consumers=tuple(ids),
            queues=tuple(sorted(set(queues), key=queue_sort_key)),
        )
    ]


# -- CONSUME_FAILING --------------------------------------------------------------------------


def _max_reconsume(c: Consumer) -> int:
    """How often a concurrently consuming client retries a message (-1 means 16)."""
    times = int_property(c, "maxReconsumeTimes")
    return DEFAULT_MAX_RECONSUME_TIMES if times is None or times == -1 else times


def _failing_text(c: Consumer, tps: float, hour: int) -> str:
    """``ID 1.2 failed/s, 71 failed in the last hour``. A client counts the hour from samples
    it takes every 10 minutes (``consumeFailedMsgs``: Java's ``getStatsDataInHour``), so
    failures younger than its last sample are not in it yet: a 0 next to a failure rate is
    left out rather than printed as "0 failed"."""
    counted = f", {hour:,} failed in the last hour" if hour else ""
    return f"{c.client_id} {rate_text(tps)} failed/s{counted}"


def _came_back(ctx: TopicContext) -> tuple[str, bool] | None:
    """What the group's POP retry topic of the topic shows: the text of the messages that
    came back through it, and whether some came back lately (lag in it, or one popped
    within ``recent_ms`` of the capture). ``None``: the group does not pop the topic, or
    nothing came back.

    The brokers put a popped message that was not acknowledged within its invisible time
    into that topic (``PopReviveService``), and every POP request of the topic pops it
    too; its max offsets count what came back since it was created."""
    g = ctx.g
    if ctx.retry or not g.pops(ctx.topic):
        return None
    retry = pop_retry_topic(ctx.topic, g.name)
    offsets = [o for o in g.group.offsets if o.queue.topic == retry]
    stored: dict[str, int] = {}
    for o in offsets:
        stored[o.queue.broker_name] = stored.get(o.queue.broker_name, 0) + o.broker_offset
    total = sum(stored.values())
    if not total:
        return None
    lag = sum(o.lag for o in offsets)
    newest = max(o.last_timestamp for o in offsets)
    ago = None if g.now_ms is None or not newest else max(0, g.now_ms - newest)
    per_broker = ", ".join(
        f"{broker} {n:,}" for broker, n in sorted(stored.items(), key=lambda kv: java_key(kv[0]))
    )
    text = (
        f"{'at least ' if g.offsets_unknown else ''}{total:,} "
        f"{'message' if total == 1 else 'messages'} came back (one per return) through "
        f"{retry}, its POP retry topic of {ctx.topic} ({per_broker}), since the brokers "
        "created it"
    )
    if ago is not None:
        text += f"; the last one popped was stored {duration_text(ago)} before the capture"
    if lag:
        text += f"; {lag:,} wait there to be popped"
    return text, lag > 0 or (ago is not None and ago <= g.options.recent_ms)


#: The longest topic name, in UTF-8 bytes, a 5.0 broker stores a message in (its commit log
#: writes the length in one byte; ``HookUtils`` refuses longer ones as MESSAGE_ILLEGAL).
MAX_TOPIC_BYTES_5_0 = 127


def _retry_too_long(ctx: TopicContext) -> list[Finding]:
    """POP_RETRY_TOO_LONG: the group pops the topic, and a 5.0 broker of it cannot store a
    message in the group's POP retry topic, whose name is too long: a popped message that
    is not acknowledged in time never comes back (``PopReviveService.reviveRetry`` fails on
    it, and the revive does not move past it: nor does it for the other groups' checkpoints
    behind it on that revive queue)."""
    g = ctx.g
    retry = pop_retry_topic(ctx.topic, g.name)
    size = len(retry.encode("utf-8"))
    if size <= MAX_TOPIC_BYTES_5_0 or ctx.retry or ctx.route is None or not g.pops(ctx.topic):
        return []
    brokers = sorted(
        {
            qd.broker_name
            for qd in ctx.route.queue_datas
            if (info := g.snapshot.brokers.get(qd.broker_name)) is not None
            and info.version is not None
            and V5_0_0 <= info.version < V5_1_0
        },
        key=java_key,
    )
    if not brokers:
        return []
    over = size - MAX_TOPIC_BYTES_5_0
    return [
        Finding(
            Code.POP_RETRY_TOO_LONG,
            Severity.error,
            g.name,
            f"{g.name} pops {ctx.topic}, and its POP retry topic {retry} is {size} bytes long: "
            f"{plural(len(brokers), 'broker')} of {ctx.topic} ({', '.join(brokers)}) "
            f"{'runs 5.0, which stores' if len(brokers) == 1 else 'run 5.0, which store'} no "
            f"message in a topic of more than {MAX_TOPIC_BYTES_5_0} bytes, so a popped message "
            "that is not acknowledged within its invisible time never comes back: its revive "
            "fails (the broker's pop log says 'revive error') and is tried again without end. "
            "The revive queue it is on moves no further, so what every other group pops on "
            "those brokers stops coming back too wherever its checkpoint lands on such a "
            "queue (a broker spreads checkpoints over its revive queues in turn; rmqlb offsets "
            "CID_RMQ_SYS_REVIVE_GROUP shows the queues whose committed offset stands still)",
            f"shorten the group or the topic name by {over} bytes at least (the group and the "
            f"topic together within {MAX_TOPIC_BYTES_5_0 - len(RETRY_PREFIX) - 1} bytes), or "
            "upgrade those brokers to 5.1 or later, which store such retry topics",
            topic=ctx.topic,
        )
    ]


def _retry_max_times(ctx: TopicContext) -> int:
    """The group's ``retryMaxTimes`` (the greatest its brokers' configs give; 16 unread)."""
    configured = [cfg.retry_max_times for cfg in ctx.g.group.configs.values()]
    return max(configured, default=DEFAULT_MAX_RECONSUME_TIMES)


def _failing(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    failing: list[tuple[Consumer, float, int]] = []
    seen: set[str] = set()
    ok = 0.0
    for c in g.consumers:
        status = c.status.get(ctx.topic)
        if status is None or c.client_id in seen:
            continue
        seen.add(c.client_id)
        ok += status.consume_ok_tps
        if status.consume_failed_tps > 0 or status.consume_failed_msgs > 0:
            failing.append((c, status.consume_failed_tps, status.consume_failed_msgs))
    came_back = _came_back(ctx)
    if not failing:
        return [] if came_back is None or not came_back[1] else [_popped_back(ctx, came_back[0])]
    ids = [c.client_id for c, _, _ in failing]
    shown = "; ".join(_failing_text(c, tps, n) for c, tps, n in failing[:SHOWN])
    more = f"; and {len(failing) - SHOWN} more" if len(failing) > SHOWN else ""
    retry, dlq = RETRY_PREFIX + g.name, DLQ_PREFIX + g.name
    orderly = [c.client_id for c, _, _ in failing if is_orderly(c)]
    popping = [c for c, _, _ in failing if not is_orderly(c) and pops_topic(c, ctx.topic)]
    concurrent = [c for c, _, _ in failing if not is_orderly(c) and not pops_topic(c, ctx.topic)]
    effects: list[str] = []
    broadcasting = g.mode is Mode.BROADCASTING
    if concurrent and broadcasting:
        effects.append(
            "in BROADCASTING a client drops every message its listener fails (its log warns "
            "'BROADCASTING, the message consume failed, drop it' with the message): never "
            f"retried, never sent to {dlq}, and its commit offset moves past it, so no lag "
            "shows it"
        )
    elif concurrent:
        times = sorted({_max_reconsume(c) for c in concurrent})
        limit = " or ".join(str(t) for t in times)
        configured = sorted({cfg.retry_max_times for cfg in g.group.configs.values()})
        note = ""
        if configured and configured != times:
            note = (
                f" (the client's maxReconsumeTimes, sent with every message it returns, "
                f"overrides the group's retryMaxTimes {' / '.join(map(str, configured))} on "
                "the broker since 3.4.9)"
            )
        effects.append(
            f"every failed message goes to {retry} and comes back after a growing delay "
            f"(10 s, 30 s, 1 min ... 2 h), up to {limit} times{note}, then to {dlq}, which "
            "nothing consumes"
        )
    if popping:
        limit = " or ".join(str(t) for t in sorted({_max_reconsume(c) for c in popping}))
        effects.append(
            f"a message a POP client ({id_text([c.client_id for c in popping], SHOWN)}) fails "
            f"comes back through {pop_retry_topic(ctx.topic, g.name)} after a growing delay "
            f"(10 s, 30 s, 1 min ... 2 h), up to {limit} times; after that the client keeps "
            f"retrying it until {duration_text(POP_DROP_AGE_MS)} after it was sent, then "
            f"acknowledges it unconsumed: it is dropped, never sent to {dlq}"
        )
    if orderly:
        held = {mq for c, _, _ in failing if is_orderly(c) for mq in c.assigned or ()}
        lags = {mq: _lag_of(ctx, mq) or 0 for mq in ctx.mq_all if mq in held}
        waiting = {mq: lag for mq, lag in lags.items() if lag > 0}
        stuck = (
            f" (the queues they hold with lag now: {queue_text(list(waiting), 4)}, "
            f"{sum(waiting.values()):,} messages)"
            if waiting
            else ""
        )
        effects.append(
            f"orderly consumers ({id_text(orderly, SHOWN)}) retry a failed message in place "
            "every second (suspendCurrentQueueTimeMillis) and consume nothing behind it on "
            f"that queue{stuck}; with maxReconsumeTimes unset they retry forever"
        )
    retry_lag = [o.lag for o in g.group.offsets if o.queue.topic == retry]
    if retry_lag and not ctx.retry and concurrent:
        effects.append(f"{retry} has {sum(retry_lag):,} messages of lag")
    if came_back is not None:
        effects.append(came_back[0])
    succeed = f" (the group consumes {rate_text(ok)} msg/s successfully)" if ok else ""
    fix = (
        "read the client's log for the exceptions its listener throws or the "
        "RECONSUME_LATER it returns; fix the listener or the data it depends on"
    )
    if concurrent and broadcasting:
        client = ids[0] if len(ids) == 1 else "CLIENT_ID"
        fix += (
            "; nothing brings a dropped message back to that client, but the broker still "
            "stores it (fileReservedTime, 72 h by default): once the listener works, have "
            "the client consume each one again by the msgId its 'drop it' warning gives: "
            f"mqadmin queryMsgById -i MSG_ID -g {g.name} -d {client}"
        )
    elif concurrent:
        fix += f"; then {dead_letter_fix(g.name)}"
    if popping:
        fix += (
            f"; a POP client drops what it failed {duration_text(POP_DROP_AGE_MS)} after it "
            "was sent: find those messages by key or time before then"
        )
    return [
        Finding(
            Code.CONSUME_FAILING,
            Severity.warning,
            g.name,
            f"{len(failing)} of {plural(len(seen), 'consumer')} of {g.name} "
            f"{'fails' if len(failing) == 1 else 'fail'} to consume {ctx.topic}: "
            f"{shown}{more}{succeed}; {'; '.join(effects)}",
            fix,
            topic=ctx.topic,
            consumers=tuple(ids),
        )
    ]


def _popped_back(ctx: TopicContext, came_back: str) -> Finding:
    """CONSUME_FAILING from the POP retry topic alone: no client reports a failure (5.x
    gRPC clients report nothing), yet popped messages keep coming back."""
    g = ctx.g
    dlq = DLQ_PREFIX + g.name
    subscribers = [c for c in g.consumers if c.subscribes(ctx.topic)]
    grpc = not subscribers or any(
        g.balanced_by(c.client_id) is Rebalance.PROXY for c in subscribers
    )
    effects = [
        "A popped message comes back when it is not acknowledged within its invisible "
        "time: its consumer failed it, or took longer than that"
    ]
    if grpc:
        attempts = _retry_max_times(ctx) + 1
        effects.append(
            f"a Proxy delivers a message to gRPC clients at most {attempts} times (the "
            f"group's retryMaxTimes + 1), then forwards it to {dlq}, which nothing consumes"
        )
    if any(pops_topic(c, ctx.topic) for c in subscribers):
        effects.append(
            "a 5.x push client that pops retries a message it failed up to "
            "maxReconsumeTimes (16 unless set) times, then drops it "
            f"{duration_text(POP_DROP_AGE_MS)} after it was sent"
        )
    return Finding(
        Code.CONSUME_FAILING,
        Severity.warning,
        g.name,
        f"messages of {ctx.topic} that {g.name} pops come back unacknowledged: {came_back}. "
        + "; ".join(effects),
        f"find why the consumers of {g.name} do not acknowledge in time: read their logs for "
        "the failures of their listener; a gRPC SimpleConsumer must ack a message within the "
        "invisibleDuration it received it with, or extend it (changeInvisibleDuration)"
        + (f"; then {dead_letter_fix(g.name, push=False)}" if grpc else ""),
        topic=ctx.topic,
        consumers=tuple(dict.fromkeys(c.client_id for c in subscribers)),
    )


# -- ORDERLY_LOCK_LOST ------------------------------------------------------------------------


def _lock_lost_findings(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    parts: list[str] = []
    ids: list[str] = []
    queues: list[MessageQueue] = []
    total_lag = 0
    lag_known = False
    freed = False
    for c, states in _with_states(ctx):
        if not is_orderly(c):
            continue
        now = client_now(g.now_ms, c)
        unlocked = [pq.queue for pq in states if not pq.locked]
        expired = [pq for pq in states if pq.locked and _lock_lost(pq, now)]
        if not unlocked and not expired:
            continue
        ids.append(c.client_id)
        mine = unlocked + [pq.queue for pq in expired]
        queues.extend(mine)
        for mq in mine:
            lag = _lag_of(ctx, mq)
            if lag is not None:
                lag_known = True
                total_lag += lag
        pieces: list[str] = []
        if unlocked:
            pieces.append(f"{queue_text(unlocked, 4)} not locked")
        if expired and now is not None:
            oldest = max(now - pq.last_lock_timestamp for pq in expired)
            freed = freed or oldest > BROKER_LOCK_MAX_LIVE_MS
            pieces.append(
                f"{queue_text([pq.queue for pq in expired], 4)} locked last "
                f"{duration_text(oldest)} before the capture"
            )
        if len(parts) < SHOWN:
            parts.append(f"{c.client_id}: {', '.join(pieces)}")
    if not ids:
        return []
    more = f"; and {len(ids) - len(parts)} more" if len(ids) > len(parts) else ""
    waiting = f"; {total_lag:,} messages of lag wait on them" if lag_known else ""
    broker = (
        "; the broker frees a lock 60 s after its last renewal "
        "(rocketmq.broker.rebalance.lockMaxLiveTime), so another client may take the queue"
        if freed
        else ""
    )
    return [
        Finding(
            Code.ORDERLY_LOCK_LOST,
            Severity.error,
            g.name,
            f"{plural(len(set(queues)), 'queue')} of {ctx.topic} held by "
            f"{'an orderly consumer' if len(ids) == 1 else 'orderly consumers'} without a live "
            "broker lock "
            f"({'; '.join(parts)}{more}): an orderly client consumes a queue only while it "
            "holds its lock and renewed it within 30 s "
            f"(rocketmq.client.rebalance.lockMaxLiveTime){waiting}{broker}",
            "the client renews its locks every 20 s with lockBatchMQ to each queue's broker: "
            "check it reaches that broker ('lockBatchMQ exception' in its log, an overloaded "
            "broker); a queue held by two consumers is locked by one only (see "
            "DUPLICATE_ASSIGNMENT)",
            topic=ctx.topic,
            consumers=tuple(ids),
            queues=tuple(sorted(set(queues), key=queue_sort_key)),
        )
    ]


def awaiting_locks(ctx: TopicContext) -> dict[str, list[MessageQueue]]:
    """Orderly clients that balance themselves and hold part of their share and nothing else:
    client id -> the queues of its share it has not taken.

    An orderly client adds a newly allocated queue to the queues it holds only once it has
    locked it on the broker (``RebalanceImpl.updateProcessQueueTableInRebalance``: "add a new
    mq failed ... because lock failed"), and the broker keeps another client's lock until
    60 s after its last renewal. Such a client allocated from the group's inputs; it is
    waiting, not stale.
    """
    expected = ctx.expected
    if expected is None:
        return {}
    broker = ctx.broker_side.clients if ctx.broker_side is not None else ()
    out: dict[str, list[MessageQueue]] = {}
    seen: set[str] = set()
    for c, held in zip(ctx.g.consumers, ctx.actual, strict=True):
        cid = c.client_id
        if held is None or cid in seen or cid in broker or cid not in ctx.subscribers:
            continue
        seen.add(cid)
        if not is_orderly(c):
            continue
        want = expected.get(cid, ())
        mine = set(held)
        missing = [mq for mq in want if mq not in mine]
        if missing and mine <= set(want):
            out[cid] = missing
    return out


def _held_by_nobody(ctx: TopicContext, mq: MessageQueue) -> bool:
    i = ctx.index(mq)
    return i is not None and ctx.holder[i] is None


def _not_taken(ctx: TopicContext) -> list[Finding]:
    """ORDERLY_LOCK_LOST for queues an orderly client was allocated but has not taken: it
    could not lock them, most often because a consumer that stopped without unlocking (a
    crash, a kill) still holds their broker locks."""
    if not ctx.actual_known:  # a queue nobody is known to hold may be held after all
        return []
    waiting = {
        cid: nobodys
        for cid, qs in awaiting_locks(ctx).items()
        if (nobodys := [mq for mq in qs if _held_by_nobody(ctx, mq)])
    }  # (queues another client still holds: it lets them go at its own rebalance)
    if not waiting:
        return []
    g = ctx.g
    queues = sorted({mq for qs in waiting.values() for mq in qs}, key=queue_sort_key)
    ids = list(waiting)
    parts = [f"{cid}: {queue_text(qs, 4)}" for cid, qs in list(waiting.items())[:SHOWN]]
    more = f"; and {len(ids) - len(parts)} more" if len(ids) > len(parts) else ""
    one = len(ids) == 1
    return [
        Finding(
            Code.ORDERLY_LOCK_LOST,
            Severity.error,
            g.name,
            f"{plural(len(queues), 'queue')} of {ctx.topic}, held by nobody, allocated to "
            f"{'an orderly consumer that has' if one else 'orderly consumers that have'} not "
            f"taken {'it' if len(queues) == 1 else 'them'} ({'; '.join(parts)}{more}): an "
            "orderly client takes a newly allocated queue only once it locks it on the "
            "broker, and the broker keeps the previous holder's lock until 60 s after its "
            "last renewal (rocketmq.broker.rebalance.lockMaxLiveTime): a consumer of the "
            "group that stopped without unlocking (killed, crashed) keeps its queues from "
            f"everyone until then{waiting_text(ctx, queues, 'the client takes them')}",
            "nothing to do if this clears within about 80 s (the lock expires 60 s after the "
            "previous holder's last renewal, and the client tries again at each rebalance, "
            f"every 20 s); if it lasts, a live process holds the lock: look for 'because lock "
            f"failed' in the log of {id_text(ids, 3)} and for another process of {g.name} "
            "holding these queues (one that no broker lists, or a second one with the same "
            "client id)",
            topic=ctx.topic,
            consumers=tuple(ids),
            queues=tuple(queues),
        )
    ]


def check_health(ctx: TopicContext) -> list[Finding]:
    """The health of the topic's holders (CLUSTERING push clients with running info); in
    a group of POP or gRPC clients only whether what they pop comes back (CONSUME_FAILING,
    POP_RETRY_TOO_LONG); in a BROADCASTING group whether a client fails (and so drops)
    messages (its lag: :mod:`.broadcast`)."""
    if ctx.route is None:
        return []
    if ctx.g.mode is Mode.BROADCASTING:
        return _failing(ctx)
    if ctx.g.mode is not Mode.CLUSTERING:
        return [*_retry_too_long(ctx), *_failing(ctx)]
    return [
        *_retry_too_long(ctx),
        *_stalled(ctx),
        *_lock_lost_findings(ctx),
        *_not_taken(ctx),
        *_flow_controlled(ctx),
        *_failing(ctx),
    ]
