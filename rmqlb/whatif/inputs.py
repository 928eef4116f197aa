"""The inputs of a what-if: synthetic groups (broker names, queues, client ids), and the
per-client CONFIG lists and room tables ``simulate`` reads from files. Pure: the CLI reads
the files, this checks what they hold.

>>> [q.label() for q in make_queues("T", broker_names(2), 2)]
['broker-a:0', 'broker-a:1', 'broker-b:0', 'broker-b:1']
>>> default_consumer_ids(2)
['10.0.0.1@consumer-0', '10.0.0.1@consumer-1']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rmqlb.errors import InputError
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import RoomRule, RoomTable
from rmqlb.ranges import QUEUE_COUNT

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_TOPIC",
    "broker_names",
    "config_lists",
    "default_consumer_ids",
    "id_width",
    "make_queues",
    "new_consumer_ids",
    "room_tables",
]

DEFAULT_TOPIC = "TopicTest"
DEFAULT_HOST = "10.0.0.1"
"""Default client ids look like ``10.0.0.1@consumer-0`` (``IP@instanceName``)."""


def broker_names(count: int) -> list[str]:
    """``broker-a``, ``broker-b`` ... (``broker-00`` ... beyond 26, zero padded).

    >>> broker_names(3)
    ['broker-a', 'broker-b', 'broker-c']
    """
    if count < 1:
        raise InputError(f"need at least one broker, got {count}")
    if count <= 26:
        return [f"broker-{chr(ord('a') + i)}" for i in range(count)]
    width = len(str(count - 1))
    return [f"broker-{i:0{width}d}" for i in range(count)]


def make_queues(topic: str, brokers: Sequence[str], per_broker: int) -> list[MessageQueue]:
    """Queues ``0 .. per_broker-1`` on every broker, like a route with equal readQueueNums."""
    if per_broker < 1:
        raise InputError(f"need at least one queue per broker, got {per_broker}")
    QUEUE_COUNT.check(per_broker, "queues per broker")
    if len(set(brokers)) != len(brokers):
        dup = next(b for b in brokers if brokers.count(b) > 1)
        raise InputError(f"broker {dup!r} given twice")
    return [MessageQueue(topic, b, q) for b in brokers for q in range(per_broker)]


def id_width(largest_index: int) -> int:
    """Digits needed for consumer numbers up to ``largest_index`` (at least 1)."""
    return len(str(max(largest_index, 0)))


def default_consumer_ids(
    count: int, start: int = 0, width: int | None = None, host: str = DEFAULT_HOST
) -> list[str]:
    """Realistic client ids ``10.0.0.1@consumer-N``, zero padded so Java order = numeric order.

    ``width`` defaults to the digits of the largest number generated; pass the width of the
    largest number a whole run needs (including consumers added later) to keep every id of
    the run the same length.

    >>> default_consumer_ids(3)
    ['10.0.0.1@consumer-0', '10.0.0.1@consumer-1', '10.0.0.1@consumer-2']
    >>> default_consumer_ids(2, start=9, width=2)
    ['10.0.0.1@consumer-09', '10.0.0.1@consumer-10']
    """
    if count < 0:
        raise InputError(f"consumer count cannot be negative, got {count}")
    w = id_width(start + count - 1) if width is None else width
    return [f"{host}@consumer-{i:0{w}d}" for i in range(start, start + count)]


def new_consumer_ids(existing: Sequence[str], count: int, width: int | None = None) -> list[str]:
    """``count`` default-style ids for consumers joining, numbered after ``existing``.

    Ids already in the group are skipped, so joining never creates a duplicate by accident.

    >>> new_consumer_ids(["10.0.0.1@consumer-0", "10.0.0.1@consumer-1"], 1)
    ['10.0.0.1@consumer-2']
    """
    taken = set(existing)
    out: list[str] = []
    number = len(existing)
    w = id_width(len(existing) + count - 1) if width is None else width
    while len(out) < count:
        cid = f"{DEFAULT_HOST}@consumer-{number:0{w}d}"
        if cid not in taken:
            out.append(cid)
            taken.add(cid)
        number += 1
    return out


def room_tables(raw: Any, where: str) -> tuple[RoomRule | None, RoomRule | None]:
    """The broker and consumer room tables of a ``--rooms`` document
    (``{brokers: {name: room}, consumers: {id: room}}``, either may be left out); errors
    start with ``where``.

    >>> room_tables({"brokers": {"broker-a": "hz"}}, "--rooms r.yaml")
    (RoomTable(rooms={'broker-a': 'hz'}), None)
    """
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected {{brokers: {{name: room}}, consumers: ...}}")
    unknown = set(raw) - {"brokers", "consumers"}
    if unknown:
        raise InputError(
            f"{where}: unknown key {sorted(map(str, unknown))[0]!r} "
            "(expected brokers and consumers)"
        )
    out: list[RoomRule | None] = []
    for key in ("brokers", "consumers"):
        table = raw.get(key)
        if table is None:
            out.append(None)
            continue
        if not isinstance(table, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in table.items()
        ):
            raise InputError(f"{where}: {key}: expected a mapping of names to room names")
        out.append(RoomTable(dict(table)))
    return out[0], out[1]


def config_lists(raw: Any, topic: str, where: str) -> dict[str, tuple[MessageQueue, ...]]:
    """The per-client queue lists of a ``--config`` document: client id -> queues, each
    ``"broker-a:3"`` or ``{brokerName, queueId[, topic]}`` (``topic`` by default); errors
    start with ``where``.

    >>> config_lists({"c1": ["broker-a:0"]}, "T", "--config c.yaml")
    {'c1': (MessageQueue(topic='T', broker_name='broker-a', queue_id=0),)}
    """
    if not isinstance(raw, Mapping) or not raw:
        raise InputError(f"{where}: expected a mapping of client id -> list of queues")
    config: dict[str, tuple[MessageQueue, ...]] = {}
    for cid, items in raw.items():
        if not isinstance(cid, str):
            raise InputError(f"{where}: client id {cid!r} is not a string")
        if not isinstance(items, list):
            raise InputError(f"{where}: {cid}: expected a list of queues")
        config[cid] = tuple(
            _config_queue(item, topic, f"{where}: {cid}[{i}]") for i, item in enumerate(items)
        )
    return config


def _config_queue(item: Any, topic: str, where: str) -> MessageQueue:
    if isinstance(item, str):
        name, sep, qid = item.rpartition(":")
        if not sep or not name or not qid.strip().isdigit():
            raise InputError(f"{where}: expected 'broker:queueId', got {item!r}")
        return MessageQueue(topic, name, int(qid))
    if isinstance(item, Mapping):
        broker, qid_raw = item.get("brokerName"), item.get("queueId")
        q_topic = item.get("topic", topic)
        if (
            not isinstance(broker, str)
            or isinstance(qid_raw, bool)
            or not isinstance(qid_raw, int)
            or not isinstance(q_topic, str)
        ):
            raise InputError(f"{where}: expected {{brokerName: str, queueId: int}}")
        return MessageQueue(q_topic, broker, qid_raw)
    raise InputError(f"{where}: expected 'broker:queueId' or {{brokerName, queueId}}")
