"""What the Spark engine is given to read: special files are skipped before Spark opens them,
with the reason the local engine gives (no Spark started here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rmqlb.errors import InputError
from rmqlb.fileio import InputKind, max_input_size, read_input
from rmqlb.pipeline.inputs import InputPlan, Layout, local_files, plan_inputs, spark_plan

GOOD = b'{"format": "rmqlb.snapshot/1", "topics": {}, "groups": {}}'


def _local_reason(path: str) -> str:
    """Why the local engine's reader refuses ``path`` (as its error row says)."""
    with pytest.raises(InputError) as refused:
        read_input(path, InputKind.AUDIT)
    return str(refused.value).removeprefix(f"{path}: ")


def _fleet(tmp_path: Path) -> Path:
    fleet = tmp_path / "fleet"
    (fleet / "sub").mkdir(parents=True)
    (fleet / "good.json").write_bytes(GOOD)
    (fleet / "sub" / "good.jsonl").write_bytes(GOOD + b"\n" + GOOD)
    (fleet / "big.json").write_bytes(GOOD + b" " * 200)
    os.mkfifo(fleet / "fifo.json")
    (fleet / "sub" / "zero.jsonl").symlink_to("/dev/zero")
    loop = fleet / "loop.json"
    loop.symlink_to(loop)
    return fleet


def test_special_files_in_a_directory_are_skipped_with_the_local_engines_reason(
    tmp_path: Path,
) -> None:
    fleet = _fleet(tmp_path)
    with max_input_size(2 * len(GOOD) + 50):
        plan, skipped = spark_plan(plan_inputs([str(fleet)]))
        reasons = {path: _local_reason(path) for path, _ in skipped}
    assert plan.directories == () and plan.uris == ()
    assert plan.whole_files == (str(fleet / "good.json"),)
    assert plan.line_files == (str(fleet / "sub" / "good.jsonl"),)
    assert dict(skipped) == reasons
    assert sorted(Path(p).name for p in reasons) == [
        "big.json",
        "fifo.json",
        "loop.json",
        "zero.jsonl",
    ]
    words = {Path(p).name: why for p, why in skipped}
    assert "FIFO" in words["fifo.json"]
    assert "character device" in words["zero.jsonl"]
    assert words["loop.json"] == "is a symlink loop"
    assert "--max-input-size" in words["big.json"]


def test_the_spark_listing_is_the_local_listing(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    plan = plan_inputs([str(fleet)])
    spark, skipped = spark_plan(plan)
    listed = [(p, Layout.whole) for p in spark.whole_files]
    listed += [(p, Layout.lines) for p in spark.line_files]
    listed += [(p, Layout.lines if p.endswith(".jsonl") else Layout.whole) for p, _ in skipped]
    assert sorted(listed) == sorted(local_files(plan))


def test_a_special_file_named_explicitly_is_skipped_and_uris_stay_for_spark(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "named.jsonl"
    os.mkfifo(fifo)
    good = tmp_path / "one.json"
    good.write_bytes(GOOD)
    plan = plan_inputs([str(fifo), str(good), "s3a://bucket/fleet"])
    spark, skipped = spark_plan(plan)
    assert spark == InputPlan((str(good),), (), (), ("s3a://bucket/fleet",))
    assert skipped == [(str(fifo), _local_reason(str(fifo)))]
