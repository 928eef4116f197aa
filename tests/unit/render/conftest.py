"""Fixtures for the render tests."""

from __future__ import annotations

import pytest
from report_builders import REPORTS

from rmqlb.diagnose.report import Report


@pytest.fixture(params=sorted(REPORTS))
def named_report(request: pytest.FixtureRequest) -> tuple[str, Report]:
    """Each hand-built report with its name."""
    name: str = request.param
    return name, REPORTS[name]()
