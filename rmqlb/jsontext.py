"""JSON text of the ``rmqlb.report/1`` and ``rmqlb.status/1`` documents, written in one place.

pydantic-core's ``to_json`` (Rust) writes big documents about three times faster than
``json.dumps``, but importing it costs more than writing a small document: the report of one
live group (the common ``explain``) would spend longer importing the fast writer than the
slow one needs to write it. So small documents go through the standard library, with the same
text: compact (``{"a":1}``) or indented, non-ASCII kept, tuples as arrays. The two spell some
floats differently (``1e-05`` / ``0.00001``; ``NaN`` / ``null``): a document holding such a
float always goes through pydantic-core.

>>> dumps({"a": (1, 2.5), "é": None})
'{"a":[1,2.5],"é":null}'
>>> dumps({"rate": 1e-05})
'{"rate":0.00001}'
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

#: Documents of up to this many values (dict entries and list items, counted recursively) are
#: written by the standard library; bigger ones by pydantic-core.
SMALL_DOCUMENT = 5_000


def dumps(document: Any, indent: int | None = None) -> str:
    """``document`` as JSON text, the way pydantic-core's ``to_json`` writes it."""
    if _small_and_plain(document):
        if indent is None:
            return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        return json.dumps(document, ensure_ascii=False, indent=indent)
    from pydantic_core import to_json  # noqa: PLC0415  (its import outweighs small documents)

    return to_json(document, indent=indent).decode("utf-8")


def _small_and_plain(document: Any) -> bool:
    """Whether ``document`` has at most :data:`SMALL_DOCUMENT` values and only floats both
    writers spell alike (finite, and zero or at least 1e-4 in magnitude)."""
    budget = SMALL_DOCUMENT
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            budget -= len(value)
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            budget -= len(value)
            stack.extend(value)
        elif isinstance(value, float) and (
            not math.isfinite(value) or (value != 0.0 and abs(value) < 1e-4)
        ):
            return False
        if budget < 0:
            return False
    return True


def iso_ms(epoch_ms: int | None) -> str | None:
    """``2026-11-22T11:59:58Z``: epoch milliseconds as every rmqlb JSON document writes a
    time (ISO 8601, UTC, whole seconds); None stays None.

    >>> iso_ms(1795348798000), iso_ms(None)
    ('2026-11-22T11:59:58Z', None)
    """
    if epoch_ms is None:
        return None
    # 100,000 queue rows write one time each: the date is formatted once per day, the
    # time of day from tables (strftime, or formatting integers, took ten times as long)
    second = epoch_ms // 1000
    day = second // 86_400
    second -= day * 86_400
    return f"{_iso_date(day)}T{_HOUR_MINUTE[second // 60]}:{_TWO_DIGITS[second % 60]}Z"


_TWO_DIGITS = tuple(f"{i:02d}" for i in range(60))
#: ``00:00`` .. ``23:59``, by minute of the day.
_HOUR_MINUTE = tuple(f"{hour}:{minute}" for hour in _TWO_DIGITS[:24] for minute in _TWO_DIGITS)


@lru_cache(maxsize=4_096)
def _iso_date(day: int) -> str:
    """``2026-11-22``: the date of a day counted from 1970-01-01 (days before it negative)."""
    return datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%d")
