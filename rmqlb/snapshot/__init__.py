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

import importlib
import json
import os
from typing import TYPE_CHECKING, Any

from rmqlb.fileio import InputKind, load_json, read_input, write_atomic
from rmqlb.model._fast import gc_paused
from rmqlb.model.snapshot import Snapshot
from rmqlb.snapshot.redact import redact
from rmqlb.snapshot.spec import FORMAT as SNAPSHOT_FORMAT

if TYPE_CHECKING:
    from rmqlb.snapshot._parse import parse_snapshot
    from rmqlb.snapshot._write import snapshot_to_json
    from rmqlb.snapshot.schema import snapshot_schema

#: The names this package re-exports from its modules, each module imported when one of its
#: names is first read: a live run writes reports with :mod:`~rmqlb.snapshot._write` and the
#: spec, and has no use for the loader or the schema. (``redact`` is imported above: its
#: module has the same name, and importing a submodule sets the package's attribute of its
#: name to the module, which would then hide a function loaded later.)
_EXPORTED_FROM = {
    "parse_snapshot": "rmqlb.snapshot._parse",
    "snapshot_to_json": "rmqlb.snapshot._write",
    "snapshot_schema": "rmqlb.snapshot.schema",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTED_FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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


def decode_json(data: bytes, source: str) -> Any:
    """Decode JSON bytes with the one JSON reading (:func:`rmqlb.fileio.load_json`)."""
    with gc_paused():
        return load_json(data, source)


def load_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """Read and validate a snapshot file, ``-`` for standard input (a regular file, at most
    the snapshot size limit: :func:`rmqlb.fileio.read_input`)."""
    name = os.fspath(path)
    source = "<stdin>" if name == "-" else name
    data = read_input(name, InputKind.SNAPSHOT)
    from rmqlb.snapshot._parse import parse_snapshot  # noqa: PLC0415  (see _EXPORTED_FROM)

    return parse_snapshot(decode_json(data, source), source=source)


def dumps_snapshot(snapshot: Snapshot, indent: int | None = 2) -> str:
    """The snapshot as JSON text (UTF-8 safe, non-ASCII kept)."""
    from rmqlb.snapshot._write import snapshot_to_json  # noqa: PLC0415  (see _EXPORTED_FROM)

    return json.dumps(snapshot_to_json(snapshot), indent=indent, ensure_ascii=False) + "\n"


def save_snapshot(snapshot: Snapshot, path: str | os.PathLike[str]) -> None:
    """Write the snapshot to ``path`` (UTF-8, atomically: :func:`rmqlb.fileio.write_atomic`)."""
    write_atomic(path, dumps_snapshot(snapshot))
