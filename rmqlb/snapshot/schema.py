"""The JSON Schema of ``rmqlb.snapshot/1``.

:func:`snapshot_schema` returns the schema shipped in the package
(``rmqlb/data/snapshot.schema.json``, cheap: no pydantic import). :func:`generate_schema`
builds it from the pydantic models below, which describe the format field by field; a test
checks that the shipped file is up to date. Regenerate it with::

    rmqlb schema --generate > rmqlb/data/snapshot.schema.json

The models only *describe* the format: loading uses the faster hand-written validator of
:mod:`rmqlb.snapshot._parse`, and tests check the two accept the same documents.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SCHEMA_RESOURCE = "snapshot.schema.json"
SCHEMA_ID = "https://rmqlb.dev/schema/snapshot-1.json"


def snapshot_schema() -> dict[str, Any]:
    """The shipped JSON Schema (draft 2020-12) of the snapshot format."""
    text = resources.files("rmqlb.data").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_text(schema: dict[str, Any]) -> str:
    """The canonical text of a schema (what the shipped file contains)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def generate_schema() -> dict[str, Any]:
    """Build the schema from the pydantic models (imports pydantic: keep it out of start-up)."""
    from rmqlb.snapshot import _models  # noqa: PLC0415  (pydantic only on demand)

    schema = _models.Snapshot.model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }
