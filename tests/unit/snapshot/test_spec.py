"""The writer, the loader, the schema and the model agree with the format's spec.

The spec (:mod:`rmqlb.snapshot.spec`) is the one definition of ``rmqlb.snapshot/1``; these
tests check that nothing drifted from it: every field of every record is in the shipped
schema (in order, with its requiredness and description), reaches a model attribute with the
same default, is checked by the loader (naming its JSON path), is written by the writer in
order, and is named in ``docs/snapshot.md``. The property test's document (``BASE``)
carries every field, so the schema/loader property test exercises them all.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_schema_loader_agree import BASE

from rmqlb.errors import InputError
from rmqlb.model.strategy import ConsistentHash, Params, strategy_from_json, strategy_to_json
from rmqlb.snapshot import parse_snapshot, snapshot_schema, snapshot_to_json, spec
from rmqlb.snapshot._parse import child

DOCS = Path(__file__).resolve().parents[3] / "docs" / "snapshot.md"
Where = tuple[type[spec.Record], spec.Field, tuple[Any, ...]]


def _walk(rec: type[spec.Record], node: Any, path: tuple[Any, ...] = ()) -> Iterator[Where]:
    """Every (record, field, path) a document gives a value for."""
    for field in rec.fields:
        if field.key in node:
            where = (*path, field.key)
            yield rec, field, where
            yield from _walk_type(field.type, node[field.key], where)


def _walk_type(t: spec.Type, node: Any, path: tuple[Any, ...]) -> Iterator[Where]:
    match t:
        case spec.Ref():
            yield from _walk(spec.record(t), node, path)
        case spec.ArrayOf(item=item):
            for i, value in enumerate(node):
                yield from _walk_type(item, value, (*path, i))
        case spec.MapOf(value=value):
            for key, item in node.items():
                yield from _walk_type(value, item, (*path, key))
        case spec.AnyOf(options=options):
            refs = [o for o in options if isinstance(o, spec.Ref)]
            if refs and isinstance(node, dict):  # the option whose required keys are there
                rec = next(
                    spec.record(r) for r in refs if set(spec.record(r).required_keys()) <= set(node)
                )
                yield from _walk(rec, node, path)


def _json_path(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out = f"{out}[{part}]" if isinstance(part, int) else child(out, part)
    return out


ALL = {(rec, f.key) for rec in spec.RECORDS.values() for f in rec.fields}
#: The strategy object is written by rmqlb.model.strategy, with its own parameters only.
STRATEGY = {
    (rec, f.key)
    for rec in spec.RECORDS.values()
    if issubclass(rec, spec.Strategy)
    for f in rec.fields
}
IN_BASE = list(_walk(spec.Snapshot, BASE))


def test_the_property_test_document_carries_every_field() -> None:
    found = {(rec, field.key) for rec, field, _ in IN_BASE}
    assert ALL - found == set()


def test_every_field_is_in_the_schema() -> None:
    schema = snapshot_schema()
    for rec in spec.RECORDS.values():
        node = schema if rec is spec.Snapshot else schema["$defs"][rec.__name__]
        assert list(node["properties"]) == [f.key for f in rec.fields]
        assert node.get("required", []) == list(rec.required_keys())
        assert node["description"] == rec.description()
        for field in rec.fields:
            assert node["properties"][field.key].get("description", "") == field.doc


def test_every_field_reaches_its_model_attribute_with_the_same_default() -> None:
    for rec in spec.RECORDS.values():
        if rec.model is None:
            continue
        by_name = {f.name: f for f in dataclasses.fields(rec.model)}
        for field in rec.fields:
            if isinstance(field.type, spec.Const):
                continue  # the format tag is not stored
            head, _, rest = field.attr.partition(".")
            assert head in by_name, (rec, field)
            if rest:  # read via a nested dataclass
                nested = typing.get_type_hints(rec.model)[head]
                assert rest in {f.name for f in dataclasses.fields(nested)}, (rec, field)
                continue
            default = by_name[head].default
            if default is not dataclasses.MISSING and not field.required:
                spec_default = field.default
                if isinstance(spec_default, list):  # the model holds tuples
                    spec_default = tuple(spec_default)
                assert default == spec_default, (rec, field)
        # every stored attribute is in the format, but the name a map already keys it by
        covered = {f.attr.partition(".")[0] for f in rec.fields}
        assert set(by_name) - covered <= {"topic", "name", "broker_name"}, rec


def test_the_loader_checks_every_field() -> None:
    """A value of the wrong kind anywhere is refused, naming that field's JSON path."""
    for _, _, path in IN_BASE:
        doc = copy.deepcopy(BASE)
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = [[]]
        with pytest.raises(InputError) as caught:
            parse_snapshot(doc)
        where = str(caught.value).split(": ")[1]
        expected = _json_path(path)
        assert where == expected or where.startswith((f"{expected}[", f"{expected}.")), (
            where,
            expected,
        )


