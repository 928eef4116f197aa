"""RocketMQ's JSON dialect (fastjson 1.x), read leniently and written byte-compatibly.

fastjson writes a map key that is not a ``String`` *bare*: integers as numbers
(``{0:"10.0.0.1:10911"}``) and objects as whole JSON objects
(``{{"brokerName":"b","queueId":0,"topic":"t"}:{...}}``). No standard JSON parser reads that.

Reading (:func:`loads`) is a recursive-descent parser whose object keys are parsed with the
general value parser (approach 1 of the protocol notes), so keys come out as native values:

* string keys -> ``str``; bare or signed integers -> ``int``; decimals -> ``float``;
* object keys -> :class:`ObjectKey`, a frozen, hashable mapping (nested objects inside it
  become :class:`ObjectKey`, arrays tuples); ``ObjectKey`` equality ignores key order, so
  a Go client's ``{"topic","brokerName","queueId"}`` equals Java's ordering;
* values are plain ``dict`` / ``list`` / ``str`` / ``int`` / ``float`` / ``bool`` / ``None``;
  ``NaN``/``Infinity`` are accepted; whitespace anywhere (pretty output); a trailing comma.

>>> loads(b'{"brokerAddrs":{0:"10.0.0.1:10911"}}')
{'brokerAddrs': {0: '10.0.0.1:10911'}}
>>> table = loads('{{"brokerName":"b","queueId":3,"topic":"t"}:42}')
>>> key = next(iter(table)); key["queueId"], table[key]
(3, 42)

Standard JSON goes through the C parser first; only text it rejects takes the slower path.
Limits (nesting depth, input size, number length) make every input cost bounded time and
memory; any malformed input raises :class:`~rmqlb.remoting.errors.FastJsonError`, never
another exception.

Writing (:func:`dumps`) reproduces fastjson's output for the fake cluster: ``dict`` is a Java
``Map`` (insertion order, ``None`` values omitted, non-string keys bare), :class:`Bean` is a
Java bean (properties sorted alphabetically, ``None`` omitted), ``MessageQueue`` and
:class:`ObjectKey` are written as objects (so as keys they come out bare), floats in Java's
``Double.toString`` spelling (``1.0E-4``, NaN as ``null``). ``standard=True`` is the
NameServer's route mode: keys quoted, maps sorted, non-ASCII escaped.

>>> dumps({0: "a", 1: Bean(b=1.0E-4, a=None, c=float("nan"))}).decode()
'{0:"a",1:{"b":1.0E-4,"c":null}}'
>>> dumps({0: "é"}, standard=True).decode()
'{"0":"\\\\u00E9"}'
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Iterable, Iterator, Mapping
from enum import Enum
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.remoting.errors import FastJsonError

MAX_DEPTH = 100
"""Deepest nesting accepted; RocketMQ bodies nest about 5 levels."""

MAX_SIZE = 16 * 1024 * 1024
"""Largest input accepted (the frame limit)."""

_MAX_NUMBER_LENGTH = 400


class ObjectKey(Mapping[Hashable, Hashable]):
    """A JSON object used as a map key: frozen, hashable, order-insensitive equality.

    It keeps the order it was read in (so :func:`dumps` writes it back unchanged).

    >>> ObjectKey([("topic", "t"), ("queueId", 1)]) == ObjectKey([("queueId", 1), ("topic", "t")])
    True
    """

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Iterable[tuple[Any, Any]] | Mapping[Any, Any]) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._items: dict[Hashable, Hashable] = dict(pairs)
        self._hash: int | None = None

    @classmethod
    def of_scalars(cls, value: Mapping[Hashable, Hashable]) -> ObjectKey:
        """A flat object (string keys, hashable values) as a key, without a copy per item."""
        key = object.__new__(cls)
        key._items = dict(value)
        key._hash = None
        return key

    def __getitem__(self, key: Hashable) -> Hashable:
        return self._items[key]

    def get(self, key: Hashable, default: Any = None) -> Any:
        """``self[key]``, else ``default`` (the dict's own, not the Mapping mixin's)."""
        return self._items.get(key, default)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ObjectKey):
            return self._items == other._items
        return NotImplemented

    def __repr__(self) -> str:
        return f"ObjectKey({self._items!r})"


class Bean(dict[str, Any]):
    """A Java bean for :func:`dumps`: properties alphabetical, ``None`` properties omitted."""

    __slots__ = ()


def freeze(value: Any, _depth: int = 0) -> Hashable:
    """The hashable form of a parsed value: objects -> :class:`ObjectKey`, arrays -> tuples."""
    if _depth > MAX_DEPTH:
        raise FastJsonError(f"map key nested deeper than {MAX_DEPTH}")
    if isinstance(value, dict):
        if _CONTAINER_TYPES.isdisjoint(map(type, value.values())) and all(
            type(k) is str for k in value
        ):  # a queue's key: nothing to freeze inside
            return ObjectKey.of_scalars(value)
        return ObjectKey((freeze(k, _depth + 1), freeze(v, _depth + 1)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(freeze(v, _depth + 1) for v in value)
    if isinstance(value, Hashable):
        return value
    raise FastJsonError(f"cannot use a {type(value).__name__} as a map key")


def pairs_to_map(value: Any) -> dict[Hashable, Any] | None:
    """Gson's map-with-complex-keys form ``[[key, value], ...]`` as a dict, else ``None``.

    >>> pairs_to_map([[{"queueId": 1}, 5]])
    {ObjectKey({'queueId': 1}): 5}
    """
    if not isinstance(value, list):
        return None
    out: dict[Hashable, Any] = {}
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2:
            return None
        out[freeze(pair[0])] = pair[1]
    return out


# --------------------------------------------------------------------------- reading

_WS = re.compile(r"[ \t\n\r\f]*")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_CONSTANTS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": math.nan,
    "Infinity": math.inf,
}


_C_DECODER = json.JSONDecoder(strict=False)
_C_FAILURE_BUDGET = 64


class _Parser:
    """Recursive descent over the fastjson dialect.

    Every container is first offered to the C decoder (``raw_decode``), so standard-JSON
    subtrees (the values of a MessageQueue-keyed map, the key objects themselves) are
    parsed at C speed. A failed attempt is not free (the C decoder's error locates its line
    by scanning from the start), so after :data:`_C_FAILURE_BUDGET` failures the rest is
    parsed here: at most that many extra linear passes, whatever the input.
    """

    __slots__ = ("c_budget", "max_depth", "text")

    def __init__(self, text: str, max_depth: int, c_budget: int = 64) -> None:
        self.text = text
        self.max_depth = max_depth
        self.c_budget = c_budget

    def try_c(self, pos: int, depth: int) -> tuple[Any, int] | None:
        try:
            value, end = _C_DECODER.raw_decode(self.text, pos)
        except (ValueError, RecursionError):  # JSONDecodeError, over-long integers
            self.c_budget -= 1
            return None
        if self.text.count("[", pos, end) + self.text.count("{", pos, end) > (
            self.max_depth - depth
        ):
            _check_depth(value, self.max_depth, depth + 1)
        return value, end

    def fail(self, message: str, pos: int) -> FastJsonError:
        return FastJsonError(message, pos)

    def skip(self, pos: int) -> int:
        m = _WS.match(self.text, pos)
        return m.end() if m else pos

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        text = self.text
        if pos >= len(text):
            raise self.fail("unexpected end of input", pos)
        c = text[pos]
        if c == '"':
            return self.string(pos)
        if c in "{[":
            if self.c_budget > 0:
                done = self.try_c(pos, depth)
                if done is not None:
                    return done
            if c == "{":
                return self.obj(pos + 1, depth + 1)
            return self.array(pos + 1, depth + 1)
        if c == "-" and text.startswith("-Infinity", pos):
            return -math.inf, pos + 9
        if c == "-" or "0" <= c <= "9":
            return self.number(pos)
        m = _IDENT.match(text, pos)
        if m and m.group() in _CONSTANTS:
            return _CONSTANTS[m.group()], m.end()
        raise self.fail(f"unexpected character {c!r}", pos)

    def string(self, pos: int) -> tuple[str, int]:
        try:
            text, end = scanstring(self.text, pos + 1, False)
            return str(text), int(end)
        except ValueError as exc:
            raise self.fail(f"bad string: {exc.args[0].split(':')[0]}", pos) from None

    def number(self, pos: int) -> tuple[int | float, int]:
        m = _NUMBER.match(self.text, pos)
        if m is None:
            raise self.fail("bad number", pos)
        token = m.group()
        if len(token) > _MAX_NUMBER_LENGTH:
            raise self.fail("number too long", pos)
        if m.group(1) is None and m.group(2) is None:
            return int(token), m.end()
        return float(token), m.end()

    def key(self, pos: int, depth: int) -> tuple[Hashable, int]:
        text = self.text
        if pos < len(text) and text[pos] == '"':
            return self.string(pos)
        m = _IDENT.match(text, pos)
        if m and m.group() not in _CONSTANTS:
            return m.group(), m.end()  # fastjson also reads unquoted identifier keys
        raw, end = self.value(pos, depth)
        return freeze(raw), end

    def obj(self, pos: int, depth: int) -> tuple[dict[Hashable, Any], int]:
        if depth > self.max_depth:
            raise self.fail(f"nesting deeper than {self.max_depth}", pos)
        text = self.text
        out: dict[Hashable, Any] = {}
        pos = self.skip(pos)
        if text.startswith("}", pos):
            return out, pos + 1
        while True:
            key, pos = self.key(pos, depth)
            pos = self.skip(pos)
            if not text.startswith(":", pos):
                raise self.fail("expected ':' after an object key", pos)
            value, pos = self.value(self.skip(pos + 1), depth)
            out[key] = value
            pos = self.skip(pos)
            if text.startswith(",", pos):
                pos = self.skip(pos + 1)
                if text.startswith("}", pos):
                    return out, pos + 1
                continue
            if text.startswith("}", pos):
                return out, pos + 1
            raise self.fail("expected ',' or '}' in an object", pos)

    def array(self, pos: int, depth: int) -> tuple[list[Any], int]:
        if depth > self.max_depth:
            raise self.fail(f"nesting deeper than {self.max_depth}", pos)
        text = self.text
        out: list[Any] = []
        pos = self.skip(pos)
        if text.startswith("]", pos):
            return out, pos + 1
        while True:
            value, pos = self.value(pos, depth)
            out.append(value)
            pos = self.skip(pos)
            if text.startswith(",", pos):
                pos = self.skip(pos + 1)
                if text.startswith("]", pos):
                    return out, pos + 1
                continue
            if text.startswith("]", pos):
                return out, pos + 1
            raise self.fail("expected ',' or ']' in an array", pos)

    def document(self) -> Any:
        pos = self.skip(0)
        value, pos = self.value(pos, 0)
        pos = self.skip(pos)
        if pos != len(self.text):
            raise self.fail("unexpected data after the JSON value", pos)
        return value


_CONTAINER_TYPES = frozenset({dict, list})


def _check_depth(value: Any, max_depth: int, base: int = 1) -> None:
    """Apply the depth limit to what the C parser accepted (plain dicts, lists and scalars),
    ``value`` being at depth ``base``: level by level, without recursion; a container
    holding only scalars (most of them) is passed over at C speed."""
    is_container = _CONTAINER_TYPES.__contains__
    level = [value] if is_container(type(value)) else []
    depth = base
    if depth > max_depth:
        raise FastJsonError(f"nesting deeper than {max_depth}")
    while level:
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            if any(map(is_container, map(type, children))):
                below += [c for c in children if is_container(type(c))]
        level = below
        depth += 1
        if level and depth > max_depth:
            raise FastJsonError(f"nesting deeper than {max_depth}")


def _to_text(data: bytes | bytearray | memoryview | str, max_size: int) -> str:
    if isinstance(data, str):
        if len(data) > max_size:
            raise FastJsonError(f"input of {len(data)} characters exceeds {max_size}")
        return data
    if not isinstance(data, bytes | bytearray | memoryview):
        raise FastJsonError(f"cannot parse a {type(data).__name__}")
    if len(data) > max_size:
        raise FastJsonError(f"input of {len(data)} bytes exceeds {max_size}")
    # Java decodes bodies with replacement characters; so do we.
    return bytes(data).decode("utf-8", "replace")


def text_of(data: bytes | bytearray | memoryview | str) -> str:
    """``data`` as text, as :func:`loads` reads it (UTF-8 with replacement characters, the
    size limit)."""
    return _to_text(data, MAX_SIZE)


def object_at(text: str, pos: int, depth: int) -> dict[Any, Any] | None:
    """The standard-JSON object that starts at ``text[pos]``, being ``depth`` levels deep in
    its document, checked against the depth limit as :func:`loads` checks it; ``None`` when
    the C parser does not read an object there (only reading the whole document can say
    what is there)."""
    try:
        value = _C_DECODER.raw_decode(text, pos)[0]
    except (ValueError, RecursionError):
        return None
    if type(value) is not dict:
        return None
    _check_depth(value, MAX_DEPTH, depth)
    return value


def loads(
    data: bytes | bytearray | memoryview | str,
    *,
    max_depth: int = MAX_DEPTH,
    max_size: int = MAX_SIZE,
) -> Any:
    """Parse fastjson text (bytes are UTF-8) into Python values; see the module docstring.

    Raises :class:`FastJsonError` for anything that is not (lenient) JSON.
    """
    text = _to_text(data, max_size)
    try:
        value = json.loads(text, strict=False)
    except (ValueError, RecursionError):  # not standard JSON: use the lenient parser
        pass
    else:
        if text.count("[") + text.count("{") > max_depth:
            _check_depth(value, max_depth)
        return value
    try:
        return _Parser(text, max_depth, _C_FAILURE_BUDGET).document()
    except FastJsonError:
        raise
    except (ValueError, IndexError, RecursionError, TypeError) as exc:
        raise FastJsonError(f"{type(exc).__name__}: {exc}") from None


# --------------------------------------------------------------------------- writing

_ESCAPE = re.compile(r'["\\\x00-\x1f]')
# Everything but printable ASCII other than ``"`` and ``\``: the same set as
# ``["\\\x00-\x1f\u007f-\U0010ffff]``, which took ~5 ms to compile at import.
_ESCAPE_ASCII = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_JS_SAFE = 9007199254740991


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    short = _SHORT.get(c)
    if short is not None:
        return short
    code = ord(c)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"
    return f"\\u{code:04X}"


def quote(text: str, *, ascii_only: bool = False) -> str:
    """``text`` as a JSON string the way fastjson writes it.

    Quotes, backslashes and control characters are escaped (short forms where JSON has
    them), ``/`` is not, non-ASCII is raw UTF-8 unless ``ascii_only`` (BrowserCompatible).

    >>> quote('a"b/\\n\\x01é'), quote("é", ascii_only=True)
    ('"a\\\\"b/\\\\n\\\\u0001é"', '"\\\\u00E9"')
    """
    pattern = _ESCAPE_ASCII if ascii_only else _ESCAPE
    return '"' + pattern.sub(_escape, text) + '"'


def java_double(value: float) -> str:
    """Java ``Double.toString`` spelling; NaN and infinities become ``null`` as in fastjson.

    >>> [java_double(x) for x in (0.0, 1.5, 100.0, 1.23456789e8, 1e-4, 1e7, 0.001)]
    ['0.0', '1.5', '100.0', '1.23456789E8', '1.0E-4', '1.0E7', '0.001']
    """
    from decimal import Decimal  # noqa: PLC0415  (only encoders write doubles: the fake)

    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits_t, exp = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exp, int)
    exp10 = exp + len(digits_t) - 1  # exponent of the first digit
    if len(digits) == 1:
        # Java prints at least two significant digits and picks the two-digit decimal
        # closest to the exact value when it still reads back as the same double
        # (Double.MIN_VALUE is "4.9E-324", not "5.0E-324").
        two = f"{Decimal(value):.1e}"
        if float(two) == value:
            mantissa, _, e = two.lstrip("-").partition("e")
            digits = mantissa.replace(".", "").rstrip("0") or "0"
            exp10 = int(e)
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if exp10 >= 0:
            whole = digits[: exp10 + 1].ljust(exp10 + 1, "0")
            frac = digits[exp10 + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-exp10 - 1) + digits
        return f"{prefix}{whole}.{frac}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{exp10}"


class _Writer:
    def __init__(self, standard: bool, pretty: bool) -> None:
        self.standard = standard
        self.pretty = pretty
        self.out: list[str] = []

    def newline(self, depth: int) -> None:
        if self.pretty:
            self.out.append("\n" + "\t" * depth)

    def scalar(self, value: Any) -> str | None:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return quote(value, ascii_only=self.standard)
        if isinstance(value, int):
            if self.standard and not -_JS_SAFE <= value <= _JS_SAFE:
                return f'"{int(value)}"'
            return str(int(value))
        if isinstance(value, float):
            return java_double(value)
        if isinstance(value, Enum):
            return quote(value.name)
        return None

    def key(self, key: Any, depth: int) -> None:
        if isinstance(key, str):
            self.out.append(quote(key, ascii_only=self.standard))
        elif self.standard:
            text = self.scalar(key)
            self.out.append(quote(text if text is not None and key is not None else str(key)))
        else:
            self.value(key, depth)

    def entries(self, items: list[tuple[Any, Any]], depth: int) -> None:
        if not items:
            self.out.append("{}")
            return
        self.out.append("{")
        for i, (key, value) in enumerate(items):
            if i:
                self.out.append(",")
            if isinstance(key, str) or not self.pretty:
                self.newline(depth + 1)
            self.key(key, depth + 1)
            self.out.append(":")
            self.value(value, depth + 1)
        self.newline(depth)
        self.out.append("}")

    def value(self, value: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ValueError("structure nested too deeply to write")
        text = self.scalar(value)
        if text is not None:
            self.out.append(text)
        elif isinstance(value, MessageQueue):
            self.entries(
                [
                    ("brokerName", value.broker_name),
                    ("queueId", value.queue_id),
                    ("topic", value.topic),
                ],
                depth,
            )
        elif isinstance(value, Bean):
            props = sorted(((k, v) for k, v in value.items() if v is not None), key=_prop_key)
            self.entries(props, depth)
        elif isinstance(value, Mapping):
            items = [(k, v) for k, v in value.items() if v is not None]
            if self.standard:
                items.sort(key=_map_sort_key)
            self.entries(items, depth)
        elif isinstance(value, list | tuple | set | frozenset):
            if not value:
                self.out.append("[]")
                return
            self.out.append("[")
            for i, item in enumerate(value):
                if i:
                    self.out.append(",")
                self.newline(depth + 1)
                self.value(item, depth + 1)
            self.newline(depth)
            self.out.append("]")
        else:
            raise TypeError(f"cannot write a {type(value).__name__} as RocketMQ JSON")


def _prop_key(item: tuple[str, Any]) -> str:
    return java_key(item[0])


def _map_sort_key(item: tuple[Any, Any]) -> tuple[int, Any]:
    key = item[0]
    if isinstance(key, int | float) and not isinstance(key, bool):
        return (0, key)
    return (1, java_key(str(key)))


def dumps(value: Any, *, standard: bool = False, pretty: bool = False) -> bytes:
    """Write ``value`` as fastjson would (UTF-8); see the module docstring.

    ``standard`` selects the NameServer's standard-JSON route mode; ``pretty`` fastjson's
    ``PrettyFormat`` (tabs, no space after ``:``) as used by the broker's config files.
    """
    writer = _Writer(standard, pretty)
    writer.value(value, 0)
    return "".join(writer.out).encode("utf-8", "replace")
