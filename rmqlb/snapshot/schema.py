"""The JSON Schema of ``rmqlb.snapshot/1``.

:func:`snapshot_schema` returns the schema shipped in the package
(``rmqlb/data/snapshot.schema.json``, cheap: a file read). :func:`generate_schema` renders it
from the format's definition, :mod:`rmqlb.snapshot.spec`; a test checks that the shipped file
is up to date. Regenerate it with::

    rmqlb schema --generate > rmqlb/data/snapshot.schema.json

Each record becomes a ``$defs`` entry (the document itself the top level), each field a
property with its type, limits, default and description; unknown keys stay allowed, but keys
a record names :attr:`~rmqlb.snapshot.spec.Record.exclusive` never come all together. Property
titles are the keys (``"Clientid"``), as editors expect one. Loading does not use the schema:
the loader reads the same spec, and a property test checks the two accept the same documents.
"""

from __future__ import annotations

import json
from typing import Any

from rmqlb.snapshot import spec

#: Matches a regular expression with a capturing group (``re.compile(x).groups >= 1``), read
#: token by token: escapes, character classes (a ``]`` first is literal), ``(?#...)``
#: comments and other ``(?`` openings are skipped up to the first ``(`` not followed by ``?``,
#: or ``(?P<``. The one case it misreads: a ``(`` inside a ``#`` comment of verbose mode
#: (``(?x)``), which it takes for a group. Valid in ECMA-262 and Python syntax alike.
HAS_GROUP = (
    r"^(?:[^\\[(]|\\[\s\S]|\[(?:\^\]|\^(?!\])|\]|(?![\^\]]))(?:[^\]\\]|\\[\s\S])*\]"
    r"|\(\?#(?:[^)\\]|\\[\s\S])*\)|\(\?(?!#|P<))*(?:\((?!\?)|\(\?P<)"
)
SCHEMA_RESOURCE = "snapshot.schema.json"
SCHEMA_ID = "https://rmqlb.dev/schema/snapshot-1.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def snapshot_schema() -> dict[str, Any]:
    """The shipped JSON Schema (draft 2020-12) of the snapshot format."""
    from importlib import resources  # noqa: PLC0415  (only the schema command needs it)

    text = resources.files("rmqlb.data").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_text(schema: dict[str, Any]) -> str:
    """The canonical text of a schema (what the shipped file contains)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def generate_schema() -> dict[str, Any]:
    """Build the schema from :mod:`rmqlb.snapshot.spec` (what the shipped file must equal)."""
    defs = {name: _record_schema(rec) for name, rec in spec.RECORDS.items()}
    top = defs.pop(spec.Snapshot.__name__)
    return {"$schema": DRAFT, "$id": SCHEMA_ID, **_sorted({"$defs": defs, **top})}


def _record_schema(rec: type[spec.Record]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "additionalProperties": True,  # unknown keys are ignored: forward compatibility
        "description": rec.description(),
        "properties": {f.key: _field_schema(f) for f in rec.fields},
        "title": rec.__name__,
        "type": "object",
    }
    if rec.required_keys():
        out["required"] = list(rec.required_keys())
    if rec.exclusive:
        out["not"] = {"required": list(rec.exclusive)}
    if rec is spec.Consumer:
        out.update(_one_topic_rule())
    return out


def _one_topic_rule() -> dict[str, Any]:
    """A consumer's queue lists may leave ``topic`` out only when it subscribes exactly one
    topic (JSON Schema's ``if``/``else``)."""
    topic = spec.QueueRef.topic.key
    return {
        "if": {
            "properties": {spec.Consumer.subscriptions.key: {"minItems": 1, "maxItems": 1}},
            "required": [spec.Consumer.subscriptions.key],
        },
        "else": {
            "properties": {
                f.key: {"items": {"required": [topic]}} for f in spec.Consumer.one_topic_lists
            }
        },
    }


def _field_schema(field: spec.Field) -> dict[str, Any]:
    schema = _type_schema(field.type)
    if field.nullable:
        options = schema["anyOf"] if list(schema) == ["anyOf"] else [schema]
        schema = {"anyOf": [*options, {"type": "null"}]}
    if field.doc:
        schema["description"] = field.doc
    if not field.required and not isinstance(field.default, (list, dict)):
        schema["default"] = field.default
    if not isinstance(field.type, spec.Ref):  # a reference carries its record's title
        schema["title"] = field.key.title()
    return schema


def _type_schema(t: spec.Type) -> dict[str, Any]:
    match t:
        case spec.Str(min_length=n):
            return {"type": "string"} if n is None else {"type": "string", "minLength": n}
        case spec.Int(minimum=low, maximum=high):
            out: dict[str, Any] = {"type": "integer"}
            if low is not None:
                out["minimum"] = low
            if high is not None:
                out["maximum"] = high
            return out
        case spec.Number():
            return {"anyOf": [{"type": "number"}, {"type": "integer"}]}
        case spec.Bool():
            return {"type": "boolean"}
        case spec.Scalar():
            kinds = ("string", "integer", "number", "boolean", "null")
            return {"anyOf": [{"type": k} for k in kinds]}
        case spec.Regex():
            return {"format": "regex", "pattern": HAS_GROUP, "type": "string"}
        case spec.Const(value=value):
            return {"const": value, "type": "string"}
        case spec.Choice(values=values):
            return {"enum": list(values), "type": "string"}
        case spec.ArrayOf(item=item):
            return {"items": _type_schema(item), "type": "array"}
        case spec.MapOf(value=value, key_pattern=None):
            return {"additionalProperties": _type_schema(value), "type": "object"}
        case spec.MapOf(value=value, key_pattern=pattern):
            return {
                "patternProperties": {pattern: _type_schema(value)},
                "propertyNames": {"pattern": pattern},
                "type": "object",
            }
        case spec.Ref(record=name):
            return {"$ref": f"#/$defs/{name}"}
        case spec.AnyOf(options=options):
            return {"anyOf": [_type_schema(o) for o in options]}
    raise AssertionError(t)


def _sorted(node: Any, keep_order: bool = False) -> Any:
    """Keys sorted at every level, as the shipped file has them, but a record's
    ``properties`` in field order."""
    if isinstance(node, dict):
        items = node.items() if keep_order else sorted(node.items())
        return {k: _sorted(v, keep_order=k == "properties" and not keep_order) for k, v in items}
    if isinstance(node, list):
        return [_sorted(v) for v in node]
    return node
