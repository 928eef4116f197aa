"""The hostile-input corpus: special files, oversized and endless inputs, duplicate keys,
invalid UTF-8, deep nesting and out-of-range numbers, given to every command that reads a
file. Each is refused in one line with exit 2 (audit: the file is skipped with its reason),
at once, never a hang, a traceback or memory exhaustion."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from runner import ROOT, rmqlb_child

from rmqlb.cli import run

pytestmark = pytest.mark.timeout(120)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
CASES = ROOT / "examples" / "simulate" / "cases.jsonl"
CHECK = ROOT / "examples" / "check" / "clean.yaml"

# the commands that read a file, with the file's place in their arguments
READERS: dict[str, Callable[[str], list[str]]] = {
    "explain": lambda f: ["explain", "--dump", f, "--all-groups"],
    "status": lambda f: ["status", "--dump", f],
    "simulate --dump": lambda f: ["simulate", "--dump", f, "--group", "OrderGroup"],
    "simulate --input": lambda f: ["simulate", "--input", f],
    "check": lambda f: ["check", f],
}


def _special(tmp_path: Path, kind: str) -> tuple[str, str]:
    """A path of ``kind`` and the words the refusal must use."""
    if kind == "fifo":
        path = tmp_path / "fifo.json"
        os.mkfifo(path)
        return str(path), "FIFO"
    if kind == "dev-zero":
        path = tmp_path / "zero.json"
        path.symlink_to("/dev/zero")
        return str(path), "character device"
    if kind == "directory":
        return str(tmp_path), "directory"
    if kind == "symlink-loop":
        path = tmp_path / "loop.json"
        path.symlink_to(path)
        return str(path), "symlink loop"
    raise AssertionError(kind)


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "symlink-loop"])
@pytest.mark.parametrize("reader", READERS)
def test_a_special_file_is_refused_naming_what_it_is(
    reader: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, words = _special(tmp_path, kind)
    assert run(READERS[reader](path)) == 2
    err = _one_error(capsys)
    assert words in err, err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "symlink-loop"])
def test_audit_skips_a_special_file_with_its_reason(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "fleet"
    directory.mkdir()
    (directory / "good.json").write_bytes(DEMO.read_bytes())
    path, words = _special(directory, kind)
    assert run(["audit", "--engine", "local", str(directory), "-o", "json"]) in (0, 1)
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["snapshots"] == 1
    assert any(words in line and path in line for line in captured.err.splitlines()), captured.err


ROOMS = ROOT / "examples" / "simulate" / "rooms.yaml"
CONFIG = ROOT / "examples" / "simulate" / "config.yaml"

# every command that reads an input file: its arguments and the file it reads
SIZED: dict[str, tuple[list[str], Path]] = {
    "explain": (["explain", "--dump", str(DEMO), "--all-groups"], DEMO),
    "status": (["status", "--dump", str(DEMO)], DEMO),
    "offsets": (["offsets", "OrderGroup", "--dump", str(DEMO)], DEMO),
    "client": (["client", "10.0.1.11@2101#1900214562211", "--dump", str(DEMO)], DEMO),
    "simulate --dump": (["simulate", "--dump", str(DEMO), "--group", "OrderGroup"], DEMO),
    "simulate --input": (["simulate", "--input", str(CASES)], CASES),
    "simulate --config": (
        ["simulate", "--strategy", "CONFIG", "--config", str(CONFIG), "--queues", "4"],
        CONFIG,
    ),
    "simulate --rooms": (
        ["simulate", "--strategy", "MACHINE_ROOM_NEARBY", "--rooms", str(ROOMS), "--brokers",
         "3", "--queues", "4", "--consumer-id", "10.1.0.1@app"],
        ROOMS,
    ),
    "check": (["check", str(CHECK)], CHECK),
}  # fmt: skip


@pytest.mark.parametrize("reader", SIZED)
def test_max_input_size_refuses_a_file_just_over_it_and_raises_the_limit(
    reader: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args, path = SIZED[reader]
    size = path.stat().st_size
    assert run([*args, "--max-input-size", str(size - 1)]) == 2
    err = _one_error(capsys)
    assert f"larger than the {size - 1:,} bytes limit" in err
    assert "--max-input-size" in err
    assert run([*args, "--max-input-size", str(size)]) in (0, 1)
    assert "larger than" not in capsys.readouterr().err


def test_max_input_size_raises_a_limit_of_a_whole_kind(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RMQLB_MAX_INPUT_SIZE", "1K")  # the default of the flag
    assert run(["status", "--dump", str(DEMO)]) == 2
    err = _one_error(capsys)
    assert "larger than the 1,024 bytes limit for a snapshot file" in err
    assert "raise it with --max-input-size" in err
    assert run(["status", "--dump", str(DEMO), "--max-input-size", "1MiB"]) in (0, 1)
    monkeypatch.setenv("RMQLB_MAX_INPUT_SIZE", "64M")
    assert run(["status", "--dump", str(DEMO)]) in (0, 1)


def test_audit_skips_a_file_over_max_input_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "big.json").write_bytes(DEMO.read_bytes() + b" " * 10)
    (tmp_path / "good.json").write_bytes(DEMO.read_bytes())
    limit = str(DEMO.stat().st_size)
    args = ["audit", "--engine", "local", str(tmp_path), "-o", "json", "--max-input-size", limit]
    assert run(args) in (0, 1)
    captured = capsys.readouterr()
    assert json.loads(captured.out)["snapshots"] == 1
    assert "big.json" in captured.err and "--max-input-size" in captured.err, captured.err


@pytest.mark.parametrize("value", ["lots", "0", "2XB", "-5"])
def test_a_bad_max_input_size_is_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["status", "--dump", str(DEMO), "--max-input-size", value]) == 2
    err = _one_error(capsys)
    assert "--max-input-size" in err


@pytest.mark.parametrize(
    ("text", "size"),
    [("100", 100), ("100B", 100), ("2GiB", 2 * 1024**3), ("2G", 2 * 1024**3),
     ("500MB", 500_000_000), ("4 KiB", 4096), ("1kb", 1000), ("1TiB", 1024**4)],
)  # fmt: skip
def test_sizes_are_read_by_one_rule(text: str, size: int) -> None:
    from rmqlb.fileio import parse_size

    assert parse_size(text) == size


def test_an_endless_stdin_ends_in_exit_2_within_the_limit() -> None:
    with open("/dev/zero", "rb") as zero:
        outcome = rmqlb_child(
            ["explain", "--dump", "-"],
            stdin=zero.fileno(),
            env={"RMQLB_MAX_INPUT_SIZE": "32M"},
        )
    assert outcome.code == 2, outcome
    assert len(outcome.err_lines) == 1 and "larger than the 32 MiB limit" in outcome.err
    assert outcome.max_rss_mib < 300, outcome.max_rss_mib


# --- one JSON reading ---------------------------------------------------------------------

DUPLICATE = b'{"format": "rmqlb.snapshot/1", "topics": {}, "topics": {}, "groups": {}}'
BAD_UTF8 = b'{"format": "rmqlb.snapshot/1", "topics": {"T\xff": {"queues": 1}}, "groups": {}}'
DEEP = b"[" * 100_000 + b"]" * 100_000
HUGE_INT = (
    b'{"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": 1'
    + b"0" * 400
    + b'}}, "groups": {}}'
)
LONE_SURROGATE = b'{"format": "rmqlb.snapshot/1", "topics": {"\\ud800": {}}, "groups": {}}'
BAD_JSON = {
    "duplicate key": (DUPLICATE, "duplicate key 'topics'"),
    "invalid UTF-8": (BAD_UTF8, "not UTF-8 text (byte 0xff"),
    "deep nesting": (DEEP, "nested too deeply"),
    "huge integer": (HUGE_INT, "out of range (a Java long"),
    "lone surrogate": (LONE_SURROGATE, "lone surrogate"),
}


@pytest.mark.parametrize("case", BAD_JSON)
@pytest.mark.parametrize("reader", ["explain", "status", "simulate --dump", "simulate --input"])
def test_every_loader_refuses_the_same_json_the_same_way(
    reader: str, case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, words = BAD_JSON[case]
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    assert run(READERS[reader](str(path))) == 2
    err = _one_error(capsys)
    assert words in err, err


@pytest.mark.parametrize("case", BAD_JSON)
def test_audit_skips_the_same_json_with_the_same_reason(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, words = BAD_JSON[case]
    directory = tmp_path / "fleet"
    directory.mkdir()
    (directory / "good.json").write_bytes(DEMO.read_bytes())
    (directory / "bad.json").write_bytes(data)
    assert run(["audit", "--engine", "local", str(directory), "-o", "json"]) in (0, 1)
    err = capsys.readouterr().err
    assert any("bad.json" in line and words in line for line in err.splitlines()), err


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"topics": {}, "topics": {}}', "duplicate"),
        ("[" * 100_000 + "]" * 100_000, "deep"),
    ],
)
def test_check_refuses_duplicate_keys_and_deep_nesting(
    text: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "conf.json"
    path.write_text(text)
    assert run(["check", str(path)]) == 2
    assert words in _one_error(capsys).lower()


# --- YAML: a duplicate key is refused as in JSON -------------------------------------------

YAML_DUPLICATES: dict[str, tuple[list[str], str, str, int]] = {
    # reader: (arguments before the file, YAML with a key twice, the key, its second line)
    "check": (
        ["check"],
        "topics:\n  T: {queues: 4, perm: 6}\ngroups:\n  G: {topics: [T]}\ntopics:\n  U: {}\n",
        "topics",
        5,
    ),
    "simulate --config": (
        ["simulate", "--strategy", "CONFIG", "--queues", "4", "--config"],
        '10.0.0.1@a: ["broker-a:0"]\n10.0.0.2@b: ["broker-a:1"]\n10.0.0.1@a: ["broker-a:2"]\n',
        "10.0.0.1@a",
        3,
    ),
    "simulate --rooms": (
        ["simulate", "--strategy", "MACHINE_ROOM_NEARBY", "--brokers", "3", "--queues", "4",
         "--consumer-id", "10.1.0.1@app", "--rooms"],
        "brokers:\n  broker-a: hz\n  broker-b: hz\n  broker-a: sh\nconsumers: {}\n",
        "broker-a",
        4,
    ),
    "check, nested in free-form values": (
        ["check"],
        "topics:\n  T: {queues: 4, perm: 6}\ngroups:\n  G:\n    topics: [T]\n"
        "    strategy: {name: AVG, name: AVG_BY_CIRCLE}\n",
        "name",
        6,
    ),
}  # fmt: skip


@pytest.mark.parametrize("reader", YAML_DUPLICATES)
def test_yaml_inputs_refuse_a_duplicate_key_naming_it_and_its_line(
    reader: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, text, key, line = YAML_DUPLICATES[reader]
    path = tmp_path / "in.yaml"
    path.write_text(text)
    assert run([*args, str(path)]) == 2
    err = _one_error(capsys)
    assert f"duplicate key {key!r}" in err, err
    assert f"{path}:{line}:" in err or f"at line {line} " in err, err


def test_yaml_keeps_merge_keys_and_repeated_keys_in_different_mappings() -> None:
    from rmqlb.yamlio import safe_load

    text = "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\nlist: [{a: 1}, {a: 1}]\n"
    assert safe_load(text) == {
        "base": {"x": 1, "y": 2},
        "d": {"x": 3, "y": 2},
        "list": [{"a": 1}, {"a": 1}],
    }


def test_check_refuses_invalid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "conf.yaml"
    path.write_bytes(b"topics:\n  T\xff: {queues: 4}\n")
    assert run(["check", str(path)]) == 2
    assert "not UTF-8 text" in _one_error(capsys)


# --- one range per number -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "--strategy", "CONSISTENT_HASH:vnodes=1000000000", "--queues", "8"],
        ["simulate", "--strategy", "CONSISTENT_HASH:vnodes=" + "9" * 5000, "--queues", "8"],
        ["explain", "--dump", str(DEMO), "--strategy", "CONSISTENT_HASH:vnodes=1000000000"],
        ["simulate", "--queues", "1000000000", "--consumers", "2"],
    ],
)
def test_numbers_on_the_command_line_are_range_checked(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(args) == 2
    err = _one_error(capsys)
    assert "out of range" in err or "must be an integer" in err, err


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ({"strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 10**9}}, "at most 100,000"),
        ({"queues": [{"brokerName": "b", "queueId": -5}]}, "queueId: -5 is out of range"),
        ({"queues": [{"brokerName": "b", "queueId": 2**40}]}, "queueId"),
    ],
)
def test_numbers_in_a_simulate_case_are_range_checked(
    case: dict[str, object], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base: dict[str, object] = {
        "queues": [{"brokerName": "b", "queueId": 0}],
        "consumers": ["c1"],
        "strategy": {"name": "AVG"},
    }
    path = tmp_path / "case.json"
    path.write_text(json.dumps({**base, **case}))
    assert run(["simulate", "--input", str(path), "-o", "plain"]) == 2
    captured = capsys.readouterr()
    assert words in captured.out + captured.err, captured


def test_a_broker_offset_beyond_a_java_long_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = DEMO.read_text()
    doc = json.loads(text)
    group = next(iter(doc["groups"].values()))
    group["offsets"][0]["brokerOffset"] = 10**400
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    assert run(["status", "--dump", str(path)]) == 2
    assert "out of range (a Java long" in _one_error(capsys)


def test_simulate_reads_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "cases.json"
    os.mkfifo(fifo)
    outcome = rmqlb_child(["simulate", "--input", str(fifo)], timeout=30)
    assert outcome.code == 2 and "FIFO" in outcome.err, outcome


def test_stdin_still_works() -> None:
    with open(DEMO, "rb") as source:
        outcome = rmqlb_child(["status", "--dump", "-"], stdin=source.fileno())
    assert outcome.code in (0, 1), outcome
    assert "OrderGroup" in outcome.out
