"""One SparkSession for the whole Spark test session (start-up costs 8-19 s here).

Started the way ``rmqlb audit`` starts its own (:func:`rmqlb.pipeline.session.spark_session`
on ``local[2]``), so the tests exercise the production settings. Every test in this directory
is marked ``spark``; run them serially.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from rmqlb.pipeline.session import spark_session


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/spark/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.spark)


def _drain() -> None:
    """Collect the garbage earlier tests left (an asyncio stream or socket some earlier test
    leaves to the collector, not yet traced to its test): the JVM's start-up and Py4J calls
    trigger collections that would otherwise finalize it inside a Spark test and fail it for
    something it did not do."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


@pytest.fixture(autouse=True)
def _drain_garbage() -> None:
    """Before each Spark test: :func:`_drain`."""
    _drain()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The shared local[2] SparkSession."""
    pytest.importorskip("pyspark")
    _drain()
    with spark_session("local[2]") as session:
        yield session
