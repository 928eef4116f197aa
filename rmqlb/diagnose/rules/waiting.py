"""How many messages wait in queues nobody consumes, and what becomes of them.

Every finding about queues no consumer reads (UNCONSUMED_QUEUE, WRITE_EXCEEDS_READ,
QUEUE_NOT_READABLE) ends with one sentence from :func:`waiting_text`: the messages waiting
there (from the group's offsets) and their fate once a consumer takes the queues over, by the
rules of the brokers and Java push clients (4.9, 5.0, 5.1):

- a queue with a committed offset is resumed from it: every waiting message is consumed;
- a queue never committed is asked with QUERY_CONSUMER_OFFSET; the broker answers 0 when the
  queue still starts at offset 0 (min offset 0) and that first message is still in its memory,
  so everything is consumed; otherwise it answers "not found" and the client's
  ``consumeFromWhere`` decides: CONSUME_FROM_LAST_OFFSET (the default) starts at the max
  offset and skips every waiting message, except on ``%RETRY%`` topics, which start at 0;
  CONSUME_FROM_FIRST_OFFSET starts at the beginning; CONSUME_FROM_TIMESTAMP at
  ``consumeTimestamp`` (default: 30 minutes before the client started);
- but the 5.0 client asks with ``setZeroIfNotFound=false``, and a 5.x broker then answers
  "not found" even for a queue starting at 0 (a 4.9 broker does not read that field; the
  5.1 client no longer sends it): its ``consumeFromWhere`` decides. rmqlb asks as the 4.9
  and 5.1 clients do, so an offset of 0 it read from a 5.x broker is a queue committed at 0
  or one never committed: for 5.0 clients both fates are given. Which client takes a queue
  over is not known in advance either, so a group of 5.0 clients and others gets both.

Worked example: 4 never-committed queues holding 10 messages each from offset 0:
"; 40 messages wait there: once a consumer takes them over, all are consumed from offset 0
(committed there, or never committed: the broker then answers 0 while the queue starts at
0 and its first message is still in memory)".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rmqlb.diagnose.context import GroupContext, TopicContext
from rmqlb.diagnose.rules._text import queue_text
from rmqlb.humanize import plural
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import RETRY_PREFIX, V5_0_0, QueueOffset

LAST = "CONSUME_FROM_LAST_OFFSET"
FIRST = "CONSUME_FROM_FIRST_OFFSET"
TIMESTAMP = "CONSUME_FROM_TIMESTAMP"
_DEPRECATED_AS_LAST = {
    "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
    "CONSUME_FROM_MIN_OFFSET",
    "CONSUME_FROM_MAX_OFFSET",
}


#: ``version`` of the Java clients that ask QUERY_CONSUMER_OFFSET with
#: ``setZeroIfNotFound=false``: V5_0_0 up to V5_1_0_SNAPSHOT (432), excluded. A 5.x broker never
#: answers them 0 for a queue the group never committed.
NO_ZERO_CLIENTS = range(V5_0_0, 432)
#: Brokers from this ``version`` on read ``setZeroIfNotFound``.
READS_NO_ZERO = V5_0_0


@dataclass(frozen=True, slots=True)
class Waiting:
    """Messages waiting in some queues, split by whether the group ever committed them."""

    messages: int
    committed: int  # messages behind a committed offset above 0
    never_from_zero: int  # committed at 0, or never committed while the queue starts at 0
    never_trimmed: int  # never committed, the oldest messages are already deleted
    known: int  # queues with an offset
    queues: int
    #: of ``never_from_zero``, on brokers that read ``setZeroIfNotFound``: never committed
    never_no_zero: int = 0
    #: ... and at 0: committed there, or never (the broker answers a never-committed queue 0)
    maybe_no_zero: int = 0


def waiting(
    offsets: Iterable[QueueOffset | None], reads_no_zero: Callable[[str], bool] = lambda _: False
) -> Waiting:
    """Sum the lag of the queues whose offsets are given (``None``: unknown);
    ``reads_no_zero(broker)``: whether that broker reads ``setZeroIfNotFound``."""
    messages = committed = zero = trimmed = known = count = never = maybe = 0
    for o in offsets:
        count += 1
        if o is None:
            continue
        known += 1
        lag = o.lag
        messages += lag
        if o.consumer_offset > 0:
            committed += lag
        elif (o.min_offset or 0) == 0:  # at 0, or never committed and the queue starts at 0
            zero += lag
            if reads_no_zero(o.queue.broker_name):
                if o.committed:
                    maybe += lag
                else:
                    never += lag
        else:
            trimmed += lag
    return Waiting(messages, committed, zero, trimmed, known, count, never, maybe)


def unread_text(ctx: TopicContext, queues: Sequence[MessageQueue]) -> str:
    """``N logical queues read by nobody (queues, M messages waiting)``: the messages where
    the topic's offsets are known."""
    lag = f", {ctx.total_lag(queues):,} messages waiting" if ctx.lag is not None else ""
    return f"{plural(len(queues), 'logical queue')} read by nobody ({queue_text(queues, 4)}{lag})"


