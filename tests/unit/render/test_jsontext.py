"""``rmqlb.jsontext.dumps`` writes the same text with either engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_core import to_json

from rmqlb import jsontext
from rmqlb.diagnose import diagnose, report_to_json
from rmqlb.diagnose.status import status, status_to_json
from rmqlb.jsontext import SMALL_DOCUMENT, _small, _standard, dumps
from rmqlb.snapshot import load_snapshot

EXAMPLES = sorted((Path(__file__).parents[3] / "examples").glob("*.json"))


def _documents() -> list[tuple[str, object]]:
    docs: list[tuple[str, object]] = []
    for path in EXAMPLES:
        snapshot = load_snapshot(path)
        docs.append((f"report {path.name}", report_to_json(diagnose(snapshot))))
        docs.append((f"status {path.name}", status_to_json(status(snapshot))))
    return docs


@pytest.mark.parametrize("indent", [None, 2])
def test_stdlib_engine_matches_pydantic_core_on_every_example(indent: int | None) -> None:
    docs = _documents()
    assert len(docs) >= 10
    for name, doc in docs:
        assert _small(doc), name  # the examples are small: the stdlib writes them
        assert _standard(doc, indent) is not None, name
        assert dumps(doc, indent) == to_json(doc, indent=indent).decode(), name


@pytest.mark.parametrize(
    "value", [1e-05, 1.5e-07, -3e-06, float("nan"), float("inf"), float("-inf")]
)
def test_floats_the_engines_spell_differently_go_through_pydantic_core(value: float) -> None:
    doc = {"consumers": [{"rate": value}]}
    assert _standard(doc, None) is None
    assert _standard(doc, 2) is None
    assert dumps(doc) == to_json(doc).decode()


def test_a_string_that_looks_like_a_small_float_costs_speed_not_text() -> None:
    doc = {"group": "g1e-5", "rate": 0.5}
    assert _standard(doc, None) is None  # written by pydantic-core: the same text
    assert dumps(doc) == to_json(doc).decode()


def test_plain_values_match() -> None:
    doc = {"a": (1, 2.5, 0.0, -0.0, 1e-4, 1e16, 1e300), "é": "\x1b\x7f\u2028", "n": None, "t": True}
    assert _small(doc)
    for indent in (None, 2):
        assert _standard(doc, indent) is not None
        assert dumps(doc, indent) == to_json(doc, indent=indent).decode()


def test_big_documents_go_through_pydantic_core() -> None:
    doc = {"rows": [{"q": i} for i in range(SMALL_DOCUMENT)]}
    assert not _small(doc)
    assert json.loads(dumps(doc)) == doc


def test_pydantic_core_writes_when_imported_already(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its import is what made the standard library worth it: once paid (a big snapshot was
    read with it), it writes every document, small ones too."""

    def unused(document: object, indent: int | None) -> str | None:
        raise AssertionError("the standard library wrote a document")

    monkeypatch.setattr(jsontext, "_standard", unused)
    doc = {"a": [1, 2.5], "b": "é"}
    assert dumps(doc) == to_json(doc).decode()
