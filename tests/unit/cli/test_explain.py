"""``rmqlb explain --dump`` end to end, in process, on snapshot files written to tmp_path."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from report_contract import assert_report_contract
from stalled_polls import poll_doc

from rmqlb.cli import explain as explain_module
from rmqlb.cli import run
from rmqlb.cli import watch as watch_module
from rmqlb.render import Output

GROUP = "lhy-test-consumerGroup"
TOPIC = "lhy-test-topic"
C1, C2, C3 = "10.0.0.5@12345#8814520316744000", "10.0.0.6@23456#88145203981", "10.0.0.7@3#9"


def _consumer(cid: str, assigned: Sequence[int] | None, topic: str = TOPIC) -> dict[str, Any]:
    out: dict[str, Any] = {"clientId": cid, "subscriptions": [{"topic": topic}]}
    if assigned is not None:
        out["assigned"] = [
            {"topic": topic, "brokerName": "broker-a", "queueId": q} for q in assigned
        ]
    return out


def snapshot(
    queues: int,
    assigned: dict[str, Sequence[int] | None],
    *,
    errors: Sequence[dict[str, str]] = (),
    lag: bool = True,
) -> dict[str, Any]:
    """A one-group, one-topic AVG snapshot with the given actual assignments."""
    group: dict[str, Any] = {
        "messageModel": "CLUSTERING",
        "strategy": {"name": "AVG"},
        "consumers": [_consumer(cid, qs) for cid, qs in assigned.items()],
    }
    if lag:
        group["offsets"] = [
            {
                "topic": TOPIC,
                "brokerName": "broker-a",
                "queueId": q,
                "brokerOffset": 100 + q,
                "consumerOffset": 100,
            }
            for q in range(queues)
        ]
    return {
        "format": "rmqlb.snapshot/1",
        "topics": {
            TOPIC: {
                "queueDatas": [
                    {
                        "brokerName": "broker-a",
                        "readQueueNums": queues,
                        "writeQueueNums": queues,
                        "perm": 6,
                    }
                ]
            }
        },
        "groups": {GROUP: group},
        "errors": list(errors),
    }


HEALTHY = snapshot(12, {C1: range(0, 4), C2: range(4, 8), C3: range(8, 12)})
IDLE = snapshot(1, {C1: [0], C2: []}, lag=False)
# Mid-rebalance: C3 joined, C1 and C3 rebalanced, C2 still holds the old half (8..15).
REBALANCE = snapshot(16, {C1: range(0, 6), C2: range(8, 16), C3: range(11, 16)})
SETTLED = snapshot(16, {C1: range(0, 6), C2: range(6, 11), C3: range(11, 16)})
PARTIAL = snapshot(
    12,
    {C1: range(0, 4), C2: range(4, 8), C3: range(8, 12)},
    errors=[{"target": "10.0.0.2:10911", "request": "GET_CONSUME_STATS", "message": "timed out"}],
)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "NAMESRV_ADDR", "RMQLB_TRACEBACK", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


def write(tmp_path: Path, doc: dict[str, Any], name: str = "snap.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def explain(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["explain", *args])
    out, err = capsys.readouterr()
    return code, out, err


def codes(out: str) -> set[str]:
    return {f["code"] for f in json.loads(out)["findings"]}


@pytest.mark.parametrize("fmt", list(Output))
def test_every_format_explains_the_rebalance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: Output
) -> None:
    monkeypatch.setenv("COLUMNS", "120")  # wide enough for every id on one line
    path = write(tmp_path, REBALANCE)
    code, out, err = explain(capsys, "--dump", str(path), "--output", fmt.value)
    assert code == 1, err
    assert err == ""
    if fmt is Output.json:
        doc = json.loads(out)
        assert_report_contract(doc)
        assert doc["exitCode"] == 1
        (g,) = doc["groups"]
        (t,) = g["topics"]
        status = {q["queueId"]: q["status"] for q in t["queues"]}
        assert {q for q, s in status.items() if s == "duplicate"} == {11, 12, 13, 14, 15}
        assert {q for q, s in status.items() if s == "unconsumed"} == {6, 7}
        assert {"DUPLICATE_ASSIGNMENT", "UNCONSUMED_QUEUE"} <= codes(out)
        lags = {q["queueId"]: q["lag"] for q in t["queues"]}
        assert lags[5] == 5
    else:
        assert "\x1b[" not in out  # not a terminal: no colour
        assert C1 in out and C2 in out and C3 in out
        assert "DUPLICATE_ASSIGNMENT" in out and "duplicate" in out
        assert "broker-a:11" in out


def test_healthy_group_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, HEALTHY)
    code, out, _ = explain(capsys, "--dump", str(path), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert_report_contract(doc)
    assert doc["exitCode"] == 0
    assert all(q["status"] == "ok" for q in doc["groups"][0]["topics"][0]["queues"])


@pytest.mark.parametrize(("fail_on", "expected"), [("error", 0), ("warning", 1), ("never", 0)])
def test_fail_on_decides_the_exit_code_for_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fail_on: str, expected: int
) -> None:
    path = write(tmp_path, IDLE)
    code, out, _ = explain(capsys, "--dump", str(path), "--fail-on", fail_on, "-o", "json")
    assert "IDLE_CONSUMER" in codes(out)
    assert code == expected == json.loads(out)["exitCode"]


def test_fail_on_never_ignores_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, REBALANCE)
    code, _, _ = explain(capsys, "--dump", str(path), "--fail-on", "never", "-o", "plain")
    assert code == 0


def test_partial_snapshot_exits_4_and_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, PARTIAL)
    code, out, err = explain(capsys, "--dump", str(path), "-o", "plain")
    assert code == 4
    assert "partial data: 1 request failed while capturing (listed on stderr)" in out
    assert "GET_CONSUME_STATS" not in out
    assert err == (
        "rmqlb: partial data: 1 request failed while capturing:\n"
        "  10.0.0.2:10911: timed out (GET_CONSUME_STATS)\n"
    )


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b'{"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": "4"}}, "groups": {}}',
        b'{"format": "something-else", "topics": {}, "groups": {}}',
        b"\xff\xfe\x00",
        b"[1, 2, 3]",
    ],
)
def test_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    code, out, err = explain(capsys, "--dump", str(path))
    assert code == 2
    assert out == ""
    assert err.startswith("rmqlb: error: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = explain(capsys, "--dump", str(tmp_path / "nope.json"))
    assert code == 2
    assert "nope.json" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        [],  # neither --dump nor -n
        ["--dump", "x.json", "-n", "127.0.0.1:9876"],
        ["--dump", "x.json", "--count", "2"],  # --count without --watch
        ["--dump", "-", "--watch", "1"],
        ["--dump", "x.json", "--output", "yaml"],
        ["--dump", "x.json", "--strategy", "NOPE"],
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, HEALTHY, "x.json")
    code, out, err = explain(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("rmqlb: error: ") and err.count("\n") == 1


def test_namesrv_from_the_environment_does_not_conflict_with_dump(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAMESRV_ADDR", "127.0.0.1:1")
    path = write(tmp_path, HEALTHY)
    code, _, err = explain(capsys, "--dump", str(path), "-o", "json")
    assert code == 0, err


def test_dump_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    data = json.dumps(IDLE).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = explain(capsys, "--dump", "-", "-o", "json")
    assert code == 0
    assert "IDLE_CONSUMER" in codes(out)


def test_colour_follows_no_color_and_the_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(write(tmp_path, REBALANCE))
    _, out, _ = explain(capsys, "--dump", path, "-o", "table", "--color")
    assert "\x1b[" in out
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = explain(capsys, "--dump", path, "-o", "table")
    assert "\x1b[" not in out
    assert "DUPLICATE_ASSIGNMENT" in out
    _, out, _ = explain(capsys, "--dump", path, "-o", "table", "--no-color")
    assert "\x1b[" not in out


def test_default_output_off_a_terminal_is_plain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = explain(capsys, "--dump", str(write(tmp_path, IDLE)))
    assert "-----" in out  # tabulate "simple" rules, not Rich box drawing
    assert "─" not in out


def test_group_and_topic_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, REBALANCE))
    code, out, _ = explain(capsys, GROUP, "--dump", path, "--topic", TOPIC, "-o", "json")
    assert code == 1
    doc = json.loads(out)
    assert [g["group"] for g in doc["groups"]] == [GROUP]
    assert [t["topic"] for t in doc["groups"][0]["topics"]] == [TOPIC]


def test_strategy_override_changes_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, HEALTHY))
    _, out, _ = explain(capsys, "--dump", path, "--strategy", "AVG_BY_CIRCLE", "-o", "json")
    doc = json.loads(out)
    rows = doc["groups"][0]["topics"][0]["queues"]
    # AVG_BY_CIRCLE deals queues round-robin: queue 1 goes to the second consumer.
    assert next(q for q in rows if q["queueId"] == 1)["expected"] == C2
    assert "AVG_BY_CIRCLE" in doc["groups"][0]["strategy"]


def test_all_queues_shows_every_row_of_a_large_topic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 40
    doc = snapshot(n, {C1: range(0, 20), C2: []})  # C2 never rebalanced: 20..39 unconsumed
    path = str(write(tmp_path, doc))
    _, out, _ = explain(capsys, "--dump", path, "-o", "plain")
    assert "20 of 40 queues are ok" in out
    assert "broker-a:0 " not in out and "broker-a:39" in out
    _, out, _ = explain(capsys, "--dump", path, "-o", "plain", "--all-queues")
    assert "broker-a:0 " in out and "hidden" not in out


# ----- --watch ---------------------------------------------------------------------------


def _rewrite_between_polls(
    monkeypatch: pytest.MonkeyPatch, path: Path, docs: list[dict[str, Any]]
) -> list[float]:
    """Replace the pause between polls: each pause writes the next document to ``path``."""
    pauses: list[float] = []

    def fake_sleep(seconds: float) -> None:
        pauses.append(seconds)
        path.write_text(json.dumps(docs[len(pauses) - 1]), encoding="utf-8")

    monkeypatch.setattr(watch_module, "sleep", fake_sleep)
    return pauses


def test_watch_off_a_terminal_prints_the_report_then_only_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, REBALANCE)
    pauses = _rewrite_between_polls(monkeypatch, path, [SETTLED])
    code, out, err = explain(
        capsys, "--dump", str(path), "--watch", "2", "--count", "2", "-o", "plain"
    )
    assert pauses == [2.0]
    assert code == 0, err  # the last poll is healthy
    first, _, rest = out.partition("poll 2 at ")
    assert "DUPLICATE_ASSIGNMENT" in first
    assert "7 queues changed owner" in rest
    assert f"broker-a:6, broker-a:7: nobody -> {C2}" in rest
    assert f"broker-a:11..15: {C2}, {C3} -> {C3}" in rest
    assert "cleared DUPLICATE_ASSIGNMENT" in rest
    assert "Summary:" not in rest  # only the changes, not the report again


def test_watch_prints_a_line_per_poll_even_when_nothing_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, REBALANCE)
    _rewrite_between_polls(monkeypatch, path, [REBALANCE, REBALANCE])
    code, out, _ = explain(capsys, "--dump", str(path), "--watch", "1", "--count", "3")
    assert code == 1
    polls = [line for line in out.splitlines() if line.startswith("poll ")]
    assert len(polls) == 2
    assert all(p.endswith(": 0 queues changed owner, 0 new findings, 0 cleared") for p in polls)


def test_watch_json_emits_change_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, SETTLED)
    _rewrite_between_polls(monkeypatch, path, [REBALANCE, REBALANCE])
    code, out, _ = explain(
        capsys, "--dump", str(path), "--watch", "1", "--count", "3", "-o", "json"
    )
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 3  # NDJSON: the report, then one object per poll
    assert_report_contract(json.loads(lines[0]))
    change, same = json.loads(lines[1]), json.loads(lines[2])
    assert change["format"] == "rmqlb.changes/1" and change["poll"] == 2
    assert sorted(q["queueId"] for q in change["queues"]) == [6, 7, 11, 12, 13, 14, 15]
    assert {f["code"] for f in change["newFindings"]} >= {"DUPLICATE_ASSIGNMENT"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", change["time"])
    assert change["error"] is None
    assert same["poll"] == 3 and same["queues"] == [] and same.keys() == change.keys()


def test_watch_survives_a_bad_poll(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed poll keeps the last report; the exit code is the last poll's: the failure's
    when the last one failed, the report's once a poll succeeds again."""
    path = write(tmp_path, HEALTHY)
    pauses: list[float] = []

    def fake_sleep(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 1:
            path.write_text("{truncated", encoding="utf-8")
        else:
            path.write_text(json.dumps(HEALTHY), encoding="utf-8")

    monkeypatch.setattr(watch_module, "sleep", fake_sleep)
    code, out, err = explain(capsys, "--dump", str(path), "--watch", "1", "--count", "2")
    assert code == 2
    assert "poll 2 failed" in err and "poll 2 at " in out and ": failed: " in out
    pauses.clear()
    path.write_text(json.dumps(HEALTHY), encoding="utf-8")
    code, _, _ = explain(capsys, "--dump", str(path), "--watch", "1", "--count", "3")
    assert code == 0


def test_watch_exits_3_when_the_last_poll_cannot_reach_the_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from rich.console import Console

    from rmqlb.cli.explain import ExplainWatch
    from rmqlb.diagnose import diagnose
    from rmqlb.errors import ClusterUnreachable
    from rmqlb.render import RenderOptions
    from rmqlb.snapshot import parse_snapshot

    report = diagnose(parse_snapshot(HEALTHY))
    polls: list[int] = []

    def poll() -> Any:
        polls.append(1)
        if len(polls) > 1:
            raise ClusterUnreachable("no NameServer answered")
        return report

    monkeypatch.setattr(watch_module, "sleep", lambda _: None)
    out = io.StringIO()
    code = watch_module.watch(
        poll,
        ExplainWatch(Output.json, RenderOptions(pretty_json=False)),
        Console(file=out),
        json_output=True,
        interval=1,
        count=2,
        redraw=False,
    )
    assert code == 3
    last = json.loads(out.getvalue().splitlines()[-1])
    assert last["poll"] == 2 and last["error"] == "no NameServer answered"


def test_watch_stops_on_ctrl_c_with_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, REBALANCE)

    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(watch_module, "sleep", interrupted)
    code, out, _ = explain(capsys, "--dump", str(path), "--watch", "5")
    assert code == 0
    assert "DUPLICATE_ASSIGNMENT" in out


