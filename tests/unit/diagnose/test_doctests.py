"""The worked examples in the diagnosis modules' docstrings hold."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

import rmqlb.diagnose
from rmqlb.diagnose import context, report
from rmqlb.diagnose.rules import _text, allocation


@pytest.mark.parametrize("module", [rmqlb.diagnose, context, report, _text, allocation])
def test_docstring_examples(module: ModuleType) -> None:
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0
