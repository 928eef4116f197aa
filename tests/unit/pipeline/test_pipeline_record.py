"""``audit_record`` (one parse and one diagnosis per snapshot) gives exactly the rows of the
per-group path ``diagnose_units(split_record(...))``, including when it has to fall back."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.pipeline.generate import generate_fleet
from rmqlb.pipeline.units import (
    KIND_ERROR,
    KIND_GROUP,
    audit_record,
    diagnose_units,
    split_record,
)


def _per_group(text: str, path: str) -> list[Any]:
    return list(diagnose_units(split_record(text, path, encode=False)))


def test_whole_snapshot_path_matches_per_group_path_on_a_generated_fleet(
    tmp_path: Path,
) -> None:
    generate_fleet(tmp_path / "fleet", 12, seed=5, groups=24, clusters=3)
    files = sorted((tmp_path / "fleet").rglob("[!_]*.json"))
    assert files
    kinds: set[str] = set()
    for file in files:
        text = file.read_text()
        rows = audit_record(text, str(file))
        assert rows == _per_group(text, str(file))
        kinds.update(r[0] for r in rows)
    assert {"snapshot", "group", "finding"} <= kinds  # the fleet has injected problems


def _fleet_record(tmp_path: Path) -> dict[str, Any]:
    generate_fleet(tmp_path / "one", 1, seed=3, groups=6, clusters=1)
    [file] = sorted((tmp_path / "one").rglob("[!_]*.json"))
    data: dict[str, Any] = json.loads(file.read_text())
    return data


def test_a_bad_route_no_group_uses_falls_back_and_changes_nothing(tmp_path: Path) -> None:
    data = _fleet_record(tmp_path)
    data["topics"]["UNUSED_BROKEN"] = {"queueDatas": "not a list"}
    text = json.dumps(data)
    rows = audit_record(text, "/d/s.json")
    assert rows == _per_group(text, "/d/s.json")
    assert [r for r in rows if r[0] == KIND_ERROR] == []  # no group touches that topic
    assert len([r for r in rows if r[0] == KIND_GROUP]) == len(data["groups"])


def test_one_bad_group_gives_one_error_row_and_the_others_are_diagnosed(
    tmp_path: Path,
) -> None:
    data = _fleet_record(tmp_path)
    bad = next(iter(data["groups"]))
    data["groups"][bad] = {"consumers": "nope"}
    text = json.dumps(data)
    rows = audit_record(text, "/d/s.json")
    assert rows == _per_group(text, "/d/s.json")
    errors = [r for r in rows if r[0] == KIND_ERROR]
    assert [(r[4], r[11]) for r in errors] == [(bad, "/d/s.json")]
    assert len([r for r in rows if r[0] == KIND_GROUP]) == len(data["groups"]) - 1


def test_capture_errors_play_no_part_in_either_path(tmp_path: Path) -> None:
    data = _fleet_record(tmp_path)
    with_errors = copy.deepcopy(data)
    with_errors["errors"] = [{"target": "x", "request": "GET", "message": "timeout"}]
    text = json.dumps(with_errors)
    assert audit_record(text, "/d/s.json") == _per_group(text, "/d/s.json")
    assert audit_record(text, "/d/s.json") == audit_record(json.dumps(data), "/d/s.json")


@pytest.mark.parametrize(
    "text", ["{", "[]", '{"format": "rmqlb.snapshot/1"}', "  ", '{"format": "rmqlb.audit/1"}']
)
def test_unusable_records_give_the_same_rows(text: str) -> None:
    assert audit_record(text, "/d/x.json") == _per_group(text, "/d/x.json")
