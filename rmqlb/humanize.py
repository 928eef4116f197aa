"""Numbers as people read them: counted nouns and durations.

Pure and dependency-free, so every layer (the client's timeout messages, the renderers, the
CLI's one-line summaries) words them the same way.

>>> plural(1, "queue"), plural(16, "queue"), plural(2, "consumer is", "consumers are")
('1 queue', '16 queues', '2 consumers are')
>>> duration(4.99956), duration(0.25), duration(2.5), duration(125)
('5 s', '250 ms', '2.5 s', '2 min 5 s')
>>> age(3), age(720), age(5 * 3600), age(365 * 86400)
('3 s', '12 min', '5 h', '365 d')
>>> count(4210), count(None), rate(43), rate(176.06), rate(None)
('4,210', '?', '43.0', '176.1', '-')
"""

from __future__ import annotations

__all__ = ["age", "count", "duration", "plural", "rate"]


def count(n: int | None, unknown: str = "?") -> str:
    """A count as every table prints it: thousands separated, ``unknown`` when not known."""
    return unknown if n is None else f"{n:,}"


def rate(per_second: float | None, unknown: str = "-") -> str:
    """A rate as every table prints it: always one decimal (``43.0`` beside ``176.1``),
    ``unknown`` when nobody reported one."""
    return unknown if per_second is None else f"{per_second:,.1f}"


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``1 queue`` / ``3 queues`` (thousands separated: ``12,000 queues``)."""
    word = singular if n == 1 else (plural_form or singular + "s")
    return f"{n:,} {word}"


def duration(seconds: float) -> str:
    """A duration rounded to what matters for a timeout or a deadline.

    Under a second in whole milliseconds, under ten seconds to a tenth (no trailing ``.0``),
    then whole seconds, then minutes and seconds.

    >>> [duration(s) for s in (0, 0.0004, 0.0123, 1.0, 9.96, 30.2, 60, 3725)]
    ['0 s', '<1 ms', '12 ms', '1 s', '10 s', '30 s', '1 min', '62 min 5 s']
    """
    if seconds <= 0:
        return "0 s"
    if seconds < 0.001:
        return "<1 ms"
    if seconds < 0.9995:
        return f"{round(seconds * 1000)} ms"
    if seconds < 9.95:
        return f"{round(seconds, 1):g} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def percent(part: float, whole: float) -> str:
    """``part`` of ``whole`` as a whole percentage that never reads 0 % or 100 % unless it
    is exactly that: ``99.9%`` rather than ``100%``, ``<0.1%`` rather than ``0%``.

    >>> percent(192_000, 192_120), percent(1, 2), percent(1, 10_000), percent(0, 5), percent(5, 5)
    ('99.9%', '50%', '<0.1%', '0%', '100%')
    >>> percent(9_999_999, 10_000_000)
    '>99.9%'
    """
    if whole <= 0 or part <= 0:
        return "0%"
    if part >= whole:
        return "100%"
    share = 100 * part / whole
    text = f"{share:.0f}%"
    if text in ("0%", "100%"):
        text = f"{share:.1f}%"
    if text == "0.0%":
        return "<0.1%"
    if text == "100.0%":
        return ">99.9%"
    return text


MINUTE, HOUR, DAY = 60, 3600, 86400


def age(seconds: float) -> str:
    """How long ago, in the one unit that reads best: whole seconds under a minute, minutes
    under an hour, hours under two days, then days (rounded down: never older than it is).

    >>> [age(s) for s in (-4, 0, 59.9, 60, 3599, 3600, 47 * 3600, 48 * 3600, 4e7)]
    ['0 s', '0 s', '59 s', '1 min', '59 min', '1 h', '47 h', '2 d', '462 d']
    """
    whole = max(0, int(seconds))
    if whole < MINUTE:
        return f"{whole} s"
    if whole < HOUR:
        return f"{whole // MINUTE} min"
    if whole < 2 * DAY:
        return f"{whole // HOUR} h"
    return f"{whole // DAY:,} d"
