"""Arrow adapters: the ``mapInArrow`` functions Spark ships to its Python workers.

They only convert between Arrow record batches and the plain rows of
:mod:`rmqlb.pipeline.units`; the work itself is :func:`~rmqlb.pipeline.units.split_record`
and :func:`~rmqlb.pipeline.units.diagnose_units`, the same functions the local engine calls.
They are module-level (pickled by reference), so executors need ``rmqlb`` importable
(installed, or shipped with ``--py-files``).
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from rmqlb.pipeline.inputs import Layout
from rmqlb.pipeline.output import TABLE_COLUMNS
from rmqlb.pipeline.result import AuditOptions
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
    """``mapInArrow`` step 2: batches of work units -> their group/finding rows, packed."""

    def diagnosed() -> Iterator[list[Row]]:
        for batch in batches:
            units: list[UnitRow] = list(
                zip(*(batch.column(name).to_pylist() for name in UNIT_FIELDS), strict=True)
            )
            yield list(diagnose_units(units))

    return pack(diagnosed())


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
    changing fleet most are, with no shuffle. The rows leave packed (:func:`pack`)."""
    pattern = re.compile(cluster_from) if cluster_from else None
    verdicts = audit_verdicts(token)

    def audited() -> Iterator[list[Row]]:
        for batch in batches:
            paths = batch.column("path").to_pylist()
            texts = batch.column("text").to_pylist()
            for path, text in zip(paths, texts, strict=True):
                yield audit_record(text or "", path or "<input>", pattern, verdicts=verdicts)

    return pack(audited())


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
    (:func:`~rmqlb.pipeline.local_engine.audit_file`); the rows leave packed (:func:`pack`)."""
    from rmqlb.pipeline.local_engine import audit_file  # noqa: PLC0415

    pattern = re.compile(cluster_from) if cluster_from else None
    verdicts = audit_verdicts(token)
    return pack(
        rows
        for path, layout in _run_files(batches, runs)
        for _, rows in audit_file(path, layout, pattern, verdicts=verdicts)
    )


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


#: How the diagnosed rows cross Spark: the rows of one ``(cluster, group)`` key (a group's
#: rows, or a cluster's snapshot rows under a null group) from one task, pickled in input
#: order. Hash-partitioning them by ``(cluster, group)`` puts every row of a group in one
#: partition, while the JVM moves a few blobs per group and task instead of converting,
#: shuffling and caching every row.
PACKED_DDL = "cluster string, `group` string, rows binary"
#: Rows a task holds before it hands them on packed (its memory, never the result).
PACK_ROWS = 50_000


def pack(chunks: Iterable[Sequence[Row]]) -> Iterator[Any]:
    """Lists of rows -> Arrow batches of ``PACKED_DDL``: one per :data:`PACK_ROWS` rows,
    each row of the batch the pickled rows of one ``(cluster, group)`` key."""
    held: dict[tuple[str | None, str | None], list[Row]] = {}
    count = 0
    for rows in chunks:
        for row in rows:
            key = (row[1], row[4])
            bucket = held.get(key)
            if bucket is None:
                held[key] = [row]
            else:
                bucket.append(row)
        count += len(rows)
        if count >= PACK_ROWS:
            yield packed_batch(held)
            held, count = {}, 0
    if held:
        yield packed_batch(held)


def packed_batch(held: dict[tuple[str | None, str | None], list[Row]]) -> Any:
    """One Arrow batch of ``PACKED_DDL`` holding ``held``'s rows by key."""
    import pyarrow as pa  # noqa: PLC0415

    return pa.RecordBatch.from_arrays(
        [
            pa.array([cluster for cluster, _ in held], pa.string()),
            pa.array([group for _, group in held], pa.string()),
            pa.array([pickle.dumps(rows) for rows in held.values()], pa.binary()),
        ],
        names=["cluster", "group", "rows"],
    )


def unpack(batches: Iterable[Any]) -> Iterator[Row]:
    """The rows of batches of ``PACKED_DDL`` (each key's in their input order)."""
    for batch in batches:
        for blob in batch.column("rows").to_pylist():
            yield from pickle.loads(blob)  # packed by this audit's own tasks


def pack_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` over a DataFrame of rows (``ROW_DDL``): the same rows, packed."""
    return pack(
        list(zip(*(batch.column(name).to_pylist() for name in ROW_FIELDS), strict=True))
        for batch in batches
    )


#: Step 3's output (``mapInArrow`` over packed rows partitioned by cluster and group): one row per
#: partition with its pickled :class:`~rmqlb.pipeline.aggregate.Partial` in ``partial``, and,
#: when asked for, the ``occurrences/`` rows (``partial`` null).
AGGREGATE_DDL = "partial binary, " + ", ".join(
    f"`{name}` {kind}" for name, kind in TABLE_COLUMNS["occurrences"].items()
)


def aggregate_batches(
    batches: Iterator[Any], options: AuditOptions, occurrences: bool
) -> Iterator[Any]:
    """``mapInArrow`` step 3: a partition's packed rows (every row of each of its groups) ->
    its partial aggregate (:func:`~rmqlb.pipeline.aggregate.reduce_rows`, what the local
    engine runs over the whole fleet), pickled, plus its occurrences when asked."""
    import pyarrow as pa  # noqa: PLC0415

    from rmqlb.pipeline.aggregate import reduce_rows  # noqa: PLC0415

    part = reduce_rows(unpack(batches), options, with_occurrences=occurrences)
    table_rows, part.occurrences = part.occurrences, []
    schema = aggregate_schema()
    for start in range(0, len(table_rows), OCCURRENCE_BATCH):
        chunk = table_rows[start : start + OCCURRENCE_BATCH]
        yield pa.RecordBatch.from_pylist(chunk, schema=schema)
    yield pa.RecordBatch.from_pylist([{"partial": pickle.dumps(part)}], schema=schema)


#: Occurrence rows per Arrow batch out of :func:`aggregate_batches`.
OCCURRENCE_BATCH = 10_000


def aggregate_schema() -> Any:
    """Arrow schema of step 3's output (``AGGREGATE_DDL``)."""
    import pyarrow as pa  # noqa: PLC0415

    types = {"string": pa.string(), "long": pa.int64()}
    return pa.schema(
        [pa.field("partial", pa.binary())]
        + [pa.field(name, types[kind]) for name, kind in TABLE_COLUMNS["occurrences"].items()]
    )
