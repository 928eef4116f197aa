"""Shared test fixtures: where the shared golden data lives, when it is there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests run without hypothesis's 200 ms deadline: a cold first example on a slow
# 2-core machine has exceeded it, and a property's speed is measured in bench/, not here.
settings.register_profile("rmqlb", deadline=None)
settings.load_profile("rmqlb")

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("RMQLB_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the clone; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared golden data not found at {SHARED} (set RMQLB_SHARED)")
    return SHARED
