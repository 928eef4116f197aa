"""``rmqlb status`` and group lookup against a real RocketMQ 4.9.8 cluster.

The cluster is shared by every test of the session: each test asserts on its own groups
only (``status`` is narrowed to them with a glob), and on counts of other groups never.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import Names
from realkit import ALL_VERSIONS, Kit, lingering

from rmqlb.client.admin import AdminClient, ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.model import Snapshot
from rmqlb.remoting.codes import RequestCode


def status(kit: Kit, *args: str, expect: tuple[int, ...] = (0, 1, 4)) -> dict[str, Any]:
    """``rmqlb status -n <kit> ... -o json``, parsed, with its exit code."""
    done = kit.rmqlb("status", "-n", kit.namesrv, *args, "-o", "json", expect=expect)
    doc: dict[str, Any] = json.loads(done.stdout)
    doc["_exit"] = done.returncode
    doc["_stderr"] = done.stderr
    return doc


def lines(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["group"]: g for g in doc["groups"]}


@pytest.mark.versions(*ALL_VERSIONS)
def test_status_lists_the_groups_with_their_worst_finding_and_lag(kit: Kit, names: Names) -> None:
    base, t = names.group, names.topic
    healthy, retired, split = f"{base}-healthy", f"{base}-retired", f"{base}-split"
    t_old = names.topic_n(2)
    kit.topic(t, read=4)
    kit.topic(t_old, read=2)

    # a healthy group of two consumers that keeps up
    spec = f"group={healthy};sub={t}:*"
    ok = kit.consumer("st-healthy", f"{spec};instance=h1", f"{spec};instance=h2")
    # a group that consumed t_old, then went away: what arrives afterwards waits for nobody
    old = kit.consumer("st-retired", f"group={retired};sub={t_old}:*;instance=r1")
    # a group whose second consumer does not subscribe the topic its first one does
    both = f"group={split};sub={t}:*;sub={t_old}:*;instance=s1"
    only = f"group={split};sub={t}:*;instance=s2"
    kit.consumer("st-split", both, only)
    kit.wait(healthy, ok, consumers=2, queues={t: 8})
    kit.wait(retired, old, consumers=1, queues={t_old: 4})
    kit.produce(t_old, 40)
    kit.produce(t, 80)

    def caught_up() -> dict[str, Any] | None:
        doc = status(kit, f"{base}-*")
        got = lines(doc)
        done = got.get(retired, {}).get("lag") == 0 and got.get(healthy, {}).get("lag") == 0
        return doc if done else None

    kit.wait_for("both groups to consume what was sent", caught_up, timeout=60, every=1.0)
    kit.halt("st-retired")  # a clean shutdown: its offsets are committed, its channel closed
    kit.produce(t_old, 30)

    def settled() -> dict[str, Any] | None:
        doc = status(kit, f"{base}-*")
        got = lines(doc)
        if got.get(retired, {}).get("consumers") != 0 or got[retired]["lag"] != 30:
            return None
        if got.get(split, {}).get("worst") is None:
            return None
        if got.get(healthy, {}).get("worst") is not None:
            return None  # a closed connection of its clients the broker still lists
        return doc

    try:
        doc = kit.wait_for(
            "the retired group to show 30 waiting messages and the healthy one no finding",
            settled,
            timeout=60,
            lingering=lambda: lingering(kit.truth(healthy, ok)),
        )
    except AssertionError as exc:
        last = {g: line.get("worst") for g, line in lines(status(kit, f"{base}-*")).items()}
        raise AssertionError(f"{exc}; worst findings now: {last}") from None
    got = lines(doc)
    assert set(got) == {healthy, retired, split}  # the glob: this test's groups only

    line = got[retired]
    assert line["worst"]["code"] == "NO_CONSUMERS" and line["worst"]["severity"] == "warning"
    assert "leaves 30 messages unconsumed" in line["worst"]["message"]
    # t_old's 4 queues, and its retry topic's queue on each broker where the group committed
    # an offset there: nobody reads any of them. 4.9.8 clients always commit one; whether a
    # 5.x client does depends on the timing of its offset persistence, so the brokers' own
    # answer (mqadmin's rows of the retry topic; it cuts a topic's name at 64 characters)
    # says how many there are.
    progress = kit.mqadmin("consumerProgress", "-g", retired).splitlines()
    retry_topic = f"%RETRY%{retired}"[:64]
    retry_queues = sum(1 for row in progress if row.split()[:1] == [retry_topic])
    if kit.version == "4.9.8":
        assert retry_queues == 2, "\n".join(progress)
    queues = 4 + retry_queues
    assert line["stranded"] == {
        "queues": queues, "messages": 30, "knownMessages": 30, "unknownQueues": 0,
        "complete": True,
    }  # fmt: skip
    assert line["strategy"] is None and line["partial"] == []  # no client: no strategy

    line = got[split]
    assert line["worst"]["code"] == "SUBSCRIPTION_INCONSISTENT"
    assert line["worst"]["severity"] == "error"
    assert line["strategy"] == "AVG" and line["consumers"] == 2

    line = got[healthy]
    assert line["worst"] is None and line["lag"] == 0 and line["consumers"] == 2
    assert (line["topics"], line["queues"], line["stranded"]["queues"]) == (1, 8, 0)
    assert isinstance(line["consumeTps"], float)  # the real clients report their rate

    # worst first: the error, then the warning, then the healthy group
    assert [g["group"] for g in doc["groups"]] == [split, retired, healthy]
    assert doc["_exit"] == 1 and doc["exitCode"] == 1
    # -t asks the brokers who consumes the topic: the retired group is known by its offsets.
    # The split group is listed only while its last heartbeat came from the consumer that
    # subscribes t_old (each heartbeat replaces the group's subscriptions on the broker: the
    # very problem SUBSCRIPTION_INCONSISTENT reports), so it may or may not be there.
    by_topic = lines(status(kit, f"{base}-*", "-t", t_old))
    assert retired in by_topic and set(by_topic) <= {retired, split}


@pytest.mark.versions(*ALL_VERSIONS)
def test_a_typo_is_exit_2_with_did_you_mean(kit: Kit, names: Names, tmp_path: Path) -> None:
    group, t = f"{names.group}-order", names.topic
    kit.topic(t, read=2)
    jvm = kit.consumer("typo", f"group={group};sub={t}:*")
    kit.wait(group, jvm, consumers=1, queues={t: 4})
    typo = group[:-1] + "rr"  # ...-orderr: one letter off
    message = re.compile(
        rf"rmqlb: error: group '{re.escape(typo)}' does not exist on this cluster "
        rf"\(\d+ groups? known\); did you mean '{re.escape(group)}'\?\n"
    )
    out = tmp_path / "dump.json"
    for argv in (
        ["explain", "-n", kit.namesrv, typo],
        ["explain", "-n", kit.namesrv, "-g", typo],
        ["dump", "-n", kit.namesrv, "-g", typo, "--out", str(out)],
        ["status", "-n", kit.namesrv, "-g", typo],
    ):
        done = kit.rmqlb(*argv, expect=(2,))
        assert message.fullmatch(done.stderr), (argv, done.stderr)
        assert done.stdout == ""
    assert not out.exists()
    # the real name works, and a group without consumers is not a typo
    report = kit.explain(group)
    assert report["_exit"] == 0, (report["findings"], report["_stderr"])


@pytest.mark.versions(*ALL_VERSIONS)
def test_offset_tables_give_the_capture_consume_stats_without_topic_give(
    kit: Kit, names: Names
) -> None:
    """Capturing every group, the CLI reads each broker's offset table once and asks consume
    stats per topic (not at all where a group has no offsets): the same capture as one
    request without a topic per group and broker, at a fraction of the brokers' work."""
    base, t, t2, solo = names.group, names.topic, names.topic_n(2), names.topic_n(3)
    kit.topic(t, read=4)
    kit.topic(t2, read=2)
    kit.topic(solo, read=2, brokers=("broker-a",))
    one, two, only_a = f"{base}-one", f"{base}-two", f"{base}-solo"
    jvm = kit.consumer(
        "ot", f"group={one};sub={t}:*", f"group={two};sub={t}:*;sub={t2}:*",
        f"group={only_a};sub={solo}:*",
    )  # fmt: skip
    kit.wait(one, jvm, consumers=1, queues={t: 8})
    kit.wait(two, jvm, consumers=1, queues={t: 8, t2: 4})
    kit.wait(only_a, jvm, consumers=1, queues={solo: 2})
    for topic in (t, t2, solo):
        kit.produce(topic, 20)

    def consumed() -> dict[str, Any] | None:
        got = lines(status(kit, f"{base}-*"))
        done = len(got) == 3 and all(g["lag"] == 0 for g in got.values())
        return got if done else None

    kit.wait_for("the groups to consume what was sent", consumed, timeout=60, every=1.0)
    kit.halt("ot")  # a clean shutdown: offsets committed; nothing moves any more

    def capture(tables: bool) -> tuple[Snapshot, list[tuple[str, int, dict[str, str]]]]:
        asked: list[tuple[str, int, dict[str, str]]] = []

        def tap(addr: str, code: int, ext: Any, body: bytes, response: Any) -> None:
            asked.append((addr, code, dict(ext)))

        async def run() -> Snapshot:
            async with AdminClient(ClientOptions(), tap=tap) as admin:
                options = CollectOptions(
                    namesrv=(kit.namesrv,), patterns=(f"{base}-*",), offset_tables=tables
                )
                return await collect(options, admin=admin)

        return asyncio.run(run()), asked

    per_topic, asked = capture(True)
    whole, _ = capture(False)
    assert sorted(per_topic.groups) == sorted(whole.groups) == sorted([one, two, only_a])
    assert not per_topic.errors
    for name, group in per_topic.groups.items():
        other = whole.groups[name]
        assert group.offsets == other.offsets and group.configs == other.configs, name
        assert len({o.queue.topic for o in group.offsets if not o.queue.topic.startswith("%")}) == (
            2 if name == two else 1
        )
    tables = [a for a, code, _ in asked if code == RequestCode.GET_ALL_CONSUMER_OFFSET]
    assert sorted(tables) == sorted({kit.broker_addr("broker-a"), kit.broker_addr("broker-b")})
    ours = [
        (addr, ext)
        for addr, code, ext in asked
        if code == RequestCode.GET_CONSUME_STATS and ext["consumerGroup"].startswith(base)
    ]
    assert ours and all("topic" in ext for _, ext in ours)
    b = kit.broker_addr("broker-b")
    assert not [ext for addr, ext in ours if addr == b and ext["topic"] == solo]
