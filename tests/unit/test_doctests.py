"""Every worked example in the package's docstrings holds: one doctest run per module that
has examples (found by ``>>>`` in its source), and every example in the source is run (an
example doctest cannot find, in a nested function or a comment, would otherwise pass unseen).
Modules that need an optional extra (pyspark, pandas, pyarrow, plotly) are skipped, with the
reason, where that extra is not installed."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

import rmqlb

PACKAGE = Path(rmqlb.__file__).parent
OPTIONAL = ("pyspark", "pandas", "pyarrow", "plotly")
PROMPT = re.compile(r"^\s*>>> ", re.MULTILINE)


def _modules_with_examples() -> dict[str, int]:
    """Module name -> how many ``>>>`` prompts its source holds."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        prompts = len(PROMPT.findall(path.read_text(encoding="utf-8")))
        if not prompts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = prompts
    return names


MODULES = _modules_with_examples()


def test_the_package_has_worked_examples() -> None:
    assert len(MODULES) >= 30


@pytest.mark.parametrize("name", sorted(MODULES))
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name}")
        raise
    failures, tried = doctest.testmod(module)
    assert failures == 0
    assert tried == MODULES[name], f"{name}: {tried} of {MODULES[name]} examples run"
