"""Arrow adapters: the ``mapInArrow`` functions Spark ships to its Python workers.

They only convert between Arrow record batches and the plain rows of
:mod:`rmqlb.pipeline.units`; the work itself is :func:`~rmqlb.pipeline.units.split_record`
and :func:`~rmqlb.pipeline.units.diagnose_units`, the same functions the local engine calls.
They are module-level (pickled by reference), so executors need ``rmqlb`` importable
(installed, or shipped with ``--py-files``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from rmqlb.pipeline.inputs import Layout
from rmqlb.pipeline.units import (
    ROW_FIELDS,
    UNIT_FIELDS,
    Row,
    UnitRow,
    Verdict,
    audit_record,
    diagnose_units,
    split_record,
)

#: A worker's verdicts of one audit (see :func:`audit_verdicts`) are dropped past this many
#: (about 0.5 KB each): the cache bounds its memory, never the result.
MAX_VERDICTS = 200_000

_audit_cache: dict[str, dict[str, list[Verdict]]] = {}

_TYPES = {
    "ts": "int64",
    "unconsumed": "int64",
    "lag": "int64",
}


def _schema(fields: Sequence[str]) -> Any:
    import pyarrow as pa  # noqa: PLC0415

    return pa.schema(
        [pa.field(name, pa.int64() if _TYPES.get(name) else pa.string()) for name in fields]
    )


def unit_schema() -> Any:
    """Arrow schema of step 1's output (``UNIT_DDL``)."""
    return _schema(UNIT_FIELDS)


def row_schema() -> Any:
    """Arrow schema of step 2's output (``ROW_DDL``)."""
    return _schema(ROW_FIELDS)


def _to_batch(rows: Sequence[tuple[Any, ...]], schema: Any) -> Any:
    import pyarrow as pa  # noqa: PLC0415

    columns = list(zip(*rows, strict=True)) if rows else [() for _ in schema]
    return pa.RecordBatch.from_arrays(
        [pa.array(col, type=field.type) for col, field in zip(columns, schema, strict=True)],
        schema=schema,
    )


def split_batches(batches: Iterator[Any], cluster_from: str | None = None) -> Iterator[Any]:
    """``mapInArrow`` step 1: batches of ``(path, text)`` -> batches of work units."""
    schema = unit_schema()
    pattern = re.compile(cluster_from) if cluster_from else None
    for batch in batches:
        paths = batch.column("path").to_pylist()
        texts = batch.column("text").to_pylist()
        out: list[UnitRow] = []
        for path, text in zip(paths, texts, strict=True):
            out.extend(split_record(text or "", path or "<input>", pattern))
        if out:
            yield _to_batch(out, schema)


def diagnose_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` step 2: batches of work units -> batches of group/finding rows."""
    schema = row_schema()
    for batch in batches:
        units: list[UnitRow] = list(
            zip(*(batch.column(name).to_pylist() for name in UNIT_FIELDS), strict=True)
        )
        out: list[Row] = list(diagnose_units(units))
        if out:
            yield _to_batch(out, schema)


def audit_verdicts(token: str | None) -> dict[str, list[Verdict]]:
    """The dedup cache of a task: with no ``token`` its own; with the ``token`` of an audit,
    the one this worker process keeps for that audit across its tasks (Spark reuses its
    Python workers), so a group state is diagnosed once per worker rather than per task.
    Another audit's token starts afresh. Sharing is safe: a verdict depends only on the
    content its key hashes."""
    if token is None:
        return {}
    verdicts = _audit_cache.get(token)
    if verdicts is None or len(verdicts) > MAX_VERDICTS:
        _audit_cache.clear()
        verdicts = _audit_cache[token] = {}
    return verdicts


def audit_batches(
    batches: Iterator[Any], cluster_from: str | None = None, token: str | None = None
) -> Iterator[Any]:
    """Steps 1 and 2 fused in one ``mapInArrow`` (:func:`~rmqlb.pipeline.units.audit_record`:
    each snapshot decoded, parsed and diagnosed once, no JSON re-encoding of units). A
    group state met before is not diagnosed again (:func:`audit_verdicts`): in a slowly
    changing fleet most are, with no shuffle."""
    schema = row_schema()
    pattern = re.compile(cluster_from) if cluster_from else None
    verdicts = audit_verdicts(token)
    for batch in batches:
        paths = batch.column("path").to_pylist()
        texts = batch.column("text").to_pylist()
        out: list[Row] = []
        for path, text in zip(paths, texts, strict=True):
            out.extend(audit_record(text or "", path or "<input>", pattern, verdicts=verdicts))
        if out:
            yield _to_batch(out, schema)


Runs = Sequence[Sequence[tuple[str, Layout]]]
"""Local files cut in runs (:func:`~rmqlb.pipeline.inputs.chunk_files`), one per task."""


def _run_files(batches: Iterator[Any], runs: Runs) -> Iterator[tuple[str, Layout]]:
    for batch in batches:
        for run in batch.column("id").to_pylist():
            yield from runs[run]


def audit_runs(
    batches: Iterator[Any], runs: Runs, cluster_from: str | None = None, token: str | None = None
) -> Iterator[Any]:
    """``mapInArrow`` over ``spark.range(len(runs))``: each task reads the local files of
    its run in Python and audits them as the in-process engine does
    (:func:`~rmqlb.pipeline.local_engine.audit_file`), one batch of rows per file."""
    from rmqlb.pipeline.local_engine import audit_file  # noqa: PLC0415

    schema = row_schema()
    pattern = re.compile(cluster_from) if cluster_from else None
    verdicts = audit_verdicts(token)
    for path, layout in _run_files(batches, runs):
        out = [r for _, rows in audit_file(path, layout, pattern, verdicts=verdicts) for r in rows]
        if out:
            yield _to_batch(out, schema)


def split_runs(
    batches: Iterator[Any], runs: Runs, cluster_from: str | None = None
) -> Iterator[Any]:
    """Step 1 only over the files of the runs (for fewer files than cores: their units are
    then spread over the cores and diagnosed by :func:`diagnose_batches`)."""
    from rmqlb.pipeline.inputs import file_records  # noqa: PLC0415
    from rmqlb.pipeline.units import unreadable  # noqa: PLC0415

    schema = unit_schema()
    pattern = re.compile(cluster_from) if cluster_from else None
    for path, layout in _run_files(batches, runs):
        out: list[UnitRow] = []
        for record, why in file_records(path, layout):
            if record is None:
                out.append(unreadable(path, why or "cannot read"))
            else:
                out.extend(split_record(record, path, pattern))
        if out:
            yield _to_batch(out, schema)
