"""Terminal-safe text: control, bidi and invisible characters in names made visible.

Group, topic and broker names, client ids, remarks and file contents come from a cluster or a
file, and any client can put escape sequences in its ``instanceName``: an OSC title, a screen
clear, an OSC 52 clipboard write; or a right-to-left override (U+202E) that shows
``pod-7`` as ``7-dop``, a zero-width space that makes two different ids look the same, a line
separator that starts a fake line. Shown raw, they act on the terminal of whoever reads the
report or mislead them. Every command therefore shows such text through
:func:`escape_controls`, the one rule: each C0 control but newline and tab, DEL, each C1
control, and every character Unicode classes as a format character (``Cf``: zero-width
spaces and joiners, the BOM, the bidi embeddings, overrides, isolates and marks) or a
line/paragraph separator (``Zl``, ``Zp``) becomes a visible escape: ``\\xNN`` up to
U+00FF, ``\\uNNNN`` in the BMP, ``\\UNNNNNNNN`` beyond.
(``rich.control.escape_control_codes`` covers only BEL, BS, VT, FF and CR.)

- :func:`escape_controls` escapes one string;
- :func:`safe` applies it to every string inside a result (dataclasses, tuples, lists,
  dicts, sets), so a renderer is handed data that is already safe to lay out: widths are
  measured on the visible form;
- :func:`escape_json_controls` makes a JSON document safe too: JSON writers escape C0
  already, but leave the rest raw; as ``\\uNNNN`` escapes they mean the same string, so JSON
  keeps the exact text;
- :func:`cap` shortens text echoed in a message (a broker's remark, a file's content) to
  its first :data:`MESSAGE_CAP` characters and its size.

>>> escape_controls("10.0.0.5@evil\\x1b]0;owned\\x07")
'10.0.0.5@evil\\\\x1b]0;owned\\\\x07'
>>> escape_controls("a\\tb\\nc")
'a\\tb\\nc'
>>> print(escape_controls("pod-\\u202e7-dop\\u200b"))
pod-\\u202e7-dop\\u200b
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from enum import Enum
from itertools import chain
from operator import attrgetter
from typing import Any, TypeVar

__all__ = ["MESSAGE_CAP", "cap", "escape_controls", "escape_json_controls", "safe"]

T = TypeVar("T")

# Unicode's format characters (Cf) and line/paragraph separators (Zl, Zp), as of Unicode
# 15.1 (a test checks this covers every such character of the running Python's Unicode).
_INVISIBLE = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")
_JSON_RAW = re.compile(f"[\x7f-\x9f{_INVISIBLE}]")

#: Characters of cluster- or file-supplied text a message shows at most (:func:`cap`).
MESSAGE_CAP = 200


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


def cap(text: str, limit: int = MESSAGE_CAP) -> str:
    """``text``, or its first ``limit`` characters and its size when longer.

    >>> cap("x" * 15_000_000)[-40:]
    'xxxxxxxx… (15,000,000 characters in all)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters in all)"


def escape_controls(text: str) -> str:
    """``text`` with every C0 control but newline and tab, DEL, every C1 control and every
    Cf, Zl and Zp character written as an escape; text without any is returned as is.

    >>> print(escape_controls("grp\\x1b[2J\\x7f\\x85"))
    grp\\x1b[2J\\x7f\\x85
    """
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_visible, text)


def escape_json_controls(document: str) -> str:
    """A JSON text with DEL, C1, Cf, Zl and Zp characters written as ``\\uNNNN`` escapes.

    Outside strings JSON has only ASCII punctuation, digits, letters and whitespace, so every
    such character sits inside a string, where the escape means the same character.

    >>> escape_json_controls('{"id": "a\\x9b31m"}')
    '{"id": "a\\\\u009b31m"}'
    """
    # ASCII text holds only DEL of them: found ten times faster than by the pattern
    if (document.isascii() and "\x7f" not in document) or _JSON_RAW.search(document) is None:
        return document
    return _JSON_RAW.sub(_json_escape, document)


def safe(value: T) -> T:
    """``value`` with :func:`escape_controls` applied to every string inside it.

    Walks dataclass instances (rebuilt with :func:`dataclasses.replace`), tuples, lists,
    other sequences (rebuilt as tuples: a report's queue rows held as columns), dicts (keys
    and values), sets and frozensets. Enum members and every other type are kept as they
    are. Clean data (the usual case) is returned as is after one column-wise scan,
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
_ITEMS: tuple[type, ...] = (tuple, list, set, frozenset)  # walked item by item


def _other_sequence(kind: type) -> bool:
    """A sequence that is not a string, bytes or one of :data:`_ITEMS`."""
    return issubclass(kind, Sequence) and not issubclass(kind, (str, bytes, *_ITEMS))


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
        elif issubclass(kind, _ITEMS) or _other_sequence(kind):
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
    if _other_sequence(kind):
        escaped = [_escape_all(v) for v in value]
        if all(a is b for a, b in zip(escaped, value, strict=True)):
            return value
        return tuple(escaped)
    changes: dict[str, Any] = {}
    for name in _init_fields(kind):
        old = getattr(value, name)
        new = _escape_all(old)
        if new is not old:
            changes[name] = new
    return dataclasses.replace(value, **changes) if changes else value
