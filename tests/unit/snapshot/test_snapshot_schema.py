"""The shipped JSON Schema is generated from the format's spec and agrees with the loader."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rmqlb.cli import run
from rmqlb.errors import InputError
from rmqlb.snapshot import parse_snapshot, snapshot_schema
from rmqlb.snapshot.schema import generate_schema, schema_text

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
VALIDATOR = jsonschema.Draft202012Validator(snapshot_schema())


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
