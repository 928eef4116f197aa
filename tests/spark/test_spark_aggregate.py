"""The Spark aggregation (per partition, then merged) and the local one agree on the same
rows, row for row."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from audit_rows import random_rows

from rmqlb.pipeline.aggregate import aggregate
from rmqlb.pipeline.output import TABLE_COLUMNS, write_parquet_tables
from rmqlb.pipeline.result import AuditOptions, summary_json
from rmqlb.pipeline.spark_engine import aggregate_frame
from rmqlb.pipeline.units import ROW_DDL

pytestmark = pytest.mark.spark


def _parquet_rows(path: Path, name: str) -> list[dict[str, Any]]:
    table = pq.read_table(path / name)
    assert table.column_names == list(TABLE_COLUMNS[name])
    keys = [c for c in ("cluster", "group", "ts", "topic", "code") if c in table.column_names]
    return sorted(table.to_pylist(), key=lambda r: tuple(str(r[k]) for k in keys))


@contextmanager
def _spark_conf(spark: Any, settings: dict[str, str]) -> Iterator[None]:
    """``settings`` on the shared session for the duration, then the previous values."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


#: The partitions as configured (this small input: one after adaptive coalescing), and
#: five kept apart: each group's rows in one of them, partials merged on the driver.
PARTITIONS = [
    {},
    {"spark.sql.shuffle.partitions": "5", "spark.sql.adaptive.coalescePartitions.enabled": "false"},
]


@pytest.mark.parametrize("settings", PARTITIONS, ids=["default", "five-partitions"])
@pytest.mark.parametrize("seed", [1])
def test_spark_and_python_aggregations_agree(
    spark: Any, tmp_path: Path, seed: int, settings: dict[str, str]
) -> None:
    rows = random_rows(seed)
    options = AuditOptions(persistent_window=3, flap_threshold=1, top=5)
    local, tables = aggregate(rows, options)
    with _spark_conf(spark, settings):
        remote, remote_tables = aggregate_frame(
            spark.createDataFrame(rows, ROW_DDL), options, tmp_path / "spark"
        )

    assert summary_json(remote) == summary_json(local)
    assert local.findings and local.flapping  # the fleet really exercises both
    assert remote.worst_by_unconsumed == local.worst_by_unconsumed
    assert remote.worst_by_lag == local.worst_by_lag
    assert remote.timeline == local.timeline
    assert (remote.problem_count, remote.problems) == (local.problem_count, local.problems)

    assert remote_tables.findings == tables.findings
    assert remote_tables.groups == tables.groups
    assert remote_tables.flapping == tables.flapping
    # the per-snapshot table is written by Spark itself
    write_parquet_tables(tmp_path / "local", {"occurrences": tables.occurrences})
    assert _parquet_rows(tmp_path / "spark", "occurrences") == _parquet_rows(
        tmp_path / "local", "occurrences"
    )
