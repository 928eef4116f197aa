"""Writing an audit's outputs: ``summary.json`` and, for the local engine, Parquet via pyarrow.

The Spark engine writes its Parquet tables with Spark; both use the column names and types
of :data:`TABLE_COLUMNS`, so readers see one schema whatever engine produced the files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final

from rmqlb.errors import InputError
from rmqlb.fileio import atomic_directory, write_atomic
from rmqlb.pipeline.result import AuditResult, summary_json

#: Parquet tables: column -> Arrow/Spark type name ("string", "long", "double", "boolean").
TABLE_COLUMNS: Final[Mapping[str, Mapping[str, str]]] = {
    "findings": {
        "cluster": "string",
        "group": "string",
        "topic": "string",
        "code": "string",
        "severity": "string",
        "firstSeen": "string",
        "lastSeen": "string",
        "snapshots": "long",
        "groupSnapshots": "long",
        "share": "double",
        "persistence": "string",
    },
    "groups": {
        "cluster": "string",
        "group": "string",
        "snapshots": "long",
        "firstSeen": "string",
        "lastSeen": "string",
        "unconsumed": "long",
        "lag": "long",
        "maxUnconsumed": "long",
        "maxLag": "long",
        "changes": "long",
        "flapping": "boolean",
        "findings": "long",
        "worst": "string",
    },
    "flapping": {"cluster": "string", "group": "string", "changes": "long"},
    "occurrences": {
        "cluster": "string",
        "capturedAt": "string",
        "ts": "long",
        "group": "string",
        "topic": "string",
        "code": "string",
        "severity": "string",
        "unconsumed": "long",
        "lag": "long",
    },
}
SUMMARY_FILE: Final = "summary.json"


def prepare_out(out: Path) -> None:
    """Create ``out`` (a previous audit's tables there stay until new ones replace them,
    each atomically: :func:`table_directory`; other files are never touched)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create: {exc.strerror or exc}") from None


def table_directory(out: Path, name: str) -> AbstractContextManager[Path]:
    """A temporary directory to write table ``name`` into, renamed over ``out/name`` when
    complete (the previous table stays whole until then)."""
    return atomic_directory(out / name, what="--out")


def write_summary(out: Path, result: AuditResult) -> Path:
    """Write ``summary.json`` (the ``rmqlb.audit/1`` contract), atomically."""
    path = out / SUMMARY_FILE
    text = json.dumps(summary_json(result), indent=2, ensure_ascii=False) + "\n"
    write_atomic(path, text, what="--out")
    return path


def _arrow_type(name: str) -> Any:
    import pyarrow as pa  # noqa: PLC0415

    return {
        "string": pa.string(),
        "long": pa.int64(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
    }[name]


def write_parquet_tables(out: Path, tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """Write each table as ``out/<name>/part-00000.parquet`` (Spark's directory layout)."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    for name, rows in tables.items():
        columns = TABLE_COLUMNS[name]
        schema = pa.schema([pa.field(c, _arrow_type(t)) for c, t in columns.items()])
        table = pa.Table.from_pylist([dict(r) for r in rows], schema=schema)
        with table_directory(out, name) as directory:
            try:
                pq.write_table(table, directory / "part-00000.parquet")
            except OSError as exc:  # pyarrow's own OSError: no errno, the message says why
                raise InputError(f"--out {out / name}: cannot write: {exc}") from None
