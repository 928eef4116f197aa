"""The rmqlb YAML reader: declarations with their lines, and one-line errors for bad input."""

from __future__ import annotations

import textwrap

import pytest

from rmqlb.check.decl import CheckConfig, Loc
from rmqlb.check.loader import read_one
from rmqlb.errors import InputError
from rmqlb.model.snapshot import MessageModel
from rmqlb.model.strategy import AvgByCircle, ConsistentHash, MachineRoomNearby

GOOD = """\
version: 1
topics:
  T1:
    queues: 8
    brokers: [broker-a, broker-b]
  T2:
    perm: r
    brokers:
      broker-a: 4
      broker-b:
        read: 4
        write: 6
  T3:
    write: 3
groups:
  G:
    strategy: "CONSISTENT_HASH:vnodes=20"
    messageModel: clustering
    members:
      api:
        replicas: 3..12
        subscriptions:
          T1: "TagA || TagB"
          T2:
      worker:
        replicas: 2
        strategy: {name: AVG_BY_CIRCLE}
        subscriptions:
          T1: {type: SQL92, expression: "a > 1"}
  Empty:
"""


M = "groups:\n  G:\n    members:\n      a:\n"


def read(text: str) -> CheckConfig:
    config, _ = read_one(textwrap.dedent(text), "c.yaml")
    return config


def test_topics_with_lines() -> None:
    config = read(GOOD)
    t1, t2, t3 = config.topics["T1"], config.topics["T2"], config.topics["T3"]
    assert [(b.broker, b.read, b.write, b.perm) for b in t1.brokers] == [
        ("broker-a", 8, 8, 6),
        ("broker-b", 8, 8, 6),
    ]
    assert t1.loc == Loc("c.yaml", 3)
    assert t1.queues_loc == Loc("c.yaml", 4)
    assert [(b.broker, b.read, b.write, b.perm) for b in t2.brokers] == [
        ("broker-a", 4, 4, 4),
        ("broker-b", 4, 6, 4),
    ]
    assert t2.brokers[1].write_loc == Loc("c.yaml", 12)
    assert t2.brokers[1].perm_loc == Loc("c.yaml", 7)
    assert t2.readable_queues == 8
    assert [(b.read, b.write) for b in t3.brokers] == [(3, 3)]


def test_groups_with_lines() -> None:
    config = read(GOOD)
    group = config.groups["G"]
    assert group.strategy == ConsistentHash(20)
    assert group.strategy_loc == Loc("c.yaml", 17)
    assert group.message_model is MessageModel.CLUSTERING
    api, worker = group.members
    assert (api.min_replicas, api.max_replicas, api.replicas_loc) == (3, 12, Loc("c.yaml", 21))
    assert [(s.topic, s.expression, s.loc.line) for s in api.subscriptions] == [
        ("T1", "TagA || TagB", 23),
        ("T2", "*", 24),
    ]
    assert (worker.min_replicas, worker.max_replicas) == (2, 2)
    assert worker.strategy == AvgByCircle()
    assert worker.strategy_loc == Loc("c.yaml", 27)
    assert worker.subscriptions[0].expression_type == "SQL92"
    assert group.topics() == ["T1", "T2"]
    assert config.groups["Empty"].members == ()


