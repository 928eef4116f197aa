"""``--engine auto``: which engine a fleet gets, and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from rmqlb.pipeline import Engine, choose_engine
from rmqlb.pipeline.generate import generate_fleet
from rmqlb.pipeline.inputs import plan_inputs


def test_small_local_fleets_stay_in_process_and_big_ones_go_to_spark(tmp_path: Path) -> None:
    generate_fleet(tmp_path / "f", 4, seed=1, groups=5)
    plan = plan_inputs([str(tmp_path / "f")])
    size = sum(p.stat().st_size for p in (tmp_path / "f").rglob("[!_]*.json"))
    engine, why = choose_engine(plan, None, max_bytes=size)
    assert engine is Engine.local and "in-process" in why
    engine, why = choose_engine(plan, None, max_bytes=size - 1)
    assert engine is Engine.spark and "MB of snapshots" in why


def test_a_master_a_driver_or_remote_input_means_spark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate_fleet(tmp_path / "f", 2, seed=1, groups=2)
    plan = plan_inputs([str(tmp_path / "f")])
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert choose_engine(plan, "local[2]") == (Engine.spark, "--master local[2] given")
    assert choose_engine(plan_inputs(["s3a://bucket/dumps/"]), None)[0] is Engine.spark
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "4242")
    assert choose_engine(plan, None) == (Engine.spark, "running inside a Spark driver")
