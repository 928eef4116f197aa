"""Shared test fixtures: where the shared golden data lives, when it is there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("RMQLB_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the clone; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared golden data not found at {SHARED} (set RMQLB_SHARED)")
    return SHARED
