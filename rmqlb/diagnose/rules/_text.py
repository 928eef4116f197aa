"""Wording helpers shared by the rules: compact queue lists and id lists (counted nouns are
:func:`rmqlb.humanize.plural`).

>>> from rmqlb.model.queue import MessageQueue
>>> qs = [MessageQueue("T", "broker-a", i) for i in (8, 9, 10, 11, 3)]
>>> queue_text(qs)
'broker-a:3, broker-a:8..11'
>>> id_text(["c1", "c2", "c3"], limit=2)
'c1, c2 and 1 more'
"""

from __future__ import annotations

from collections.abc import Iterable

from rmqlb.model.queue import MessageQueue, queue_ranges

DEFAULT_LIMIT = 8


def queue_text(queues: Iterable[MessageQueue], limit: int = DEFAULT_LIMIT) -> str:
    """Queues as ``broker-a:0, broker-a:8..15`` (:func:`rmqlb.model.queue.queue_ranges`, the
    one spelling, at most ``limit`` parts)."""
    return queue_ranges(queues, limit=limit, with_topic=False)


def id_text(ids: Iterable[str], limit: int = DEFAULT_LIMIT) -> str:
    """Client ids, whole, at most ``limit`` of them then ``and N more``."""
    items = list(dict.fromkeys(ids))
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    return ", ".join(items)


def duration_text(ms: int) -> str:
    """A duration for people: ``45 s``, ``5 min 12 s``, ``2 h 3 min``, ``3 d 4 h``.

    >>> duration_text(45_400), duration_text(312_000), duration_text(7_380_000)
    ('45 s', '5 min 12 s', '2 h 3 min')
    """
    seconds = max(0, ms) // 1000
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    days, h = divmod(hours, 24)
    if days:
        return f"{days} d {h} h" if h else f"{days} d"
    if hours:
        return f"{hours} h {m} min" if m else f"{hours} h"
    if minutes:
        return f"{minutes} min {s} s" if s else f"{minutes} min"
    return f"{s} s"


def rate_text(value: float) -> str:
    """A per-second rate: ``0.4``, ``12.5``, ``1,250``.

    >>> rate_text(0.42), rate_text(12.54), rate_text(1250.0)
    ('0.4', '12.5', '1,250')
    """
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def rt_text(rt_ms: float) -> str:
    """A consume time: ``300 ms per message``, ``0.005 ms per message`` (three significant
    digits)."""
    return f"{rt_ms:.3g} ms per message"
