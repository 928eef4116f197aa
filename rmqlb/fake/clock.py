"""Serve a snapshot "as of now": every timestamp moved by the time since it was captured.

A snapshot's client-clock and store timestamps (last pull and consume per held queue, lock
times, client start times, the store time of the last consumed message and of the newest
dead letter) are ages relative to its ``capturedAt``. Served as they are, a live capture
(whose ``capturedAt`` is now) would see every age grown by the time since the capture, and
call healthy clients stalled.
The fake therefore serves the snapshot shifted by ``now - capturedAt``: the ages a live
``explain`` measures are the ones ``explain --dump`` of the file measures.

>>> from rmqlb.model import Snapshot
>>> shifted(Snapshot(topics={}, groups={}), 5_000).groups
{}
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime

from rmqlb.model.snapshot import (
    Consumer,
    Group,
    GroupOnBroker,
    ProcessQueueState,
    QueueOffset,
    Snapshot,
)


def capture_delta_ms(snapshot: Snapshot, now_ms: int | None = None) -> int:
    """Milliseconds from the snapshot's ``capturedAt`` to ``now_ms`` (0 without a time)."""
    if not snapshot.captured_at:
        return 0
    try:
        stamp = datetime.fromisoformat(snapshot.captured_at.replace("Z", "+00:00"))
    except ValueError:
        return 0
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return now - int(stamp.timestamp() * 1000)


def _later(value: int, delta: int) -> int:
    return value + delta if value > 0 else value


def _state(pq: ProcessQueueState, delta: int) -> ProcessQueueState:
    return replace(
        pq,
        last_pull_timestamp=_later(pq.last_pull_timestamp, delta),
        last_consume_timestamp=_later(pq.last_consume_timestamp, delta),
        last_lock_timestamp=_later(pq.last_lock_timestamp, delta),
    )


def _consumer(c: Consumer, delta: int) -> Consumer:
    states = None if c.process_queues is None else tuple(_state(s, delta) for s in c.process_queues)
    start = None if c.start_time is None else _later(c.start_time, delta)
    return replace(c, process_queues=states, start_time=start)


def _offset(o: QueueOffset, delta: int) -> QueueOffset:
    return replace(o, last_timestamp=_later(o.last_timestamp, delta))


def _on_broker(view: GroupOnBroker, delta: int) -> GroupOnBroker:
    letters = view.dead_letters
    if letters is None:
        return view
    moved = replace(letters, last_timestamp=_later(letters.last_timestamp, delta))
    return replace(view, dead_letters=moved)


def _group(g: Group, delta: int) -> Group:
    return replace(
        g,
        consumers=tuple(_consumer(c, delta) for c in g.consumers),
        offsets=tuple(_offset(o, delta) for o in g.offsets),
        on_brokers={b: _on_broker(v, delta) for b, v in g.on_brokers.items()},
    )


def shifted(snapshot: Snapshot, delta_ms: int) -> Snapshot:
    """``snapshot`` with every non-zero timestamp ``delta_ms`` later (``capturedAt`` kept)."""
    if not delta_ms:
        return snapshot
    return replace(snapshot, groups={n: _group(g, delta_ms) for n, g in snapshot.groups.items()})
