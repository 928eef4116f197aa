"""The shipped JSON Schema and the loader accept exactly the same documents.

A valid snapshot carrying every field of the format (``test_spec`` checks it does) is
mutated at one place (a value replaced by another kind of JSON value, a key removed, an
unknown key added) and both must agree: the schema validates it if and only if
:func:`parse_snapshot` loads it.

Integers get one too: every integer field of the document replaced by a float, integral or
not, at and around the spec's limits (JSON Schema counts ``5.0`` as an integer, and so must
the loader; ``5.5``, NaN and infinities are no integer for either). So do topic objects (the
shorthand ``queues``, ``queueDatas``, both, neither) and broker ids (the keys of ``addrs``).

Strategy objects get a generator of their own: every name (and wrong ones), every parameter
whatever the name, valid values, nulls, wrong types and values out of range, nested through
``inner``, placed where a snapshot holds a strategy (a group, a consumer the loader checks
field by field, a plain consumer it reads on its fast path). The validator checks formats:
a rooms regular expression must compile (``format: regex``) and have a capturing group (a
``pattern``, :data:`rmqlb.snapshot.schema.HAS_GROUP`, whose one blind spot, a ``(`` in a
comment of a verbose-mode regex, is not generated here).
"""

from __future__ import annotations

import copy
from typing import Any, Final

import jsonschema
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rmqlb.errors import InputError
from rmqlb.snapshot import parse_snapshot, snapshot_schema, spec