def test_nearby_needs_rooms() -> None:
    config = read(
        """\
        groups:
          G:
            strategy: MACHINE_ROOM_NEARBY:inner=AVG
            members:
              a: {replicas: 1, room: az1, subscriptions: {T: "*"}}
        """
    )
    assert isinstance(config.groups["G"].strategy, MachineRoomNearby)  # type: ignore[attr-defined]
    with pytest.raises(
        InputError, match=r"^c\.yaml:5: groups\.G\.members\.a: MACHINE_ROOM_NEARBY needs a room"
    ):
        read(
            """\
            groups:
              G:
                strategy: MACHINE_ROOM_NEARBY:inner=AVG
                members:
                  a: {replicas: 1, subscriptions: {T: "*"}}
            """
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("topics: {T: {queues: 4, colour: red}}", r"c\.yaml:1: topics\.T\.colour: unknown key"),
        ("groups: {}\nbogus: 1", r"c\.yaml:2: bogus: unknown key 'bogus'"),
        (
            M + "        replicas: 5..2\n        subscriptions: {}",
            r"c\.yaml:5: groups\.G\.members\.a\.replicas: range 5\.\.2 is empty \(min > max\)",
        ),
        (
            M + "        replicas: many\n        subscriptions: {}",
            r"c\.yaml:5: groups\.G\.members\.a\.replicas: expected a count or a range",
        ),
        (
            M + "        replicas: true\n        subscriptions: {}",
            r"c\.yaml:5: .*replicas: expected a count or a range like 3\.\.12, found a boolean",
        ),
        (
            M + "        replicas: 1..99999\n        subscriptions: {}",
            r"c\.yaml:5: .*above the limit",
        ),
        (
            M + "        replicas: 2\n",
            r"c\.yaml:5: .*missing subscriptions",
        ),
        (
            "topics:\n  T:\n    queues: -1",
            r"c\.yaml:3: topics\.T\.queues: -1 is out of range 0\.\.65536",
        ),
        (
            "topics:\n  T:\n    queues: '8'",
            r"c\.yaml:3: topics\.T\.queues: expected an integer, found a string",
        ),
        (
            "topics:\n  T:\n    queues: 4\n    read: 4",
            r"c\.yaml:3: topics\.T: give either queues or read/write",
        ),
        ("topics:\n  T:\n    perm: 6", r"c\.yaml:3: topics\.T: no queue count"),
        (
            "topics:\n  T:\n    queues: 4\n    perm: 9",
            r"c\.yaml:4: topics\.T\.perm: 9 is out of range 0\.\.7",
        ),
        (
            "topics:\n  T:\n    queues: 4\n    perm: rx",
            r"c\.yaml:4: topics\.T\.perm: unknown perm 'rx'",
        ),
        ("topics:\n  T: [1]", r"c\.yaml:2: topics\.T: expected a mapping, found a list"),
        (
            "topics:\n  T: {queues: 1}\n  T: {queues: 2}",
            r"c\.yaml:3: invalid YAML: duplicate key 'T' in a mapping \(first at line 2\)",
        ),
        (
            "groups:\n  G:\n    strategy: FAST",
            r"c\.yaml:3: groups\.G\.strategy: .*unknown strategy 'FAST'",
        ),
        (
            "groups:\n  G:\n    strategy: CONFIG",
            r"c\.yaml:3: groups\.G\.strategy: CONFIG cannot be checked",
        ),
        (
            "groups:\n  G:\n    messageModel: PUSH",
            r"c\.yaml:3: groups\.G\.messageModel: expected CLUSTERING",
        ),
        (
            M + "        replicas: 1\n        subscriptions:\n          T: *",
            r"c\.yaml:7: invalid YAML: .*quote a \"\*\" tag expression",
        ),
        ("topics: {T: {queues: 4}", r"c\.yaml:1: invalid YAML: "),
        ("version: 2\ntopics: {}", r"c\.yaml:1: version: only version 1"),
        ("", r"c\.yaml:1: empty file"),
        (
            "topics:\n  T:\n    brokers: []\n    queues: 1",
            r"c\.yaml:3: topics\.T\.brokers: needs at least one broker",
        ),
        (
            "topics:\n  T:\n    queues: 1\n    brokers: [a, a]",
            r"c\.yaml:4: topics\.T\.brokers\[1\]: broker a listed twice",
        ),
    ],
)
def test_bad_input_is_one_line_with_file_and_line(text: str, expected: str) -> None:
    with pytest.raises(InputError) as info:
        read(text)
    message = str(info.value)
    assert "\n" not in message
    assert __import__("re").match(expected, message), message