def test_watch_on_a_terminal_redraws_and_marks_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The redraw path, driven directly with a terminal console writing to a buffer."""
    import io

    from rich.console import Console

    from rmqlb.diagnose import diagnose
    from rmqlb.render import RenderOptions
    from rmqlb.snapshot import load_snapshot

    path = write(tmp_path, REBALANCE)
    _rewrite_between_polls(monkeypatch, path, [SETTLED])
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system="truecolor")
    code = watch_module.watch(
        lambda: diagnose(load_snapshot(path)),
        explain_module.ExplainWatch(Output.table, RenderOptions()),
        console,
        json_output=False,
        interval=1.0,
        count=2,
        redraw=True,
    )
    assert code == 0
    text = buffer.getvalue()
    assert "poll 1" in text and "poll 2" in text
    assert "7 queues changed owner" in text
    assert "cleared since the last poll" in text


def test_max_imbalance_sets_the_imbalance_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 16 queues for 10 consumers under AVG: 6 hold 2, 4 hold 1 (max/min = 2).
    cids = [f"10.0.0.{i}@1" for i in range(10, 20)]
    path = str(write(tmp_path, snapshot(16, dict.fromkeys(cids), lag=False)))
    _, out, _ = explain(capsys, "--dump", path, "-o", "json")
    assert "IMBALANCE" in codes(out)
    _, out, _ = explain(capsys, "--dump", path, "-o", "json", "--max-imbalance", "2.5")
    assert "IMBALANCE" not in codes(out)
    code, _, err = explain(capsys, "--dump", path, "--max-imbalance", "0.5")
    assert code == 2 and err.count("\n") == 1


# ----- the shipped examples ----------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json")) if EXAMPLES.is_dir() else []


@pytest.mark.skipif(not EXAMPLE_FILES, reason="examples/ not present")
@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_explains_in_every_format(
    example: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "140")
    code, out, err = explain(capsys, "--dump", str(example), "-o", "json")
    assert err == ""
    doc = json.loads(out)
    assert_report_contract(doc)
    assert code == doc["exitCode"]
    found = {f["code"] for f in doc["findings"]}
    for fmt in ("table", "plain", "markdown"):
        fmt_code, text, fmt_err = explain(capsys, "--dump", str(example), "-o", fmt)
        assert (fmt_code, fmt_err) == (code, "")
        assert all(c in text for c in found), fmt
        assert f"Exit code {code}" in text.replace("**", "")
        for g in doc["groups"]:
            assert g["group"] in text


@pytest.mark.skipif(not EXAMPLE_FILES, reason="examples/ not present")
def test_watch_sees_a_third_consumer_join(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 queues, 2 consumers (seed 000); a third joins between polls and starts rebalancing."""
    two = json.loads((EXAMPLES / "16-queues-2-consumers.json").read_text(encoding="utf-8"))
    three = json.loads(
        (EXAMPLES / "16-queues-3-consumers-rebalancing.json").read_text(encoding="utf-8")
    )
    path = write(tmp_path, two)
    _rewrite_between_polls(monkeypatch, path, [three])
    code, out, _ = explain(capsys, "--dump", str(path), "--watch", "1", "--count", "2")
    assert code == 1  # the last poll has a DUPLICATE_ASSIGNMENT
    _, _, changes = out.partition("poll 2 at ")
    assert "queue order-consumer OrderTopic broker-a:11..15: " in changes
    assert "new error DUPLICATE_ASSIGNMENT" in changes
    assert "broker-a:0:" not in changes  # unchanged queues are not repeated