def test_the_loader_reads_every_required_field() -> None:
    for _, field, path in IN_BASE:
        if not field.required:
            continue
        doc = copy.deepcopy(BASE)
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        with pytest.raises(InputError, match="missing required field") as caught:
            parse_snapshot(doc)
        assert f"'{field.key}'" in str(caught.value)


def test_keys_that_exclude_each_other_are_refused_together() -> None:
    """A topic giving both the shorthand and the route: the schema's ``not`` (from the spec's
    ``exclusive``) and the loader's message agree."""
    schema = snapshot_schema()["$defs"]
    for rec in (spec.TopicRoute, spec.TopicShorthand):
        assert schema[rec.__name__]["not"] == {"required": list(rec.exclusive)}
    doc = copy.deepcopy(BASE)
    doc["topics"]["T"] = {**BASE["topics"]["T"], **BASE["topics"]["S"]}
    assert set(doc["topics"]["T"]) == set(spec.TopicRoute.exclusive)
    with pytest.raises(InputError, match=r"topics\.T: give either 'queues' .* not both"):
        parse_snapshot(doc)


def test_the_writer_writes_every_field_in_spec_order() -> None:
    written = snapshot_to_json(parse_snapshot(BASE))
    found = list(_walk(spec.Snapshot, written))
    # a shorthand topic is written out in full
    assert ALL - STRATEGY - {(rec, f.key) for rec, f, _ in found} == {
        (spec.TopicShorthand, "queues")
    }
    for rec, _, path in found:
        node: Any = written
        for key in path[:-1]:
            node = node[key]
        keys = [f.key for f in rec.fields if f.key in node]
        assert list(node) == keys, (rec, path)
    assert parse_snapshot(written) == parse_snapshot(BASE)


def test_every_field_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    missing = [
        (rec.__name__, f.key)
        for rec in spec.RECORDS.values()
        for f in rec.fields
        if not re.search(rf"\b{re.escape(f.key)}\b", text)
    ]
    assert missing == [], "document them in docs/snapshot.md"


def test_strategy_objects_use_the_spec_keys() -> None:
    """model.strategy reads and writes the strategy object; its keys are the spec's."""
    keys = set(spec.Strategy.by_key)
    examples = [
        {
            "name": "MACHINE_ROOM_NEARBY",
            "inner": {"name": "AVG"},
            "brokerRooms": {"a": "x"},
            "consumerRooms": "^(x)",
        },
        {"name": "MACHINE_ROOM", "consumeridcs": ["x"]},
        {"name": "CONFIG", "config": {"c": []}},
        {"name": "UNKNOWN", "className": "x.Y"},
    ]
    for raw in examples:
        assert set(strategy_to_json(strategy_from_json(raw))) <= keys
    assert set(strategy_to_json(ConsistentHash(5, Params.INFERRED))) <= keys
    assert spec.Strategy.name.type == spec.Choice((*spec.STRATEGY_NAMES, "UNKNOWN"))


def test_each_strategy_reads_the_parameters_the_spec_names() -> None:
    """model.strategy builds each strategy from the parameters ``Strategy.parameters`` names
    for it and from no other (the loader checks them all, whatever the name)."""
    strategy = BASE["groups"]["G"]["consumers"][0]["strategy"]
    every = {k: v for k, v in strategy.items() if k != "name"}
    assert set(every) == set(spec.Strategy.by_key) - {"name"}
    assert spec.Strategy.name.type == spec.Choice(tuple(spec.Strategy.parameters))
    for name, own in spec.Strategy.parameters.items():
        own_keys = {f.key for f in own}
        built = strategy_to_json(strategy_from_json({"name": name, **every}))
        assert set(built) == {"name", *own_keys}, name
        for key in every:
            rest = {k: v for k, v in every.items() if k != key}
            without = strategy_to_json(strategy_from_json({"name": name, **rest}))
            assert (without == built) == (key not in own_keys), (name, key)
