"""``rmqlb simulate`` from a running group: a dump, a check config (the live path is in
``tests/integration/test_simulate_live.py`` and ``tests/real``).

The start must be what ``explain`` expects of the same group, and each step must be what
the flag-driven ``simulate`` computes for the same brokers, client ids and strategy: two
independent paths through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rmqlb.cli import run

ROOT = Path(__file__).resolve().parents[3]
REBALANCING = str(ROOT / "examples" / "16-queues-3-consumers-rebalancing.json")
SPLIT = str(ROOT / "examples" / "split-subscriptions.json")
BROADCASTING = str(ROOT / "examples" / "broadcasting.json")
IDLE_YAML = str(ROOT / "examples" / "check" / "idle-consumers.yaml")

Capsys = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)


def json_lines(capsys: Capsys, *args: str) -> list[dict[str, Any]]:
    code = run(["simulate", *args, "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def holders(assignments: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, int], str]:
    return {(q["brokerName"], q["queueId"]): cid for cid, qs in assignments.items() for q in qs}


def explain_expected(capsys: Capsys, dump: str, group: str, topic: str) -> dict[Any, str]:
    run(["explain", "--dump", dump, group, "-o", "json", "--fail-on", "never"])
    doc = json.loads(capsys.readouterr().out)
    (g,) = [x for x in doc["groups"] if x["group"] == group]
    (t,) = [x for x in g["topics"] if x["topic"] == topic]
    return {(r["brokerName"], r["queueId"]): r["expected"] for r in t["queues"] if r["expected"]}


def test_the_start_is_what_explain_expects(capsys: Capsys) -> None:
    (doc,) = json_lines(capsys, "--dump", REBALANCING, "--group", "order-consumer")
    assert (doc["group"], doc["topic"]) == ("order-consumer", "OrderTopic")
    assert [s["step"] for s in doc["steps"]] == ["start"]
    expected = explain_expected(capsys, REBALANCING, "order-consumer", "OrderTopic")
    assert holders(doc["assignments"]) == expected


def test_each_step_is_what_flag_simulate_computes(capsys: Capsys) -> None:
    (doc,) = json_lines(
        capsys,
        *("--dump", REBALANCING, "-g", "order-consumer"),
        *("--add-id", "10.0.0.8@1#1", "--remove", "10.0.0.6@40711#955220311200114"),
        *("--queues", "24", "--strategy", "CONSISTENT_HASH:vnodes=40"),
    )
    start, members, queues, strategy = doc["steps"]
    assert [s["step"] for s in doc["steps"]] == ["start", "consumers", "queues", "strategy"]
    ids = list(start["assignments"])
    after = [c for c in ids if c != "10.0.0.6@40711#955220311200114"] + ["10.0.0.8@1#1"]
    # the same scale event, built from flags
    (flags,) = json_lines(
        capsys,
        *("--broker", "broker-a", "--queues", "16", "--topic", "OrderTopic"),
        *(arg for cid in ids for arg in ("--consumer-id", cid)),
        *("--add-id", "10.0.0.8@1#1", "--remove", "10.0.0.6@40711#955220311200114"),
    )
    assert holders(flags["assignments"]) == holders(start["assignments"])
    assert holders(flags["moves"]["assignments"]) == holders(members["assignments"])
    assert members["moves"]["count"] == flags["moves"]["count"]
    # 24 queues, then CONSISTENT_HASH, for the consumers after the event
    for step, extra in ((queues, []), (strategy, ["--strategy", "CONSISTENT_HASH:vnodes=40"])):
        (alone,) = json_lines(
            capsys,
            *("--broker", "broker-a", "--queues", "24", "--topic", "OrderTopic"),
            *(arg for cid in after for arg in ("--consumer-id", cid)),
            *extra,
        )
        assert holders(alone["assignments"]) == holders(step["assignments"])
    assert queues["newQueues"] == 8 and queues["goneQueues"] == 0
    assert queues["moves"]["total"] == 16  # only queues that exist before and after
    moved = {(q["brokerName"], q["queueId"]) for q in strategy["moves"]["queues"]}
    before, now = holders(queues["assignments"]), holders(strategy["assignments"])
    assert moved == {q for q in now if before[q] != now[q]}
    assert doc["moved"]["total"] == 16


def test_plain_output_marks_non_subscribers_and_says_what_moves(capsys: Capsys) -> None:
    code = run(["simulate", "--dump", SPLIT, "-g", "GroupA", "--topic", "topicA", "-o", "plain",
                "--add-id", "10.0.1.99@new"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "GroupA / topicA (dump " in out
    assert "2 consumers (1 subscribe), AVG" in out
    assert "10.0.1.16@3207#887001993120000 (not subscribed)" in out
    assert "Step 1: consumers +1 (10.0.1.99@new)" in out
    assert "10.0.1.99@new (not subscribed)" not in out  # a joiner subscribes like the others
    assert "1 of 4 queues change owner (25%)" in out
    assert "right now the clients hold 2 queues otherwise" in out


def test_every_topic_of_the_group_without_topic(capsys: Capsys) -> None:
    docs = json_lines(capsys, "--dump", SPLIT, "-g", "GroupA")
    assert [d["topic"] for d in docs] == ["topicA", "topicB"]


def test_compare_on_the_running_group(capsys: Capsys) -> None:
    (doc,) = json_lines(capsys, "--dump", REBALANCING, "-g", "order-consumer", "--compare")
    assert [row["label"] for row in doc["compare"]][:3] == [
        "AVG",
        "AVG_BY_CIRCLE",
        "CONSISTENT_HASH(vnodes=10)",
    ]


def test_from_a_check_config_at_its_largest_count(capsys: Capsys) -> None:
    (doc,) = json_lines(capsys, "--check-config", IDLE_YAML, "--queues", "48")
    start, more = doc["steps"]
    assert start["consumers"] == 24 and start["balance"]["idle"] == 8
    assert more["balance"] == {"min": 2, "max": 2, "idle": 0, "unassigned": 0, "duplicated": 0}
    (low,) = json_lines(capsys, "--check-config", IDLE_YAML, "--replicas", "16")
    assert low["steps"][0]["consumers"] == 16
    # the same ids and allocation as check --explain-counts at 24
    run(["check", "--explain-counts", "-o", "json", IDLE_YAML])
    check = json.loads(capsys.readouterr().out)
    (table,) = check["allocations"]
    (row,) = [r for r in table["counts"] if r["consumers"] == 24]
    got = {
        cid: [(q["brokerName"], q["queueId"]) for q in qs] for cid, qs in doc["assignments"].items()
    }
    want = {
        cid: [(q["brokerName"], q["queueId"]) for q in qs] for cid, qs in row["assignments"].items()
    }
    assert got == want


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--dump", REBALANCING, "-g", "order-consumr"], "did you mean 'order-consumer'?"),
        (["--dump", REBALANCING, "-g", "order-consumer", "--brokers", "2"], "--brokers cannot"),
        (["--dump", REBALANCING, "-g", "order-consumer", "--input", "x"], "--input cannot"),
        (["--dump", BROADCASTING], "BROADCASTING mode"),
        (["--dump", REBALANCING, "--replicas", "3"], "--replicas picks"),
        (["--replicas", "3"], "--replicas picks"),
        (["--dump", REBALANCING, "--check-config", IDLE_YAML], "give one starting point"),
        (["-g", "order-consumer"], "--group needs a starting point"),
        (["--dump", SPLIT, "-g", "GroupA", "--topic", "nope"], "topic 'nope' does not exist"),
        (["--dump", REBALANCING, "--remove", "nobody@1"], "cannot remove 'nobody@1'"),
        (["--check-config", IDLE_YAML, "--replicas", "30"], "runs 16..24 consumers"),
        (["--dump", REBALANCING, "--strategy", "CONFIG"], "CONFIG"),
    ],
)
def test_bad_input(capsys: Capsys, args: list[str], needle: str) -> None:
    code = run(["simulate", *args, "-o", "plain"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("rmqlb: error:") and needle in err, err
    assert "Traceback" not in err


def test_namesrv_from_the_environment_does_not_switch_modes(
    capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAMESRV_ADDR", "127.0.0.1:1")
    code = run(["simulate", "--queues", "4", "--consumers", "2", "-o", "plain"])
    assert code == 0
    assert "TopicTest: 4 queues on 1 broker, 2 consumers, AVG" in capsys.readouterr().out


def test_json_keys_do_not_change_with_the_flags(capsys: Capsys) -> None:
    """``rmqlb.simulate-plan/1``: the same top-level and step keys with or without changes
    and ``--compare`` (absent is null)."""
    base = ("--dump", REBALANCING, "--group", "order-consumer")
    (plain,) = json_lines(capsys, *base)
    (changed,) = json_lines(capsys, *base, "--add", "1", "--queues", "24", "--compare")
    assert plain["format"] == changed["format"] == "rmqlb.simulate-plan/1"
    assert list(plain) == list(changed)
    assert plain["compare"] is None and plain["error"] is None
    assert changed["compare"] is not None
    assert {tuple(s) for s in [*plain["steps"], *changed["steps"]]} == {tuple(plain["steps"][0])}
    assert plain["steps"][0]["moves"] is None
