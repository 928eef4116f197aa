"""A strict JSON reader that also remembers the line of every object key.

``json.loads`` forgets where things were; a check finding must point at the line of
``"writeQueueNums":16``. This is a small recursive-descent parser over the standard JSON
grammar (strings are decoded by the stdlib's ``scanstring``), recording for every key path the
line where the key appears.

>>> value, lines = parse_with_lines('{\\n "a": {\\n  "b": 1\\n }\\n}')
>>> value
{'a': {'b': 1}}
>>> lines[("a",)], lines[("a", "b")]
(2, 3)
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import re
from collections.abc import Callable
from typing import Any, cast

from rmqlb.render.safe import cap

Path = tuple[str | int, ...]

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_MAX_DEPTH = 200
# The stdlib's (C-accelerated) string scanner; typeshed does not declare it.
_scanstring = cast(Callable[[str, int, bool], tuple[str, int]], getattr(json.decoder, "scanstring"))  # noqa: B009


class JsonSyntaxError(ValueError):
    """Bad JSON at ``line``."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.lines: dict[Path, int] = {}

    def line_at(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1

    def fail(self, message: str, pos: int | None = None) -> JsonSyntaxError:
        where = self.pos if pos is None else pos
        return JsonSyntaxError(message, self.line_at(where))

    def skip_ws(self) -> None:
        match = _WS.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        self.skip_ws()
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "end of file"
            raise self.fail(f"expected {char!r}, found {found}")
        self.pos += 1

    def string(self) -> str:
        if self.peek() != '"':
            raise self.fail("expected a string in double quotes")
        try:
            value, end = _scanstring(self.text, self.pos + 1, True)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from None
        self.pos = end
        return value

    def value(self, path: Path, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise self.fail(f"nested deeper than {_MAX_DEPTH} levels")
        self.skip_ws()
        char = self.peek()
        if char == "{":
            return self.obj(path, depth)
        if char == "[":
            return self.array(path, depth)
        if char == '"':
            return self.string()
        for word, result in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return result
        match = _NUMBER.match(self.text, self.pos)
        if match is not None and match.end() > self.pos:
            self.pos = match.end()
            literal = match.group(0)
            if match.group(1) or match.group(2):
                return float(literal)
            return int(literal)
        found = repr(char) if char else "end of file"
        raise self.fail(f"expected a value, found {found}")

    def obj(self, path: Path, depth: int) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        self.skip_ws()
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            self.skip_ws()
            key_line = self.line_at(self.pos)
            key_pos = self.pos
            key = self.string()
            if key in out:  # the rule of every rmqlb JSON reader (rmqlb.fileio.parse_json)
                raise self.fail(f"duplicate key {cap(key, 80)!r} in an object", key_pos)
            self.expect(":")
            key_path = (*path, key)
            self.lines[key_path] = key_line
            out[key] = self.value(key_path, depth + 1)
            self.skip_ws()
            if self.peek() == ",":
                self.pos += 1
                continue
            if self.peek() == "}":
                self.pos += 1
                return out
            raise self.fail("expected ',' or '}' after an object member")

    def array(self, path: Path, depth: int) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        self.skip_ws()
        if self.peek() == "]":
            self.pos += 1
            return out
        while True:
            self.skip_ws()
            item_path = (*path, len(out))
            self.lines[item_path] = self.line_at(self.pos)
            out.append(self.value(item_path, depth + 1))
            self.skip_ws()
            if self.peek() == ",":
                self.pos += 1
                continue
            if self.peek() == "]":
                self.pos += 1
                return out
            raise self.fail("expected ',' or ']' after an array item")


def parse_with_lines(text: str) -> tuple[Any, dict[Path, int]]:
    """Parse ``text`` as strict JSON; return the value and ``{key path: line}``.

    Raises :class:`JsonSyntaxError` (with the 1-based line) on bad JSON.
    """
    parser = _Parser(text.removeprefix("\ufeff"))
    parser.lines[()] = 1
    value = parser.value((), 0)
    parser.skip_ws()
    if parser.pos != len(parser.text):
        raise parser.fail("extra data after the JSON value")
    return value, parser.lines
