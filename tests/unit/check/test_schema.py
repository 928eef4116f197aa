"""The shipped JSON Schema describes exactly what the reader accepts."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from rmqlb.check import yamlconf
from rmqlb.check.loader import read_one
from rmqlb.errors import InputError

ROOT = Path(__file__).resolve().parents[3]


def check_schema() -> dict[str, Any]:
    """The JSON Schema shipped for editors (``rmqlb/data/check.schema.json``)."""
    text = resources.files("rmqlb").joinpath("data/check.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


EXAMPLES = [
    *sorted((ROOT / "examples/check").glob("*.yaml")),
    ROOT / "examples/check/broker/members.yaml",
]


def test_schema_keys_match_the_reader() -> None:
    schema = check_schema()
    defs = schema["$defs"]
    assert tuple(schema["properties"]) == yamlconf.TOP_KEYS
    assert tuple(defs["topic"]["properties"]) == yamlconf.TOPIC_KEYS
    broker = defs["topic"]["properties"]["brokers"]["oneOf"][1]["additionalProperties"]["oneOf"][1]
    assert tuple(broker["properties"]) == yamlconf.BROKER_KEYS
    assert tuple(defs["group"]["properties"]) == yamlconf.GROUP_KEYS
    assert tuple(defs["member"]["properties"]) == yamlconf.MEMBER_KEYS
    sub = defs["member"]["properties"]["subscriptions"]["additionalProperties"]["anyOf"][1]
    assert tuple(sub["properties"]) == yamlconf.SUBSCRIPTION_KEYS
    assert defs["count"]["maximum"] == yamlconf.MAX_QUEUES
    replicas = defs["member"]["properties"]["replicas"]["anyOf"][0]
    assert replicas["maximum"] == yamlconf.MAX_REPLICAS


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_are_valid(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(check_schema())
    validator.check_schema(check_schema())
    assert list(validator.iter_errors(yaml.safe_load(path.read_text()))) == []


BAD: list[dict[str, Any]] = [
    {"topics": {"T": {"queues": 4, "colour": "red"}}},
    {"topics": {"T": {"queues": 4, "read": 4}}},
    {"topics": {"T": {"queues": -1}}},
    {"topics": {"T": {"queues": 4, "perm": 9}}},
    {"topics": {"T": {"queues": 4, "brokers": []}}},
    {"groups": {"G": {"members": {"m": {"replicas": "many", "subscriptions": {}}}}}},
    {"groups": {"G": {"members": {"m": {"replicas": 1}}}}},
    {"groups": {"G": {"members": {"m": {"replicas": 1, "subscriptions": {"T": 5}}}}}},
    {"groups": {"G": {"strategy": "FAST"}}},
    {"groups": {"G": {"messageModel": "PUSH"}}},
    {"version": 2, "topics": {}},
    {"other": 1},
]


@pytest.mark.parametrize("doc", BAD)
def test_schema_and_reader_reject_the_same(doc: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(check_schema())
    assert list(validator.iter_errors(doc)), doc
    with pytest.raises(InputError):
        read_one(yaml.safe_dump(doc), "c.yaml")
