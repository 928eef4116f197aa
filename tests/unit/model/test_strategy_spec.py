"""The CLI strategy grammar and the JSON form of strategy specs."""

from __future__ import annotations

import pytest

from rmqlb.errors import InputError
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    ConsistentHash,
    MachineRoom,
    MachineRoomNearby,
    RoomPattern,
    RoomTable,
    Unknown,
    describe,
    parse_strategy_spec,
    strategy_from_class_name,
    strategy_from_json,
    strategy_to_json,
)

ROOMS = RoomTable({"broker-a": "hz"})
PATTERN = RoomPattern(r"^(\w+)-")


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("AVG", Avg()),
        ("avg-by-circle", AvgByCircle()),
        ("CONSISTENT_HASH", ConsistentHash(10)),
        ("CONSISTENT_HASH:vnodes=20", ConsistentHash(20)),
        ("MACHINE_ROOM:idcs=hz, sh", MachineRoom(frozenset({"hz", "sh"}))),
    ],
)
def test_cli_grammar(text: str, spec: object) -> None:
    assert parse_strategy_spec(text) == spec


def test_nearby_forwards_inner_parameters() -> None:
    spec = parse_strategy_spec(
        "MACHINE_ROOM_NEARBY:inner=CONSISTENT_HASH:vnodes=20", ROOMS, PATTERN
    )
    assert spec == MachineRoomNearby(ConsistentHash(20), ROOMS, PATTERN)
    assert describe(spec) == "MACHINE_ROOM_NEARBY(CONSISTENT_HASH(vnodes=20))"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("NOPE", "unknown strategy 'NOPE'"),
        ("AVG:vnodes=3", "AVG takes no parameter"),
        ("CONSISTENT_HASH:vnodes=x", "vnodes must be an integer"),
        ("CONSISTENT_HASH:weight=2", "bad parameter 'weight=2'"),
        ("MACHINE_ROOM", "needs idcs="),
        ("MACHINE_ROOM_NEARBY", "needs rooms"),
        ("CONFIG", "needs per-client queue lists"),
    ],
)
def test_cli_grammar_errors(text: str, words: str) -> None:
    with pytest.raises(InputError, match=words):
        parse_strategy_spec(text)


def test_nearby_inner_parameter_errors_name_the_inner_strategy() -> None:
    with pytest.raises(InputError, match=r"inner .*AVG takes no parameter"):
        parse_strategy_spec("MACHINE_ROOM_NEARBY:vnodes=20", ROOMS, PATTERN)


@pytest.mark.parametrize(
    "spec",
    [
        Avg(),
        AvgByCircle(),
        ConsistentHash(0),
        MachineRoom(frozenset({"a", "b"})),
        MachineRoomNearby(ConsistentHash(3), ROOMS, PATTERN),
        Unknown("MyStrategy"),
    ],
)
def test_json_round_trip(spec: object) -> None:
    assert strategy_from_json(strategy_to_json(spec)) == spec  # type: ignore[arg-type]


def test_class_name_from_running_info() -> None:
    prefix = "org.apache.rocketmq.client.consumer.rebalance."
    assert strategy_from_class_name(prefix + "AllocateMessageQueueAveragely@6d06d69c") == Avg()
    assert strategy_from_class_name("com.acme.MyAllocator@1") == Unknown("MyAllocator")
