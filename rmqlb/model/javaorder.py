"""Java ``String`` semantics for Python strings: ``compareTo`` ordering, ``split``, ``trim``,
and the tags ``FilterAPI`` reads from a TAG expression.

Java compares strings by UTF-16 code units; Python compares code points. The two orders
differ only when a supplementary character (U+10000 and above, two UTF-16 units starting
with a high surrogate U+D800..U+DBFF) meets a BMP character in U+E000..U+FFFF: Java sorts
the supplementary character first.

``java_key`` maps a string to a Python ``str`` whose code-point order *is* Java's order, by
spelling every supplementary character as its surrogate pair. ASCII and other BMP-only
strings are returned unchanged, so the common case costs one C-level check.

>>> sorted(["\\uffff", "\\U0001f600"]) == ["\\uffff", "\\U0001f600"]
True
>>> sorted(["\\uffff", "\\U0001f600"], key=java_key) == ["\\U0001f600", "\\uffff"]
True
"""

from __future__ import annotations

import re

_SUPPLEMENTARY = re.compile("[\U00010000-\U0010ffff]")


def _surrogate_pair(match: re.Match[str]) -> str:
    offset = ord(match.group()) - 0x10000
    return chr(0xD800 + (offset >> 10)) + chr(0xDC00 + (offset & 0x3FF))


def java_key(text: str) -> str:
    """Return a sort key for ``text`` that orders like Java's ``String.compareTo``."""
    if text.isascii():
        return text
    return _SUPPLEMENTARY.sub(_surrogate_pair, text)


def java_sorted(items: list[str]) -> list[str]:
    """Sort strings the way ``Collections.sort`` sorts a ``List<String>``."""
    return sorted(items, key=java_key)


def java_split(text: str, separator: str) -> list[str]:
    """Emulate Java ``String.split(separator)`` for a literal one-character separator.

    Java drops trailing empty strings, and a string without the separator splits into
    itself:

    >>> java_split("roomA@broker-a", "@")
    ['roomA', 'broker-a']
    >>> java_split("roomA@", "@")
    ['roomA']
    >>> java_split("@", "@")
    []
    >>> java_split("", "@")
    ['']
    """
    if separator not in text:
        return [text]
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


#: What Java's ``String.trim`` removes from both ends: every character up to U+0020 (controls
#: included), and nothing else (Python's ``str.strip()`` also removes U+00A0, U+0085 and the
#: other Unicode spaces, and keeps the controls U+0000..U+0008, U+000E..U+001B).
_JAVA_TRIMMED = "".join(map(chr, range(0x21)))


def java_trim(text: str) -> str:
    """Java ``String.trim``.

    >>> java_trim("\\x01 TagA\\t"), java_trim("\\xa0TagA")
    ('TagA', '\\xa0TagA')
    """
    return text.strip(_JAVA_TRIMMED)


#: ``SubscriptionData.SUB_ALL``: the expression that lets every tag through.
SUB_ALL = "*"


def filter_tags(sub_string: str) -> list[str] | None:
    """The tags of a TAG expression in the order ``FilterAPI.buildSubscriptionData`` adds
    them (duplicates kept): split on ``||``, each trimmed as ``String.trim`` does, empty ones
    dropped. ``None`` (every tag) for exactly ``*`` or an empty expression; a ``*`` among
    other tags, or spaced, is a tag like any other.

    >>> filter_tags(" TagB || TagA ||  || TagB"), filter_tags("*"), filter_tags("")
    (['TagB', 'TagA', 'TagB'], None, None)
    >>> filter_tags(" * "), filter_tags("A||")
    (['*'], ['A'])
    """
    if sub_string in (SUB_ALL, ""):
        return None
    return [tag for raw in sub_string.split("||") if (tag := java_trim(raw))]
