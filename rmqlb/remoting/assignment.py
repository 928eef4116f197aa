"""Bodies of the 5.x broker-side assignment requests: GET_ALL_MESSAGE_REQUEST_MODE and
QUERY_ASSIGNMENT (decoders for the client, encoders for the fake), in the conventions of
:mod:`rmqlb.remoting.bodies`. Only a group some broker balances reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.remoting import fastjson
from rmqlb.remoting.bodies import (
    _in_order,
    _int,
    _key_str,
    _list,
    _map,
    _message_queue,
    _obj,
    _parse,
    _str,
)
from rmqlb.remoting.errors import BodyError
from rmqlb.remoting.fastjson import Bean
from rmqlb.remoting.javahash import concurrent_map, java_string_hash

# MessageRequestModeManager.messageRequestModeMap and its per-topic maps: ConcurrentHashMap().
_MODE_TABLE = concurrent_map()


@dataclass(frozen=True, slots=True)
class RequestModeEntry:
    """One (topic, group) of GET_ALL_MESSAGE_REQUEST_MODE (``SetMessageRequestModeRequestBody``)."""

    topic: str
    group: str
    mode: str
    pop_share_queue_num: int


def decode_request_modes(body: bytes) -> list[RequestModeEntry]:
    """GET_ALL_MESSAGE_REQUEST_MODE body (``MessageRequestModeSerializeWrapper``:
    ``messageRequestModeMap`` topic -> group -> mode) -> one entry per (topic, group)."""
    where = "MessageRequestModeSerializeWrapper"
    top = _parse(body, where)
    out: list[RequestModeEntry] = []
    for tkey, raw_groups in _map(top, "messageRequestModeMap", where).items():
        topic = _key_str(tkey, f"{where}.messageRequestModeMap")
        groups = _obj(raw_groups, f"messageRequestModeMap[{topic}]")
        for gkey, raw in groups.items():
            group = _key_str(gkey, f"messageRequestModeMap[{topic}]")
            w = f"messageRequestModeMap[{topic}][{group}]"
            o = _obj(raw, w)
            mode = _str(o, "mode", w, "PULL")
            if mode not in ("PULL", "POP"):
                raise BodyError(f"{w}.mode: expected PULL or POP, got {mode!r:.40}")
            out.append(RequestModeEntry(topic, group, mode, _int(o, "popShareQueueNum", w, 0)))
    return out


def encode_request_modes(entries: Iterable[RequestModeEntry]) -> bytes:
    """What a 5.x broker answers GET_ALL_MESSAGE_REQUEST_MODE (both maps are
    ConcurrentHashMaps of the default size: Java's iteration order)."""
    table: dict[str, dict[str, Bean]] = {}
    for e in entries:
        table.setdefault(e.topic, {})[e.group] = Bean(
            {
                "consumerGroup": e.group,
                "mode": e.mode,
                "popShareQueueNum": e.pop_share_queue_num,
                "topic": e.topic,
            }
        )
    ordered = {
        topic: _in_order(_MODE_TABLE, groups, java_string_hash)
        for topic, groups in _in_order(_MODE_TABLE, table, java_string_hash).items()
    }
    return fastjson.dumps(Bean({"messageRequestModeMap": ordered}))


def encode_query_assignment_request(
    topic: str, group: str, client_id: str, message_model: str, strategy_name: str
) -> bytes:
    """QUERY_ASSIGNMENT request body (``QueryAssignmentRequestBody``), as a 5.x client sends."""
    return fastjson.dumps(
        Bean(
            {
                "clientId": client_id,
                "consumerGroup": group,
                "messageModel": message_model,
                "strategyName": strategy_name,
                "topic": topic,
            }
        )
    )


def decode_query_assignment_request(body: bytes) -> dict[str, str]:
    """QUERY_ASSIGNMENT request body -> its five fields (the fake reads it)."""
    where = "QueryAssignmentRequestBody"
    top = _parse(body, where)
    keys = ("clientId", "consumerGroup", "messageModel", "strategyName", "topic")
    return {k: _str(top, k, where, "") for k in keys}


@dataclass(frozen=True, slots=True)
class QueueAssignment:
    """One ``MessageQueueAssignment``: a queue (id -1: every queue of the broker) and its mode."""

    queue: MessageQueue
    mode: str | None


def decode_query_assignment(body: bytes) -> tuple[QueueAssignment, ...] | None:
    """QUERY_ASSIGNMENT body (``QueryAssignmentResponseBody``) -> the assignments in queue
    order; ``None`` when the broker assigned nothing valid (no ``messageQueueAssignments``:
    an unknown strategy or topic, no consumer list)."""
    where = "QueryAssignmentResponseBody"
    top = _parse(body, where)
    if top.get("messageQueueAssignments") is None:
        return None
    out = []
    for i, raw in enumerate(_list(top, "messageQueueAssignments", where)):
        w = f"messageQueueAssignments[{i}]"
        o = _obj(raw, w)
        mq = _message_queue(o.get("messageQueue"), f"{w}.messageQueue")
        out.append(QueueAssignment(mq, _str(o, "mode", w, None)))
    out.sort(
        key=lambda a: (java_key(a.queue.topic), java_key(a.queue.broker_name), a.queue.queue_id)
    )
    return tuple(out)


def encode_query_assignment(assignments: Iterable[QueueAssignment] | None) -> bytes:
    """What a 5.x broker answers QUERY_ASSIGNMENT (``None``: no assignment, ``{}``)."""
    if assignments is None:
        return b"{}"
    items = [
        Bean(
            {
                "messageQueue": Bean(
                    {
                        "brokerName": a.queue.broker_name,
                        "queueId": a.queue.queue_id,
                        "topic": a.queue.topic,
                    }
                ),
                "mode": a.mode,
            }
        )
        for a in assignments
    ]
    return fastjson.dumps(Bean({"messageQueueAssignments": items}))
