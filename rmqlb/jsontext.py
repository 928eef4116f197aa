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
import math
from datetime import UTC, datetime
from typing import Any

#: Documents of up to this many values (dict entries and list items, counted recursively) are
#: written by the standard library; bigger ones by pydantic-core (where its faster writing
#: pays for its import: about 0.7 µs saved per value against 100-250 ms of import).
SMALL_DOCUMENT = 200_000


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
    return datetime.fromtimestamp(epoch_ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