BASE: dict[str, Any] = {
    "format": "rmqlb.snapshot/1",
    "capturedAt": "2026-11-22T12:00:00Z",
    "source": {"namesrv": ["127.0.0.1:9876"], "rmqlb": "0.1.0", "proxies": ["127.0.0.1:8080"]},
    "brokers": {
        "broker-a": {
            "cluster": "C",
            "addrs": {"0": "127.0.0.1:10911"},
            "version": 453,
            "config": {
                "serverLoadBalancerEnable": True,
                "defaultMessageRequestMode": "PULL",
                "defaultPopShareQueueNum": -1,
                "loadBalancePollNameServerInterval": 30000,
                "channelExpiredTimeout": 120000,
            },
        }
    },
    "topics": {
        "T": {
            "queueDatas": [
                {
                    "brokerName": "broker-a",
                    "readQueueNums": 2,
                    "writeQueueNums": 2,
                    "perm": 6,
                    "topicSysFlag": 1,
                }
            ]
        },
        "S": {"queues": 2},
        "ST": {
            "queueDatas": [
                {"brokerName": "broker-a", "readQueueNums": 2, "writeQueueNums": 2, "perm": 6}
            ],
            "topicQueueMappingByBroker": {
                "broker-a": {
                    "scope": "__global__",
                    "epoch": 1796046030440,
                    "totalQueues": 2,
                    "currIdMap": {"0": 1, "1": 0},
                }
            },
        },
    },
    "groups": {
        "G": {
            "messageModel": "CLUSTERING",
            "consumeType": "CONSUME_PASSIVELY",
            "strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 5},
            "consumers": [
                {
                    "clientId": "c1",
                    "clientAddr": "127.0.0.1:5",
                    "language": "JAVA",
                    "version": 401,
                    # every parameter: those of another strategy are checked, then ignored
                    "strategy": {
                        "name": "MACHINE_ROOM_NEARBY",
                        "virtualNodeCnt": 5,
                        "charset": "US-ASCII",
                        "consumeridcs": ["hz"],
                        "inner": {
                            "name": "CONSISTENT_HASH",
                            "virtualNodeCnt": 3,
                            "charset": "UTF-8",
                            "consumeridcs": [],
                            "inner": {"name": "AVG"},
                            "brokerRooms": "^(broker)-",
                            "consumerRooms": {},
                            "config": {},
                            "className": "",
                            "inferred": False,
                        },
                        "brokerRooms": {"broker-a": "hz"},
                        "consumerRooms": "^(c)[0-9]",
                        "config": {"c1": [{"topic": "T", "brokerName": "broker-a", "queueId": 0}]},
                        "className": "com.example.Mine",
                        "inferred": False,
                    },
                    "consumeOrderly": False,
                    "consumeType": "CONSUME_PASSIVELY",
                    "startTime": 1,
                    "subscriptions": [
                        {"topic": "T", "expressionType": "TAG", "subString": "*", "subVersion": 1},
                        "S",
                    ],
                    "assigned": [{"topic": "T", "brokerName": "broker-a", "queueId": 0}],
                    "popAssigned": [{"topic": "S", "brokerName": "broker-a", "queueId": 1}],
                    "properties": {"a": "b", "n": 1},
                    "processQueues": [
                        {
                            "topic": "T",
                            "brokerName": "broker-a",
                            "queueId": 0,
                            "cachedMsgCount": 1,
                            "cachedMsgSizeInMiB": 0,
                            "commitOffset": 3,
                            "lastPullTimestamp": 5,
                            "lastConsumeTimestamp": 5,
                            "locked": True,
                            "lastLockTimestamp": 5,
                            "dropped": False,
                        }
                    ],
                    "status": {
                        "T": {
                            "pullRT": 1.5,
                            "pullTPS": 2,
                            "consumeRT": 0.0,
                            "consumeOKTPS": 1.0,
                            "consumeFailedTPS": 0.0,
                            "consumeFailedMsgs": 0,
                        }
                    },
                },
                {  # a consumer the loader reads on its fast path: no properties, states, status
                    "clientId": "c2",
                    "clientAddr": "127.0.0.1:6",
                    "language": "JAVA",
                    "version": 401,
                    "strategy": {"name": "CONSISTENT_HASH", "virtualNodeCnt": 5},
                    "consumeOrderly": False,
                    "consumeType": "CONSUME_PASSIVELY",
                    "startTime": 1,
                    "subscriptions": ["T"],
                    "assigned": [{"brokerName": "broker-a", "queueId": 1}],
                    "popAssigned": [{"brokerName": "broker-a", "queueId": -1}],
                    "rebalance": "broker",
                    "proxy": "127.0.0.1:8080",
                },
            ],
            "offsets": [
                {
                    "topic": "T",
                    "brokerName": "broker-a",
                    "queueId": 0,
                    "brokerOffset": 9,
                    "consumerOffset": -1,
                    "lastTimestamp": 0,
                    "minOffset": 2,
                }
            ],
            "configs": {
                "broker-a": {
                    "consumeEnable": True,
                    "notifyConsumerIdsChangedEnable": False,
                    "retryMaxTimes": 16,
                    "consumeMessageOrderly": False,
                    "consumeBroadcastEnable": True,
                    "retryQueueNums": 1,
                    "brokerId": 0,
                    "whichBrokerWhenConsumeSlowly": 1,
                    "groupRetryPolicy": '{"type":"EXPONENTIAL"}',
                }
            },
            "onBrokers": {
                "broker-a": {
                    "clientIds": ["c1", "c2"],
                    "requestModes": {"S": {"mode": "POP", "popShareQueueNum": 1}},
                    "assignments": [
                        {
                            "clientId": "c2",
                            "topic": "T",
                            "strategyName": "AVG",
                            "mode": "PULL",
                            "queues": [{"brokerName": "broker-a", "queueId": -1}],
                        }
                    ],
                    "consumeTps": 12.5,
                    "deadLetters": {"messages": 3, "maxOffset": 40, "lastTimestamp": 1700},
                    "subscriptions": [
                        {"topic": "T", "expressionType": "TAG", "subString": "A", "subVersion": 2}
                    ],
                }
            },
        }
    },
    "errors": [
        {
            "target": "x",
            "request": "GET_CONSUME_STATS",
            "message": "timed out",
            "group": "G",
            "topic": "T",
        }
    ],
}


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


