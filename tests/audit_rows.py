"""A messy fleet of audit rows (gaps, duplicates, unknown fingerprints, null topics, error
rows), shared by the aggregation tests of both engines."""

from __future__ import annotations

import random

from rmqlb.pipeline.units import Row

CODES = ("IDLE_CONSUMER", "UNCONSUMED_QUEUE", "DUPLICATE_ASSIGNMENT", "IMBALANCE")
SEVERITIES = ("error", "warning", "info")


def _row(
    kind: str,
    cluster: str | None = None,
    ts: int | None = None,
    at: str | None = None,
    *,
    group: str | None = None,
    topic: str | None = None,
    code: str | None = None,
    severity: str | None = None,
    count: int | None = None,
    lag: int | None = None,
    fingerprint: str | None = None,
    path: str = "/p",
    message: str | None = None,
) -> Row:
    """One audit row, its columns named."""
    columns = (kind, cluster, ts, at, group, topic, code, severity, count, lag, fingerprint)
    return (*columns, path, message)


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
                rows.append(_row("snapshot", cluster, ts, at))
                for g in range(6):
                    if rng.random() < 0.1:
                        continue  # the group is missing from this snapshot
                    group = f"G{g}"
                    fp = rng.choice(("a", "b", None)) if g % 2 else "a"
                    lag = rng.choice((None, rng.randrange(0, 5000)))
                    rows.append(
                        _row(
                            "group", cluster, ts, at,
                            group=group, count=rng.randrange(0, 4), lag=lag, fingerprint=fp,
                        )
                    )  # fmt: skip
                    for code in CODES:
                        if rng.random() < 0.35:
                            topic = rng.choice(("T1", "T2", None))
                            rows.append(
                                _row(
                                    "finding", cluster, ts, at,
                                    group=group, topic=topic, code=code,
                                    severity=rng.choice(SEVERITIES),
                                    count=rng.randrange(0, 3), lag=rng.choice((None, 10)),
                                )
                            )  # fmt: skip
    rows.append(_row("error", path="/bad.json", message="not JSON"))
    rng.shuffle(rows)
    return rows
