"""The line-tracking JSON reader: same values as json.loads, right lines, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqlb.check.jsonlines import JsonSyntaxError, parse_with_lines

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values, st.sampled_from([None, 1, 2, "\t"]))
def test_same_value_as_json_loads(value: object, indent: int | str | None) -> None:
    text = json.dumps(value, indent=indent)
    parsed, _ = parse_with_lines(text)
    assert parsed == json.loads(text)


def test_key_lines_in_pretty_text() -> None:
    text = '{\n\t"a":{\n\t\t"b":1,\n\t\t"c":[\n\t\t\t2,\n\t\t\t3\n\t\t]\n\t}\n}'
    _, lines = parse_with_lines(text)
    assert lines[("a",)] == 2
    assert lines[("a", "b")] == 3
    assert lines[("a", "c")] == 4
    assert lines[("a", "c", 1)] == 6


def test_broker_fixture_lines(shared_dir: Path) -> None:
    path = shared_dir / "fixtures/wire/topic-config-wrapper.4.x.pretty.json"
    text = path.read_text()
    value, lines = parse_with_lines(text)
    assert value == json.loads(text)
    numbered = text.splitlines()
    line = lines[("topicConfigTable", "lsqTopic1", "writeQueueNums")]
    assert numbered[line - 1].strip() == '"writeQueueNums":4'
    assert numbered[lines[("topicConfigTable", "lsqTopic1")] - 1].strip() == '"lsqTopic1":{'


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{\n"a": 1,\n}', 3),
        ('{\n"a": tru\n}', 2),
        ("[1,\n2\n", 3),
        ('{"a": 1} x', 1),
        ("", 1),
        ('{\n\n"a": "\x01"}', 3),
        ("[" * 500, 1),
    ],
)
def test_errors_carry_the_line(text: str, line: int) -> None:
    with pytest.raises(JsonSyntaxError) as info:
        parse_with_lines(text)
    assert info.value.line == line
