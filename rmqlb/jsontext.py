"""JSON text of the ``rmqlb.report/1`` and ``rmqlb.status/1`` documents, written in one place.

pydantic-core's ``to_json`` (Rust) writes big documents faster than ``json.dumps``, but
importing it costs more than it saves below a few hundred thousand values: ``status`` of
1,000 groups (37,000 values, 0.9 MB) takes the standard library ~55 ms and pydantic-core
~30 ms plus a ~100-250 ms import (same run, loaded 2-core machine). So documents up to
:data:`SMALL_DOCUMENT` values go through the standard library, with the same
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
import re
import sys
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

#: Documents of up to this many values (dict entries and list items, counted recursively) are
#: written by the standard library; bigger ones by pydantic-core (where its faster writing
#: pays for its import: about 0.7 µs saved per value against 100-250 ms of import).
SMALL_DOCUMENT = 200_000


def dumps(document: Any, indent: int | None = None) -> str:
    """``document`` as JSON text, the way pydantic-core's ``to_json`` writes it (by it
    whenever it is imported already, e.g. to read a big snapshot)."""
    if "pydantic_core" not in sys.modules and _small(document):
        text = _standard(document, indent)
        if text is not None:
            return text
    from pydantic_core import to_json  # noqa: PLC0415  (its import outweighs small documents)

    return to_json(document, indent=indent).decode("utf-8")


#: What ``json.dumps`` writes for a float below 1e-4 in magnitude (``1e-05``), which
#: pydantic-core spells ``0.00001``. Text in a string may match too: that document is then
#: written by pydantic-core, the same text.
_NEGATIVE_EXPONENT = re.compile(r"[0-9][eE]-")


def _standard(document: Any, indent: int | None) -> str | None:
    """The standard library's text of ``document``, or ``None`` when it holds a float the two
    writers spell differently (non-finite, or below 1e-4 in magnitude)."""
    try:
        if indent is None:
            text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        else:
            text = json.dumps(document, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError:  # NaN or an infinity (pydantic-core writes null)
        return None
    # the regular expression only where a plain search finds what it could match
    maybe = "e-" in text or "E-" in text
    return None if maybe and _NEGATIVE_EXPONENT.search(text) else text


def _small(document: Any) -> bool:
    """Whether ``document`` has at most :data:`SMALL_DOCUMENT` values (dict entries and list
    items, counted recursively), as estimated by :func:`_values`."""
    return _values(document) <= SMALL_DOCUMENT


#: Items of each list :func:`_values` looks into, spread evenly over it.
_SAMPLE = 8


def _values(value: Any) -> int:
    """Dict entries and list items in ``value``, counted recursively: every entry of a dict
    (a record), and :data:`_SAMPLE` items spread over a list standing for all its items (its
    rows). An estimate: only the choice of writer depends on it, and both write the same
    text."""
    count = len(value)
    if isinstance(value, dict):
        return count + sum(_values(v) for v in value.values() if isinstance(v, dict | list | tuple))
    picked = value[:: max(1, count // _SAMPLE)][:_SAMPLE]
    sample = [v for v in picked if isinstance(v, dict | list | tuple)]
    if not sample:
        return count
    return count + sum(_values(v) for v in sample) * count // len(picked)


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
