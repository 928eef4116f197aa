"""How many messages wait in queues nobody consumes, and what becomes of them.

Every finding about queues no consumer reads (UNCONSUMED_QUEUE, WRITE_EXCEEDS_READ,
QUEUE_NOT_READABLE) ends with one sentence from :func:`waiting_text`: the messages waiting
there (from the group's offsets) and their fate once a consumer takes the queues over, by the
rules of a 4.9 broker and Java client:

- a queue with a committed offset is resumed from it: every waiting message is consumed;
- a queue never committed is asked with QUERY_CONSUMER_OFFSET; the broker answers 0 when the
  queue still starts at offset 0 (min offset 0) and that first message is still in its memory
  (``checkInDiskByConsumeOffset``), so everything is consumed; otherwise it answers "not
  found" and the client's ``consumeFromWhere`` decides: CONSUME_FROM_LAST_OFFSET (the
  default) starts at the max offset and skips every waiting message, except on
  ``%RETRY%`` topics, which start at 0; CONSUME_FROM_FIRST_OFFSET starts at the beginning;
  CONSUME_FROM_TIMESTAMP at ``consumeTimestamp`` (default: 30 minutes before the client
  started).

Worked example: 4 never-committed queues holding 10 messages each from offset 0:
"; 40 messages wait there: once a consumer takes them over, all are consumed from offset 0
(committed there, or never committed: a 4.9 broker then answers 0 while the queue starts at
0 and its first message is still in memory)".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rmqlb.diagnose.context import GroupContext, TopicContext
from rmqlb.humanize import plural
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import RETRY_PREFIX, QueueOffset

LAST = "CONSUME_FROM_LAST_OFFSET"
FIRST = "CONSUME_FROM_FIRST_OFFSET"
TIMESTAMP = "CONSUME_FROM_TIMESTAMP"
_DEPRECATED_AS_LAST = {
    "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
    "CONSUME_FROM_MIN_OFFSET",
    "CONSUME_FROM_MAX_OFFSET",
}


@dataclass(frozen=True, slots=True)
class Waiting:
    """Messages waiting in some queues, split by whether the group ever committed them."""

    messages: int
    committed: int  # messages behind a committed offset above 0
    never_from_zero: int  # committed at 0, or never committed while the queue starts at 0
    never_trimmed: int  # never committed, the oldest messages are already deleted
    known: int  # queues with an offset
    queues: int


def waiting(offsets: Iterable[QueueOffset | None]) -> Waiting:
    """Sum the lag of the queues whose offsets are given (``None``: unknown)."""
    messages = committed = zero = trimmed = known = count = 0
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
        else:
            trimmed += lag
    return Waiting(messages, committed, zero, trimmed, known, count)


def consume_from_where(g: GroupContext) -> str:
    """The consumers' ``consumeFromWhere`` when they agree (deprecated values read as the
    client reads them), else the default."""
    found = {c.properties.get("consumeFromWhere") for c in g.consumers} - {None, ""}
    if len(found) != 1:
        return LAST
    value = str(found.pop())
    return LAST if value in _DEPRECATED_AS_LAST else value


def _fate(w: Waiting, topic: str, start: str) -> str:
    """``all are consumed from the committed offset`` / ``30 are ...; 10 are skipped (...)``."""
    parts: list[tuple[int, str]] = []
    if w.committed:
        parts.append((w.committed, "consumed from the committed offset"))
    if w.never_from_zero:
        parts.append(
            (
                w.never_from_zero,
                "consumed from offset 0 (committed there, or never committed: a 4.9 "
                "broker then answers 0 while the queue starts at 0 and its first message is "
                "still in memory)",
            )
        )
    if w.never_trimmed:
        if topic.startswith(RETRY_PREFIX) or start == FIRST:
            how = "consumed (never committed; the client starts at the first offset)"
        elif start == TIMESTAMP:
            how = (
                "consumed only from consumeTimestamp on (never committed; the client starts there)"
            )
        else:
            how = (
                "skipped (never committed and the queue's start deleted: "
                f"{LAST} starts at the max offset)"
            )
        parts.append((w.never_trimmed, how))
    if len(parts) == 1:
        return f"all are {parts[0][1]}"
    return "; ".join(f"{n:,} are {what}" for n, what in parts)


def waiting_text(
    ctx: TopicContext,
    queues: Sequence[MessageQueue],
    when: str = "a consumer takes them over",
) -> str:
    """``; 40 messages wait there: once a consumer takes them over, ...`` (``""`` when no
    offset of these queues, of ``ctx``'s topic, is known)."""
    g, topic = ctx.g, ctx.topic
    w = waiting(ctx.offset(mq) for mq in queues)
    if not w.known:
        return ""
    unknown = (
        f" (offsets of {plural(w.queues - w.known, 'queue')} unknown)" if w.known < w.queues else ""
    )
    if not w.messages:
        return f"; no message waits there yet{unknown}"
    fate = _fate(w, topic, consume_from_where(g))
    return f"; {plural(w.messages, 'message')} wait there{unknown}: once {when}, {fate}"
