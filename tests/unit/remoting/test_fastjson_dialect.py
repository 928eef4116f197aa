"""The lenient fastjson reader and the quirk-faithful writer."""

from __future__ import annotations

import math

import pytest

from rmqlb.model import MessageQueue
from rmqlb.remoting import fastjson
from rmqlb.remoting.errors import FastJsonError
from rmqlb.remoting.fastjson import Bean, ObjectKey, dumps, java_double, loads

MQ_KEYED = (
    b'{"offsetTable":{{"brokerName":"broker-a","queueId":1,"topic":"TopicA"}:{"brokerOffset":0},'
    b'{"brokerName":"broker-a","queueId":0,"topic":"TopicA"}:{"brokerOffset":100}}}'
)


def test_bare_integer_keys() -> None:
    assert loads(b'{0:"a",-1:"b",12:{3:4}}') == {0: "a", -1: "b", 12: {3: 4}}


def test_object_keys_are_frozen_and_order_insensitive() -> None:
    table = loads(MQ_KEYED)["offsetTable"]
    keys = list(table)
    assert all(isinstance(k, ObjectKey) for k in keys)
    assert keys[0]["queueId"] == 1 and keys[1]["queueId"] == 0
    go_order = ObjectKey({"topic": "TopicA", "brokerName": "broker-a", "queueId": 0})
    assert table[go_order] == {"brokerOffset": 100}
    assert hash(go_order) == hash(keys[1])
    assert go_order != {"topic": "TopicA", "brokerName": "broker-a", "queueId": 0}
    assert keys[0].get("queueId") == 1 and keys[0].get("nope", 7) == 7
    assert list(keys[1]) == ["brokerName", "queueId", "topic"]  # as read: written back so


def test_nested_object_and_array_keys_freeze() -> None:
    table = loads('{{"a":{"b":[1,2]}}:1,[1,[2]]:2}')
    assert table[ObjectKey({"a": ObjectKey({"b": (1, 2)})})] == 1
    assert table[(1, (2,))] == 2


def test_doubles_nulls_and_java_spelling() -> None:
    value = loads(b'{"a":1.0E-4,"b":null,"c":1.23456789E8,"d":NaN,"e":-Infinity,"f":-0.0}')
    assert value["a"] == 1e-4 and value["b"] is None and value["c"] == 123456789.0
    assert math.isnan(value["d"]) and value["e"] == -math.inf


def test_pretty_whitespace_trailing_comma_unquoted_keys() -> None:
    text = '{\n\t"a":{\n\t\t0: "x" ,\n\t},\r\n b :[1, 2,],\f}'
    assert loads(text) == {"a": {0: "x"}, "b": [1, 2]}


def test_strings_are_standard_json() -> None:
    assert loads(r'{"s":"a\"b\\c\/d\u00e9\n"}') == {"s": 'a"b\\c/dé\n'}
    assert loads('{"jstack":"has {0:1} and } inside"}')["jstack"] == "has {0:1} and } inside"


def test_invalid_utf8_is_replaced_like_java() -> None:
    assert loads(b'{"k":"\xff"}') == {"k": "\ufffd"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "unexpected end of input"),
        ("{", "unexpected end"),
        ('{"a" 1}', "expected ':'"),
        ('{"a":1 "b":2}', "expected ',' or '}'"),
        ("[1 2]", "expected ',' or ']'"),
        ("{} x", "unexpected data after"),
        ('{"a":tru}', "unexpected character"),
        ('{"a":"open', "bad string"),
        ("-", "bad number"),
        ("{0:" + "1" * 500 + "}", "number too long"),
        ("1" * 5000, "number too long"),
        ("[" * 150 + "]" * 150, "nesting deeper than 100"),
        ("{" + "{" * 150, "nesting deeper than 100"),
    ],
)
def test_malformed_input_raises_typed_errors(text: str, message: str) -> None:
    with pytest.raises(FastJsonError, match=message):
        loads(text)


def test_size_limit_is_checked_before_parsing() -> None:
    with pytest.raises(FastJsonError, match="exceeds"):
        loads(b"[" + b"0," * 600 + b"0]", max_size=1000)
    with pytest.raises(FastJsonError, match="cannot parse"):
        loads(12)  # type: ignore[arg-type]


def test_gson_pairs() -> None:
    pairs = loads('[[{"queueId":1},5],[{"queueId":2},6]]')
    assert fastjson.pairs_to_map(pairs) == {
        ObjectKey({"queueId": 1}): 5,
        ObjectKey({"queueId": 2}): 6,
    }
    assert fastjson.pairs_to_map([[1, 2, 3]]) is None
    assert fastjson.pairs_to_map({"a": 1}) is None


# --------------------------------------------------------------------------- writing


def test_dumps_reproduces_object_keys_byte_for_byte() -> None:
    assert dumps(loads(MQ_KEYED)) == MQ_KEYED


def test_dumps_message_queue_keys_alphabetical() -> None:
    out = dumps({MessageQueue("T", "b", 3): 7})
    assert out == b'{{"brokerName":"b","queueId":3,"topic":"T"}:7}'


def test_beans_sorted_maps_in_order_nulls_omitted() -> None:
    value = Bean(zeta=1, alpha=None, Beta=[], mid={"z": 1, "a": None, "b": 2})
    assert dumps(value) == b'{"Beta":[],"mid":{"z":1,"b":2},"zeta":1}'


def test_standard_mode_quotes_sorts_and_escapes() -> None:
    value = {10: "x", 2: "é\U0001f600", "k": {"b": 1, "a": 2}, 3: 2**60}
    assert dumps(value, standard=True) == (
        b'{"2":"\\u00E9\\uD83D\\uDE00","3":"1152921504606846976","10":"x","k":{"a":2,"b":1}}'
    )
    assert (
        dumps(value) == '{10:"x",2:"é\U0001f600","k":{"b":1,"a":2},3:1152921504606846976}'.encode()
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (1.5, "1.5"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (0.0009, "9.0E-4"),
        (1e-4, "1.0E-4"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (1.23456789e8, "1.23456789E8"),
        (-2.5e-10, "-2.5E-10"),
        (123.456, "123.456"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (5e-324, "4.9E-324"),
        (float("nan"), "null"),
        (float("inf"), "null"),
    ],
)
def test_java_double_spelling(value: float, text: str) -> None:
    assert java_double(value) == text
    if text != "null" and value != 5e-324:
        assert float(text) == value


def test_string_escaping() -> None:
    assert (
        fastjson.quote('q"\\/\b\f\n\r\t\x00\x1f é') == '"q\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001F é"'
    )


def test_pretty_layout() -> None:
    value = {"a": {"b": 1, "c": []}, "d": [1, 2], "e": {}}
    assert dumps(value, pretty=True) == (
        b'{\n\t"a":{\n\t\t"b":1,\n\t\t"c":[]\n\t},\n\t"d":[\n\t\t1,\n\t\t2\n\t],\n\t"e":{}\n}'
    )


def test_unsupported_values_are_a_programming_error() -> None:
    with pytest.raises(TypeError):
        dumps({"a": object()})