PATHS = _paths(BASE)
VALUES: list[Any] = [None, -1, 0, 1, 1.0, 2.5, True, "", "x", [], {}, [{}], {"k": "v"}]
#: Keys an added key is drawn from: one no record knows, and every key of the format (a key
#: of one record is unknown, so ignored, in every other).
EXTRA_KEYS = ["someFutureField", *sorted({f.key for r in spec.RECORDS.values() for f in r.fields})]


def _accepted_by_schema(doc: Any) -> bool:
    return not any(True for _ in VALIDATOR.iter_errors(doc))


def _accepted_by_loader(doc: Any) -> bool:
    try:
        parse_snapshot(doc)
    except InputError:
        return False
    return True


VALIDATOR = jsonschema.Draft202012Validator(
    snapshot_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)


def test_the_base_document_is_valid_for_both() -> None:
    assert _accepted_by_schema(BASE)
    assert _accepted_by_loader(BASE)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from(PATHS),
    action=st.sampled_from(["replace", "delete", "extra"]),
    value=st.sampled_from(VALUES),
    extra_key=st.sampled_from(EXTRA_KEYS),
)
def test_schema_and_loader_accept_the_same_documents(
    path: tuple[Any, ...], action: str, value: Any, extra_key: str
) -> None:
    doc = copy.deepcopy(BASE)
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if action == "replace":
        parent[last] = value
    elif action == "delete":
        if isinstance(parent, list):
            parent.pop(last)
        else:
            del parent[last]
    elif isinstance(parent, dict):
        parent[extra_key] = value
    else:
        parent.append(value)
    assert _accepted_by_schema(doc) == _accepted_by_loader(doc), (path, action, value, extra_key)


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _replaced(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A copy of BASE with the value at ``path`` replaced by ``value``."""
    doc = copy.deepcopy(BASE)
    _at(doc, path[:-1])[path[-1]] = value
    return doc


# -- integers -----------------------------------------------------------------------------

#: The keys of the integer fields of the format.
INT_KEYS = {f.key for r in spec.RECORDS.values() for f in r.fields if isinstance(f.type, spec.Int)}
#: Where BASE holds an integer field (not a number that happens to be whole, as ``pullTPS``:
#: the loader refuses NaN there, which is no JSON, while the Python validator accepts it).
INT_PATHS = [p for p in PATHS if p[-1] in INT_KEYS and type(_at(BASE, p)) is int]
#: Every limit of an integer of the format, as a float, and one either side of it.
_LIMITS = sorted(
    {
        float(limit + d)
        for rec in spec.RECORDS.values()
        for f in rec.fields
        if isinstance(f.type, spec.Int)
        for limit in (f.type.minimum, f.type.maximum)
        if limit is not None
        for d in (-1, 0, 1)
    }
)
#: Floats that are integers beyond every limit, or no integer at all.
_ODD_FLOATS = [1e20, -1e20, 2.0**63, 1e308, -0.0, 0.5, -0.5, 2.5, float("nan"), float("inf")]


@st.composite
def floats_where_integers_go(draw: st.DrawFn) -> tuple[tuple[Any, ...], float]:
    """An integer's path in BASE and a float to put there."""
    path = draw(st.sampled_from(INT_PATHS))
    base = _at(BASE, path)
    value = draw(
        st.one_of(
            st.integers(-2, 2).map(lambda d: float(base + d)),  # integral, around the value
            st.sampled_from(_LIMITS),
            st.sampled_from(_ODD_FLOATS),
            st.floats(),
        )
    )
    return path, value


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=floats_where_integers_go())
def test_schema_and_loader_agree_on_floats_where_integers_go(
    case: tuple[tuple[Any, ...], float],
) -> None:
    path, value = case
    doc = _replaced(path, value)
    by_schema = _accepted_by_schema(doc)
    event(f"accepted: {by_schema}")
    assert by_schema == _accepted_by_loader(doc), (path, value)


