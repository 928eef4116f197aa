"""DEAD_LETTERS: messages of the group its consumers gave up on, waiting in its DLQ.

A message goes to ``%DLQ%<group>`` once it failed every retry: a push client sends it back
past ``maxReconsumeTimes``, a Proxy forwards what its gRPC clients failed ``retryMaxTimes`` + 1
times. Nothing consumes a DLQ: its messages stay until the commit log files holding them
are deleted (``fileReservedTime``, 72 h by default). The capture reads, per broker, how many
the DLQ holds now (max - min offset), how many it ever took (max offset) and when the
newest was stored (GET_TOPIC_STATS_INFO). New ones within :data:`NEW_MS` of the capture are
a warning: messages are being given up on now; older ones are history worth knowing (info).
"""

from __future__ import annotations

from collections.abc import Sequence

from rmqlb.diagnose.context import GroupContext, TopicContext
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import duration_text
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import DLQ_PREFIX

#: A dead letter stored at most this long before the capture is news (warning).
NEW_MS = 3_600_000


def dead_letter_fix(group: str, push: bool = True) -> str:
    """How to look at what reached ``group``'s DLQ and, with ``push`` clients, have one
    consume it again, with mqadmin (which has no resend command: ``queryMsgById -s true``
    sends a message back to the topic it is in, the DLQ)."""
    dlq = DLQ_PREFIX + group
    text = (
        f"inspect what reached {dlq} (mqadmin queryMsgByOffset -t {dlq} -b BROKER -i 0 -o "
        "OFFSET prints one, with its id)"
    )
    if push:
        text += (
            f" and have a live push client of {group} consume again what is still needed "
            f"(mqadmin queryMsgById -i MSG_ID -g {group} -d CLIENT_ID)"
        )
    return text


def check_dead_letters(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """DEAD_LETTERS: the group's DLQ holds messages (group-wide: every topic's end up there)."""
    held = {
        broker: view.dead_letters
        for broker, view in sorted(g.group.on_brokers.items(), key=lambda kv: java_key(kv[0]))
        if view.dead_letters is not None and view.dead_letters.messages > 0
    }
    if not held:
        return []
    dlq = DLQ_PREFIX + g.name
    total = sum(d.messages for d in held.values())
    ever = sum(
        view.dead_letters.max_offset
        for view in g.group.on_brokers.values()
        if view.dead_letters is not None
    )
    newest = max(d.last_timestamp for d in held.values())
    ago = None if g.now_ms is None or not newest else max(0, g.now_ms - newest)
    unread = any(e.topic == dlq for e in g.snapshot.errors)
    per_broker = ", ".join(f"{b} {d.messages:,}" for b, d in held.items())
    one = total == 1 and not unread
    message = (
        f"{'at least ' if unread else ''}{total:,} {'message' if one else 'messages'} of "
        f"{g.name} {'waits' if one else 'wait'} in its dead-letter queue {dlq} ({per_broker}): "
        f"its consumers gave up on {'it' if one else 'them'} after every retry"
    )
    if ever > total:
        message += f" ({ever:,} reached it since it was created)"
    if ago is not None:
        message += f"; the newest was stored {duration_text(ago)} before the capture"
    message += (
        f". Nothing consumes a DLQ: {'it stays' if one else 'they stay'} until the commit log "
        f"files holding {'it are' if one else 'them are'} deleted (fileReservedTime, 72 h by "
        "default)"
    )
    recent = ago is not None and ago <= NEW_MS
    return [
        Finding(
            Code.DEAD_LETTERS,
            Severity.warning if recent else Severity.info,
            g.name,
            message,
            "find why they failed (the consumers' logs; CONSUME_FAILING while it lasts) and fix "
            f"that; then {dead_letter_fix(g.name)}",
        )
    ]
