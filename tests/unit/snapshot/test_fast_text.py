"""The fast text helpers of big documents give exactly what the slow, obvious code gives."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqlb import fileio
from rmqlb.errors import InputError
from rmqlb.fileio import (
    JsonError,
    _decode_big,
    _has_long_digits,
    _members,
    _unique_object,
    load_json,
    parse_json,
)
from rmqlb.jsontext import iso_ms

_DIGITS = st.sampled_from("0123456789")


def _strftime(epoch_ms: int) -> str | tuple[str, str]:
    try:
        return datetime.fromtimestamp(epoch_ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError) as exc:
        return type(exc).__name__, str(exc)


def _iso_ms(epoch_ms: int) -> str | tuple[str, str] | None:
    try:
        return iso_ms(epoch_ms)
    except (ValueError, OverflowError, OSError) as exc:
        return type(exc).__name__, str(exc)


@given(
    st.integers(-62_135_596_800_000, 253_402_300_799_999)
    | st.integers(-(2**63), 2**63 - 1)
    | st.sampled_from([0, -1, -1000, -1001, 86_399_999, 86_400_000, -86_400_001])
)
def test_iso_ms_is_strftime(epoch_ms: int) -> None:
    """Every Java long: the same text, or the same error where datetime has none."""
    assert _iso_ms(epoch_ms) == _strftime(epoch_ms)


@given(
    st.lists(
        st.text(max_size=4) | st.text(_DIGITS, min_size=17, max_size=21) | st.sampled_from("٠١߀"),
        max_size=8,
    )
)
def test_long_digit_runs_are_the_regex_runs(parts: list[str]) -> None:
    text = "".join(parts)
    assert _has_long_digits(text) == (re.search(r"[0-9]{19}", text) is not None)


def test_long_digit_runs_across_non_ascii_and_surrogates() -> None:
    assert _has_long_digits("é" + "1" * 19 + "\ud800")
    assert not _has_long_digits("1" * 18 + "é" + "1" * 18)
    assert not _has_long_digits("١" * 19)  # Arabic-Indic digits: JSON numbers are ASCII


# --- strict JSON: duplicate keys found without a hook per object ---------------------------


def _checked(text: str) -> object:
    """The JSON reading with the duplicate check on every object (the slow, obvious way)."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_object)
    except json.JSONDecodeError as exc:
        return ("syntax", f"{exc.msg} at line {exc.lineno} column {exc.colno}")
    except JsonError as exc:
        return ("error", str(exc))
    try:
        parse_json(text)  # the other checks (surrogates, longs) are the same on both sides
    except JsonError as exc:
        return ("error", str(exc))
    return value


def _fast(text: str) -> object:
    try:
        return parse_json(text)
    except JsonError as exc:
        return ("syntax" if exc.syntax else "error", str(exc))