def test_the_float_generator_reaches_every_integer_field() -> None:
    """Every integer field of the format is somewhere in BASE as an integer."""
    assert INT_KEYS - {p[-1] for p in INT_PATHS} == set()


# -- topics and broker ids ----------------------------------------------------------------

_QUEUE_DATA = {"brokerName": "broker-a", "readQueueNums": 2, "writeQueueNums": 2}
#: Per key of a topic object: values that fit it, values that do not.
_TOPIC_KEYS: dict[str, tuple[list[Any], list[Any]]] = {
    "queues": ([0, 2, 2.0, spec.MAX_QUEUE_NUMS], [-1, spec.MAX_QUEUE_NUMS + 1, "2", True, 2.5]),
    "queueDatas": ([[], [_QUEUE_DATA]], [_QUEUE_DATA, [{}], [None], "x", 2]),
}


def _draw_keys(
    draw: st.DrawFn, table: dict[str, tuple[list[Any], list[Any]]], kinds: list[str]
) -> dict[str, Any]:
    """Per key of ``table`` (values that fit it, values that do not), drawn from ``kinds``:
    left out ("absent"), a value that fits ("good"), null ("null") or one that does not."""
    out: dict[str, Any] = {}
    for key, (good, bad) in table.items():
        kind = draw(st.sampled_from(kinds))
        if kind == "good":
            out[key] = draw(st.sampled_from(good))
        elif kind == "null":
            out[key] = None
        elif kind == "bad":
            out[key] = draw(st.sampled_from(bad))
    return out


@st.composite
def topic_objects(draw: st.DrawFn) -> Any:
    """A topic: a route, a shorthand, both, neither; values valid or not, or null."""
    if draw(st.integers(0, 15)) == 0:
        return draw(st.sampled_from([None, [], 2, "x"]))
    out = _draw_keys(draw, _TOPIC_KEYS, ["absent", "good", "good", "null", "bad"])
    if draw(st.booleans()):
        out[draw(st.sampled_from(EXTRA_KEYS))] = draw(st.sampled_from(VALUES))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topic=topic_objects())
def test_schema_and_loader_accept_the_same_topics(topic: Any) -> None:
    doc = _replaced(("topics", "U"), topic)
    by_schema = _accepted_by_schema(doc)
    event(f"accepted: {by_schema}")
    assert by_schema == _accepted_by_loader(doc), topic


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    broker_id=st.one_of(
        st.sampled_from(["0", "1", "00", "12", "", " 0", "0 ", "+1", "-0", "-1", "1_0", "0x1"]),
        st.text(st.sampled_from("0123456789 +-_.\n\u0661\uff11a"), max_size=4),
    )
)
def test_schema_and_loader_accept_the_same_broker_ids(broker_id: str) -> None:
    doc = _replaced(("brokers", "broker-a", "addrs"), {broker_id: "127.0.0.1:10911"})
    assert _accepted_by_schema(doc) == _accepted_by_loader(doc), broker_id


# -- strategy objects ---------------------------------------------------------------------

