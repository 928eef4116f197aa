"""The CLI strategy grammar and the JSON form of strategy specs."""

from __future__ import annotations

import doctest

import pytest

from rmqlb.errors import InputError
from rmqlb.model import strategy as strategy_module
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    MachineRoom,
    MachineRoomNearby,
    Params,
    RoomPattern,
    RoomTable,
    Unknown,
    describe,
    params_of,
    parse_strategy_spec,
    same_algorithm,
    strategy_from_class_name,
    strategy_from_json,
    strategy_to_json,
    with_params,
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


# --- where parameters come from ----------------------------------------------------------

PREFIX = "org.apache.rocketmq.client.consumer.rebalance."


@pytest.mark.parametrize(
    ("simple", "name"),
    [
        ("AllocateMessageQueueConsistentHash", "CONSISTENT_HASH"),
        ("AllocateMessageQueueByMachineRoom", "MACHINE_ROOM"),
        ("AllocateMachineRoomNearby", "MACHINE_ROOM_NEARBY"),
        ("AllocateMessageQueueByConfig", "CONFIG"),
    ],
)
def test_a_reported_class_leaves_its_parameters_unknown(simple: str, name: str) -> None:
    spec = strategy_from_class_name(f"{PREFIX}{simple}@1b6d3586")
    assert spec.name == name
    assert params_of(spec) is Params.UNKNOWN
    assert describe(spec) == name  # no made-up parameters in labels
    assert strategy_to_json(spec) == {"name": name}  # nor in snapshots


def test_provenance_is_not_part_of_equality() -> None:
    assert ConsistentHash(10, Params.UNKNOWN) == ConsistentHash(10)
    assert same_algorithm(ConsistentHash(params=Params.UNKNOWN), ConsistentHash(5))
    assert not same_algorithm(ConsistentHash(10), ConsistentHash(5))
    assert same_algorithm(MachineRoom(params=Params.UNKNOWN), MachineRoom(frozenset({"hz"})))
    assert not same_algorithm(ConsistentHash(params=Params.UNKNOWN), Avg())


@pytest.mark.parametrize(
    ("raw", "params"),
    [
        ({"name": "CONSISTENT_HASH"}, Params.UNKNOWN),
        ({"name": "CONSISTENT_HASH", "virtualNodeCnt": 10}, Params.GIVEN),
        ({"name": "CONSISTENT_HASH", "virtualNodeCnt": 5, "inferred": True}, Params.INFERRED),
        ({"name": "CONSISTENT_HASH", "virtualNodeCnt": 5, "inferred": False}, Params.GIVEN),
        ({"name": "CONSISTENT_HASH", "inferred": True}, Params.UNKNOWN),  # nothing to mark
        ({"name": "MACHINE_ROOM"}, Params.UNKNOWN),
        ({"name": "MACHINE_ROOM", "consumeridcs": []}, Params.GIVEN),
        ({"name": "CONFIG"}, Params.UNKNOWN),
        ({"name": "CONFIG", "config": {}, "inferred": True}, Params.INFERRED),
        ({"name": "MACHINE_ROOM_NEARBY", "brokerRooms": "^(.+)@"}, Params.UNKNOWN),
        ({"name": "MACHINE_ROOM_NEARBY", "brokerRooms": {}, "consumerRooms": {}}, Params.GIVEN),
    ],
)
def test_json_says_where_parameters_come_from(raw: dict[str, object], params: Params) -> None:
    spec = strategy_from_json(raw)
    assert params_of(spec) is params
    again = strategy_from_json(strategy_to_json(spec))
    assert params_of(again) is params
    if params is not Params.UNKNOWN:  # unknown parameters are not written, even half known
        assert again == spec


def test_inferred_parameters_are_written_with_their_mark() -> None:
    assert strategy_to_json(ConsistentHash(5, Params.INFERRED)) == {
        "name": "CONSISTENT_HASH",
        "virtualNodeCnt": 5,
        "inferred": True,
    }
    with pytest.raises(InputError, match=r"inferred: expected true or false"):
        strategy_from_json({"name": "CONSISTENT_HASH", "virtualNodeCnt": 5, "inferred": "yes"})


def test_integral_floats_are_integers() -> None:
    """``5.0`` is an integer in JSON Schema and to fastjson; the spec holds the int."""
    raw = {"name": "CONSISTENT_HASH", "virtualNodeCnt": 5.0}
    assert strategy_from_json(raw) == ConsistentHash(5)
    assert type(strategy_to_json(strategy_from_json(raw))["virtualNodeCnt"]) is int
    queue = {"topic": "T", "brokerName": "b", "queueId": 3.0}
    config = strategy_from_json({"name": "CONFIG", "config": {"c": [queue]}})
    assert isinstance(config, Config)
    assert [type(q.queue_id) for q in config.config["c"]] == [int]
    for bad in (5.5, float("nan"), float("inf"), True):
        with pytest.raises(InputError, match="virtualNodeCnt: expected an integer"):
            strategy_from_json({"name": "CONSISTENT_HASH", "virtualNodeCnt": bad})
        with pytest.raises(InputError, match=r"config\.c\[0\]: expected brokerName"):
            strategy_from_json({"name": "CONFIG", "config": {"c": [{**queue, "queueId": bad}]}})


@pytest.mark.parametrize("pattern", ["(", "^x", "a{99999999999}(b)"])
def test_a_rooms_regex_that_cannot_serve_is_an_input_error(pattern: str) -> None:
    with pytest.raises(InputError, match=r"^s\.brokerRooms: (invalid regular expression|regex)"):
        strategy_from_json({"name": "MACHINE_ROOM_NEARBY", "brokerRooms": pattern}, "s")


def test_cli_vnodes_left_out_means_default_or_unknown() -> None:
    assert params_of(parse_strategy_spec("CONSISTENT_HASH")) is Params.GIVEN
    unknown = parse_strategy_spec("CONSISTENT_HASH", absent=Params.UNKNOWN)
    assert unknown == ConsistentHash(10)
    assert params_of(unknown) is Params.UNKNOWN
    stated = parse_strategy_spec("CONSISTENT_HASH:vnodes=10", absent=Params.UNKNOWN)
    assert params_of(stated) is Params.GIVEN


def test_with_params_leaves_strategies_without_parameters_alone() -> None:
    assert with_params(Avg(), Params.INFERRED) == Avg()
    assert params_of(with_params(Config({}), Params.INFERRED)) is Params.INFERRED


def test_docstring_examples() -> None:
    failures, tried = doctest.testmod(strategy_module)
    assert tried > 0
    assert failures == 0
