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


def audit_batches(batches: Iterator[Any], cluster_from: str | None = None) -> Iterator[Any]:
    """Steps 1 and 2 fused in one ``mapInArrow`` (:func:`~rmqlb.pipeline.units.audit_record`:
    each snapshot decoded, parsed and diagnosed once, no JSON re-encoding of units). A
    group state this task diagnosed before is not diagnosed again (the verdicts of the
    task's records are kept while it runs): in a slowly changing fleet most are, with no
    shuffle. The cache lives and dies with the task, so one audit never sees another's."""
    schema = row_schema()
    pattern = re.compile(cluster_from) if cluster_from else None
    verdicts: dict[str, list[Verdict]] = {}
    for batch in batches:
        paths = batch.column("path").to_pylist()
        texts = batch.column("text").to_pylist()
        out: list[Row] = []
        for path, text in zip(paths, texts, strict=True):
            out.extend(audit_record(text or "", path or "<input>", pattern, verdicts=verdicts))
        if out:
            yield _to_batch(out, schema)
