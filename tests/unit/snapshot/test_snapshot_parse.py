"""Loading and saving ``rmqlb.snapshot/1``: round trip, shorthand, every validation path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from test_schema_loader_agree import BASE

from rmqlb.errors import InputError
from rmqlb.model import MessageQueue
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    ConsistentHash,
    MachineRoom,
    StrategySpec,
    Unknown,
    params_of,
)
from rmqlb.snapshot import (
    dumps_snapshot,
    load_snapshot,
    parse_snapshot,
    save_snapshot,
    snapshot_to_json,
)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def full_doc() -> dict[str, Any]:
    """A document using every field of the format."""
    return {
        "format": "rmqlb.snapshot/1",
        "capturedAt": "2026-11-22T12:00:00Z",
        "source": {"namesrv": ["127.0.0.1:9876"], "rmqlb": "0.1.0"},
        "brokers": {
            "broker-a": {
                "cluster": "DefaultCluster",
                "addrs": {"0": "10.0.0.1:10911", "1": "10.0.0.2:10911"},
            }
        },
        "topics": {
            "TopicA": {
                "queueDatas": [
                    {
                        "brokerName": "broker-a",
                        "readQueueNums": 4,
                        "writeQueueNums": 4,
                        "perm": 6,
                        "topicSysFlag": 1,
                    }
                ]
            },
        },
        "groups": {
            "GroupA": {
                "messageModel": "CLUSTERING",
                "consumeType": "CONSUME_PASSIVELY",
                "strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 20},
                "consumers": [
                    {
                        "clientId": "10.0.0.5@1234#99",
                        "clientAddr": "10.0.0.5:53412",
                        "language": "JAVA",
                        "version": 413,
                        "strategy": {"name": "AVG_BY_CIRCLE"},
                        "consumeOrderly": False,
                        "consumeType": "CONSUME_PASSIVELY",
                        "startTime": 1700000000000,
                        "subscriptions": [
                            {
                                "topic": "TopicA",
                                "expressionType": "TAG",
                                "subString": "TagA || TagB",
                                "subVersion": 1700000000000,
                            }
                        ],
                        "assigned": [{"topic": "TopicA", "brokerName": "broker-a", "queueId": 0}],
                        "popAssigned": [
                            {"topic": "TopicA", "brokerName": "broker-a", "queueId": -1}
                        ],
                        "properties": {"PROP_CLIENT_VERSION": "V4_9_8"},
                    }
                ],
                "offsets": [
                    {
                        "topic": "TopicA",
                        "brokerName": "broker-a",
                        "queueId": 0,
                        "brokerOffset": 120,
                        "consumerOffset": 100,
                        "lastTimestamp": 7,
                    }
                ],
            }
        },
        "errors": [
            {
                "target": "10.0.0.2:10911",
                "request": "GET_CONSUME_STATS",
                "message": "timed out after 3.0 s",
                "group": "GroupA",
                "topic": "TopicA",
            }
        ],
    }


def test_full_document_round_trip() -> None:
    snap = parse_snapshot(full_doc())
    assert parse_snapshot(snapshot_to_json(snap)) == snap
    assert snapshot_to_json(snap) == full_doc()
    (c,) = snap.groups["GroupA"].consumers
    assert c.strategy == AvgByCircle()
    assert snap.groups["GroupA"].strategy == ConsistentHash(20)
    assert c.assigned == (MessageQueue("TopicA", "broker-a", 0),)
    assert snap.groups["GroupA"].offsets[0].lag == 20
    assert snap.brokers["broker-a"].master_addr() == "10.0.0.1:10911"
    assert (snap.errors[0].group, snap.errors[0].topic) == ("GroupA", "TopicA")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_examples_round_trip_through_files(path: Path, tmp_path: Path) -> None:
    snap = load_snapshot(path)
    out = tmp_path / "copy.json"
    save_snapshot(snap, out)
    assert load_snapshot(out) == snap
    assert json.loads(dumps_snapshot(snap)) == snapshot_to_json(snap)


def test_shorthand_topic_and_subscriptions() -> None:
    snap = parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {"T": {"queues": 16}},
            "groups": {
                "G": {
                    "consumers": [
                        {
                            "clientId": "c1",
                            "subscriptions": ["T"],
                            "assigned": [{"brokerName": "broker-a", "queueId": 3}],
                        }
                    ]
                }
            },
        }
    )
    (qd,) = snap.topics["T"].queue_datas
    assert (qd.broker_name, qd.read_queue_nums, qd.write_queue_nums, qd.perm) == (
        "broker-a",
        16,
        16,
        6,
    )
    c = snap.groups["G"].consumers[0]
    assert c.subscriptions[0].sub_string == "*"
    assert c.assigned == (MessageQueue("T", "broker-a", 3),)
    assert snapshot_to_json(snap)["topics"]["T"]["queueDatas"][0]["readQueueNums"] == 16


def test_strategy_from_properties_when_absent() -> None:
    doc = full_doc()
    consumer = doc["groups"]["GroupA"]["consumers"][0]
    del consumer["strategy"]
    consumer["properties"]["allocateMessageQueueStrategy"] = "com.example.Mine@1f"
    snap = parse_snapshot(doc)
    assert snap.groups["GroupA"].consumers[0].strategy == Unknown("Mine")


def _group_strategy(strategy: dict[str, Any]) -> StrategySpec | None:
    doc = full_doc()
    doc["groups"]["GroupA"]["strategy"] = strategy
    return parse_snapshot(doc).groups["GroupA"].strategy


def test_strategy_parameters_of_another_strategy_are_checked_then_ignored() -> None:
    leftovers = {"virtualNodeCnt": 20, "consumeridcs": ["hz"], "className": "x.Y"}
    assert _group_strategy({"name": "AVG", **leftovers}) == Avg()
    assert _group_strategy({"name": "MACHINE_ROOM", **leftovers}) == MachineRoom(frozenset({"hz"}))


@pytest.mark.parametrize(
    "strategy",
    [
        {"name": "CONSISTENT_HASH", "virtualNodeCnt": None},
        {"name": "MACHINE_ROOM", "consumeridcs": None},
        {"name": "MACHINE_ROOM_NEARBY", "inner": None, "brokerRooms": None, "consumerRooms": {}},
        {"name": "CONFIG", "config": None, "inferred": None},
        {"name": "UNKNOWN", "className": None},
    ],
)
def test_a_null_strategy_parameter_means_absent(strategy: dict[str, Any]) -> None:
    absent = {k: v for k, v in strategy.items() if v is not None}
    parsed, expected = _group_strategy(strategy), _group_strategy(absent)
    assert parsed is not None and expected is not None
    assert parsed == expected and params_of(parsed) == params_of(expected)


def test_unknown_keys_are_ignored() -> None:
    doc = full_doc()
    doc["futureField"] = {"x": 1}
    doc["groups"]["GroupA"]["consumers"][0]["jstack"] = "..."
    assert parse_snapshot(doc) == parse_snapshot(full_doc())


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> None:
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value


_DELETE = object()
C0 = ["groups", "GroupA", "consumers", 0]

CASES: list[tuple[list[Any], Any, str]] = [
    ([], [], "<input>: expected an object, got an array"),
    (
        ["format"],
        "rmqlb.snapshot/2",
        "format: expected 'rmqlb.snapshot/1', got \"rmqlb.snapshot/2\"",
    ),
    (["format"], _DELETE, "missing required field 'format'"),
    (["topics"], _DELETE, "missing required field 'topics'"),
    (["groups"], [], "groups: expected an object, got an array"),
    (["topics", "TopicA"], {}, "topics.TopicA: missing required field 'queueDatas'"),
    (
        ["topics", "TopicA", "queueDatas", 0, "readQueueNums"],
        "4",
        "topics.TopicA.queueDatas[0].readQueueNums: expected an integer, got a string",
    ),
    (
        ["topics", "TopicA", "queueDatas", 0, "writeQueueNums"],
        -1,
        "topics.TopicA.queueDatas[0].writeQueueNums: expected an integer >= 0, got -1",
    ),
    (
        ["topics", "TopicA", "queueDatas", 0, "readQueueNums"],
        10**9,
        "topics.TopicA.queueDatas[0].readQueueNums: at most 1000000 queues",
    ),
    (
        ["topics", "TopicA", "queueDatas", 0, "brokerName"],
        _DELETE,
        "topics.TopicA.queueDatas[0]: missing required field 'brokerName'",
    ),
    (
        ["topics", "TopicA", "queueDatas", 0, "perm"],
        True,
        "topics.TopicA.queueDatas[0].perm: expected an integer, got a boolean",
    ),
    (["topics", "TopicA", "queues"], 4, "give either 'queues' (shorthand) or 'queueDatas'"),
    (
        ["topics", "TopicA", "queueDatas", 0, "readQueueNums"],
        4.5,
        "topics.TopicA.queueDatas[0].readQueueNums: expected an integer, got a number",
    ),
    (
        ["topics", "TopicA", "queueDatas", 0, "readQueueNums"],
        1e20,
        "topics.TopicA.queueDatas[0].readQueueNums: at most 1000000 queues, got 1e+20",
    ),
    (
        ["topics", "TopicA", "queueDatas", 0, "writeQueueNums"],
        -1.0,
        "topics.TopicA.queueDatas[0].writeQueueNums: expected an integer >= 0, got -1.0",
    ),
    (
        [*C0, "assigned", 0, "queueId"],
        float("inf"),
        "groups.GroupA.consumers[0].assigned[0].queueId: expected an integer, got Infinity",
    ),
    (
        ["groups", "GroupA", "offsets", 0, "brokerOffset"],
        float("nan"),
        "groups.GroupA.offsets[0].brokerOffset: expected an integer, got NaN",
    ),
    (
        [*C0, "status"],
        {"TopicA": {"pullRT": float("nan")}},
        "groups.GroupA.consumers[0].status.TopicA.pullRT: expected a number, got NaN",
    ),
    (
        ["groups", "GroupA", "offsets", 0, "consumerOffset"],
        -2.0,
        "groups.GroupA.offsets[0].consumerOffset: expected an integer >= -1, got -2.0",
    ),
    (
        ["groups", "GroupA", "strategy", "virtualNodeCnt"],
        100_001.0,
        "groups.GroupA.strategy.virtualNodeCnt: at most 100000 virtual nodes, got 100001.0",
    ),
    (
        ["brokers", "broker-a", "addrs", "master"],
        "x",
        "brokers.broker-a.addrs.master: broker id must be an integer",
    ),
    (
        ["brokers", "broker-a", "addrs", "+1"],
        "x",
        'brokers.broker-a.addrs["+1"]: broker id must be an integer >= 0 (digits only)',
    ),
    (
        ["groups", "GroupA", "messageModel"],
        "CLUSTER",
        "groups.GroupA.messageModel: expected 'CLUSTERING' or 'BROADCASTING'",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "FASTEST"},
        "groups.GroupA.strategy.name: unknown strategy 'FASTEST'",
    ),
    (
        ["groups", "GroupA", "strategy", "virtualNodeCnt"],
        10**7,
        "groups.GroupA.strategy.virtualNodeCnt: at most 100000 virtual nodes, got 10000000",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "AVG", "virtualNodeCnt": "10"},
        "groups.GroupA.strategy.virtualNodeCnt: expected an integer, got a string",
    ),
    (
        [*C0, "strategy"],
        {"name": "AVG_BY_CIRCLE", "consumeridcs": "hz,sh"},
        "groups.GroupA.consumers[0].strategy.consumeridcs: expected an array, got a string",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "MACHINE_ROOM_NEARBY", "inner": {"name": "MACHINE_ROOM_NEARBY"}},
        "groups.GroupA.strategy.inner.name: the inner strategy cannot be MACHINE_ROOM_NEARBY",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "AVG", "inner": {"name": "AVG", "inner": {"virtualNodeCnt": 1}}},
        "groups.GroupA.strategy.inner.inner: missing required field 'name'",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "MACHINE_ROOM_NEARBY", "brokerRooms": 5},
        "groups.GroupA.strategy.brokerRooms: expected an object or a regular expression, "
        "got an integer",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "MACHINE_ROOM_NEARBY", "consumerRooms": "^10\\."},
        "groups.GroupA.strategy.consumerRooms: regex '^10\\\\.' needs a group that captures "
        "the room",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "AVG", "brokerRooms": "a{99999999999}(b)"},
        "groups.GroupA.strategy.brokerRooms: invalid regular expression 'a{99999999999}(b)'",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "AVG", "brokerRooms": {"broker-a": 1}},
        "groups.GroupA.strategy.brokerRooms.broker-a: expected a string, got an integer",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "CONFIG", "config": {"c.1": [{"brokerName": "broker-a", "queueId": -1}]}},
        'groups.GroupA.strategy.config["c.1"][0].queueId: expected an integer >= 0, got -1',
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "UNKNOWN", "className": 7},
        "groups.GroupA.strategy.className: expected a string, got an integer",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": "AVG", "inferred": "yes"},
        "groups.GroupA.strategy.inferred: expected a boolean, got a string",
    ),
    (
        ["groups", "GroupA", "strategy"],
        {"name": None},
        "groups.GroupA.strategy.name: expected a strategy name, got null",
    ),
    ([*C0, "clientId"], _DELETE, "groups.GroupA.consumers[0]: missing required field 'clientId'"),
    ([*C0, "clientId"], "", "groups.GroupA.consumers[0].clientId: must not be empty"),
    ([*C0, "subscriptions"], _DELETE, "missing required field 'subscriptions'"),
    (
        [*C0, "subscriptions", 0, "topic"],
        5,
        "groups.GroupA.consumers[0].subscriptions[0].topic: expected a string, got an integer",
    ),
    (
        [*C0, "assigned", 0, "queueId"],
        "0",
        "groups.GroupA.consumers[0].assigned[0].queueId: expected an integer, got a string",
    ),
    (
        [*C0, "assigned", 0, "queueId"],
        -1,
        "groups.GroupA.consumers[0].assigned[0].queueId: expected an integer >= 0, got -1",
    ),
    (
        [*C0, "assigned", 0],
        7,
        "groups.GroupA.consumers[0].assigned[0]: expected an object, got an integer",
    ),
    ([*C0, "assigned"], {"a": 1}, "groups.GroupA.consumers[0].assigned: expected an array"),
    (
        [*C0, "popAssigned", 0, "queueId"],
        -2,
        "groups.GroupA.consumers[0].popAssigned[0].queueId: expected an integer >= -1, got -2",
    ),
    (
        [*C0, "consumeOrderly"],
        "yes",
        "groups.GroupA.consumers[0].consumeOrderly: expected a boolean, got a string",
    ),
    (
        [*C0, "version"],
        4.13,
        "groups.GroupA.consumers[0].version: expected an integer, got a number",
    ),
    ([*C0, "properties", "x"], [1], "groups.GroupA.consumers[0].properties.x: expected a string"),
    (["errors", 0, "group"], 7, "errors[0].group: expected a string, got an integer"),
    (
        ["groups", "GroupA", "offsets", 0, "brokerOffset"],
        None,
        "groups.GroupA.offsets[0].brokerOffset: expected an integer, got null",
    ),
    (
        ["groups", "GroupA", "offsets", 0, "consumerOffset"],
        _DELETE,
        "groups.GroupA.offsets[0]: missing required field 'consumerOffset'",
    ),
    (
        ["groups", "GroupA", "offsets", 0, "topic"],
        _DELETE,
        "groups.GroupA.offsets[0]: missing required field 'topic'",
    ),
    (["errors", 0, "message"], _DELETE, "errors[0]: missing required field 'message'"),
    (["source", "namesrv"], [1], "source.namesrv[0]: expected a string, got an integer"),
    (["capturedAt"], 5, "capturedAt: expected a string, got an integer"),
]


@pytest.mark.parametrize(("path", "value", "message"), CASES)
def test_validation_errors_name_the_json_path(path: list[Any], value: Any, message: str) -> None:
    doc = copy.deepcopy(full_doc())
    if path:
        _set(doc, path, value)
        data: Any = doc
    else:
        data = value
    with pytest.raises(InputError) as info:
        parse_snapshot(data)
    text = str(info.value)
    assert message in text
    assert "\n" not in text
    assert text.startswith("<input>: ")


def test_odd_keys_are_quoted_in_paths() -> None:
    doc = full_doc()
    doc["groups"]["Group A.b"] = doc["groups"].pop("GroupA")
    doc["groups"]["Group A.b"]["consumers"][0]["clientId"] = 5
    with pytest.raises(InputError, match=r'groups\["Group A.b"\]\.consumers\[0\]\.clientId'):
        parse_snapshot(doc)


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_snapshot(tmp_path / "missing.json")
    with pytest.raises(InputError, match="is a directory"):
        load_snapshot(tmp_path)
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(InputError, match="empty file"):
        load_snapshot(empty)


def test_json_syntax_errors_give_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "format": "rmqlb.snapshot/1",\n  "topics": {,}\n}\n')
    with pytest.raises(InputError) as info:
        load_snapshot(bad)
    assert str(info.value).startswith(f"{bad}: invalid JSON: ")
    assert "line 3 column" in str(info.value)


def test_validation_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_text(
        json.dumps({"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": "x"}}, "groups": {}})
    )
    with pytest.raises(InputError, match=rf"^{path}: topics\.T\.queues: expected an integer"):
        load_snapshot(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(full_doc()).encode())
    assert load_snapshot(path) == parse_snapshot(full_doc())


def test_save_to_an_unwritable_place_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        save_snapshot(parse_snapshot(full_doc()), tmp_path / "missing-dir" / "x.json")


def _two_consumers(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 4}},
        "groups": {"G": {"consumers": [first, second]}},
    }


@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        # equal to a value seen (and validated) before, but of another JSON type
        (
            {"subscriptions": [{"topic": "T", "subVersion": 1}]},
            {"subscriptions": [{"topic": "T", "subVersion": True}]},
            "consumers[1].subscriptions[0].subVersion: expected an integer, got a boolean",
        ),
        (
            {"subscriptions": ["T"], "strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 5}},
            {
                "subscriptions": ["T"],
                "strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": True},
            },
            "consumers[1].strategy.virtualNodeCnt: expected an integer, got a boolean",
        ),
        (
            {"subscriptions": ["T"], "assigned": [{"brokerName": "broker-a", "queueId": 1}]},
            {"subscriptions": ["T"], "assigned": [{"brokerName": "broker-a", "queueId": True}]},
            "consumers[1].assigned[0].queueId: expected an integer, got a boolean",
        ),
        (
            {"subscriptions": ["T"], "popAssigned": [{"brokerName": "broker-a", "queueId": -1}]},
            {"subscriptions": ["T"], "assigned": [{"brokerName": "broker-a", "queueId": -1}]},
            "consumers[1].assigned[0].queueId: expected an integer >= 0, got -1",
        ),
        (
            {"subscriptions": ["T"], "assigned": [{"topic": "T", "brokerName": "b", "queueId": 0}]},
            {"subscriptions": ["T"], "assigned": [{"topic": "T", "brokerName": 7, "queueId": 0}]},
            "consumers[1].assigned[0].brokerName: expected a string, got an integer",
        ),
        (
            {"subscriptions": ["T"], "version": 413},
            {"subscriptions": ["T"], "version": 413.5},
            "consumers[1].version: expected an integer, got a number",
        ),
    ],
)
def test_repeated_values_are_still_validated(
    good: dict[str, Any], bad: dict[str, Any], message: str
) -> None:
    parse_snapshot(_two_consumers({"clientId": "c1", **good}, {"clientId": "c2", **good}))
    with pytest.raises(InputError) as info:
        parse_snapshot(_two_consumers({"clientId": "c1", **good}, {"clientId": "c2", **bad}))
    assert f"<input>: groups.G.{message}" == str(info.value)


def _floated(node: Any, every: int = 1, seen: list[int] | None = None) -> Any:
    """``node`` with every ``every``-th integer written as a float (``5`` as ``5.0``),
    ``properties`` aside (any scalar, kept as its text)."""
    seen = [0] if seen is None else seen
    if type(node) is int:
        seen[0] += 1
        return float(node) if seen[0] % every == 0 else node
    if isinstance(node, list):
        return [_floated(v, every, seen) for v in node]
    if isinstance(node, dict):
        return {k: v if k == "properties" else _floated(v, every, seen) for k, v in node.items()}
    return node


def test_integral_floats_are_read_as_the_integers_they_are() -> None:
    """JSON Schema (and fastjson) count ``5.0`` as an integer; the model holds ints only, on
    the fast paths too (a float in the middle of a list falls back to the checked path)."""
    queues = [{"topic": "T", "brokerName": "a", "queueId": i} for i in range(3)]
    offsets = [{**q, "brokerOffset": 9, "consumerOffset": 3, "minOffset": 0} for q in queues]
    many = _two_consumers(
        {"clientId": "c1", "subscriptions": ["T"], "version": 5, "assigned": queues},
        {"clientId": "c2", "subscriptions": ["T"], "processQueues": queues},
    )
    many["groups"]["G"]["offsets"] = offsets
    for doc in (BASE, many, full_doc()):
        expected = parse_snapshot(doc)
        for floated in (_floated(doc), _floated(doc, every=2)):  # all, then mixed
            snap = parse_snapshot(floated)
            assert snap == expected
            # 5.0 == 5: the text tells them apart (a float would be written "5.0")
            assert dumps_snapshot(snap) == dumps_snapshot(expected)


def test_offsets_after_assignments_are_still_validated() -> None:
    doc = _two_consumers(
        {"clientId": "c1", "subscriptions": ["T"], "assigned": [{"brokerName": "a", "queueId": 1}]},
        {"clientId": "c2", "subscriptions": ["T"]},
    )
    offset = {"topic": "T", "brokerName": "a", "queueId": 1, "brokerOffset": 9, "consumerOffset": 3}
    doc["groups"]["G"]["offsets"] = [offset, {**offset, "queueId": True}]
    with pytest.raises(InputError) as info:
        parse_snapshot(doc)
    assert str(info.value) == (
        "<input>: groups.G.offsets[1].queueId: expected an integer, got a boolean"
    )
    doc["groups"]["G"]["offsets"] = [offset, {**offset, "lastTimestamp": None}]
    with pytest.raises(InputError, match=r"offsets\[1\]\.lastTimestamp: expected an integer"):
        parse_snapshot(doc)


def test_fast_and_checked_consumers_agree() -> None:
    from rmqlb.snapshot._parse import _Parser

    raws: list[dict[str, Any]] = [
        {"clientId": "c1", "subscriptions": ["T"], "assigned": [{"brokerName": "a", "queueId": 0}]},
        {
            "clientId": "c2",
            "subscriptions": [{"topic": "T", "subString": "x || y"}, "U"],
            "clientAddr": "10.0.0.1:5",
            "language": "JAVA",
            "version": 413,
            "strategy": {"name": "AVG_BY_CIRCLE"},
            "consumeOrderly": True,
            "consumeType": "CONSUME_PASSIVELY",
            "assigned": [
                {"topic": "T", "brokerName": "a", "queueId": 0},
                {"topic": "U", "brokerName": "b", "queueId": 2},
            ],
            "popAssigned": [{"topic": "U", "brokerName": "b", "queueId": -1}],
            "startTime": 17,
        },
        {"clientId": "c3", "subscriptions": [], "assigned": []},
    ]
    parser = _Parser("<input>")
    for raw in raws:
        fast = parser.plain_consumer(raw, "c")
        assert fast is not None
        assert fast == parser.checked_consumer(raw, "c")
    # declined (properties given): the checked path decides
    assert (
        parser.plain_consumer({"clientId": "c", "subscriptions": [], "properties": {"a": "b"}}, "c")
        is None
    )


def test_fast_and_checked_process_queues_agree() -> None:
    from rmqlb.snapshot._parse import _Parser

    full = {
        "topic": "T",
        "brokerName": "a",
        "queueId": 3,
        "cachedMsgCount": 2,
        "cachedMsgSizeInMiB": 1,
        "commitOffset": 9,
        "lastPullTimestamp": 5,
        "lastConsumeTimestamp": 6,
        "locked": True,
        "lastLockTimestamp": 7,
        "dropped": True,
    }
    parser = _Parser("<input>")
    for raw, default_topic in [(full, None), ({"brokerName": "a", "queueId": 0}, "T")]:
        fast = parser.plain_process_queue(raw, default_topic)
        assert fast is not None
        assert fast == parser.checked_process_queue(raw, "pq", default_topic)
    # declined: the checked path names the problem
    for odd in ({**full, "locked": 1}, {**full, "queueId": -1}, {**full, "topic": None}):
        assert parser.plain_process_queue(odd, "T") is None
        with pytest.raises(InputError):
            parser.checked_process_queue(odd, "pq", "T")


@pytest.mark.parametrize(
    ("nulls", "field"),
    [(["topic"], "topic"), (["brokerName"], "brokerName"), (["topic", "brokerName"], "topic")],
)
def test_a_null_name_in_the_first_queue_reference_is_refused(nulls: list[str], field: str) -> None:
    ref: dict[str, Any] = {"topic": "T", "brokerName": "broker-a", "queueId": 0}
    ref.update(dict.fromkeys(nulls))
    doc = _two_consumers(
        {"clientId": "c1", "subscriptions": ["T"], "assigned": [ref]},
        {"clientId": "c2", "subscriptions": ["T"]},
    )
    with pytest.raises(
        InputError, match=rf"consumers\[0\]\.assigned\[0\]\.{field}: expected a string"
    ):
        parse_snapshot(doc)
    offset = {**ref, "brokerOffset": 1, "consumerOffset": 0}
    doc = _two_consumers(
        {"clientId": "c1", "subscriptions": ["T"]}, {"clientId": "c2", "subscriptions": ["T"]}
    )
    doc["groups"]["G"]["offsets"] = [offset]
    with pytest.raises(InputError, match=rf"offsets\[0\]\.{field}: expected a string"):
        parse_snapshot(doc)