def consume_from_where(g: GroupContext) -> str:
    """The consumers' ``consumeFromWhere`` when they agree (deprecated values read as the
    client reads them), else the default."""
    found = {c.properties.get("consumeFromWhere") for c in g.consumers} - {None, ""}
    if len(found) != 1:
        return LAST
    value = str(found.pop())
    return LAST if value in _DEPRECATED_AS_LAST else value


def _fate(w: Waiting, topic: str, start: str, no_zero: str) -> str:
    """``all are consumed from the committed offset`` / ``30 are ...; 10 are skipped (...)``.

    ``no_zero``: whether the clients that may take the queues over are all 5.0 clients
    (``"all"``), some of them (``"some"``) or none (``"none"``). A 5.0 client is never
    answered 0 for a queue the group never committed; an offset of 0 read from the broker
    may be such a queue (the broker answered rmqlb 0), so its fate is given both ways."""
    parts: list[tuple[int, str]] = []
    if w.committed:
        parts.append((w.committed, "consumed from the committed offset"))
    skipped = _unset(topic, start, ", and a 5.0 client asks the broker not to answer 0")
    five_o = no_zero != "none" and skipped is not None
    never, maybe = (w.never_no_zero, w.maybe_no_zero) if five_o else (0, 0)
    if w.never_from_zero - never - maybe:
        parts.append(
            (
                w.never_from_zero - never - maybe,
                "consumed from offset 0 (committed there, or never committed: the broker then "
                "answers 0 while the queue starts at 0 and its first message is still in "
                "memory)",
            )
        )
    if never and skipped is not None:
        parts.append(
            (
                never,
                skipped
                if no_zero == "all"
                else f"consumed from offset 0 by a client other than 5.0, but {skipped} by a "
                "5.0 client",
            )
        )
    if maybe and skipped is not None:
        by = " and a 5.0 client takes them over" if no_zero == "some" else ""
        parts.append(
            (
                maybe,
                "consumed from offset 0 if the group committed 0 there; if it never committed "
                f"there{by}, {skipped}",
            )
        )
    if w.never_trimmed:
        trimmed = _unset(topic, start, " and the queue's start deleted")
        parts.append((w.never_trimmed, trimmed or _FROM_FIRST))
    if len(parts) == 1:
        return f"all are {parts[0][1]}"
    return "; ".join(f"{n:,} are {what}" for n, what in parts)


_FROM_FIRST = "consumed (never committed; the client starts at the first offset)"


def _unset(topic: str, start: str, why: str) -> str | None:
    """The fate of messages in a queue the group never committed, where the broker answers
    "not found" (``why``) and the client's ``consumeFromWhere`` decides; ``None`` when the
    client then starts at the first offset (as when the broker answers 0)."""
    if topic.startswith(RETRY_PREFIX) or start == FIRST:
        return None
    if start == TIMESTAMP:
        return "consumed only from consumeTimestamp on (never committed; the client starts there)"
    return f"skipped (never committed{why}: {LAST} starts at the max offset)"


def waiting_text(
    ctx: TopicContext,
    queues: Sequence[MessageQueue],
    when: str = "a consumer takes them over",
) -> str:
    """``; 40 messages wait there: once a consumer takes them over, ...`` (``""`` when no
    offset of these queues, of ``ctx``'s topic, is known)."""
    g, topic = ctx.g, ctx.topic
    brokers = g.snapshot.brokers

    def reads_no_zero(broker: str) -> bool:
        info = brokers.get(broker)
        return info is not None and (info.version or 0) >= READS_NO_ZERO

    w = waiting((ctx.offset(mq) for mq in queues), reads_no_zero)
    if not w.known:
        return ""
    unknown = (
        f" (offsets of {plural(w.queues - w.known, 'queue')} unknown)" if w.known < w.queues else ""
    )
    if not w.messages:
        return f"; no message waits there yet{unknown}"
    fate = _fate(w, topic, consume_from_where(g), _no_zero_clients(g))
    return f"; {plural(w.messages, 'message')} wait there{unknown}: once {when}, {fate}"


def _no_zero_clients(g: GroupContext) -> str:
    """Whether the group's clients are 5.0 clients, which ask the broker for no offset 0:
    ``"all"``, ``"some"`` or ``"none"`` (a client of unknown version counts as none)."""
    five_o = [c.version is not None and c.version in NO_ZERO_CLIENTS for c in g.consumers]
    if five_o and all(five_o):
        return "all"
    return "some" if any(five_o) else "none"
