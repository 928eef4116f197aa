"""Terminal-safe text: control characters in names made visible before they are shown.

Group, topic and broker names, client ids, remarks and file contents come from a cluster or a
file, and any client can put escape sequences in its ``instanceName``: an OSC title, a screen
clear, an OSC 52 clipboard write. Shown raw, they act on the terminal of whoever reads the
report. Every command therefore shows such text through :func:`escape_controls`, the one rule:
each C0 control but newline and tab, DEL and each C1 control becomes a visible ``\\xNN``.
(``rich.control.escape_control_codes`` covers only BEL, BS, VT, FF and CR, not ESC or C1.)

- :func:`escape_controls` escapes one string;
- :func:`safe` applies it to every string inside a result (dataclasses, tuples, lists,
  dicts, sets), so a renderer is handed data that is already safe to lay out: widths are
  measured on the visible form;
- :func:`escape_json_controls` makes a JSON document safe too: JSON writers escape C0
  already, but leave DEL and C1 raw; as ``\\u00NN`` they mean the same string.

>>> escape_controls("10.0.0.5@evil\\x1b]0;owned\\x07")
'10.0.0.5@evil\\\\x1b]0;owned\\\\x07'
>>> escape_controls("a\\tb\\nc")
'a\\tb\\nc'
"""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from itertools import chain
from operator import attrgetter
from typing import Any, TypeVar

__all__ = ["escape_controls", "escape_json_controls", "safe"]

T = TypeVar("T")

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_RAW = re.compile("[\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def escape_controls(text: str) -> str:
    """``text`` with every C0 control but newline and tab, DEL and every C1 control written
    as ``\\xNN``; text without any is returned as is.

    >>> print(escape_controls("grp\\x1b[2J\\x7f\\x85"))
    grp\\x1b[2J\\x7f\\x85
    """
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_visible, text)


def escape_json_controls(document: str) -> str:
    """A JSON text with DEL and C1 characters written as ``\\u00NN`` escapes.

    Outside strings JSON has only ASCII punctuation, digits, letters and whitespace, so every
    such character sits inside a string, where the escape means the same character.

    >>> escape_json_controls('{"id": "a\\x9b31m"}')
    '{"id": "a\\\\u009b31m"}'
    """
    if _JSON_RAW.search(document) is None:
        return document
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


def safe(value: T) -> T:
    """``value`` with :func:`escape_controls` applied to every string inside it.

    Walks dataclass instances (rebuilt with :func:`dataclasses.replace`), tuples, lists,
    dicts (keys and values), sets and frozensets. Enum members and every other type are kept
    as they are. Clean data (the usual case) is returned as is after one column-wise scan,
    which reads a 100,000-row report in a few tens of milliseconds.

    >>> safe({"ok": ("a", 1), "bad\\x1b": ["\\x07"]})
    {'ok': ('a', 1), 'bad\\\\x1b': ['\\\\x07']}
    >>> report = ("clean", 1)
    >>> safe(report) is report
    True
    """
    if not _holds_controls([value]):
        return value
    return _escape_all(value)  # type: ignore[no-any-return]


_LEAVES: tuple[type, ...] = (int, float, type(None), Enum)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _init_fields(kind: type) -> tuple[str, ...]:
    """The names of a dataclass's ``__init__`` fields (empty for other classes), cached."""
    names = _FIELDS.get(kind)
    if names is None:
        names = (
            tuple(f.name for f in dataclasses.fields(kind) if f.init)
            if dataclasses.is_dataclass(kind)
            else ()
        )
        _FIELDS[kind] = names
    return names


def _holds_controls(values: list[Any]) -> bool:
    """Whether any string inside ``values`` needs escaping.

    Column-wise: the values are split by type, and each dataclass field, container content
    or string set is checked as one list, so the per-object work runs in C.
    """
    kinds = set(map(type, values))
    for kind in kinds:
        same: list[Any] = values if len(kinds) == 1 else [v for v in values if type(v) is kind]
        if issubclass(kind, _LEAVES):
            continue
        if issubclass(kind, str):
            if _CONTROL.search("".join(set(same))) is not None:
                return True
        elif issubclass(kind, tuple | list | set | frozenset):
            if _holds_controls(list(chain.from_iterable(same))):
                return True
        elif issubclass(kind, dict):
            if _holds_controls(list(chain.from_iterable(v.keys() for v in same))):
                return True
            if _holds_controls(list(chain.from_iterable(v.values() for v in same))):
                return True
        else:
            for name in _init_fields(kind):
                if _holds_controls(list(map(attrgetter(name), same))):
                    return True
    return False


def _escape_all(value: Any) -> Any:
    """The copy :func:`safe` returns once it knows some string needs escaping."""
    kind = type(value)
    if issubclass(kind, _LEAVES):
        return value
    if issubclass(kind, str):
        return escape_controls(value)
    if issubclass(kind, tuple | list):
        items = [_escape_all(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if issubclass(kind, list):
            return items
        return kind(*items) if hasattr(value, "_fields") else tuple(items)
    if issubclass(kind, dict):
        pairs = [(_escape_all(k), _escape_all(v)) for k, v in value.items()]
        same = zip(pairs, value.items(), strict=True)
        if all(k2 is k and v2 is v for (k2, v2), (k, v) in same):
            return value
        return dict(pairs)
    if issubclass(kind, set | frozenset):
        members = [_escape_all(v) for v in value]
        if all(a is b for a, b in zip(members, value, strict=True)):
            return value
        return kind(members)
    changes: dict[str, Any] = {}
    for name in _init_fields(kind):
        old = getattr(value, name)
        new = _escape_all(old)
        if new is not old:
            changes[name] = new
    return dataclasses.replace(value, **changes) if changes else value