# --- strategy parameters the clients do not report --------------------------------------

VNODES_EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "consistent-hash-vnodes.json"
VNODES_NOTE = (
    "virtual nodes: 5, inferred from what the 3 clients hold — the wire does not carry it; "
    "pass `--strategy CONSISTENT_HASH:vnodes=5` to fix it"
)


@pytest.mark.parametrize("fmt", list(Output))
def test_every_format_shows_the_inferred_count(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: Output
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the note on one line
    code, out, err = explain(capsys, "--dump", str(VNODES_EXAMPLE), "--output", fmt.value)
    assert (code, err) == (0, "")
    if fmt is Output.json:
        doc = json.loads(out)
        assert_report_contract(doc)
        (group,) = doc["groups"]
        assert group["strategy"] == "CONSISTENT_HASH(vnodes=5)"
        assert group["inference"]["status"] == "inferred"
        assert group["inference"]["value"] == 5
        assert group["inference"]["strategyOption"] == "CONSISTENT_HASH:vnodes=5"
        assert group["inference"]["note"].startswith(VNODES_NOTE)
    elif fmt is Output.markdown:
        assert f"_note: {VNODES_NOTE}" in out  # the option stays a code span
    else:
        assert f"note: {VNODES_NOTE}" in out
    assert "ASSIGNMENT_MISMATCH" not in out


def test_a_stated_count_is_never_overridden(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--dump", str(VNODES_EXAMPLE), "-o", "json"]
    code, out, _ = explain(capsys, *args, "--strategy", "CONSISTENT_HASH:vnodes=10")
    assert code == 0  # a warning: not at or above the default --fail-on error
    doc = json.loads(out)
    assert doc["groups"][0]["inference"] is None
    assert doc["groups"][0]["strategy"] == "CONSISTENT_HASH(vnodes=10)"
    assert "ASSIGNMENT_MISMATCH" in codes(out)
    # naming the strategy without its count leaves the count to be inferred
    code, out, _ = explain(capsys, *args, "--strategy", "CONSISTENT_HASH")
    assert code == 0
    assert json.loads(out)["groups"][0]["strategy"] == "CONSISTENT_HASH(vnodes=5)"
    assert "ASSIGNMENT_MISMATCH" not in codes(out)


def test_wide_adds_the_holders_state_and_absolute_times(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o wide``: the table with cached messages, last pull, lock state and the absolute
    time of the last consumed message; short client names keep those columns on screen."""
    from pathlib import Path

    stuck = Path(__file__).resolve().parents[3] / "examples" / "slow-and-stuck-consumers.json"
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _ = explain(capsys, "--dump", str(stuck), "-o", "wide", "--no-color")
    assert code == 1
    head = next(line for line in out.splitlines() if line.startswith("Queue "))
    assert head.split()[-5:] == ["consumed", "Cached", "Last", "pull", "Locked"]
    assert "2 s ago, 2026-11-22T11:59:58Z" in out
    code, table, _ = explain(capsys, "--dump", str(stuck), "-o", "table", "--no-color")
    assert "Locked" not in table and "2026-11-22T11:59:58Z" not in table


def test_watch_names_a_queue_that_stood_still_for_a_minute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polls 0, 30 and 61 s into a capture of clients whose queues are unknown: broker-a:2
    does not advance while the others do; only the third poll is a minute from the first."""
    path = write(tmp_path, poll_doc(0, [10] * 4))
    later = [poll_doc(30, [30, 30, 10, 30]), poll_doc(61, [50, 50, 10, 50])]
    _rewrite_between_polls(monkeypatch, path, later)
    code, out, _ = explain(
        capsys, "--dump", str(path), "--watch", "30", "--count", "3", "-o", "plain"
    )
    second, _, third = out.partition("poll 2 at ")[2].partition("poll 3 at ")
    assert "QUEUE_STALLED" not in second
    assert "new error QUEUE_STALLED G T: 1 queue of T (broker-a:2) did not advance" in third
    assert code == 1
