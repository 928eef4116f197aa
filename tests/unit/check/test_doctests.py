"""The worked examples in the check modules' docstrings hold."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from rmqlb.check import brokerfiles, jsonlines, render, rules, synth


@pytest.mark.parametrize("module", [brokerfiles, jsonlines, render, rules, synth])
def test_docstring_examples(module: ModuleType) -> None:
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0
