"""The shipped JSON Schema and the loader accept exactly the same documents.

A valid snapshot carrying every field of the format (``test_spec`` checks it does) is
mutated at one place (a value replaced by another kind of JSON value, a key removed, an
unknown key added) and both must agree: the schema validates it if and only if
:func:`parse_snapshot` loads it.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqlb.errors import InputError
from rmqlb.snapshot import parse_snapshot, snapshot_schema

BASE: dict[str, Any] = {
    "format": "rmqlb.snapshot/1",
    "capturedAt": "2026-11-22T12:00:00Z",
    "source": {"namesrv": ["127.0.0.1:9876"], "rmqlb": "0.1.0"},
    "brokers": {"broker-a": {"cluster": "C", "addrs": {"0": "127.0.0.1:10911"}}},
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
                        "consumeridcs": ["hz"],
                        "inner": {
                            "name": "CONSISTENT_HASH",
                            "virtualNodeCnt": 3,
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
                }
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
VALUES: list[Any] = [None, -1, 0, 1, 2.5, True, "", "x", [], {}, [{}], {"k": "v"}]


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
)
def test_schema_and_loader_accept_the_same_documents(
    path: tuple[Any, ...], action: str, value: Any
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
        parent["someFutureField"] = value
    else:
        parent.append(value)
    assert _accepted_by_schema(doc) == _accepted_by_loader(doc), (path, action, value)