_KEYS = st.sampled_from(["a", "b", "", '"', ":", '":', "a b", "é"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(':" \\', max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.lists(st.tuples(_KEYS, inner), max_size=4),
    max_leaves=12,
)


def _write(value: object, space: str) -> str:
    """JSON text of ``value``, where a list of pairs is an object (duplicates kept)."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        items = (f"{json.dumps(k)}{space}:{space}{_write(v, space)}" for k, v in value)
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + f",{space}".join(_write(v, space) for v in value) + "]"
    return json.dumps(value)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON, st.sampled_from(["", " ", "\n", "\t ", "\r\n"]))
def test_duplicate_keys_are_found_as_by_the_hook(value: object, space: str) -> None:
    text = _write(value, space)
    assert _fast(text) == _checked(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a" : 1, "b": {"c": 1, "c" : 2}}',
        '[{"x": ":"}, {"y": 1, "y": 1}]',
        '{"a": "\\u003a", "b": 1, "b": 2}',
        '{"a":"\\":", "a": 1}',
        '{"k": [[[[{"d": 1, "d": 2}]]]]}',
        "[" * 70 + '{"d": 1, "d": 2}' + "]" * 70,
        "[" * 70 + '{"d": 1}' + "]" * 70,
    ],
)
def test_duplicate_keys_wherever_they_hide(text: str) -> None:
    assert _fast(text) == _checked(text)


def test_members_never_counts_more_than_the_objects_hold() -> None:
    value = json.loads('[{"a": {"b": [1, {"c": 2, "d": [{}]}]}}, 3, "x", {"e": null}]')
    assert _members(value, 64) == 5
    assert _members(value, 3) == -1  # deeper than asked
    assert _members([[{"a": 1}]], 3) == 1


# --- big texts: pydantic-core decodes what json.loads decodes, or leaves it to it ------------

_EDGE_TEXTS = [
    '{"a":"x\ny"}',
    "[01]",
    "[+1]",
    "[.5]",
    "[1.]",
    "{} x",
    "[1,]",
    '{"a":1,}',
    "[NaN]",
    "[Infinity]",
    "[-Infinity]",
    "[1e400]",
    "[-1e400]",
    "[1e-400]",
    '["\\ud800"]',
    '["\\ud800\\udc00"]',
    '{"\\ud800":1}',
    "[1E2]",
    "[1E+2]",
    "[0.1e1]",
    "[-0]",
    "[-0.0]",
    "[123456789012345678901234567890]",
    "\u00a0[1]",
    "[1]\u00a0",
    " \t\r\n[1]\n",
    '["\\x"]',
    '["\x7f"]',
    '["\x1f"]',
    "[true,false,null]",
    "[tru]",
    '{"a":1,"a":2}',
    '"\\u0000"',
    '["a\\/b"]',
    "[" * 300 + "]" * 300,
    "[" * 2000 + "]" * 2000,
    "[2.2250738585072011e-308]",
    "[9007199254740993]",
    "[1.0000000000000002]",
    "[4.9e-324]",
    "[1.7976931348623157e308]",
    "\ufeff[1]",
    "[]",
    "{}",
    "null",
    "",
    " ",
    '"é\u2028😀"',
    '{"k":[{"a":{"b":[1,2.5]}}]}',
]


def _standard(text: str) -> tuple[str, object]:
    try:
        return "ok", json.loads(text)
    except (ValueError, RecursionError) as exc:
        return "refused", type(exc).__name__


def _big(text: str) -> tuple[str, object]:
    value = _decode_big(text.encode("utf-8", "surrogatepass"))
    return ("refused", None) if value is None else ("ok", value)


def _same(a: object, b: object) -> bool:
    """Equal values of equal types, floats bit for bit (``-0.0``, ``nan``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(_same, a, b))
    return repr(a) == repr(b)


@pytest.mark.parametrize("text", _EDGE_TEXTS)
def test_big_decoder_accepts_only_what_json_loads_accepts_with_its_values(text: str) -> None:
    big = _big(text)
    if big[0] == "ok":
        standard = _standard(text)
        assert standard[0] == "ok", text
        assert _same(big[1], standard[1]), text


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON_VALUES, st.sampled_from([None, 1]), st.data())
def test_big_decoder_gives_json_loads_values(
    value: object, indent: int | None, data: st.DataObject
) -> None:
    """Generated documents, and the same texts cut or with a character changed."""
    text = json.dumps(value, indent=indent, ensure_ascii=data.draw(st.booleans()))
    variants = [text]
    if text:
        at = data.draw(st.integers(0, len(text) - 1))
        variants += [
            text[:at],
            text[:at] + data.draw(st.sampled_from(',"{}[]:\\e.-0 ')) + text[at + 1 :],
        ]
    for t in variants:
        big = _big(t)
        if big[0] == "ok":
            standard = _standard(t)
            assert standard[0] == "ok", t
            assert _same(big[1], standard[1]), t


@settings(deadline=None)
@given(st.text(st.sampled_from("0123456789.eE+-"), min_size=1, max_size=30))
def test_big_decoder_numbers_are_json_loads_numbers(number: str) -> None:
    text = f"[{number}]"
    big = _big(text)
    if big[0] == "ok":
        assert _standard(text)[0] == "ok", text
        assert _same(big[1], _standard(text)[1]), text


def test_a_big_text_takes_the_big_decoder_and_keeps_the_strict_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above the size the big decoder is used; duplicate keys, lone surrogates and long
    integers are refused as below it."""
    monkeypatch.setattr(fileio, "_BIG_TEXT", 1)
    used: list[bytes] = []
    real = fileio._decode_big

    def spy(utf8: bytes) -> object:
        used.append(utf8)
        return real(utf8)

    monkeypatch.setattr(fileio, "_decode_big", spy)
    assert parse_json('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    assert used == [b'{"a": [1, 2.5, "x"]}']
    with pytest.raises(JsonError, match="duplicate key 'a'"):
        parse_json('{"a": 1, "a": 2}')
    with pytest.raises(JsonError, match="lone surrogate"):
        parse_json('["\\ud800"]')
    with pytest.raises(JsonError, match="out of range"):
        parse_json("[12345678901234567890]")
    with pytest.raises(JsonError, match="Expecting"):
        parse_json("[1,]")
    assert parse_json("null") is None


def test_a_big_file_is_decoded_from_its_bytes_and_bad_bytes_are_still_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above the size no text is made from the bytes the big decoder accepts; bytes it
    declines are decoded as below it, which names what is wrong."""
    monkeypatch.setattr(fileio, "_BIG_TEXT", 1)
    decoded: list[bytes] = []
    real = fileio.decode_text

    def spy(data: bytes, name: str) -> str:
        decoded.append(data)
        return real(data, name)

    monkeypatch.setattr(fileio, "decode_text", spy)
    assert load_json(b'\xef\xbb\xbf{"a": ["\xc3\xa9"]}', "f.json") == {"a": ["é"]}
    assert decoded == []
    with pytest.raises(InputError, match=r"^f\.json: not UTF-8 text \(byte 0xff at offset 7\)$"):
        load_json(b'{"a": "\xff"}', "f.json")
    with pytest.raises(InputError, match=r"^f\.json: empty file, expected a JSON document$"):
        load_json(b" \n\t", "f.json")
    with pytest.raises(InputError, match=r"^f\.json: empty file, expected a JSON document$"):
        load_json("\u3000".encode(), "f.json")
    with pytest.raises(InputError, match=r"^f\.json: invalid JSON: duplicate key 'a'"):
        load_json(b'{"a": 1, "a": 2}', "f.json")
