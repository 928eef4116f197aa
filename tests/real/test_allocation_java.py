"""rmqlb's allocators against the real Java classes, on thousands of generated inputs.

The golden vectors are fixed cases; here the kit's JRE runs Apache RocketMQ's own strategy
classes (and, on 5.x, the broker's ``QueryAssignmentProcessor.allocate4Pop``) from the jars
of each version, through ``java/AllocationRig.java``, on cases generated where the two
implementations could part: client ids that sort differently by code point and by UTF-16
unit, ids listed twice, empty and blank ids, broker names that Java's ``String.split("@")``
cuts oddly, virtual node counts from -1 up, rooms missing or empty, configured lists naming
queues outside the route, MD5 ring positions that collide (two clients, or a queue and a
client, on one position: found by a birthday search over generated names), rings big enough
for the numpy path, POP share numbers around the client count. The client cases go through
``rmqlb simulate --input FILE --output json`` (the golden vectors' contract), the broker
cases through the assignment ``explain`` expects of a broker. Every case must come out the
same: each client's queues in Java's order, or Java's exception message. The client cases
run again on JVMs whose default charset is US-ASCII, ISO-8859-1 or GBK (a ring hashes
``String.getBytes()``), against ``simulate`` told that charset.

The cases are drawn from a fixed seed (``RMQLB_JAVA_ALLOCATION_SEED`` draws others), so a
failure repeats; it names the case and both answers.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from hashlib import md5
from pathlib import Path
from typing import Any

import pytest
from realkit import KIT, Kit

from rmqlb.allocate.broker import BrokerState, query_assignment
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import MessageRequestMode, RequestMode

RIG = Path(__file__).resolve().parent / "java" / "AllocationRig.java"
SEED = int(os.environ.get("RMQLB_JAVA_ALLOCATION_SEED", "20261201"))
CLIENT_CASES = 4000
BROKER_CASES = 1500

Case = dict[str, Any]
QueueJson = list[Any]  # [topic, broker, id]

TOPICS = ("T", "TopicTest", "T2", "é", "\U0001f600", "\ue000T")
# broker names Java's String.split("@") (trailing empty strings dropped) cuts oddly
BROKERS = (
    "broker-a", "broker-b", "broker-10", "broker-9", "hz@broker-c", "sh@broker-d", "hz@",
    "@hz", "hz@@b", "hz@b@c", "@", "hz@b@", "\U0001f600@b", "\ue000@x", "HZ@b", "", " hz@b",
    "hz @b", "sh@",
)  # fmt: skip
IDCS = ("hz", "sh", "", "HZ", "\U0001f600", "\ue000", " hz", "@")
ROOMS = ("r1", "r2", "r3", "\U0001f600r", "\ue000r")
# Java's Character.isWhitespace and not (no-break spaces, zero width space)
BLANKS = (" ", "\t", "\u3000", "\u2028", "\x1c", "\x85", "\u00a0", "\u2007", "\u200b", "\u202f")
VIRTUAL_NODES = (-1, 0, 1, 2, 3, 5, 10, 11, 50)
# the two the broker registers, and one it does not (no assignment)
BROKER_STRATEGY_NAMES = ("AVG", "AVG", "AVG_BY_CIRCLE", "AVG_BY_CIRCLE", "CONSISTENT_HASH")


def _ring_hash(key: str) -> int:
    """Java ``MD5Hash.hash``: the first 4 bytes of MD5(UTF-8 key), unsigned."""
    return int.from_bytes(md5(key.encode()).digest()[:4], "big")


def _first_match(
    left: Iterable[str], right: Iterable[str], key_left: Callable[[str], str]
) -> tuple[str, str]:
    """A name of ``left`` and one of ``right`` whose ring keys hash alike (birthday search)."""
    seen = {_ring_hash(key_left(name)): name for name in left}
    for name in right:
        match = seen.get(_ring_hash(f"{name}-0"))
        if match is not None and match != name:
            return match, name
    raise AssertionError("no collision in the searched names")


def colliding_clients() -> tuple[str, str]:
    """Two client ids whose first virtual nodes (``cid-0``) take one ring position."""
    return _first_match(
        (f"c{n}" for n in range(200_000)),
        (f"d{n}" for n in range(200_000)),
        lambda name: f"{name}-0",
    )


def queue_on_a_client() -> tuple[str, str]:
    """A broker name whose queue ``T`` / 0 hashes to the ring position of a client's
    first virtual node: ``tailMap`` then takes that client (the position is inclusive)."""
    return _first_match(
        (f"b{n}" for n in range(200_000)),
        (f"e{n}" for n in range(200_000)),
        lambda broker: MessageQueue("T", broker, 0).java_string(),
    )


# -- generated cases -------------------------------------------------------------------------


def _client_id(rng: random.Random, style: str, n: int) -> str:
    if style == "ip":
        return f"10.0.{rng.randint(0, 3)}.{rng.randint(0, 255)}@{rng.randint(1, 99999)}"
    if style == "prefix":  # "c10" < "c2" in Java's order
        return f"c{rng.choice(['', '1', '2', '10', '11', '20', '100'])}{n}"
    # ASCII, Latin-1, CJK and its punctuation, the euro sign, fullwidth forms, private use
    # (and the part of it CP936 lends codes), supplementary: each charset writes some and
    # not others
    ranges = (
        (0x21, 0x7E), (0xA0, 0xFF), (0x4E00, 0x9FA5), (0x3000, 0x303F), (0x20AC, 0x20AC),
        (0xFF01, 0xFF5E), (0xE000, 0xFFFF), (0xE766, 0xE864), (0x10000, 0x10FFFF),
    )  # fmt: skip
    chars = []
    for _ in range(rng.randint(1, 5)):
        low, high = rng.choice(ranges)
        chars.append(chr(rng.randint(low, high)))
    return "".join(chars)


def _client_ids(rng: random.Random, count: int, *, duplicates: bool) -> list[str]:
    style = rng.choice(("ip", "prefix", "unicode", "mixed"))
    ids = [
        _client_id(rng, rng.choice(("ip", "prefix", "unicode")) if style == "mixed" else style, n)
        for n in range(count)
    ]
    if ids and rng.random() < 0.08:
        ids[rng.randrange(len(ids))] = rng.choice(("", *BLANKS))
    if duplicates and len(ids) > 1 and rng.random() < 0.2:
        ids.append(rng.choice(ids))
    rng.shuffle(ids)
    return ids


def _queues(rng: random.Random, count: int) -> list[QueueJson]:
    mixed_topics = rng.random() < 0.1
    topic = rng.choice(TOPICS)
    brokers = rng.sample(BROKERS, rng.randint(1, 5))
    out: dict[tuple[str, str, int], None] = {}
    for _ in range(count * 3):
        if len(out) == count:
            break
        t = rng.choice(TOPICS) if mixed_topics else topic
        out[(t, rng.choice(brokers), rng.randint(0, 24))] = None
    queues = [list(q) for q in out]
    rng.shuffle(queues)
    return queues


def _strategy(rng: random.Random, queues: list[QueueJson], ids: list[str], depth: int = 0) -> Any:
    names = ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "MACHINE_ROOM"]
    if depth == 0:
        names += ["MACHINE_ROOM_NEARBY", "CONFIG"]
    name = rng.choice(names)
    if name == "CONSISTENT_HASH":
        return {"name": name, "virtualNodeCnt": rng.choice(VIRTUAL_NODES)}
    if name == "MACHINE_ROOM":
        return {"name": name, "consumeridcs": rng.sample(IDCS, rng.randint(0, 3))}
    if name == "MACHINE_ROOM_NEARBY":

        def rooms(keys: Iterable[str]) -> dict[str, str]:
            out = {}
            for key in keys:
                draw = rng.random()
                if draw < 0.03:
                    continue  # unknown: Java throws
                out[key] = "" if draw < 0.05 else rng.choice(ROOMS)
            return out

        return {
            "name": name,
            "inner": _strategy(rng, queues, ids, depth + 1),
            "brokerRooms": rooms(q[1] for q in queues),
            "consumerRooms": rooms(ids),
        }
    if name == "CONFIG":
        config = {}
        for cid in ids:
            if rng.random() < 0.7:
                own = rng.sample(queues, rng.randint(0, min(4, len(queues))))
                if rng.random() < 0.2:  # a queue outside the route
                    own.append(["T", rng.choice(BROKERS), rng.randint(30, 40)])
                config[cid] = own
        return {"name": name, "config": config}
    return {"name": name}


def _ring(virtual_nodes: int) -> dict[str, Any]:
    return {"name": "CONSISTENT_HASH", "virtualNodeCnt": virtual_nodes}


def client_cases(rng: random.Random, count: int) -> list[Case]:
    """Generated ``allocate()`` cases, then the hand-made ones: hash collisions, a big ring."""
    cases = []
    for _ in range(count):
        queues = _queues(rng, rng.choice((0, 1, 2, 3, 5, 8, rng.randint(1, 40))))
        ids = _client_ids(rng, rng.choice((0, 1, 2, 3, rng.randint(1, 12))), duplicates=True)
        cases.append({"queues": queues, "consumers": ids, "strategy": _strategy(rng, queues, ids)})
    first, second = colliding_clients()
    broker, client = queue_on_a_client()
    ring_queues = [["T", broker, 0], *(["T", b, i] for b in ("x", "y") for i in range(12))]
    for vnodes in (1, 2, 5):
        for ids in ([first, second], [second, first, "z"], [first, first, second], [client, "z"]):
            cases.append({"queues": ring_queues, "consumers": ids, "strategy": _ring(vnodes)})
    big = [["T", f"broker-{b}", i] for b in range(4) for i in range(300)]
    cids = ["a", "b", "\U0001f600", "\ue000", "c"]
    cases.append({"queues": big, "consumers": cids, "strategy": _ring(10_000)})  # numpy's path
    return [{"kind": "client", "id": f"client-{n}", **case} for n, case in enumerate(cases)]


def broker_cases(rng: random.Random, count: int) -> list[Case]:
    """Generated ``QueryAssignmentProcessor`` cases: each client of the broker's list asks,
    and one it does not list."""
    cases = []
    for n in range(count):
        queues = _queues(rng, rng.choice((0, 1, 2, 3, 4, 6, rng.randint(1, 24))))
        ids = list(dict.fromkeys(_client_ids(rng, rng.randint(0, 9), duplicates=False)))
        cases.append(
            {
                "kind": "broker",
                "id": f"broker-{n}",
                "queues": queues,
                "consumers": ids,
                "strategy": rng.choice(BROKER_STRATEGY_NAMES),
                "pop": rng.choice((None, None, -1, 0, 1, 2, 3, 5, 8)),
                "ask": [*ids, rng.choice(("outsider", "", *BLANKS))],
            }
        )
    return cases


# -- the two answers -------------------------------------------------------------------------


def _queue_object(raw: Sequence[Any]) -> dict[str, Any]:
    return {"topic": raw[0], "brokerName": raw[1], "queueId": raw[2]}


def _simulate_strategy(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A case's strategy in the ``simulate --input`` contract (queues as objects)."""
    out = dict(raw)
    if raw["name"] == "CONFIG":
        out["config"] = {c: [_queue_object(q) for q in qs] for c, qs in raw["config"].items()}
    elif raw["name"] == "MACHINE_ROOM_NEARBY":
        out["inner"] = _simulate_strategy(raw["inner"])
    return out


