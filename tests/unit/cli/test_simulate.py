"""``rmqlb simulate`` in-process: every output format, the modes, and every bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.cli import run

Capsys = pytest.CaptureFixture[str]


def sim(capsys: Capsys, *args: str) -> tuple[int, str, str]:
    code = run(["simulate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def sim_json(capsys: Capsys, *args: str) -> dict[str, Any]:
    code, out, err = sim(capsys, *args, "--output", "json")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 1
    obj: dict[str, Any] = json.loads(lines[0])
    return obj


def counts(obj: dict[str, Any]) -> dict[str, int]:
    return {cid: len(qs) for cid, qs in obj["assignments"].items()}


def assert_bad_input(code: int, out: str, err: str, needle: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rmqlb: error:"), err
    assert needle in lines[0], err


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("NO_COLOR", raising=False)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------- formats


def test_sixteen_queues_three_consumers_plain(capsys: Capsys) -> None:
    code, out, err = sim(capsys, "--queues", "16", "--consumers", "3")
    assert code == 0 and err == ""
    rows = [line.split() for line in out.splitlines() if line.startswith("10.0.0.1@")]
    assert rows == [
        ["10.0.0.1@consumer-0", "broker-a:0..5", "6"],
        ["10.0.0.1@consumer-1", "broker-a:6..10", "5"],
        ["10.0.0.1@consumer-2", "broker-a:11..15", "5"],
    ]
    assert "min 5, max 6 per consumer; 0 idle" in out


def test_table_output(capsys: Capsys) -> None:
    code, out, _ = sim(capsys, "--queues", "16", "--consumers", "3", "-o", "table", "--no-color")
    assert code == 0
    assert "\x1b[" not in out
    assert "broker-a:0..5" in out and "broker-a:11..15" in out
    assert "─" in out  # a Rich rule under the header


def test_table_output_with_colour_highlights_idle(capsys: Capsys) -> None:
    code, out, _ = sim(capsys, "--queues", "1", "--consumers", "2", "-o", "table", "--color")
    assert code == 0
    idle_line = next(line for line in out.splitlines() if "consumer-1" in line)
    assert "\x1b[" in idle_line and "(idle)" in idle_line


def test_markdown_output(capsys: Capsys) -> None:
    code, out, _ = sim(capsys, "--queues", "4", "--consumers", "2", "-o", "markdown")
    assert code == 0
    assert out.startswith("### TopicTest: 4 queues on 1 broker, 2 consumers, AVG")
    assert "| 10.0.0.1@consumer-0 | broker-a:0, broker-a:1 |" in out


def test_markdown_escapes_pipes(capsys: Capsys) -> None:
    code, out, _ = sim(capsys, "--queues", "1", "--consumer-id", "a|b", "-o", "markdown")
    assert code == 0
    assert "a\\|b" in out


def test_json_output_flags(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "16", "--consumers", "3")
    # a flag-driven run: a format and the same keys whatever the flags (absent = null)
    keys = ["format", "id", "assignments", "error", "moves", "compare"]
    assert list(obj) == keys and obj["format"] == "rmqlb.simulate/1"
    assert obj["id"] is obj["error"] is obj["moves"] is obj["compare"] is None
    for flags in (["--add", "1"], ["--compare"], ["--remove", "10.0.0.1@consumer-0"]):
        assert list(sim_json(capsys, "--queues", "16", "--consumers", "3", *flags)) == keys
    assert list(counts(obj).values()) == [6, 5, 5]
    first = obj["assignments"]["10.0.0.1@consumer-0"][0]
    assert first == {"topic": "TopicTest", "brokerName": "broker-a", "queueId": 0}


def test_idle_consumers_plain_and_json(capsys: Capsys) -> None:
    code, out, _ = sim(capsys, "--queues", "1", "--consumers", "2", "-o", "plain")
    assert code == 0
    assert "(idle)" in out and "1 idle" in out
    obj = sim_json(capsys, "--queues", "1", "--consumers", "2")
    assert counts(obj) == {"10.0.0.1@consumer-0": 1, "10.0.0.1@consumer-1": 0}


def test_brokers_and_named_brokers(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "8", "--brokers", "2", "--consumers", "3")
    assert list(counts(obj).values()) == [6, 5, 5]
    _, out, _ = sim(capsys, "--queues", "8", "--brokers", "2", "--consumers", "3")
    assert "broker-a:6, broker-a:7, broker-b:0..2" in out
    obj = sim_json(capsys, "--queues", "2", "--broker", "zz", "--broker", "aa", "--consumers", "1")
    names = [q["brokerName"] for q in obj["assignments"]["10.0.0.1@consumer-0"]]
    assert names == ["aa", "aa", "zz", "zz"]


def test_consumer_ids_and_topic(capsys: Capsys) -> None:
    obj = sim_json(
        capsys, "--queues", "3", "--consumer-id", "b@1", "--consumer-id", "a@1", "--topic", "Orders"
    )
    assert list(obj["assignments"]) == ["a@1", "b@1"]
    assert obj["assignments"]["a@1"][0]["topic"] == "Orders"


def test_default_ids_padded_for_many_consumers(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "12", "--consumers", "12")
    cids = list(obj["assignments"])
    assert cids[0] == "10.0.0.1@consumer-00" and cids[-1] == "10.0.0.1@consumer-11"


def test_strategy_spec(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "5", "--consumers", "2", "--strategy", "AVG_BY_CIRCLE")
    ids = [q["queueId"] for q in obj["assignments"]["10.0.0.1@consumer-0"]]
    assert ids == [0, 2, 4]
    obj = sim_json(capsys, "--queues", "50", "--consumers", "3", "--strategy", "consistent_hash")
    assert sum(counts(obj).values()) == 50


# --------------------------------------------------------------------------- scale events


def test_add_one_consumer(capsys: Capsys) -> None:
    code, out, _ = sim(capsys, "--queues", "16", "--consumers", "3", "--add", "1")
    assert code == 0
    assert "After +1 (10.0.0.1@consumer-3)" in out
    assert "9 of 16 queues move (56.2%)" in out
    obj = sim_json(capsys, "--queues", "16", "--consumers", "3", "--add", "1")
    moves = obj["moves"]
    assert moves["added"] == ["10.0.0.1@consumer-3"] and moves["removed"] == []
    assert (moves["count"], moves["total"], moves["percent"]) == (9, 16, 56.2)
    assert [len(v) for v in moves["assignments"].values()] == [4, 4, 4, 4]
    assert [m["queueId"] for m in moves["queues"]] == [4, 5, 8, 9, 10, 12, 13, 14, 15]
    assert moves["queues"][0]["from"] == ["10.0.0.1@consumer-0"]
    assert moves["queues"][0]["to"] == ["10.0.0.1@consumer-1"]


def test_add_keeps_ids_in_numeric_order(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "20", "--consumers", "9", "--add", "2")
    after = list(obj["moves"]["assignments"])
    assert after[0] == "10.0.0.1@consumer-00" and after[-1] == "10.0.0.1@consumer-10"


def test_remove_a_consumer(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "4", "--consumers", "2", "--remove", "10.0.0.1@consumer-1")
    moves = obj["moves"]
    assert moves["removed"] == ["10.0.0.1@consumer-1"]
    assert moves["count"] == 2 and moves["percent"] == 50.0
    assert list(moves["assignments"]) == ["10.0.0.1@consumer-0"]
    _, out, _ = sim(capsys, "--queues", "4", "--consumers", "2", "--remove", "10.0.0.1@consumer-1")
    assert "-1 (10.0.0.1@consumer-1)" in out and "2 of 4 queues move (50%)" in out


def test_add_id_and_remove_together(capsys: Capsys) -> None:
    obj = sim_json(
        capsys,
        "--queues", "6",
        "--consumer-id", "a",
        "--consumer-id", "b",
        "--add-id", "c",
        "--remove", "a",
    )  # fmt: skip
    assert list(obj["moves"]["assignments"]) == ["b", "c"]
    assert obj["moves"]["added"] == ["c"] and obj["moves"]["removed"] == ["a"]


# --------------------------------------------------------------------------- compare


def test_compare_default_strategies(capsys: Capsys) -> None:
    code, out, _ = sim(capsys, "--queues", "16", "--consumers", "5", "--compare")
    assert code == 0
    assert (
        "Strategies compared (+1 adds 10.0.0.1@consumer-5, -1 removes 10.0.0.1@consumer-4)" in out
    )
    avg = next(line.split() for line in out.splitlines() if line.startswith("AVG "))
    assert avg[:5] == ["AVG", "3", "4", "0", "0"]
    obj = sim_json(capsys, "--queues", "16", "--consumers", "5", "--compare")
    labels = [row["label"] for row in obj["compare"]]
    assert labels == ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH(vnodes=10)"]
    avg_row = obj["compare"][0]
    assert (avg_row["min"], avg_row["max"], avg_row["idle"]) == (3, 4, 0)
    assert avg_row["movedOnAdd"]["count"] == 6 and avg_row["movedOnRemove"]["count"] == 6
    assert obj["compare"][0]["strategy"] == {"name": "AVG"}


def test_compare_uses_vnodes_and_machine_room(capsys: Capsys) -> None:
    obj = sim_json(
        capsys, "--queues", "8", "--consumers", "2", "--strategy", "CONSISTENT_HASH:vnodes=20",
        "--compare",
    )  # fmt: skip
    assert obj["compare"][2]["label"] == "CONSISTENT_HASH(vnodes=20)"
    obj = sim_json(
        capsys, "--queues", "4", "--broker", "hz@a", "--broker", "sh@b", "--consumers", "2",
        "--strategy", "MACHINE_ROOM:idcs=hz", "--compare",
    )  # fmt: skip
    room = obj["compare"][-1]
    assert room["label"] == "MACHINE_ROOM(hz)" and room["unassigned"] == 4


def test_compare_with_rooms_and_config(capsys: Capsys, tmp_path: Path) -> None:
    cfg = write(tmp_path, "cfg.json", json.dumps({"10.0.0.1@consumer-0": ["broker-a:0"]}))
    obj = sim_json(
        capsys, "--queues", "4", "--consumers", "2", "--compare",
        "--broker-room", "(broker)", "--consumer-room", "(10)", "--config", cfg,
    )  # fmt: skip
    labels = [row["label"] for row in obj["compare"]]
    assert labels[-2:] == ["MACHINE_ROOM_NEARBY(AVG)", "CONFIG"]
    assert obj["compare"][-1]["unassigned"] == 3


def test_compare_shows_java_errors_as_notes(capsys: Capsys) -> None:
    code, out, _ = sim(
        capsys, "--broker", "hz@a", "--queues", "2", "--consumer-id", "hz@1",
        "--strategy", "MACHINE_ROOM_NEARBY", "--broker-room", "^(\\w+)@",
        "--consumer-room", "^(hz)@", "--compare",
    )  # fmt: skip
    assert code == 0
    assert "MACHINE_ROOM_NEARBY(AVG) +1: error: Machine room is null for consumer id" in out


# --------------------------------------------------------------------------- room strategies


def test_nearby_with_regexes(capsys: Capsys) -> None:
    obj = sim_json(
        capsys, "--broker", "hz@broker-a", "--broker", "sh@broker-b", "--queues", "2",
        "--consumer-id", "hz@10.0.0.1", "--consumer-id", "gz@10.0.0.2",
        "--strategy", "MACHINE_ROOM_NEARBY", "--broker-room", "^(\\w+)@",
        "--consumer-room", "^(\\w+)@",
    )  # fmt: skip
    # hz takes its own room's 2 queues and half of sh's (no consumer in sh); gz the rest.
    labels = {
        cid: [f"{q['brokerName']}:{q['queueId']}" for q in qs]
        for cid, qs in obj["assignments"].items()
    }
    assert labels == {
        "gz@10.0.0.2": ["sh@broker-b:0"],
        "hz@10.0.0.1": ["hz@broker-a:0", "hz@broker-a:1", "sh@broker-b:1"],
    }


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_nearby_with_rooms_file(capsys: Capsys, tmp_path: Path, suffix: str) -> None:
    rooms = {"brokers": {"broker-a": "hz", "broker-b": "sh"}, "consumers": {"c1": "sh"}}
    path = write(tmp_path, f"rooms{suffix}", json.dumps(rooms))
    obj = sim_json(
        capsys, "--brokers", "2", "--queues", "2", "--consumer-id", "c1",
        "--strategy", "MACHINE_ROOM_NEARBY:inner=AVG_BY_CIRCLE", "--rooms", path,
    )  # fmt: skip
    assert len(obj["assignments"]["c1"]) == 4


def test_machine_room(capsys: Capsys) -> None:
    obj = sim_json(
        capsys, "--broker", "hz@a", "--broker", "roomA@", "--queues", "3",
        "--consumers", "2", "--strategy", "MACHINE_ROOM:idcs=hz,roomA",
    )  # fmt: skip
    assert list(counts(obj).values()) == [2, 1]


def test_config_strategy_from_yaml(capsys: Capsys, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cfg.yaml",
        "c1: ['broker-a:3', {brokerName: broker-b, queueId: 0}]\nc2: []\n",
    )
    code, out, _ = sim(capsys, "--strategy", "CONFIG", "--config", path, "-o", "plain")
    assert code == 0
    assert "broker-a:3, broker-b:0" in out
    obj = sim_json(capsys, "--strategy", "CONFIG", "--config", path)
    assert counts(obj) == {"c1": 2, "c2": 0}


# --------------------------------------------------------------------------- --input


CASE = {
    "id": "seed-1",
    "topic": "T",
    "queues": [{"brokerName": "broker-a", "queueId": i} for i in range(2)],
    "consumers": ["c", "a", "b"],
    "strategy": {"name": "AVG"},
}


def queue(qid: int) -> dict[str, Any]:
    """A queue of ``CASE`` as the contract writes it."""
    return {"topic": "T", "brokerName": "broker-a", "queueId": qid}


# CASE's answer, written out from docs/simulate.md: every consumer in Java order, each with
# its queues as {topic, brokerName, queueId}, [] when idle. A literal, so that a change to the
# contract fails here whatever code writes the answer.
ANSWER = {"id": "seed-1", "assignments": {"a": [queue(0)], "b": [queue(1)], "c": []}}


def test_input_json_matches_contract(capsys: Capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "case.json", json.dumps(CASE))
    obj = sim_json(capsys, "--input", path)
    assert obj == ANSWER
    assert list(obj["assignments"]) == ["a", "b", "c"]  # Java order, not input order


def test_input_jsonl_one_line_per_case(capsys: Capsys, tmp_path: Path) -> None:
    broken = {**CASE, "id": "empty", "queues": []}
    hashed = {**CASE, "id": "ch", "strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 3}}
    text = "\n".join(json.dumps(c) for c in (CASE, broken, hashed)) + "\n\n"
    path = write(tmp_path, "cases.jsonl", text)
    code, out, err = sim(capsys, "--input", path, "--output", "json")
    assert code == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["id"] for a in answers] == ["seed-1", "empty", "ch"]
    assert answers[1] == {"id": "empty", "error": "mqAll is null or mqAll empty"}
    # placement by the ring (bit-exact against Java in tests/unit/allocate/test_vectors.py)
    assert answers[2] == {"id": "ch", "assignments": {"a": [queue(1)], "b": [], "c": [queue(0)]}}


def test_input_from_standard_input(capsys: Capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = "\n".join(json.dumps(c) for c in (CASE, {**CASE, "id": "two"})) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    code, out, err = sim(capsys, "--input", "-", "--output", "json")
    assert code == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert answers[0] == ANSWER
    assert [a["id"] for a in answers] == ["seed-1", "two"]


def test_input_json_array(capsys: Capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "cases.json", json.dumps([CASE, {**CASE, "id": "two"}]))
    code, out, _ = sim(capsys, "--input", path, "-o", "json")
    assert code == 0
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["seed-1", "two"]


def test_input_plain_shows_each_case(capsys: Capsys, tmp_path: Path) -> None:
    broken = {**CASE, "id": "empty", "queues": []}
    path = write(tmp_path, "cases.jsonl", f"{json.dumps(CASE)}\n{json.dumps(broken)}\n")
    code, out, _ = sim(capsys, "--input", path)
    assert code == 0
    assert "case seed-1: T: 2 queues on 1 broker, 3 consumers, AVG" in out
    assert "case empty: T: 0 queues on 0 brokers, 1 consumer" not in out
    assert "error: mqAll is null or mqAll empty" in out


def test_input_with_scale_and_compare(capsys: Capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "case.json", json.dumps(CASE))
    obj = sim_json(capsys, "--input", path, "--remove", "a", "--compare")
    assert obj["moves"]["removed"] == ["a"]
    assert obj["compare"][0]["label"] == "AVG"


def test_single_case_java_error_exits_2_with_json(capsys: Capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "case.json", json.dumps({**CASE, "queues": []}))
    code, out, err = sim(capsys, "--input", path, "--output", "json")
    assert_bad_input(code, out, err, "mqAll is null or mqAll empty")
    assert json.loads(out) == {"id": "seed-1", "error": "mqAll is null or mqAll empty"}


def test_single_case_java_error_plain(capsys: Capsys, tmp_path: Path) -> None:
    strategy = {"name": "CONSISTENT_HASH", "virtualNodeCnt": -1}
    path = write(tmp_path, "case.json", json.dumps({**CASE, "strategy": strategy}))
    code, out, err = sim(capsys, "--input", path)
    assert_bad_input(code, out, err, "illegal virtualNodeCnt :-1")
    assert out == ""


def test_single_invalid_case(capsys: Capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "case.json", json.dumps({**CASE, "strategy": {"name": "NOPE"}}))
    code, out, err = sim(capsys, "--input", path, "-o", "json")
    assert_bad_input(code, out, err, "unknown strategy 'NOPE'")
    assert json.loads(out)["id"] == "seed-1"


def test_jsonl_with_an_invalid_case_exits_2(capsys: Capsys, tmp_path: Path) -> None:
    bad = {**CASE, "id": "bad", "queues": "nope"}
    path = write(tmp_path, "cases.jsonl", f"{json.dumps(CASE)}\n{json.dumps(bad)}\n")
    code, out, err = sim(capsys, "--input", path, "-o", "json")
    assert_bad_input(code, out, err, "1 of 2 cases invalid: line 2: $.queues")
    answers = [json.loads(line) for line in out.splitlines()]
    assert "assignments" in answers[0] and answers[1]["id"] == "bad"


def test_flag_run_java_error_json(capsys: Capsys) -> None:
    code, out, err = sim(capsys, "--consumer-id", "", "--output", "json")
    assert_bad_input(code, out, err, "currentCID is empty")
    assert json.loads(out) == {
        "format": "rmqlb.simulate/1",
        "id": None,
        "assignments": None,
        "error": "currentCID is empty",
        "moves": None,
        "compare": None,
    }


# --------------------------------------------------------------------------- bad input


BAD_FLAGS: list[tuple[list[str], str]] = [
    (["--strategy", "FOO"], "unknown strategy 'FOO'"),
    (["--strategy", "CONSISTENT_HASH:vnodes=x"], "vnodes must be an integer"),
    (["--strategy", "CONSISTENT_HASH:vnodes=-1"], "illegal virtualNodeCnt :-1"),
    (["--strategy", "MACHINE_ROOM"], "MACHINE_ROOM needs idcs"),
    (["--strategy", "MACHINE_ROOM_NEARBY"], "needs rooms for brokers and consumers"),
    (["--strategy", "MACHINE_ROOM_NEARBY", "--broker-room", "(x)"], "needs rooms"),
    (["--strategy", "CONFIG"], "CONFIG needs per-client queue lists"),
    (["--strategy", "AVG:vnodes=3"], "AVG takes no parameter"),
    (["--brokers", "2", "--broker", "x"], "either --brokers N or --broker NAME"),
    (["--consumers", "2", "--consumer-id", "x"], "either --consumers N or --consumer-id ID"),
    (["--broker", "x", "--broker", "x"], "broker 'x' given twice"),
    (["--topic", ""], "--topic cannot be empty"),
    (["--queues", "0"], "--queues"),
    (["--consumers", "0"], "--consumers"),
    (["--add", "-1"], "--add"),
    (["--output", "yaml"], "--output"),
    (["--remove", "nobody"], "cannot remove 'nobody'"),
    (["--broker-room", "(", "--compare"], "invalid regular expression"),
    (["--broker-room", "a{99999999999}(b)", "--compare"], "invalid regular expression"),
    (["--broker-room", "abc", "--compare"], "needs a (group)"),
    (["--broker-room", "(a)"], "only used by --strategy MACHINE_ROOM_NEARBY"),
    (["--consumer-id", ""], "currentCID is empty"),
    (
        ["--strategy", "MACHINE_ROOM_NEARBY", "--broker-room", "^(x)", "--consumer-room", "(.)"],
        "Machine room is null for mq MessageQueue [topic=TopicTest, brokerName=broker-a",
    ),
    (["--no-such-flag"], "No such option"),
]


@pytest.mark.parametrize(("args", "needle"), BAD_FLAGS, ids=[" ".join(a) for a, _ in BAD_FLAGS])
def test_bad_flags(capsys: Capsys, args: list[str], needle: str) -> None:
    assert_bad_input(*sim(capsys, *args), needle)


BAD_FILES: list[tuple[str, str, str, str]] = [
    # (flag, file name, content, expected message part)
    ("--rooms", "r.yaml", "brokers: [unclosed", "invalid YAML"),
    ("--rooms", "r.json", "{not json", "invalid JSON"),
    ("--rooms", "r.yaml", "- a\n- b\n", "expected {brokers"),
    ("--rooms", "r.yaml", "brokers: {a: x}\nrooms: {}\n", "unknown key 'rooms'"),
    ("--rooms", "r.yaml", "brokers: {a: [x]}\n", "brokers: expected a mapping"),
    ("--config", "c.yaml", "c1: ['broker-a']\n", "expected 'broker:queueId'"),
    ("--config", "c.yaml", "c1: ['broker-a:x']\n", "expected 'broker:queueId'"),
    ("--config", "c.yaml", "c1: [{brokerName: a}]\n", "expected {brokerName: str, queueId: int}"),
    ("--config", "c.yaml", "c1: [3]\n", "expected 'broker:queueId' or"),
    ("--config", "c.yaml", "c1: broker-a:1\n", "c1: expected a list of queues"),
    ("--config", "c.yaml", "[1, 2]\n", "expected a mapping of client id"),
    ("--config", "c.yaml", "1: ['a:1']\n", "client id 1 is not a string"),
    ("--config", "c.json", "{", "invalid JSON"),
]


@pytest.mark.parametrize(
    ("flag", "name", "content", "needle"),
    BAD_FILES,
    ids=[f"{f}-{c[:20]}" for f, _, c, _ in BAD_FILES],
)
def test_bad_files(  # noqa: PLR0917  (one argument per parameter column)
    capsys: Capsys, tmp_path: Path, flag: str, name: str, content: str, needle: str
) -> None:
    path = write(tmp_path, name, content)
    strategy = "MACHINE_ROOM_NEARBY" if flag == "--rooms" else "CONFIG"
    extra = ["--consumer-room", "(.)"] if flag == "--rooms" else []
    assert_bad_input(*sim(capsys, "--strategy", strategy, flag, path, *extra), needle)


def test_missing_and_unreadable_files(capsys: Capsys, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.yaml")
    assert_bad_input(*sim(capsys, "--compare", "--rooms", missing), "no such file")
    assert_bad_input(*sim(capsys, "--input", missing), "no such file")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert_bad_input(*sim(capsys, "--input", str(binary)), "not UTF-8")


def test_config_without_config_strategy(capsys: Capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "c.yaml", "c1: ['broker-a:1']\n")
    assert_bad_input(*sim(capsys, "--config", path), "--config is only used by")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("", "empty file"),
        ("   \n\n", "empty file"),
        ('{"id": 1}\n{not json\n', "line 2: invalid JSON"),
        ("[]", "no cases"),
        ('"just a string"', "$: expected a JSON object"),
    ],
)
def test_bad_input_files(capsys: Capsys, tmp_path: Path, content: str, needle: str) -> None:
    path = write(tmp_path, "in.jsonl", content)
    assert_bad_input(*sim(capsys, "--input", path), needle)


@pytest.mark.parametrize(
    "flag",
    [
        ["--queues", "3"],
        ["--brokers", "2"],
        ["--broker", "x"],
        ["--consumers", "2"],
        ["--consumer-id", "a"],
        ["--topic", "T"],
        ["--strategy", "AVG"],
        ["--broker-room", "(a)"],
        ["--consumer-room", "(a)"],
        ["--rooms", "r.yaml"],
        ["--config", "c.yaml"],
    ],
)
def test_input_conflicts_with_group_flags(capsys: Capsys, tmp_path: Path, flag: list[str]) -> None:
    path = write(tmp_path, "case.json", json.dumps(CASE))
    assert_bad_input(*sim(capsys, "--input", path, *flag), "cannot be combined with --input")


def test_tiny_share_is_not_shown_as_zero(capsys: Capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "cfg.yaml", "c1: ['broker-a:0']\nc2: ['broker-a:1']\n")
    code, out, _ = sim(
        capsys, "--queues", "3000", "--strategy", "CONFIG", "--config", path, "--remove", "c1"
    )
    assert code == 0
    assert "1 of 3,000 queues move (<0.1%)" in out  # counts as everywhere: 3,000
    assert "broker-a:0  c1      nobody" in out


EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "simulate"


def test_shipped_examples_run(capsys: Capsys) -> None:
    if not EXAMPLES.is_dir():
        pytest.skip("examples/simulate not present")
    code, out, err = sim(capsys, "--input", str(EXAMPLES / "cases.jsonl"), "-o", "json")
    assert code == 0, err
    answers = {a["id"]: a for a in map(json.loads, out.splitlines())}
    assert [len(v) for v in answers["seed-16-3"]["assignments"].values()] == [6, 5, 5]
    assert answers["no-queues"]["error"] == "mqAll is null or mqAll empty"
    rooms = str(EXAMPLES / "rooms.yaml")
    obj = sim_json(
        capsys, "--strategy", "MACHINE_ROOM_NEARBY", "--rooms", rooms, "--brokers", "3",
        "--queues", "4", "--consumer-id", "10.1.0.1@app", "--consumer-id", "10.2.0.1@app",
    )  # fmt: skip
    assert counts(obj) == {"10.1.0.1@app": 10, "10.2.0.1@app": 2}
    obj = sim_json(capsys, "--strategy", "CONFIG", "--config", str(EXAMPLES / "config.yaml"))
    assert counts(obj) == {"10.0.0.1@pinned-a": 2, "10.0.0.2@pinned-b": 2}


# -- 5.x broker-side assignment -------------------------------------------------------------


def test_pop_share_one_gives_each_client_its_share_and_the_next_ones(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "4", "--consumers", "3", "--pop-share", "1")
    ids = {cid: [q["queueId"] for q in qs] for cid, qs in obj["assignments"].items()}
    assert ids == {
        "10.0.0.1@consumer-0": [0, 1, 2],
        "10.0.0.1@consumer-1": [2, 3],
        "10.0.0.1@consumer-2": [0, 1, 3],
    }


def test_queues_several_clients_pop_are_said_to_be_popped_not_held_twice(
    capsys: Capsys,
) -> None:
    """Under POP several clients per queue is the broker's way; as the scale event's too."""
    code, out, _ = sim(
        capsys, "--queues", "4", "--consumers", "3", "--pop-share", "1", "--add", "1"
    )
    assert code == 0
    assert out.count("4 queues popped by several clients (POP's way)") == 2
    assert "held more than once" not in out


def test_pop_share_at_clients_minus_one_pops_every_queue(capsys: Capsys) -> None:
    obj = sim_json(capsys, "--queues", "3", "--consumers", "3", "--pop-share", "2")
    assert counts(obj) == dict.fromkeys(obj["assignments"], 3)


def test_broker_assigned_pull_equals_the_clients_avg(capsys: Capsys) -> None:
    broker = sim_json(capsys, "--queues", "8", "--consumers", "3", "--broker-assigned")
    client = sim_json(capsys, "--queues", "8", "--consumers", "3")
    assert broker["assignments"] == client["assignments"]
    code, out, _ = sim(capsys, "--queues", "8", "--consumers", "3", "--broker-assigned")
    assert code == 0 and "assigned by the broker (PULL)" in out


def test_broker_assigned_with_a_strategy_the_broker_does_not_know(capsys: Capsys) -> None:
    code, out, err = sim(
        capsys,
        "--queues",
        "4",
        "--consumers",
        "2",
        "--broker-assigned",
        "--strategy",
        "CONSISTENT_HASH",
    )
    assert_bad_input(code, out, err, "knows only AVG and AVG_BY_CIRCLE")


def test_broker_assignment_does_not_compare(capsys: Capsys) -> None:
    code, out, err = sim(capsys, "--pop-share", "1", "--compare")
    assert_bad_input(code, out, err, "--compare runs the clients' own strategies")
