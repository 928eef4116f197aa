"""The shipped JSON Schema is generated from the format's spec and agrees with the loader."""

from __future__ import annotations

import copy
import json
import re
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlb.cli import run
from rmqlb.errors import InputError
from rmqlb.snapshot import parse_snapshot, snapshot_schema
from rmqlb.snapshot.schema import HAS_GROUP, generate_schema, schema_text

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
VALIDATOR = jsonschema.Draft202012Validator(
    snapshot_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)


def test_shipped_schema_equals_generated() -> None:
    shipped = resources.files("rmqlb.data").joinpath("snapshot.schema.json").read_text("utf-8")
    assert shipped == schema_text(generate_schema()), (
        "regenerate: rmqlb schema --generate > rmqlb/data/snapshot.schema.json"
    )
    assert snapshot_schema() == generate_schema()


def test_schema_shape() -> None:
    schema = snapshot_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["required"] == ["format", "topics", "groups"]
    consumer = schema["$defs"]["Consumer"]
    assert set(consumer["required"]) == {"clientId", "subscriptions"}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_schema_and_loader_accept_the_examples(path: Path) -> None:
    doc = json.loads(path.read_text())
    VALIDATOR.validate(doc)
    parse_snapshot(doc)


BROKEN: list[tuple[list[Any], Any]] = [
    (["format"], "rmqlb.snapshot/0"),
    (["topics", "T", "queues"], "4"),
    (["topics", "T", "queues"], -1),
    (["groups", "G", "messageModel"], "PUBSUB"),
    (["groups", "G", "consumers", 0, "subscriptions"], "T"),
    (["groups", "G", "consumers", 0, "assigned", 0, "queueId"], 1.5),
    (["groups", "G", "strategy"], {"name": "NOPE"}),
    (["groups", "G", "strategy"], {"name": "AVG", "virtualNodeCnt": "10"}),
    (
        ["groups", "G", "strategy"],
        {"name": "MACHINE_ROOM_NEARBY", "inner": {"name": "MACHINE_ROOM_NEARBY"}},
    ),
    (["groups", "G", "strategy"], {"name": "MACHINE_ROOM_NEARBY", "brokerRooms": "^broker"}),
    (
        ["groups", "G", "strategy"],
        {"name": "CONFIG", "config": {"c": [{"brokerName": "b", "queueId": -1}]}},
    ),
]


@pytest.mark.parametrize(("path", "value"), BROKEN)
def test_schema_and_loader_reject_the_same_mistakes(path: list[Any], value: Any) -> None:
    doc: dict[str, Any] = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 2}},
        "groups": {
            "G": {
                "strategy": {"name": "AVG"},
                "consumers": [
                    {
                        "clientId": "c",
                        "subscriptions": ["T"],
                        "assigned": [{"topic": "T", "brokerName": "broker-a", "queueId": 0}],
                    }
                ],
            }
        },
    }
    broken = copy.deepcopy(doc)
    node: Any = broken
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(broken)
    with pytest.raises(InputError):
        parse_snapshot(broken)


def test_schema_command_prints_the_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == snapshot_schema()


#: Regular expressions built from atoms that look like groups but are not (escapes, classes,
#: comments) and from openings that are groups or are not; the odd piece soup besides.
_ATOMS = ["a", "^", "#", ":", "?", "]", r"\(", r"\)", r"\\", "[(]", "[]a(]", "[^](]", r"[\](]"]
_ATOMS += ["(?#(c)", r"(?#\)(c)"]
_OPENINGS = ["(", "(", "(?:", "(?=", "(?!", "(?P<n>"]
_REGEXES = st.one_of(
    st.recursive(
        st.sampled_from(_ATOMS),
        lambda inner: (
            st.tuples(st.sampled_from(_OPENINGS), st.lists(inner, max_size=3)).map(
                lambda t: t[0] + "".join(t[1]) + ")"
            )
            | st.lists(inner, min_size=2, max_size=3).map("".join)
        ),
        max_leaves=8,
    ),
    st.lists(st.sampled_from([*_ATOMS, *_OPENINGS, ")", "[", "\\"]), max_size=8).map("".join),
)


@settings(max_examples=2000, deadline=None)
@given(_REGEXES)
def test_the_group_pattern_agrees_with_python(text: str) -> None:
    """The schema's ``pattern`` for a rooms regex matches exactly when it compiles with a
    capturing group (verbose mode aside: no ``x`` flag is generated)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like
        try:
            groups = re.compile(text).groups
        except re.error:
            return
    assert (re.search(HAS_GROUP, text) is not None) == (groups >= 1), text
