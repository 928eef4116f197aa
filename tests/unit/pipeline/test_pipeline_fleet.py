"""The generated fleet, audited in-process with the real diagnosis engine: the audit finds
exactly the injected problems, classified persistent/transient, and exactly the flapping
groups."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.pipeline import AuditOptions, Engine, run_audit, summary_json
from rmqlb.pipeline.generate import MANIFEST, generate_fleet
from rmqlb.snapshot import load_snapshot


def expected_from_manifest(manifest: dict[str, Any], window: int) -> dict[str, Any]:
    """What a correct audit must report, derived from the manifest alone."""
    last = {c["cluster"]: c["capturedAt"][-window:] for c in manifest["clusters"]}
    findings = {}
    for inj in manifest["injections"]:
        if inj["code"] is None:
            continue
        persistent = all(at in inj["capturedAt"] for at in last[inj["cluster"]])
        findings[(inj["cluster"], inj["group"], inj["code"])] = {
            "persistence": "persistent" if persistent else "transient",
            "firstSeen": inj["capturedAt"][0],
            "lastSeen": inj["capturedAt"][-1],
            "snapshots": len(inj["steps"]),
        }
    flapping = {
        (inj["cluster"], inj["group"]): len(inj["steps"]) - 1
        for inj in manifest["injections"]
        if inj["problem"] == "flapping"
    }
    return {"findings": findings, "flapping": flapping}


def check_audit(summary: dict[str, Any], manifest: dict[str, Any], window: int) -> None:
    """Assert ``summary`` reports exactly the injected problems."""
    want = expected_from_manifest(manifest, window)
    assert summary["snapshots"] == manifest["snapshots"]
    assert summary["groups"] == len(manifest["clusters"]) * manifest["groupsPerSnapshot"]
    got = {(f["cluster"], f["group"], f["code"]): f for f in summary["findings"]}
    for key, expected in want["findings"].items():
        assert key in got, f"injected {key} not found"
        assert {k: got[key][k] for k in expected} == expected, key
    # no finding on a group nobody broke (secondary codes on broken groups are fine)
    broken = {(c, g) for c, g, _ in want["findings"]}
    assert {(f["cluster"], f["group"]) for f in summary["findings"]} == broken
    assert {(f["cluster"], f["group"]): f["changes"] for f in summary["flapping"]} == want[
        "flapping"
    ]


@pytest.mark.parametrize(("seed", "files"), [(1, 12), (7, 15), (3, 5)])
def test_local_audit_finds_exactly_the_injected_problems(
    tmp_path: Path, seed: int, files: int
) -> None:
    manifest = generate_fleet(tmp_path / "corpus", files, seed=seed, groups=12)
    assert {i["problem"] for i in manifest["injections"]} >= {
        "idle_consumers",
        "split_subscription",
        "duplicate_client_id",
        "write_exceeds_read",
    }
    out = tmp_path / "out"
    result = run_audit([str(tmp_path / "corpus")], engine=Engine.local, out=out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary == summary_json(result)
    check_audit(summary, manifest, window=3)
    assert result.problem_count == 0


def test_window_changes_the_classification(tmp_path: Path) -> None:
    manifest = generate_fleet(tmp_path / "corpus", 12, seed=1)
    result = run_audit(
        [str(tmp_path / "corpus")], engine=Engine.local, options=AuditOptions(persistent_window=1)
    )
    check_audit(summary_json(result), manifest, window=1)


def test_generated_snapshots_are_valid_and_jsonl_gives_the_same_audit(tmp_path: Path) -> None:
    files = generate_fleet(tmp_path / "a", 8, seed=4)
    for path in sorted((tmp_path / "a").rglob("*.json")):
        if path.name != MANIFEST:
            load_snapshot(path)
    lines = generate_fleet(tmp_path / "b", 8, seed=4, jsonl=True)
    assert files["injections"] == lines["injections"]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        MANIFEST,
        "prod-eu.jsonl",
        "prod-us.jsonl",
    ]
    a = summary_json(run_audit([str(tmp_path / "a")], engine=Engine.local))
    b = summary_json(run_audit([str(tmp_path / "b")], engine=Engine.local))
    assert a == b
    check_audit(b, lines, window=3)


def test_generator_is_deterministic(tmp_path: Path) -> None:
    one = generate_fleet(tmp_path / "one", 6, seed=11)
    two = generate_fleet(tmp_path / "two", 6, seed=11)
    assert one == two
    names = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.json"))
    for name in names:
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "two" / name).read_text()
    assert generate_fleet(tmp_path / "three", 6, seed=12)["injections"] != one["injections"]
