"""Corrupted files always give a one-line InputError, never another exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqlb.diagnose import diagnose, report_to_json
from rmqlb.errors import InputError
from rmqlb.snapshot import decode_json, load_snapshot, parse_snapshot

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SOURCES = [p.read_bytes() for p in sorted(EXAMPLES.glob("*.json"))]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _check(data: bytes) -> None:
    try:
        snap = parse_snapshot(decode_json(data, "fuzz.json"), source="fuzz.json")
    except InputError as exc:
        text = str(exc)
        assert text.startswith("fuzz.json: ")
        assert "\n" not in text
        return
    json.dumps(report_to_json(diagnose(snap)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(SOURCES),
    st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=6
    ),
)
def test_mutated_bytes(source: bytes, edits: list[tuple[float, int]]) -> None:
    data = bytearray(source)
    for where, byte in edits:
        data[int(where * len(data))] = byte
    _check(bytes(data))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), st.data())
def test_wrong_types_anywhere(source: bytes, data: st.DataObject) -> None:
    doc = json.loads(source)
    node: Any = doc
    path: list[Any] = []
    while isinstance(node, (dict, list)) and node and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    replacement = data.draw(json_values)
    if not path:
        doc = replacement
    else:
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = replacement
    _check(json.dumps(doc).encode())


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes(data: bytes) -> None:
    _check(data)


def test_truncated_file_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(SOURCES[0][: len(SOURCES[0]) // 2])
    try:
        load_snapshot(path)
    except InputError as exc:
        assert "invalid JSON" in str(exc)
    else:
        raise AssertionError("a truncated file must not load")


def test_deep_nesting() -> None:
    _check(b"[" * 100_000)
    _check(b'{"format": "rmqlb.snapshot/1", "topics": ' + b"[" * 5000)