def simulate_answers(cases: Sequence[Case], workdir: Path) -> list[dict[str, Any]]:
    """What ``rmqlb simulate --input CASES.jsonl --output json`` answers each client case
    (the command the golden vectors' contract is for), in the rig's answer format."""
    path = workdir / "simulate.jsonl"
    lines = (
        {
            "id": case["id"],
            "topic": "T",
            "queues": [_queue_object(q) for q in case["queues"]],
            "consumers": case["consumers"],
            "strategy": _simulate_strategy(case["strategy"]),
        }
        for case in cases
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "rmqlb", "simulate", "--input", path, "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = []
    for line, case in zip(done.stdout.splitlines(), cases, strict=True):
        answer = json.loads(line)
        assert answer["id"] == case["id"]
        if "error" in answer:
            answers.append({"error": answer["error"]})
            continue
        assigned = answer["assignments"].items()
        answers.append(
            {
                "expected": {
                    cid: [[q["topic"], q["brokerName"], q["queueId"]] for q in qs]
                    for cid, qs in assigned
                }
            }
        )
    return answers


def broker_answer(case: Case) -> dict[str, Any]:
    """What rmqlb's broker assignment (what ``explain`` expects) answers a broker case."""
    queues = [MessageQueue(*q) for q in case["queues"]]
    pop = case["pop"]
    mode = MessageRequestMode(RequestMode.PULL if pop is None else RequestMode.POP, pop or 0)
    state = BrokerState(queues, case["consumers"], mode)
    assigned = {}
    for cid in case["ask"]:
        got = query_assignment(state, cid, case["strategy"])
        assigned[cid] = None if got is None else [[q.topic, q.broker_name, q.queue_id] for q in got]
    return {"assigned": assigned}


def java_answers(
    kit: Kit, cases: Sequence[Case], workdir: Path, charset: str = "UTF-8"
) -> list[dict[str, Any]]:
    """The rig's answers, from the jars of the kit's version, on its JRE with ``charset`` as
    the platform's (``MD5Hash`` hashes ``String.getBytes()``: UTF-8 from Java 18 on, the
    locale's before)."""
    cases_file, answers_file = workdir / "cases.jsonl", workdir / "answers.jsonl"
    cases_file.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    script = (
        '. "$KIT/env.sh"; rmq_need_java || exit 1;'
        ' exec "$RMQ_JAVA" -Dfile.encoding="$CHARSET" -cp "$RMQ_CP" "$RIG" "$CASES" "$ANSWERS"'
    )
    env = kit.env(
        KIT=str(KIT), RIG=str(RIG), CASES=str(cases_file), ANSWERS=str(answers_file),
        CHARSET=charset,
    )  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answers = [json.loads(line) for line in answers_file.read_text(encoding="utf-8").splitlines()]
    assert len(answers) == len(cases)
    for answer in answers:
        if "error" in answer:  # [exception class, message]: rmqlb keeps the message
            answer["error"] = answer["error"][1]
    return answers


def differences(
    cases: Sequence[Case], answers: Sequence[dict[str, Any]], ours: Iterable[dict[str, Any]]
) -> str:
    """The cases whose answers differ, the first five in full; ``""`` when none does."""
    out = []
    for case, java, mine in zip(cases, answers, ours, strict=True):
        if mine != java:
            out.append(f"{case['id']}: {json.dumps(case)}\n  Java:  {java}\n  rmqlb: {mine}")
    if not out:
        return ""
    return f"{len(out)} of {len(cases)} differ:\n" + "\n".join(out[:5])


@pytest.mark.versions("4.9.8", "5.0.0", "5.1.4")
def test_client_strategies_answer_as_the_java_classes(kit: Kit, tmp_path: Path) -> None:
    cases = client_cases(random.Random(SEED), CLIENT_CASES)
    answers = java_answers(kit, cases, tmp_path)
    # the cases reach what they are for: Java's errors, and clients given nothing
    errors = {a["error"] for a in answers if "error" in a}
    assert {"currentCID is empty", "mqAll is null or mqAll empty"} <= errors
    assert "illegal virtualNodeCnt :-1" in errors
    assert any(m.startswith("Machine room is null for consumer id") for m in errors)
    assert any(m.startswith("Machine room is null for mq") for m in errors)
    assert sum(1 for a in answers if "expected" in a) > CLIENT_CASES // 2
    found = differences(cases, answers, simulate_answers(cases, tmp_path))
    assert not found, found


@pytest.mark.versions("5.0.0", "5.1.4")
def test_broker_assignment_answers_as_the_query_assignment_processor(
    kit: Kit, tmp_path: Path
) -> None:
    cases = broker_cases(random.Random(SEED), BROKER_CASES)
    answers = java_answers(kit, cases, tmp_path)
    assigned = [q for a in answers for q in a["assigned"].values()]
    assert None in assigned and [] in assigned  # no assignment, and an empty one
    assert any(q and q[0][2] == -1 for q in assigned)  # POP: the whole broker
    found = differences(cases, answers, map(broker_answer, cases))
    assert not found, found


def _in_charset(strategy: dict[str, Any], charset: str) -> dict[str, Any]:
    """``strategy`` with every CONSISTENT_HASH ring in it hashed in ``charset``."""
    if strategy["name"] == "CONSISTENT_HASH":
        return {**strategy, "charset": charset}
    if strategy["name"] == "MACHINE_ROOM_NEARBY":
        return {**strategy, "inner": _in_charset(strategy["inner"], charset)}
    return strategy


@pytest.mark.parametrize("charset", ["US-ASCII", "ISO-8859-1", "GBK"])
def test_rings_of_a_jvm_of_another_charset_answer_as_the_java_classes(
    kit: Kit, tmp_path: Path, charset: str
) -> None:
    """A JVM whose default charset is not UTF-8 (Java 17 and older take the locale's:
    ``ANSI_X3.4-1968`` under a POSIX locale, ISO-8859-1, GBK) hashes a ring's keys in it,
    '?' for each character it lacks: the same cases on such a JVM, against ``simulate`` with
    that ``charset``; and with non-ASCII ids the rings split otherwise than in UTF-8."""
    cases = client_cases(random.Random(SEED), CLIENT_CASES)
    answers = java_answers(kit, cases, tmp_path, charset=charset)
    in_charset = [{**c, "strategy": _in_charset(c["strategy"], charset)} for c in cases]
    found = differences(cases, answers, simulate_answers(in_charset, tmp_path))
    assert not found, found
    rings = [i for i, c in enumerate(cases) if c["strategy"]["name"] == "CONSISTENT_HASH"]
    in_utf8 = simulate_answers([cases[i] for i in rings], tmp_path)
    assert sum(answers[i] != ours for i, ours in zip(rings, in_utf8, strict=True)) > 50
