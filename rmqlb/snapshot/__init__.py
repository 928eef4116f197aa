"""The ``rmqlb.snapshot/1`` file format: load (validated at the boundary), save, redact, schema.

The format is defined once, in :mod:`rmqlb.snapshot.spec`; the loader, the writer and the
schema derive from it.

>>> snap = parse_snapshot({"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": 4}},
...                        "groups": {"G": {"consumers": [{"clientId": "c1",
...                                                        "subscriptions": ["T"]}]}}})
>>> snap.groups["G"].consumers[0].subscribes("T")
True
>>> parse_snapshot({"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": "4"}},
...                 "groups": {}})
Traceback (most recent call last):
...
rmqlb.errors.InputError: <input>: topics.T.queues: expected an integer, got a string
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rmqlb.errors import InputError
from rmqlb.model.snapshot import Snapshot
from rmqlb.snapshot._fast import gc_paused
from rmqlb.snapshot._parse import parse_snapshot
from rmqlb.snapshot._write import snapshot_to_json
from rmqlb.snapshot.redact import redact
from rmqlb.snapshot.schema import snapshot_schema
from rmqlb.snapshot.spec import FORMAT as SNAPSHOT_FORMAT

__all__ = [
    "SNAPSHOT_FORMAT",
    "decode_json",
    "dumps_snapshot",
    "load_snapshot",
    "parse_snapshot",
    "redact",
    "save_snapshot",
    "snapshot_schema",
    "snapshot_to_json",
]

_BOM = b"\xef\xbb\xbf"


def decode_json(data: bytes, source: str) -> Any:
    """Decode JSON bytes; a syntax error becomes one :class:`InputError` line with line/col.

    Uses pydantic-core's JSON parser (about twice as fast as ``json.loads`` on big dumps and
    strict about invalid UTF-8 and lone surrogates), imported here: paths that never read a
    file (live capture) do not pay for its import.
    """
    from pydantic_core import from_json  # noqa: PLC0415

    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if not data.strip():
        raise InputError(f"{source}: empty file, expected a JSON object")
    try:
        with gc_paused():
            return from_json(data, cache_strings="all")
    except ValueError as exc:
        raise InputError(f"{source}: invalid JSON: {exc}") from None


def load_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """Read and validate a snapshot file (``-`` is not special here; the CLI handles stdin)."""
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, expected a snapshot file") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    return parse_snapshot(decode_json(data, name), source=name)


def dumps_snapshot(snapshot: Snapshot, indent: int | None = 2) -> str:
    """The snapshot as JSON text (UTF-8 safe, non-ASCII kept)."""
    return json.dumps(snapshot_to_json(snapshot), indent=indent, ensure_ascii=False) + "\n"


def save_snapshot(snapshot: Snapshot, path: str | os.PathLike[str]) -> None:
    """Write the snapshot to ``path`` (UTF-8)."""
    name = os.fspath(path)
    try:
        Path(name).write_text(dumps_snapshot(snapshot), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{name}: cannot write: {exc.strerror or exc}") from None
