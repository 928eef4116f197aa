"""Every worked example in the package's docstrings holds: one doctest run per module that
has examples (found by ``>>>`` in its source). Modules that need an optional extra (pyspark,
pandas, pyarrow, plotly) are skipped, with the reason, where that extra is not installed."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import rmqlb

PACKAGE = Path(rmqlb.__file__).parent
OPTIONAL = ("pyspark", "pandas", "pyarrow", "plotly")


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>> " not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_package_has_worked_examples() -> None:
    assert len(MODULES) >= 30


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name}")
        raise
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0