_NAMES = [*spec.STRATEGY_NAMES, "UNKNOWN"]
_BAD_NAMES: list[Any] = ["FASTEST", "avg", "", None, 5, ["AVG"]]
_ABSENT: Final = object()
_MAX_VNODES = spec.MAX_VIRTUAL_NODES
_QUEUE = {"topic": "T", "brokerName": "broker-a", "queueId": 0}
#: Per parameter: values that fit it, values that do not (nulls are drawn separately).
_PARAMS: dict[str, tuple[list[Any], list[Any]]] = {
    "virtualNodeCnt": (
        [0, 5, _MAX_VNODES, 5.0, float(_MAX_VNODES)],
        [-1, _MAX_VNODES + 1, "5", True, 2.5, -1.0, float(_MAX_VNODES + 1), 1e20, [], {}],
    ),
    "charset": (["UTF-8", "US-ASCII"], ["utf-8", "ASCII", "ISO-8859-1", "", 8, True, [], {}]),
    "consumeridcs": ([[], ["hz"], ["hz", "sh"]], ["hz", [1], [None], {}, 0]),
    "brokerRooms": (
        [{}, {"broker-a": "hz"}, "^([a-z]+)@", "(?P<room>.+)-"],
        [{"broker-a": 1}, {"broker-a": None}, [], 1, True, "(", "[a-", "^x", "", "(?:a)b"],
    ),
    "consumerRooms": (
        [{}, {"c1": "hz"}, r"^10\.(\d+)\."],
        [{"c1": []}, ["c1"], 2.5, "(unclosed", "[(]", r"\(a", "(?#(c)"],
    ),
    "config": (
        [
            {},
            {"c1": []},
            {"c1": [_QUEUE]},
            {"c1": [{"brokerName": "broker-a", "queueId": 1}]},
            {"c1": [{**_QUEUE, "queueId": 3.0}]},
        ],
        [
            {"c1": [{"brokerName": "broker-a", "queueId": -1}]},
            {"c1": [{**_QUEUE, "queueId": 0.5}]},
            {"c1": [{"brokerName": "broker-a", "queueId": "0"}]},
            {"c1": [{"queueId": 0}]},
            {"c1": [{**_QUEUE, "topic": None}]},
            {"c1": [None]},
            {"c1": "broker-a:0"},
            [],
            "x",
        ],
    ),
    "className": (["com.example.Mine", ""], [1, [], True, {}]),
    "inferred": ([True, False], ["yes", 1, [], {}]),
}
#: Not a strategy object at all.
_NOT_OBJECTS: list[Any] = ["AVG", [], 1, True, [{"name": "AVG"}]]


@st.composite
def strategy_objects(draw: st.DrawFn, depth: int = 0) -> Any:
    """A strategy object, valid or not in any of the ways a hand-written one can be."""
    if draw(st.integers(0, 15)) == 0:
        return draw(st.sampled_from(_NOT_OBJECTS))
    out: dict[str, Any] = {}
    name = draw(st.sampled_from([*_NAMES, *_NAMES, *_BAD_NAMES, _ABSENT]))
    if name is not _ABSENT:
        out["name"] = name
    out.update(_draw_keys(draw, _PARAMS, ["absent"] * 4 + ["good"] * 3 + ["null", "bad"]))
    kind = draw(st.sampled_from(["absent", "absent", "nested", "nested", "null", "bad"]))
    if kind == "nested" and depth < 2:
        out["inner"] = draw(strategy_objects(depth + 1))
    elif kind == "null":
        out["inner"] = None
    elif kind == "bad":
        out["inner"] = draw(st.sampled_from(["AVG", [], 0]))
    if draw(st.booleans()):
        out["someFutureField"] = draw(st.sampled_from(VALUES))
    return out


#: Where a snapshot holds a strategy: a group, a consumer read field by field (it has held
#: queue states), a consumer read on the loader's fast path (it has none).
_PLACES = ["group", "consumer", "plain consumer"]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategy=strategy_objects(), place=st.sampled_from(_PLACES))
def test_schema_and_loader_accept_the_same_strategy_objects(strategy: Any, place: str) -> None:
    doc = copy.deepcopy(BASE)
    group = doc["groups"]["G"]
    if place == "group":
        group["strategy"] = strategy
    elif place == "consumer":
        group["consumers"][0]["strategy"] = strategy
    else:
        group["consumers"].append({"clientId": "c3", "subscriptions": ["T"], "strategy": strategy})
    by_schema, by_loader = _accepted_by_schema(doc), _accepted_by_loader(doc)
    event(f"accepted: {by_schema}")
    assert by_schema == by_loader, (place, strategy, by_schema)


def test_the_generator_gives_every_strategy_parameter() -> None:
    assert {"name", *_PARAMS, "inner"} == set(spec.Strategy.by_key)
