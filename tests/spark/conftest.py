"""One SparkSession for the whole Spark test session (start-up costs 8-19 s here).

Started the way ``rmqlb audit`` starts its own (:func:`rmqlb.pipeline.session.spark_session`
on ``local[2]``), so the tests exercise the production settings. Every test in this directory
is marked ``spark``; run them serially.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rmqlb.pipeline.session import spark_session


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/spark/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.spark)
            # The JVM's start-up and Py4J calls trigger collections that can finalize a
            # socket an earlier test left for the garbage collector: reported there, it
            # would fail a Spark test that has nothing to do with it.
            item.add_marker(
                pytest.mark.filterwarnings(
                    "ignore:Exception ignored in.*(socket|Transport):"
                    "pytest.PytestUnraisableExceptionWarning"
                )
            )


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The shared local[2] SparkSession."""
    pytest.importorskip("pyspark")
    with spark_session("local[2]") as session:
        yield session
