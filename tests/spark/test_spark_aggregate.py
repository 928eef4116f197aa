"""The Spark SQL aggregation and its Python twin agree on the same rows, row for row."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rmqlb.pipeline.aggregate import aggregate
from rmqlb.pipeline.output import TABLE_COLUMNS, write_parquet_tables
from rmqlb.pipeline.result import AuditOptions, summary_json
from rmqlb.pipeline.spark_engine import aggregate_frame
from rmqlb.pipeline.units import ROW_DDL, Row

pytestmark = pytest.mark.spark

CODES = ("IDLE_CONSUMER", "UNCONSUMED_QUEUE", "DUPLICATE_ASSIGNMENT", "IMBALANCE")
SEVERITIES = ("error", "warning", "info")


def random_rows(seed: int) -> list[Row]:
    """A messy fleet: gaps, duplicates, unknown fingerprints, null topics, error rows."""
    rng = random.Random(seed)
    rows: list[Row] = []
    for cluster in ("ns-a", "ns-b"):
        for step in range(7):
            ts = 1_795_000_000_000 + step * 600_000 + (7_000 if cluster == "ns-b" else 0)
            at = f"2026-11-22T00:{step}0:{'07' if cluster == 'ns-b' else '00'}Z"
            copies = 2 if rng.random() < 0.2 else 1  # the same snapshot read twice
            for _ in range(copies):
                rows.append(
                    (
                        "snapshot",
                        cluster,
                        ts,
                        at,
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        "/p",
                        None,
                    )
                )
                for g in range(6):
                    if rng.random() < 0.1:
                        continue  # the group is missing from this snapshot
                    group = f"G{g}"
                    fp = rng.choice(("a", "b", None)) if g % 2 else "a"
                    lag = rng.choice((None, rng.randrange(0, 5000)))
                    rows.append(
                        (
                            "group",
                            cluster,
                            ts,
                            at,
                            group,
                            None,
                            None,
                            None,
                            rng.randrange(0, 4),
                            lag,
                            fp,
                            "/p",
                            None,
                        )
                    )
                    for code in CODES:
                        if rng.random() < 0.35:
                            topic = rng.choice(("T1", "T2", None))
                            rows.append(
                                (
                                    "finding",
                                    cluster,
                                    ts,
                                    at,
                                    group,
                                    topic,
                                    code,
                                    rng.choice(SEVERITIES),
                                    rng.randrange(0, 3),
                                    rng.choice((None, 10)),
                                    None,
                                    "/p",
                                    None,
                                )
                            )
    rows.append(
        (
            "error",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            "/bad.json",
            "not JSON",
        )
    )
    rng.shuffle(rows)
    return rows


def _parquet_rows(path: Path, name: str) -> list[dict[str, Any]]:
    table = pq.read_table(path / name)
    assert table.column_names == list(TABLE_COLUMNS[name])
    keys = [c for c in ("cluster", "group", "ts", "topic", "code") if c in table.column_names]
    return sorted(table.to_pylist(), key=lambda r: tuple(str(r[k]) for k in keys))


@pytest.mark.parametrize("seed", [1])
def test_spark_and_python_aggregations_agree(spark: Any, tmp_path: Path, seed: int) -> None:
    rows = random_rows(seed)
    options = AuditOptions(persistent_window=3, flap_threshold=1, top=5)
    local, tables = aggregate(rows, options)
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
