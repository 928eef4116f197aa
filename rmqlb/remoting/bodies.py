"""Response bodies: bytes -> typed objects (decoders), typed objects -> bytes (encoders).

Decoders parse with :func:`rmqlb.remoting.fastjson.loads` and return :mod:`rmqlb.model`
objects or the small frozen dataclasses below; no raw dict leaves this module. A body of the
wrong shape raises :class:`~rmqlb.remoting.errors.BodyError` naming the JSON path
(``offsetTable[3].value.brokerOffset: expected an integer``); unknown fields are ignored and
optional ones default, so 4.x, 5.x, Go/C++ clients and vendor builds all decode.

Encoders produce exactly what a Java broker/NameServer writes (fastjson 1.x: alphabetical
bean properties, omitted nulls, bare integer and MessageQueue map keys, Java doubles), in the
4.x (4.9.x) or 5.x field set chosen by ``dialect`` (protocol notes §6.1)::

    >>> from rmqlb.model import BrokerInfo, QueueData, TopicRoute
    >>> route = TopicRoute("T", (QueueData("broker-a", 4, 4),))
    >>> brokers = {"broker-a": BrokerInfo("broker-a", "DefaultCluster", {0: "10.0.0.1:10911"})}
    >>> encode_topic_route(route, brokers, standard=False, dialect=Dialect.V5).decode()[:85]
    '{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster"'
    >>> decode_topic_route(encode_topic_route(route, brokers, standard=True), "T") == (
    ...     route, brokers)
    True
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, TypeVar

from rmqlb.model._fast import new_offset, new_queue
from rmqlb.model.javaorder import filter_tags, java_key
from rmqlb.model.queue import MessageQueue, sort_queues
from rmqlb.model.snapshot import (
    BrokerInfo,
    Consumer,
    ConsumeStatus,
    Group,
    GroupConfig,
    MessageModel,
    ProcessQueueState,
    QueueData,
    QueueMapping,
    QueueOffset,
    Subscription,
    TopicRoute,
)
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    MachineRoom,
    MachineRoomNearby,
    StrategySpec,
    Unknown,
    strategy_from_class_name,
)
from rmqlb.remoting import fastjson
from rmqlb.remoting.errors import BodyError
from rmqlb.remoting.fastjson import Bean
from rmqlb.remoting.javahash import (
    HashTable,
    concurrent_map,
    concurrent_put_all,
    hash_map,
    java_hash_set_order,
    java_string_hash,
    message_queue_hash,
    subscription_hash,
)

T = TypeVar("T")

PROP_CONSUME_TYPE = "PROP_CONSUME_TYPE"
PROP_CONSUMEORDERLY = "PROP_CONSUMEORDERLY"  # sic: no underscore between CONSUME and ORDERLY
PROP_CONSUMER_START_TIMESTAMP = "PROP_CONSUMER_START_TIMESTAMP"
PROP_CLIENT_VERSION = "PROP_CLIENT_VERSION"
PROP_THREADPOOL_CORE_SIZE = "PROP_THREADPOOL_CORE_SIZE"
PROP_STRATEGY = "allocateMessageQueueStrategy"
CONSUME_PASSIVELY = "CONSUME_PASSIVELY"

_SECRET_PROPERTY = re.compile(
    r"secret|password|passwd|token|credential|accesskey|access_key|signature|private",
    re.IGNORECASE,
)


class Dialect(IntEnum):
    """Which field set the encoders write: 4.x (4.9.x) or 5.x (5.0-5.3)."""

    V4 = 4
    V5 = 5


# --------------------------------------------------------------------------- typed bodies


@dataclass(frozen=True, slots=True)
class DataVersion:
    """``DataVersion`` of broker tables; ``state_version`` only exists in 5.x."""

    counter: int = 0
    timestamp: int = 0
    state_version: int | None = None


@dataclass(frozen=True, slots=True)
class TopicRouteData:
    """A full GET_ROUTEINFO_BY_TOPIC answer: the model route plus what the model omits."""

    route: TopicRoute
    brokers: Mapping[str, BrokerInfo]
    order_topic_conf: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """GET_BROKER_CLUSTER_INFO: brokers by name and broker names by cluster."""

    brokers: Mapping[str, BrokerInfo]
    clusters: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Connection:
    """One client channel as a broker sees it (``clientAddr`` is the TCP peer)."""

    client_id: str
    client_addr: str | None = None
    language: str | None = None
    version: int | None = None


@dataclass(frozen=True, slots=True)
class ConsumerConnection:
    """GET_CONSUMER_CONNECTION_LIST: a group's connections and latest heartbeat fields."""

    connections: tuple[Connection, ...]
    consume_type: str | None = None
    message_model: MessageModel | None = None
    consume_from_where: str | None = None
    subscriptions: Mapping[str, Subscription] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunningInfo:
    """GET_CONSUMER_RUNNING_INFO: what one client reports about itself.

    ``assigned``: keys of ``mqTable`` except queues flagged dropped; ``None`` when the client
    reported no state at all: no ``mqTable``, or an empty one with no properties and no
    subscriptions (a 5.x gRPC client answering with a jstack only).
    ``pop_assigned``: keys of ``mqPopTable`` (5.x; queue id -1 = all queues of a broker),
    ``None`` when absent. ``properties`` has secret-looking keys removed.
    """

    subscriptions: tuple[Subscription, ...] = ()
    assigned: tuple[MessageQueue, ...] | None = None
    pop_assigned: tuple[MessageQueue, ...] | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    strategy: StrategySpec | None = None
    consume_orderly: bool | None = None
    consume_type: str | None = None
    message_model: MessageModel | None = None
    start_time: int | None = None
    client_version: str | None = None
    has_jstack: bool = False
    process_queues: tuple[ProcessQueueState, ...] | None = None
    status: Mapping[str, ConsumeStatus] = field(default_factory=dict)

    def to_consumer(self, client_id: str, connection: Connection | None = None) -> Consumer:
        """The model :class:`~rmqlb.model.Consumer` for this client."""
        return Consumer(
            client_id=client_id,
            subscriptions=self.subscriptions,
            client_addr=connection.client_addr if connection else None,
            language=connection.language if connection else None,
            version=connection.version if connection else None,
            strategy=self.strategy,
            consume_orderly=self.consume_orderly,
            consume_type=self.consume_type,
            assigned=self.assigned,
            pop_assigned=self.pop_assigned,
            start_time=self.start_time,
            properties=dict(self.properties),
            process_queues=self.process_queues,
            status=dict(self.status),
        )


@dataclass(frozen=True, slots=True)
class ConsumeStats:
    """GET_CONSUME_STATS of one broker: offsets per queue (Java order) and TPS."""

    offsets: tuple[QueueOffset, ...]
    consume_tps: float = 0.0


@dataclass(frozen=True, slots=True)
class SubscriptionGroupConfig:
    """A broker's subscription-group configuration (4.x fields + the 5.x additions)."""

    group_name: str
    consume_enable: bool = True
    consume_from_min_enable: bool = True
    consume_broadcast_enable: bool = True
    consume_message_orderly: bool = False
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = 0
    which_broker_when_consume_slowly: int = 1
    notify_consumer_ids_changed_enable: bool = True
    group_sys_flag: int = 0
    consume_timeout_minute: int = 15
    attributes: Mapping[str, str] = field(default_factory=dict)
    #: 5.x ``groupRetryPolicy`` as compact JSON text; ``None``: the default (CUSTOMIZED).
    group_retry_policy: str | None = None

    def to_model(self) -> GroupConfig:
        """What the diagnosis reads of it."""
        return GroupConfig(
            consume_enable=self.consume_enable,
            notify_consumer_ids_changed_enable=self.notify_consumer_ids_changed_enable,
            retry_max_times=self.retry_max_times,
            consume_message_orderly=self.consume_message_orderly,
            consume_broadcast_enable=self.consume_broadcast_enable,
            retry_queue_nums=self.retry_queue_nums,
            broker_id=self.broker_id,
            which_broker_when_consume_slowly=self.which_broker_when_consume_slowly,
            group_retry_policy=self.group_retry_policy,
        )


@dataclass(frozen=True, slots=True)
class SubscriptionGroupWrapper:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG body, also a broker's ``subscriptionGroup.json``."""

    groups: Mapping[str, SubscriptionGroupConfig]
    data_version: DataVersion | None = None


# --------------------------------------------------------------------------- typed access

_MISSING: Any = object()


def _parse(body: bytes | bytearray | memoryview | str, what: str) -> dict[Hashable, Any]:
    value = fastjson.loads(body)
    if not isinstance(value, dict):
        raise BodyError(f"{what} body: expected a JSON object, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _get(
    obj: Mapping[Hashable, Any],
    key: str,
    where: str,
    *,
    check: Callable[[Any], bool],
    expected: str,
    default: Any,
) -> Any:
    value = obj.get(key)
    if value is None:
        if default is _MISSING:
            raise BodyError(f"{where}.{key}: missing")
        return default
    if not check(value):
        raise BodyError(f"{where}.{key}: expected {expected}, got {_kind(value)}")
    return value


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _str(obj: Mapping[Hashable, Any], key: str, where: str, default: Any = _MISSING) -> Any:
    return _get(
        obj, key, where, check=lambda v: isinstance(v, str), expected="a string", default=default
    )


def _int(obj: Mapping[Hashable, Any], key: str, where: str, default: Any = _MISSING) -> Any:
    return _get(obj, key, where, check=_is_int, expected="an integer", default=default)


def _bool(obj: Mapping[Hashable, Any], key: str, where: str, default: Any = _MISSING) -> Any:
    return _get(
        obj, key, where, check=lambda v: isinstance(v, bool), expected="a boolean", default=default
    )


def _float(obj: Mapping[Hashable, Any], key: str, where: str, default: float = 0.0) -> float:
    value = _get(
        obj,
        key,
        where,
        check=lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        expected="a number",
        default=default,
    )
    return float(value)


def _obj(value: Any, where: str) -> Mapping[Hashable, Any]:
    if type(value) is dict or isinstance(value, Mapping):  # (the first: no ABC check)
        return value
    raise BodyError(f"{where}: expected an object, got {_kind(value)}")


def _map(obj: Mapping[Hashable, Any], key: str, where: str) -> dict[Hashable, Any]:
    """A map property: a JSON object, or Gson's ``[[key, value], ...]``; absent = empty."""
    value = obj.get(key)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    pairs = fastjson.pairs_to_map(value)
    if pairs is None:
        raise BodyError(f"{where}.{key}: expected an object (map), got {_kind(value)}")
    return pairs


def _list(obj: Mapping[Hashable, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BodyError(f"{where}.{key}: expected an array, got {_kind(value)}")
    return value


def _str_list(obj: Mapping[Hashable, Any], key: str, where: str) -> list[str]:
    items = _list(obj, key, where)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise BodyError(f"{where}.{key}[{i}]: expected a string, got {_kind(item)}")
    return items


def _key_str(key: Hashable, where: str) -> str:
    if isinstance(key, str):
        return key
    raise BodyError(f"{where}: expected a string key, got {key!r:.60}")


def _message_queue(key: Any, where: str) -> MessageQueue:
    obj = _obj(key, where)
    return MessageQueue(
        _str(obj, "topic", where), _str(obj, "brokerName", where), _int(obj, "queueId", where)
    )


def _int_key(key: Hashable, where: str, what: str) -> int:
    """A map key that is an integer, bare or quoted (fastjson reads both into an Integer)."""
    if _is_int(key):
        return int(str(key))
    if isinstance(key, str) and key.isascii() and key.lstrip("-").isdigit() and len(key) < 20:
        return int(key)
    raise BodyError(f"{where}: {what} {key!r:.40} is not an integer")


def _broker_id(key: Hashable, where: str) -> int:
    return _int_key(key, where, "broker id")


def _data_version(obj: Mapping[Hashable, Any], where: str) -> DataVersion | None:
    raw = obj.get("dataVersion")
    if raw is None:
        return None
    dv = _obj(raw, f"{where}.dataVersion")
    w = f"{where}.dataVersion"
    return DataVersion(
        _int(dv, "counter", w, 0), _int(dv, "timestamp", w, 0), _int(dv, "stateVersion", w, None)
    )


def _message_model(value: str | None) -> MessageModel | None:
    if value in (MessageModel.CLUSTERING.value, MessageModel.BROADCASTING.value):
        return MessageModel(value)
    return None


def _string_map(raw: Mapping[Hashable, Any], where: str) -> dict[str, str]:
    """A Java ``Properties``/string map; non-string values (non-Java clients) as text."""
    out: dict[str, str] = {}
    for key, value in raw.items():
        k = _key_str(key, where)
        if value is None:
            continue
        if isinstance(value, str):
            out[k] = value
            continue
        try:
            out[k] = fastjson.dumps(value).decode()
        except (ValueError, RecursionError) as exc:
            raise BodyError(f"{where}[{k!r:.40}]: {exc}") from None
    return out


# --------------------------------------------------------------------------- decoders


def _broker_data(raw: Any, where: str) -> BrokerInfo:
    obj = _obj(raw, where)
    name = _str(obj, "brokerName", where)
    addrs: dict[int, str] = {}
    for key, addr in _map(obj, "brokerAddrs", where).items():
        if not isinstance(addr, str):
            raise BodyError(f"{where}.brokerAddrs[{key!r:.20}]: expected a string address")
        addrs[_broker_id(key, f"{where}.brokerAddrs")] = addr
    return BrokerInfo(name, _str(obj, "cluster", where, None), dict(sorted(addrs.items())))


def decode_topic_route_data(body: bytes, topic: str) -> TopicRouteData:
    """Decode a TopicRouteData body (either key style; ``topicSynFlag`` or ``topicSysFlag``)."""
    top = _parse(body, "TopicRouteData")
    queue_datas: list[QueueData] = []
    for i, raw in enumerate(_list(top, "queueDatas", "TopicRouteData")):
        where = f"queueDatas[{i}]"
        qd = _obj(raw, where)
        flag = _int(qd, "topicSysFlag", where, None)
        if flag is None:
            flag = _int(qd, "topicSynFlag", where, 0)
        queue_datas.append(
            QueueData(
                _str(qd, "brokerName", where),
                _int(qd, "readQueueNums", where),
                _int(qd, "writeQueueNums", where),
                _int(qd, "perm", where, 6),
                flag,
            )
        )
    brokers: dict[str, BrokerInfo] = {}
    for i, raw in enumerate(_list(top, "brokerDatas", "TopicRouteData")):
        info = _broker_data(raw, f"brokerDatas[{i}]")
        brokers[info.broker_name] = info
    mappings = {
        str(broker): _queue_mapping(raw, f"topicQueueMappingByBroker[{broker!r:.40}]")
        for broker, raw in _map(top, "topicQueueMappingByBroker", "TopicRouteData").items()
    }
    return TopicRouteData(
        route=TopicRoute(topic, tuple(queue_datas), mappings),
        brokers=brokers,
        order_topic_conf=_str(top, "orderTopicConf", "TopicRouteData", None),
    )


def _queue_mapping(raw: Any, where: str) -> QueueMapping:
    """A TopicQueueMappingInfo of a static topic's route (``currIdMap`` keys bare ints)."""
    info = _obj(raw, where)
    ids = {
        _int_key(logical, f"{where}.currIdMap", "logical queue id"): physical
        for logical, physical in _map(info, "currIdMap", where).items()
    }
    if not all(map(_is_int, ids.values())):
        raise BodyError(f"{where}.currIdMap: expected integer queue ids")
    return QueueMapping(
        _str(info, "scope", where, None),
        _int(info, "epoch", where, 0),
        _int(info, "totalQueues", where, 0),
        dict(sorted(ids.items())),
    )


def decode_topic_route(body: bytes, topic: str) -> tuple[TopicRoute, dict[str, BrokerInfo]]:
    """GET_ROUTEINFO_BY_TOPIC body -> (route, brokers of the route by name)."""
    data = decode_topic_route_data(body, topic)
    return data.route, dict(data.brokers)


def decode_cluster_info(body: bytes) -> ClusterInfo:
    """GET_BROKER_CLUSTER_INFO body -> brokers (with int ids) and the cluster map."""
    top = _parse(body, "ClusterInfo")
    brokers: dict[str, BrokerInfo] = {}
    for key, raw in _map(top, "brokerAddrTable", "ClusterInfo").items():
        name = _key_str(key, "brokerAddrTable")
        brokers[name] = _broker_data(raw, f"brokerAddrTable[{name}]")
    clusters: dict[str, tuple[str, ...]] = {}
    table = _map(top, "clusterAddrTable", "ClusterInfo")
    for key in table:
        name = _key_str(key, "clusterAddrTable")
        clusters[name] = tuple(_str_list(table, name, "clusterAddrTable"))
    return ClusterInfo(brokers, clusters)


def _subscription(raw: Any, where: str) -> Subscription:
    obj = _obj(raw, where)
    return Subscription(
        topic=_str(obj, "topic", where),
        expression_type=_str(obj, "expressionType", where, "TAG"),
        sub_string=_str(obj, "subString", where, "*"),
        sub_version=_int(obj, "subVersion", where, 0),
    )


def decode_consumer_connection(body: bytes) -> ConsumerConnection:
    """GET_CONSUMER_CONNECTION_LIST body -> connections, model, type, subscriptions."""
    top = _parse(body, "ConsumerConnection")
    conns: list[Connection] = []
    for i, raw in enumerate(_list(top, "connectionSet", "ConsumerConnection")):
        where = f"connectionSet[{i}]"
        obj = _obj(raw, where)
        language = obj.get("language")
        if _is_int(language):  # non-Java clients may send the ordinal
            language = str(language)
        elif language is not None and not isinstance(language, str):
            raise BodyError(f"{where}.language: expected a string, got {_kind(language)}")
        conns.append(
            Connection(
                client_id=_str(obj, "clientId", where),
                client_addr=_str(obj, "clientAddr", where, None),
                language=language,
                version=_int(obj, "version", where, None),
            )
        )
    subs: dict[str, Subscription] = {}
    for key, raw in _map(top, "subscriptionTable", "ConsumerConnection").items():
        topic = _key_str(key, "subscriptionTable")
        subs[topic] = _subscription(raw, f"subscriptionTable[{topic}]")
    where = "ConsumerConnection"
    return ConsumerConnection(
        connections=tuple(conns),
        consume_type=_str(top, "consumeType", where, None),
        message_model=_message_model(_str(top, "messageModel", where, None)),
        consume_from_where=_str(top, "consumeFromWhere", where, None),
        subscriptions=subs,
    )


def _queue_keys(
    table: Mapping[Hashable, Any], where: str, skip_dropped: bool
) -> list[MessageQueue]:
    return _held(
        [(_message_queue(k, f"{where}[{i}].key"), v) for i, (k, v) in enumerate(table.items())],
        skip_dropped,
    )


def _held(entries: Sequence[tuple[MessageQueue, Any]], skip_dropped: bool) -> list[MessageQueue]:
    """The queues of a table's entries in Java order (``skip_dropped``: not those whose value
    says ``droped``/``dropped`` true)."""
    out: list[MessageQueue] = []
    for mq, value in entries:
        if skip_dropped and isinstance(value, Mapping):
            dropped = value.get("droped", value.get("dropped"))
            if dropped is True:
                continue
        out.append(mq)
    return sort_queues(out)


def public_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` without keys that look like credentials (never stored or shown)."""
    return {k: v for k, v in properties.items() if not _SECRET_PROPERTY.search(k)}


def decode_consumer_running_info(body: bytes) -> RunningInfo:
    """GET_CONSUMER_RUNNING_INFO body -> :class:`RunningInfo` (see there for the rules)."""
    where = "ConsumerRunningInfo"
    top = _parse(body, where)
    props = _string_map(_map(top, "properties", where), f"{where}.properties")
    subs = tuple(
        _subscription(raw, f"subscriptionSet[{i}]")
        for i, raw in enumerate(_list(top, "subscriptionSet", where))
    )
    mq_table = _map(top, "mqTable", where)
    entries = [  # each key read once: for the held queues and for their states
        (_message_queue(key, f"mqTable[{i}].key"), raw)
        for i, (key, raw) in enumerate(mq_table.items())
    ]
    assigned: tuple[MessageQueue, ...] | None = tuple(_held(entries, True))
    if top.get("mqTable") is None or (not mq_table and not props and not subs):
        assigned = None  # the client told us nothing (a gRPC client's jstack-only answer)
    pop: tuple[MessageQueue, ...] | None = None
    if top.get("mqPopTable") is not None:
        pop = tuple(_queue_keys(_map(top, "mqPopTable", where), "mqPopTable", False))
    states = None if assigned is None else _process_queues(entries)
    status = {
        _key_str(topic, f"statusTable[{i}].key"): _consume_status(raw, f"statusTable[{i}]")
        for i, (topic, raw) in enumerate(_map(top, "statusTable", where).items())
    }
    strategy_text = props.get(PROP_STRATEGY)
    orderly = props.get(PROP_CONSUMEORDERLY)
    start = props.get(PROP_CONSUMER_START_TIMESTAMP, "")
    return RunningInfo(
        subscriptions=subs,
        assigned=assigned,
        pop_assigned=pop,
        properties=public_properties(props),
        strategy=strategy_from_class_name(strategy_text) if strategy_text else None,
        consume_orderly={"true": True, "false": False}.get(orderly or ""),
        consume_type=props.get(PROP_CONSUME_TYPE),
        message_model=_message_model(props.get("messageModel")),
        start_time=int(start) if start.isascii() and start.isdigit() and len(start) < 20 else None,
        client_version=props.get(PROP_CLIENT_VERSION),
        has_jstack=isinstance(top.get("jstack"), str),
        process_queues=states,
        status=status,
    )


def _process_queues(entries: Sequence[tuple[MessageQueue, Any]]) -> tuple[ProcessQueueState, ...]:
    """``mqTable`` values (ProcessQueueInfo) in Java queue order, dropped queues included.

    A property of its usual type is taken as it is; any other goes through the checks that
    name it (one client has thousands of queues: most of the decoding is here)."""

    def num(obj: Mapping[Hashable, Any], key: str, where: str) -> Any:
        value = obj.get(key)
        return value if type(value) is int else _int(obj, key, where, 0)

    def flag(obj: Mapping[Hashable, Any], key: str, where: str) -> Any:
        value = obj.get(key)
        return value if value is True or value is False else _bool(obj, key, where, False)

    out = []
    for i, (mq, raw) in enumerate(entries):
        w = f"mqTable[{i}].value"
        obj = _obj(raw, w)
        out.append(
            ProcessQueueState(
                queue=mq,
                cached_msg_count=num(obj, "cachedMsgCount", w),
                cached_msg_size_mib=num(obj, "cachedMsgSizeInMiB", w),
                commit_offset=num(obj, "commitOffset", w),
                last_pull_timestamp=num(obj, "lastPullTimestamp", w),
                last_consume_timestamp=num(obj, "lastConsumeTimestamp", w),
                locked=flag(obj, "locked", w),
                last_lock_timestamp=num(obj, "lastLockTimestamp", w),
                dropped=flag(obj, "droped", w) or flag(obj, "dropped", w),
            )
        )
    out.sort(
        key=lambda pq: (java_key(pq.queue.topic), java_key(pq.queue.broker_name), pq.queue.queue_id)
    )
    return tuple(out)


def _rate(obj: Mapping[Hashable, Any], key: str, where: str) -> float:
    """A ConsumeStatus double; Java writes ``null`` for NaN."""
    return 0.0 if obj.get(key) is None else _float(obj, key, where)


def _consume_status(raw: Any, where: str) -> ConsumeStatus:
    obj = _obj(raw, where)
    return ConsumeStatus(
        pull_rt=_rate(obj, "pullRT", where),
        pull_tps=_rate(obj, "pullTPS", where),
        consume_rt=_rate(obj, "consumeRT", where),
        consume_ok_tps=_rate(obj, "consumeOKTPS", where),
        consume_failed_tps=_rate(obj, "consumeFailedTPS", where),
        consume_failed_msgs=_int(obj, "consumeFailedMsgs", where, 0),
    )


@dataclass(frozen=True, slots=True)
class QueueStats:
    """One queue of GET_TOPIC_STATS_INFO: the broker's min and max offset, last store time."""

    min_offset: int
    max_offset: int
    last_update_timestamp: int = 0


def decode_topic_stats(body: bytes) -> dict[MessageQueue, QueueStats]:
    """GET_TOPIC_STATS_INFO body (TopicStatsTable) -> per-queue min/max offsets.

    A 4.x broker lists queue ids ``0 .. writeQueueNums-1``: queues written but never read
    (``writeQueueNums > readQueueNums``) are there too.
    """
    plain = _plain_topic_stats(bytes(body))
    return plain if plain is not None else _general_topic_stats(body)


def _general_topic_stats(body: bytes) -> dict[MessageQueue, QueueStats]:
    """:func:`decode_topic_stats` through the general fastjson parser (any body)."""
    where = "TopicStatsTable"
    top = _parse(body, where)
    out: dict[MessageQueue, QueueStats] = {}
    for i, (key, raw) in enumerate(_map(top, "offsetTable", where).items()):
        w = f"offsetTable[{i}].value"
        obj = _obj(raw, w)
        out[_message_queue(key, f"offsetTable[{i}].key")] = QueueStats(
            _int(obj, "minOffset", w, 0),
            _int(obj, "maxOffset", w, 0),
            _int(obj, "lastUpdateTimestamp", w, 0),
        )
    return out


# The consume stats every Java broker writes (fastjson, ConsumeStats' properties in order;
# 5.x adds pullOffset): strings without escapes, integers and doubles as standard JSON spells
# them. Such a body is read by :func:`_plain_consume_stats` with a few regular expressions;
# any other body takes the general parser. Both give the same result.
_JSON_INT = r"(-?(?:0|[1-9][0-9]*))"
_PLAIN_STR = r'"([^"\\\x00-\x1f]*)"'
_CS_HEAD = re.compile(
    r'\{"consumeTps":(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?),"offsetTable":\{'
)
_CS_ENTRY = re.compile(
    rf'\{{"brokerName":{_PLAIN_STR},"queueId":{_JSON_INT},"topic":{_PLAIN_STR}\}}:'
    rf'\{{"brokerOffset":{_JSON_INT},"consumerOffset":{_JSON_INT},"lastTimestamp":{_JSON_INT}'
    r'(?:,"pullOffset":-?(?:0|[1-9][0-9]*))?\}(,?)'
)


# The topic stats every Java broker writes (fastjson, TopicOffset's properties in order).
_TS_HEAD = '{"offsetTable":{'
_TS_ENTRY = re.compile(
    rf'\{{"brokerName":{_PLAIN_STR},"queueId":{_JSON_INT},"topic":{_PLAIN_STR}\}}:'
    rf'\{{"lastUpdateTimestamp":{_JSON_INT},"maxOffset":{_JSON_INT},"minOffset":{_JSON_INT}\}}'
    r"(,?)"
)


def _plain_entries(text: str, pos: int, entry: re.Pattern[str]) -> list[tuple[str, ...]] | None:
    """The groups of ``entry`` (its last group the comma after it) matched one after the
    other from ``pos`` up to the closing ``}}`` of a body, else ``None``."""
    out: list[tuple[str, ...]] = []
    match = entry.match
    more = text.startswith("{", pos)
    while more:
        m = match(text, pos)
        if m is None:
            return None
        *groups, comma = m.groups()
        out.append(tuple(groups))
        pos = m.end()
        more = comma == ","
    return out if text[pos:] == "}}" else None


def _ascii(body: bytes) -> str | None:
    try:
        return body.decode("ascii")
    except UnicodeDecodeError:
        return None


def _plain_topic_stats(body: bytes) -> dict[MessageQueue, QueueStats] | None:
    """A topic stats body in the plain form Java brokers write (read with one regular
    expression per queue, as :func:`_plain_consume_stats`), else ``None``."""
    text = _ascii(body)
    if text is None or not text.startswith(_TS_HEAD):
        return None
    entries = _plain_entries(text, len(_TS_HEAD), _TS_ENTRY)
    if entries is None:
        return None
    return {
        new_queue(topic, broker, int(qid)): QueueStats(int(low), int(high), int(last))
        for broker, qid, topic, last, high, low in entries
    }


def _plain_consume_stats(body: bytes) -> ConsumeStats | None:
    """A consume stats body in the plain form Java brokers write, else ``None``."""
    text = _ascii(body)
    head = None if text is None else _CS_HEAD.match(text)
    if text is None or head is None:
        return None
    entries = _plain_entries(text, head.end(), _CS_ENTRY)
    if entries is None:
        return None
    table = {
        (topic, broker, int(qid)): (int(broker_offset), int(consumer_offset), int(last))
        for broker, qid, topic, broker_offset, consumer_offset, last in entries
    }
    offsets = [  # (keys are unique: sorting the items never compares their values)
        new_offset(new_queue(topic, broker, qid), *values)
        for (topic, broker, qid), values in sorted(table.items())
    ]
    return ConsumeStats(tuple(offsets), float(head.group(1)))


def decode_consume_stats(body: bytes) -> ConsumeStats:
    """GET_CONSUME_STATS body -> per-queue offsets in Java queue order, and consumeTps."""
    plain = _plain_consume_stats(bytes(body))
    return plain if plain is not None else _general_consume_stats(body)


def _general_consume_stats(body: bytes) -> ConsumeStats:
    """:func:`decode_consume_stats` through the general fastjson parser (any body)."""
    where = "ConsumeStats"
    top = _parse(body, where)
    offsets: list[QueueOffset] = []
    for i, (key, raw) in enumerate(_map(top, "offsetTable", where).items()):
        w = f"offsetTable[{i}]"
        mq = _message_queue(key, f"{w}.key")
        obj = _obj(raw, f"{w}.value")
        offsets.append(
            QueueOffset(
                mq,
                _int(obj, "brokerOffset", f"{w}.value", 0),
                _int(obj, "consumerOffset", f"{w}.value", 0),
                _int(obj, "lastTimestamp", f"{w}.value", 0),
            )
        )
    offsets.sort(
        key=lambda o: (java_key(o.queue.topic), java_key(o.queue.broker_name), o.queue.queue_id)
    )
    return ConsumeStats(tuple(offsets), _float(top, "consumeTps", where))


def decode_topic_list(body: bytes) -> list[str]:
    """TopicList body (``{"topicList":[...]}``) -> topic names."""
    return list(_str_list(_parse(body, "TopicList"), "topicList", "TopicList"))


def decode_consumer_id_list(body: bytes) -> list[str]:
    """GET_CONSUMER_LIST_BY_GROUP body (``{"consumerIdList":[...]}``) -> client ids."""
    where = "GetConsumerListByGroupResponseBody"
    return list(_str_list(_parse(body, where), "consumerIdList", where))


def decode_group_list(body: bytes) -> list[str]:
    """GroupList body (QUERY_TOPIC_CONSUME_BY_WHO) -> group names."""
    return list(_str_list(_parse(body, "GroupList"), "groupList", "GroupList"))


@dataclass(frozen=True, slots=True)
class ConsumerOffsets:
    """GET_ALL_CONSUMER_OFFSET body: a broker's committed offsets, ``topic@group`` ->
    queue id -> offset (its ``ConsumerOffsetManager.offsetTable``)."""

    table: Mapping[str, Mapping[int, int]]

    def topics_by_group(self) -> dict[str, tuple[str, ...]]:
        """Each group's topics as the broker's ``whichTopicByConsumer`` finds them, which a
        GET_CONSUME_STATS without a topic reports on, in the order it goes through them: the
        keys (in the table's order) split at ``@`` as Java's ``String.split`` does (trailing
        empty parts dropped), those of two parts only, put into a ``HashSet``.

        >>> ConsumerOffsets({"T@G": {0: 5}, "%RETRY%G@G": {0: 0}, "a@b@c": {}}).topics_by_group()
        {'G': ('T', '%RETRY%G')}
        """
        out: dict[str, list[str]] = {}
        for key in self.table:
            parts = key.split("@")
            while parts and not parts[-1]:
                parts.pop()
            if len(parts) == 2:
                out.setdefault(parts[1], []).append(parts[0])
        return {
            group: tuple(java_hash_set_order(topics, java_string_hash) if topics[1:] else topics)
            for group, topics in out.items()
        }


# The offset table as every Java broker writes it (fastjson, ConsumerOffsetManager's
# properties in order: 5.x's dataVersion and groupTopicMap first; keys without escapes, bare
# integer queue ids): read with regular expressions, any other body by the general parser.
_CO_HEAD = re.compile(
    r'\{(?:"dataVersion":\{[^{}]*\},)?(?:"groupTopicMap":\{[^{}]*\},)?"offsetTable":\{'
)
_CO_PAIRS = r"(?:-?[0-9]+:-?[0-9]+(?:,-?[0-9]+:-?[0-9]+)*)?"  # commas between pairs
_CO_ENTRY = re.compile(rf"{_PLAIN_STR}:\{{({_CO_PAIRS})\}}(,?)")
_CO_PAIR = re.compile(r"(-?[0-9]+):(-?[0-9]+)")


def _plain_consumer_offsets(body: bytes) -> ConsumerOffsets | None:
    """A consumer offsets body in the plain form Java brokers write, else ``None``."""
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return None
    head = _CO_HEAD.match(text)
    if head is None or "\\" in text:
        return None
    table: dict[str, dict[int, int]] = {}
    pos = head.end()
    more = not text.startswith("}", pos)
    while more:
        m = _CO_ENTRY.match(text, pos)
        if m is None:
            return None
        key, pairs, comma = m.groups()
        table[key] = {int(q): int(o) for q, o in _CO_PAIR.findall(pairs)}
        pos = m.end()
        more = comma == ","
    if text[pos:] != "}}":
        return None
    return ConsumerOffsets(table)


def decode_consumer_offsets(body: bytes) -> ConsumerOffsets:
    """GET_ALL_CONSUMER_OFFSET body -> the broker's committed offsets (4.x: ``offsetTable``
    only; 5.x adds ``dataVersion`` and ``groupTopicMap``, which are not kept)."""
    plain = _plain_consumer_offsets(bytes(body))
    if plain is not None:
        return plain
    where = "ConsumerOffsetManager"
    table: dict[str, dict[int, int]] = {}
    for i, (key, raw) in enumerate(_map(_parse(body, where), "offsetTable", where).items()):
        w = f"offsetTable[{i}]"
        name = _key_str(key, f"{w}.key")
        queues: dict[int, int] = {}
        for qid, offset in _obj(raw, f"{w}.value").items():
            if not _is_int(offset):
                raise BodyError(f"{w}.value: offset {offset!r:.40} is not an integer")
            queues[_int_key(qid, f"{w}.value", "queue id")] = offset
        table[name] = queues
    return ConsumerOffsets(table)


def merge_consume_stats(parts: Sequence[ConsumeStats]) -> ConsumeStats:
    """One broker's consume stats of a group from its answers for one topic each, given in
    :meth:`ConsumerOffsets.topics_by_group`'s order: what the broker answers without a topic,
    rows and rate, the rates added in the order and the way it adds them."""
    offsets = sorted(
        (o for part in parts for o in part.offsets),
        key=lambda o: (java_key(o.queue.topic), java_key(o.queue.broker_name), o.queue.queue_id),
    )
    tps = 0.0
    for part in parts:
        tps = part.consume_tps + tps
    return ConsumeStats(tuple(offsets), tps)


def _group_topic_map(keys: Sequence[str]) -> dict[str, list[str]]:
    """5.x ``getGroupTopicMap``: a HashMap(128) of group -> HashSet(8) of its topics, filled
    from the offset table's keys in their order."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        parts = key.split("@")
        if len(parts) == 2 and parts[1]:
            groups.setdefault(parts[1], []).append(parts[0])
    return {
        g: hash_map(8).order(groups[g], java_string_hash)
        for g in hash_map(128).order(list(groups), java_string_hash)
    }


def encode_consumer_offsets(
    table: Mapping[str, Mapping[int, int]], dialect: Dialect | int = Dialect.V4
) -> bytes:
    """GET_ALL_CONSUMER_OFFSET as a broker writes its ``ConsumerOffsetManager``: the
    ``offsetTable`` (a ConcurrentHashMap(512) of ``topic@group`` keys, each a
    ConcurrentHashMap(32) of queue ids); 5.x adds ``dataVersion`` and ``groupTopicMap``."""
    d = _dialect(dialect)
    keys = concurrent_map(512).order(list(table), java_string_hash)
    offsets = {
        k: {q: table[k][q] for q in concurrent_map(32).order(list(table[k]), int)} for k in keys
    }
    if d < Dialect.V5:
        return fastjson.dumps(Bean(offsetTable=offsets))
    return fastjson.dumps(
        Bean(
            dataVersion=_data_version_bean(DataVersion(0, 0), d),
            groupTopicMap=_group_topic_map(keys),
            offsetTable=offsets,
        )
    )


def _attributes(obj: Mapping[Hashable, Any], where: str) -> dict[str, str]:
    return _string_map(_map(obj, "attributes", where), f"{where}.attributes")


#: A 5.x broker's ``groupRetryPolicy`` of a group nobody gave one.
_DEFAULT_RETRY_POLICY = {"type": "CUSTOMIZED"}


def _retry_policy(obj: Mapping[Hashable, Any], where: str) -> str | None:
    """``groupRetryPolicy`` as compact JSON text (what ``updateSubGroup -p`` takes), or
    ``None`` when absent or the default."""
    value = obj.get("groupRetryPolicy")
    if value is None or value == _DEFAULT_RETRY_POLICY:
        return None
    _obj(value, f"{where}.groupRetryPolicy")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: SubscriptionGroupConfig's fields after ``group_name``, in order, as (JSON key, default);
#: ``attributes`` last, handled apart.
_GROUP_CONFIG_FIELDS: tuple[tuple[str, bool | int], ...] = (
    ("consumeEnable", True),
    ("consumeFromMinEnable", True),
    ("consumeBroadcastEnable", True),
    ("consumeMessageOrderly", False),
    ("retryQueueNums", 1),
    ("retryMaxTimes", 16),
    ("brokerId", 0),
    ("whichBrokerWhenConsumeSlowly", 1),
    ("notifyConsumerIdsChangedEnable", True),
    ("groupSysFlag", 0),
    ("consumeTimeoutMinute", 15),
)
#: The type of each of those values: its default's (a bool is never an int here).
_GROUP_CONFIG_TYPES = tuple(type(default) for _, default in _GROUP_CONFIG_FIELDS)


def _plain_config(name: str, raw: Any) -> list[Any] | None:
    """The constructor's arguments of one entry of ``subscriptionGroupTable`` (group name
    first, ``attributes`` left out) when its values all have exactly their types (absent or
    null: the default) and it has no attributes; ``None`` for any other entry, which goes
    through the checks one field at a time (:func:`_config_entry_checked`), which also word
    the error."""
    if type(raw) is not dict or raw.get("attributes") not in (None, {}):
        return None
    if raw.get("groupRetryPolicy", _DEFAULT_RETRY_POLICY) != _DEFAULT_RETRY_POLICY:
        return None
    get = raw.get
    group_name = get("groupName")
    values: list[Any] = [name if group_name is None else group_name]
    values += [d if (v := get(k)) is None else v for k, d in _GROUP_CONFIG_FIELDS]
    if type(values[0]) is str and tuple(map(type, values[1:])) == _GROUP_CONFIG_TYPES:
        return values
    return None


def _config_entry(name: str, raw: Any) -> SubscriptionGroupConfig:
    """One entry of ``subscriptionGroupTable``.

    A broker's table holds every group (thousands on a big cluster): a plain entry
    (:func:`_plain_config`) is built in one step, any other with the checks.
    """
    values = _plain_config(name, raw)
    if values is None:
        return _config_entry_checked(name, raw)
    return SubscriptionGroupConfig(*values)


class ConfigTable(Mapping[str, SubscriptionGroupConfig]):
    """A broker's subscription-group configs by group name, in the body's order.

    Every entry was checked when the body was decoded (a wrong one raised
    :class:`BodyError` then); a plain one is built when first read.
    """

    __slots__ = ("_entries",)

    def __init__(self, entries: dict[str, SubscriptionGroupConfig | dict[str, Any]]) -> None:
        self._entries = entries

    def __getitem__(self, name: str) -> SubscriptionGroupConfig:
        entry = self._entries[name]
        if isinstance(entry, dict):
            values = _plain_config(name, entry)
            assert values is not None  # its shape was found plain when decoded
            entry = self._entries[name] = SubscriptionGroupConfig(*values)
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def _config_entry_checked(name: str, raw: Any) -> SubscriptionGroupConfig:
    w = f"subscriptionGroupTable[{name}]"
    o = _obj(raw, w)
    return SubscriptionGroupConfig(
        group_name=_str(o, "groupName", w, name),
        consume_enable=_bool(o, "consumeEnable", w, True),
        consume_from_min_enable=_bool(o, "consumeFromMinEnable", w, True),
        consume_broadcast_enable=_bool(o, "consumeBroadcastEnable", w, True),
        consume_message_orderly=_bool(o, "consumeMessageOrderly", w, False),
        retry_queue_nums=_int(o, "retryQueueNums", w, 1),
        retry_max_times=_int(o, "retryMaxTimes", w, 16),
        broker_id=_int(o, "brokerId", w, 0),
        which_broker_when_consume_slowly=_int(o, "whichBrokerWhenConsumeSlowly", w, 1),
        notify_consumer_ids_changed_enable=_bool(o, "notifyConsumerIdsChangedEnable", w, True),
        group_sys_flag=_int(o, "groupSysFlag", w, 0),
        consume_timeout_minute=_int(o, "consumeTimeoutMinute", w, 15),
        attributes=_attributes(o, w),
        group_retry_policy=_retry_policy(o, w),
    )


def decode_subscription_group_wrapper(body: bytes) -> SubscriptionGroupWrapper:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG body or ``subscriptionGroup.json`` -> typed configs."""
    where = "SubscriptionGroupWrapper"
    top = _parse(body, where)
    groups = dict(_config_table(top, where))
    return SubscriptionGroupWrapper(groups, _data_version(top, where))


def decode_subscription_group_table(body: bytes | str) -> ConfigTable:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG body -> its configs, checked as
    :func:`decode_subscription_group_wrapper` checks them, each built when first read."""
    where = "SubscriptionGroupWrapper"
    top = _parse(body, where)
    table = _config_table(top, where)
    _data_version(top, where)
    return table


def find_group_config(text: str, name: str) -> SubscriptionGroupConfig | None:
    """Group ``name``'s entry in the text of a GET_ALL_SUBSCRIPTIONGROUP_CONFIG body, read
    without decoding the other entries and checked as :func:`decode_subscription_group_table`
    checks it (:class:`BodyError`); ``None`` when the text does not show it plainly (absent,
    or written in a form this search does not look for): only decoding the whole table
    settles that. One group's capture of a cluster of thousands of groups reads one entry.

    A match is the key ``"name":`` after ``{`` or ``,`` whose object's ``groupName`` is
    ``name``: no other object of the body has that field (a SubscriptionGroupConfig nests only
    retry policies, string attributes and an array of subscriptions). The last match wins,
    as a repeated key does when the whole table is decoded. Past :data:`_CANDIDATES_READ`
    places where the name is a key and no match, the search gives up (``None``): a body that
    holds it that often is decoded whole, in time linear in its size.
    """
    key = fastjson.quote(name)
    end = len(text)
    tries = _CANDIDATES_READ
    while (at := text.rfind(key, 0, end)) >= 0:
        end = at
        before = at - 1
        while before >= 0 and text[before] in _JSON_SPACE:
            before -= 1
        pos = _after_space(text, at + len(key))
        if before < 0 or text[before] not in "{," or not text.startswith(":", pos):
            continue
        pos = _after_space(text, pos + 1)
        if not text.startswith("{", pos):
            continue
        raw = fastjson.object_at(text, pos, depth=3)
        if raw is not None and raw.get("groupName") == name:
            return _config_entry(name, raw)
        tries -= 1
        if not tries:
            break
    return None


#: Objects read at most in a search for one group's entry: its name is a key once in a real
#: body (more only where a group is named like a config field); reading every object a
#: hostile body keys by it could take time quadratic in the body's size.
_CANDIDATES_READ = 8
_JSON_SPACE = " \t\r\n"


def _after_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _JSON_SPACE:
        pos += 1
    return pos


def _config_table(top: Mapping[Hashable, Any], where: str) -> ConfigTable:
    """The table's entries, each checked: whether an entry is plain (:func:`_plain_config`)
    depends only on its keys, the types of its values and whether its attributes are empty,
    so that is worked out once per such shape (a broker's thousands of entries have a few);
    the others are built with the checks."""
    entries: dict[str, SubscriptionGroupConfig | dict[str, Any]] = {}
    plain_shapes: dict[tuple[Any, ...], bool] = {}
    for key, raw in _map(top, "subscriptionGroupTable", where).items():
        name = _key_str(key, "subscriptionGroupTable")
        plain = False
        if type(raw) is dict:
            shape = (tuple(raw), tuple(map(type, raw.values())), not raw.get("attributes"))
            known = plain_shapes.get(shape)
            if known is None:
                known = plain_shapes[shape] = _plain_config(name, raw) is not None
            plain = known
        entries[name] = raw if plain else _config_entry_checked(name, raw)
    return ConfigTable(entries)


# --------------------------------------------------------------------------- Java emulation


def _tags(sub: Subscription) -> tuple[list[str], list[int]]:
    """``tagsSet`` and ``codeSet`` as Java's FilterAPI builds them, in HashSet order."""
    tags = filter_tags(sub.sub_string) if sub.expression_type == "TAG" else None
    if tags is None:
        return [], []
    codes = [java_string_hash(t) for t in tags]
    return java_hash_set_order(tags, java_string_hash), java_hash_set_order(codes, int)


def _subscription_hash(sub: Subscription) -> int:
    """``SubscriptionData.hashCode()`` of ``sub`` as a Java client builds it."""
    tags, codes = _tags(sub)
    return subscription_hash(sub.topic, sub.sub_string, sub.expression_type, tags=tags, codes=codes)


def _queue_hash(mq: MessageQueue) -> int:
    return message_queue_hash(mq.topic, mq.broker_name, mq.queue_id)


def _in_order(
    table: HashTable, mapping: Mapping[Any, T], hash_of: Callable[[Any], int]
) -> dict[Any, T]:
    """``mapping`` re-ordered as a Java ``table`` filled in ``mapping``'s order iterates."""
    return {key: mapping[key] for key in table.order(mapping, hash_of)}


# The NameServer's tables (RouteInfoManager): HashMaps in 4.9.x, ConcurrentHashMaps in 5.x.
_BROKER_ADDR_TABLE = {Dialect.V4: hash_map(128), Dialect.V5: concurrent_map(128)}
_CLUSTER_ADDR_TABLE = {Dialect.V4: hash_map(32), Dialect.V5: concurrent_map(32)}
# TopicList.topicList: a HashSet in 4.9.x, ConcurrentHashMap.newKeySet() in 5.x.
_TOPIC_SET = {Dialect.V4: HashTable(), Dialect.V5: concurrent_map()}
# ConsumeStats.offsetTable and TopicStatsTable.offsetTable: a HashMap in 4.9.x, a
# ConcurrentHashMap in 5.x.
_OFFSET_TABLE = {Dialect.V4: HashTable(), Dialect.V5: concurrent_map()}
# The broker's SubscriptionGroupManager: ConcurrentHashMap(1024).
_GROUP_TABLE = concurrent_map(1024)
# ConsumerRunningInfo.properties is a java.util.Properties: a ConcurrentHashMap(8) inside
# since Java 9 (the clients' JVM), filled by MixAll.object2Properties and the PROP_* puts.
_PROPERTIES_TABLE = concurrent_map(8)


def _subscription_bean(sub: Subscription) -> Bean:
    tags, codes = _tags(sub)
    return Bean(
        classFilterMode=False,
        codeSet=codes,
        expressionType=sub.expression_type,
        subString=sub.sub_string,
        subVersion=sub.sub_version,
        tagsSet=tags,
        topic=sub.topic,
    )


# --------------------------------------------------------------------------- encoders


def _dialect(value: Dialect | int) -> Dialect:
    return Dialect(int(value))


def _data_version_bean(dv: DataVersion | None, dialect: Dialect) -> Bean:
    dv = dv or DataVersion()
    state = (dv.state_version or 0) if dialect >= Dialect.V5 else None
    return Bean(counter=dv.counter, stateVersion=state, timestamp=dv.timestamp)


def _broker_bean(name: str, info: BrokerInfo | None, dialect: Dialect) -> Bean:
    addrs = dict(sorted(info.addrs.items())) if info else {}  # HashMap<Long,..>: id order
    return Bean(
        brokerAddrs=addrs,
        brokerName=name,
        cluster=(info.cluster if info else None) or "DefaultCluster",
        enableActingMaster=False if dialect >= Dialect.V5 else None,
    )


def route_wants_standard_json(version: int, ext_fields: Mapping[str, str | None] | None) -> bool:
    """Whether a 4.9.4+/5.x NameServer answers this GET_ROUTEINFO_BY_TOPIC in standard JSON.

    >>> route_wants_standard_json(373, {"topic": "T"}), route_wants_standard_json(401, None)
    (False, True)
    >>> route_wants_standard_json(373, {"acceptStandardJsonOnly": "true"})
    True
    """
    flag = (ext_fields or {}).get("acceptStandardJsonOnly")
    return version >= 401 or (flag or "").lower() == "true"


def encode_topic_route(
    route: TopicRoute,
    brokers: Mapping[str, BrokerInfo],
    *,
    standard: bool,
    dialect: Dialect | int = Dialect.V4,
    order_topic_conf: str | None = None,
) -> bytes:
    """TopicRouteData as a NameServer writes it.

    ``standard`` is the 4.9.4+ switch (request version >= 401 or ``acceptStandardJsonOnly``):
    quoted broker ids, sorted maps. Otherwise broker ids are bare integers (``{0:"..."}``).
    """
    d = _dialect(dialect)
    in_route = [qd.broker_name for qd in route.queue_datas]
    # brokerDatas in the order of ``brokers`` (a decoded body keeps the NameServer's order),
    # then any broker of the route that ``brokers`` does not describe.
    names = [n for n in brokers if n in in_route]
    names += [n for n in dict.fromkeys(in_route) if n not in brokers]
    body = Bean(
        brokerDatas=[_broker_bean(n, brokers.get(n), d) for n in names],
        filterServerTable={},
        orderTopicConf=order_topic_conf,
        queueDatas=[
            Bean(
                brokerName=qd.broker_name,
                perm=qd.perm,
                readQueueNums=qd.read_queue_nums,
                topicSysFlag=qd.topic_sys_flag,
                writeQueueNums=qd.write_queue_nums,
            )
            for qd in route.queue_datas
        ],
    )
    if route.queue_mappings:
        body["topicQueueMappingByBroker"] = {
            broker: Bean(
                bname=broker,
                currIdMap=dict(m.curr_id_map),
                dirty=False,
                epoch=m.epoch,
                scope=m.scope,
                topic=route.topic,
                totalQueues=m.total_queues,
            )
            for broker, m in route.queue_mappings.items()
        }
    return fastjson.dumps(body, standard=standard)


def encode_cluster_info(
    brokers: Mapping[str, BrokerInfo],
    dialect: Dialect | int = Dialect.V4,
    clusters: Mapping[str, Sequence[str]] | None = None,
) -> bytes:
    """ClusterInfo (always plain encoding: bare integer broker ids).

    ``clusters`` defaults to grouping ``brokers`` by their ``cluster``. Both tables and the
    broker-name sets come out in the NameServer's hash order (HashMap(128) / HashMap(32) in
    4.9.x, ConcurrentHashMap(128) / (32) in 5.x); the arguments' order only breaks ties.
    """
    d = _dialect(dialect)
    if clusters is None:
        grouped: dict[str, list[str]] = {}
        for name, info in brokers.items():
            grouped.setdefault(info.cluster or "DefaultCluster", []).append(name)
        clusters = grouped
    table = _in_order(_BROKER_ADDR_TABLE[d], brokers, java_string_hash)
    cluster_table = _in_order(_CLUSTER_ADDR_TABLE[d], clusters, java_string_hash)
    return fastjson.dumps(
        Bean(
            brokerAddrTable={n: _broker_bean(n, info, d) for n, info in table.items()},
            # each cluster's broker names: a HashSet<String>
            clusterAddrTable={
                c: HashTable().order(names, java_string_hash) for c, names in cluster_table.items()
            },
        )
    )


def encode_topic_list(
    topics: Iterable[str],
    broker_addr: str | None = None,
    dialect: Dialect | int = Dialect.V4,
) -> bytes:
    """TopicList: ``{"topicList":[...]}`` (``brokerAddr`` only when given).

    The list is a Java set (HashSet in 4.9.x, a concurrent key set in 5.x): ``topics`` are
    put in the order given and come out in the set's hash order.
    """
    names = _TOPIC_SET[_dialect(dialect)].order(topics, java_string_hash)
    return fastjson.dumps(Bean(brokerAddr=broker_addr, topicList=names))


def encode_group_list(groups: Iterable[str]) -> bytes:
    """GroupList: ``{"groupList":[...]}``, a HashSet: hash order (ties in the order given)."""
    return fastjson.dumps(Bean(groupList=HashTable().order(groups, java_string_hash)))


def encode_consumer_id_list(client_ids: Iterable[str]) -> bytes:
    """GetConsumerListByGroupResponseBody: ``{"consumerIdList":[...]}``."""
    return fastjson.dumps(Bean(consumerIdList=list(client_ids)))


def encode_kv_table(table: Mapping[str, str]) -> bytes:
    """KVTable: ``{"table":{...}}`` (every value a string; a HashMap: hash order)."""
    return fastjson.dumps(Bean(table=_in_order(HashTable(), table, java_string_hash)))


def merged_subscriptions(consumers: Iterable[Consumer]) -> dict[str, Subscription]:
    """The broker's per-topic subscription table: the highest ``subVersion`` wins."""
    table: dict[str, Subscription] = {}
    for consumer in consumers:
        for sub in consumer.subscriptions:
            old = table.get(sub.topic)
            if old is None or sub.sub_version > old.sub_version:
                table[sub.topic] = sub
    return table


def _broker_subscription_table(consumers: Iterable[Consumer]) -> dict[str, Subscription]:
    """:func:`merged_subscriptions` in the order a broker's ConsumerConnection lists them.

    Each heartbeat carries a client's subscriptions as a HashSet (``SubscriptionData``
    hash order); the broker puts new topics into its ConcurrentHashMap in that order, and
    GET_CONSUMER_CONNECTION_LIST copies that map with ``putAll`` into a fresh one (whose
    table is presized to the entry count).
    """
    table = merged_subscriptions(consumers)
    topics: list[str] = []
    for consumer in consumers:
        for sub in HashTable().order(consumer.subscriptions, _subscription_hash):
            topics.append(sub.topic)
    seen = concurrent_map().order(topics, java_string_hash)
    copied = concurrent_put_all(len(seen)).order(seen, java_string_hash)
    return {t: table[t] for t in copied}


def _group_consume_type(group: Group) -> str:
    if group.consume_type:
        return group.consume_type
    for consumer in group.consumers:
        if consumer.consume_type:
            return consumer.consume_type
    return CONSUME_PASSIVELY


def encode_consumer_connection(
    group: Group,
    dialect: Dialect | int = Dialect.V4,
    *,
    consume_from_where: str | None = "CONSUME_FROM_LAST_OFFSET",
    kept: Sequence[Subscription] | None = None,
) -> bytes:
    """ConsumerConnection for ``group`` as its broker sees it (one entry per consumer).

    Missing ``clientAddr``/``language``/``version`` are omitted (a real broker always has
    them) so that decoding gives back ``None``. ``connectionSet`` keeps the consumers'
    order (Java's is by identity hash: not reproducible); ``subscriptionTable`` is in the
    broker's hash order (:func:`_broker_subscription_table`), with a topic's entry taken
    from ``kept`` where it has one (what this broker keeps, when it is not the clients'
    latest).
    """
    _dialect(dialect)  # same shape in 4.x and 5.x
    connections = [
        Bean(
            clientAddr=c.client_addr,
            clientId=c.client_id,
            language=c.language,
            version=c.version,
        )
        for c in group.consumers
    ]
    subs = _broker_subscription_table(group.consumers)
    for sub in kept or ():
        subs[sub.topic] = sub
    return fastjson.dumps(
        Bean(
            connectionSet=connections,
            consumeFromWhere=consume_from_where,
            consumeType=_group_consume_type(group),
            messageModel=group.message_model.value,
            subscriptionTable={t: _subscription_bean(s) for t, s in subs.items()},
        )
    )


_REBALANCE_PACKAGE = "org.apache.rocketmq.client.consumer.rebalance."


def strategy_class_name(spec: StrategySpec) -> str:
    """The fully qualified Java class a client with ``spec`` reports.

    >>> strategy_class_name(Avg()).rsplit(".", 1)[1]
    'AllocateMessageQueueAveragely'
    """
    simple = {
        Avg: "AllocateMessageQueueAveragely",
        AvgByCircle: "AllocateMessageQueueAveragelyByCircle",
        ConsistentHash: "AllocateMessageQueueConsistentHash",
        MachineRoom: "AllocateMessageQueueByMachineRoom",
        MachineRoomNearby: "AllocateMachineRoomNearby",
        Config: "AllocateMessageQueueByConfig",
    }.get(type(spec))
    if simple is not None:
        return _REBALANCE_PACKAGE + simple
    assert isinstance(spec, Unknown)
    return spec.class_name


def _identity_hash(text: str) -> str:
    return f"{zlib.crc32(text.encode('utf-8', 'replace')) & 0x7FFFFFFF:x}"


def _process_queue_bean(commit_offset: int, state: ProcessQueueState | None = None) -> Bean:
    # Without a recorded state: every ProcessQueue a 4.9.x / 5.x client creates in a
    # rebalance starts locked (RebalanceImpl sets it whatever the consume mode).
    pq = state or ProcessQueueState(
        MessageQueue("", "", 0), commit_offset=commit_offset, locked=True
    )
    return Bean(
        cachedMsgCount=pq.cached_msg_count,
        cachedMsgMaxOffset=0,
        cachedMsgMinOffset=0,
        cachedMsgSizeInMiB=pq.cached_msg_size_mib,
        commitOffset=pq.commit_offset,
        droped=pq.dropped,
        lastConsumeTimestamp=pq.last_consume_timestamp,
        lastLockTimestamp=pq.last_lock_timestamp,
        lastPullTimestamp=pq.last_pull_timestamp,
        locked=pq.locked,
        transactionMsgCount=0,
        transactionMsgMaxOffset=0,
        transactionMsgMinOffset=0,
        tryUnlockTimes=0,
    )


DERIVED_PROPERTIES: frozenset[str] = frozenset(
    {PROP_STRATEGY, PROP_CONSUMEORDERLY, PROP_CONSUMER_START_TIMESTAMP, PROP_CONSUME_TYPE}
)
"""Properties :func:`running_info_properties` may add to carry typed consumer fields."""


def running_info_properties(consumer: Consumer) -> dict[str, str]:
    """``consumer.properties`` plus what encodes its typed fields, so decoding gives them back.

    A property already present is kept when it decodes to the same value (a captured
    ``...Averagely@6d06d69c`` stays byte for byte); a typed field that is ``None`` removes
    its property, so "unknown" stays unknown. Only :data:`DERIVED_PROPERTIES` are touched.
    """
    props = dict(consumer.properties)

    def put(key: str, value: str | None, same: bool) -> None:
        if value is None:
            props.pop(key, None)
        elif not same:
            props[key] = value

    old_strategy = props.get(PROP_STRATEGY)
    spec = consumer.strategy
    put(
        PROP_STRATEGY,
        None
        if spec is None
        else f"{strategy_class_name(spec)}@{_identity_hash(consumer.client_id)}",
        old_strategy is not None
        and spec is not None
        and strategy_from_class_name(old_strategy) == spec,
    )
    orderly = None if consumer.consume_orderly is None else str(consumer.consume_orderly).lower()
    put(PROP_CONSUMEORDERLY, orderly, props.get(PROP_CONSUMEORDERLY) == orderly)
    start = None if consumer.start_time is None else str(consumer.start_time)
    put(PROP_CONSUMER_START_TIMESTAMP, start, props.get(PROP_CONSUMER_START_TIMESTAMP) == start)
    put(
        PROP_CONSUME_TYPE,
        consumer.consume_type,
        props.get(PROP_CONSUME_TYPE) == consumer.consume_type,
    )
    return props


def committed_offsets(offsets: Iterable[QueueOffset]) -> dict[MessageQueue, int]:
    """Each queue's committed offset of a group's ``offsets`` (0 where it never committed),
    as its clients' running info lists it."""
    return {o.queue: max(o.consumer_offset, 0) for o in offsets}


def encode_consumer_running_info(
    consumer: Consumer,
    group: Group | None = None,
    dialect: Dialect | int = Dialect.V4,
    *,
    jstack: str | None = None,
    commits: Mapping[MessageQueue, int] | None = None,
) -> bytes:
    """ConsumerRunningInfo as a Java client answers it (relayed verbatim by the broker).

    ``mqTable`` holds ``consumer.assigned`` (commit offsets from the group's offsets, or
    ``commits``: :func:`committed_offsets` of the group, computed once for its clients) and
    is left out when ``assigned`` is ``None`` (empty for a pull consumer whose kind never
    lists its queues, as it answers); 5.x adds ``mqPopTable`` (from
    ``pop_assigned``) and ``userConsumerInfo``. ``properties`` come out in the order of a
    Java 9+ ``Properties`` (a ConcurrentHashMap(8)) filled in the consumer's order.
    """
    d = _dialect(dialect)
    if commits is None:
        commits = committed_offsets(group.offsets if group is not None else ())
    states = {pq.queue: pq for pq in consumer.process_queues or ()}
    mq_table: dict[MessageQueue, Bean] | None = {} if consumer.queues_unreported else None
    if consumer.assigned is not None:
        # Held queues, plus dropped ones the client still lists (they decode as not held).
        held = set(consumer.assigned)
        dropped = [mq for mq, pq in states.items() if pq.dropped and mq not in held]
        mq_table = {
            mq: _process_queue_bean(commits.get(mq, 0), states.get(mq))
            for mq in sort_queues([*consumer.assigned, *dropped])
        }
    pop_table = None
    if d >= Dialect.V5:
        pop_table = {
            mq: Bean(droped=False, lastPopTimestamp=0, waitAckCount=0)
            for mq in sort_queues(consumer.pop_assigned or ())
        }
    subs = sorted(consumer.subscriptions, key=lambda s: java_key(f"{s.topic}@{s.sub_string}"))
    status = {}
    # a push consumer has a status per subscribed topic; a pull consumer fills none
    listed = set() if consumer.pulls_actively else {s.topic for s in subs}
    for topic in sorted(listed | set(consumer.status), key=java_key):
        st = consumer.status.get(topic, ConsumeStatus())
        status[topic] = Bean(
            consumeFailedMsgs=st.consume_failed_msgs,
            consumeFailedTPS=st.consume_failed_tps,
            consumeOKTPS=st.consume_ok_tps,
            consumeRT=st.consume_rt,
            pullRT=st.pull_rt,
            pullTPS=st.pull_tps,
        )
    body = Bean(
        jstack=jstack,
        mqPopTable=pop_table,
        mqTable=mq_table,
        properties=_in_order(
            _PROPERTIES_TABLE, running_info_properties(consumer), java_string_hash
        ),
        statusTable=status,
        subscriptionSet=[_subscription_bean(s) for s in subs],
        userConsumerInfo={} if d >= Dialect.V5 else None,
    )
    return fastjson.dumps(body)


def encode_consume_stats(
    offsets: Iterable[QueueOffset],
    dialect: Dialect | int = Dialect.V4,
    *,
    consume_tps: float = 0.0,
    group: str = "",
) -> bytes:
    """ConsumeStats of one broker; 5.1+ (``Dialect.V5``) adds ``pullOffset`` (= consumer).

    Rows go in as the broker's getConsumeStats puts them: topic by topic in the order of
    the HashSet ``whichTopicByConsumer`` returns (filled from the offset table's
    ConcurrentHashMap(512) of ``topic@group`` keys), queue ids ascending; they come out in
    ``offsetTable``'s hash order (HashMap in 4.9.x, ConcurrentHashMap in 5.x).
    """
    d = _dialect(dialect)
    rows = list(offsets)
    keys = concurrent_map(512).order([f"{o.queue.topic}@{group}" for o in rows], java_string_hash)
    topics = HashTable().order([k.rsplit("@", 1)[0] for k in keys], java_string_hash)
    rank = {t: i for i, t in enumerate(topics)}
    rows.sort(key=lambda o: (rank[o.queue.topic], o.queue.queue_id))
    ordered = _OFFSET_TABLE[d].order(rows, lambda o: _queue_hash(o.queue))
    table = {
        o.queue: Bean(
            brokerOffset=o.broker_offset,
            consumerOffset=o.consumer_offset,
            lastTimestamp=o.last_timestamp,
            pullOffset=o.consumer_offset if d >= Dialect.V5 else None,
        )
        for o in ordered
    }
    return fastjson.dumps(Bean(consumeTps=consume_tps, offsetTable=table))


def _group_config_bean(cfg: SubscriptionGroupConfig, dialect: Dialect) -> Bean:
    v5 = dialect >= Dialect.V5
    return Bean(
        attributes=dict(cfg.attributes) if v5 else None,
        brokerId=cfg.broker_id,
        consumeBroadcastEnable=cfg.consume_broadcast_enable,
        consumeEnable=cfg.consume_enable,
        consumeFromMinEnable=cfg.consume_from_min_enable,
        consumeMessageOrderly=cfg.consume_message_orderly if v5 else None,
        consumeTimeoutMinute=cfg.consume_timeout_minute if v5 else None,
        groupName=cfg.group_name,
        groupRetryPolicy=_retry_policy_bean(cfg.group_retry_policy) if v5 else None,
        groupSysFlag=cfg.group_sys_flag if v5 else None,
        notifyConsumerIdsChangedEnable=cfg.notify_consumer_ids_changed_enable,
        retryMaxTimes=cfg.retry_max_times,
        retryQueueNums=cfg.retry_queue_nums,
        whichBrokerWhenConsumeSlowly=cfg.which_broker_when_consume_slowly,
    )


def _retry_policy_bean(text: str | None) -> Any:
    return Bean(_DEFAULT_RETRY_POLICY) if text is None else json.loads(text)


def encode_subscription_group_wrapper(
    wrapper: SubscriptionGroupWrapper, dialect: Dialect | int = Dialect.V4
) -> bytes:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG as the broker writes it (5.x adds ``forbiddenTable``).

    The groups come out in the hash order of the broker's ConcurrentHashMap(1024).
    """
    d = _dialect(dialect)
    groups = _in_order(_GROUP_TABLE, wrapper.groups, java_string_hash)
    return fastjson.dumps(
        Bean(
            dataVersion=_data_version_bean(wrapper.data_version, d),
            forbiddenTable={} if d >= Dialect.V5 else None,
            subscriptionGroupTable={
                name: _group_config_bean(cfg, d) for name, cfg in groups.items()
            },
        )
    )


def encode_subscription_groups(
    names: Iterable[str],
    dialect: Dialect | int = Dialect.V4,
    configs: Mapping[str, GroupConfig] | None = None,
) -> bytes:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG: ``names`` with their ``configs`` where given, else
    the broker's defaults."""
    given = configs or {}
    wrapper = SubscriptionGroupWrapper({n: _group_config(n, given.get(n)) for n in names})
    return encode_subscription_group_wrapper(wrapper, dialect)


def _group_config(name: str, cfg: GroupConfig | None) -> SubscriptionGroupConfig:
    if cfg is None:
        return SubscriptionGroupConfig(name)
    return SubscriptionGroupConfig(
        name,
        consume_enable=cfg.consume_enable,
        notify_consumer_ids_changed_enable=cfg.notify_consumer_ids_changed_enable,
        retry_max_times=cfg.retry_max_times,
        consume_message_orderly=cfg.consume_message_orderly,
        consume_broadcast_enable=cfg.consume_broadcast_enable,
        retry_queue_nums=cfg.retry_queue_nums,
        broker_id=cfg.broker_id,
        which_broker_when_consume_slowly=cfg.which_broker_when_consume_slowly,
        group_retry_policy=cfg.group_retry_policy,
    )


def encode_topic_stats(
    stats: Mapping[MessageQueue, QueueStats], dialect: Dialect | int = Dialect.V4
) -> bytes:
    """TopicStatsTable of one broker (GET_TOPIC_STATS_INFO, 4.x field set).

    The broker puts queue ids in ascending order into a HashMap (4.9.x) or a
    ConcurrentHashMap (5.x): the table comes out in that map's hash order.
    """
    queues = sorted(stats, key=_queue_order)
    table = {
        mq: Bean(
            lastUpdateTimestamp=stats[mq].last_update_timestamp,
            maxOffset=stats[mq].max_offset,
            minOffset=stats[mq].min_offset,
        )
        for mq in _OFFSET_TABLE[_dialect(dialect)].order(queues, _queue_hash)
    }
    return fastjson.dumps(Bean(offsetTable=table))


def _queue_order(mq: MessageQueue) -> tuple[Any, Any, int]:
    return (java_key(mq.topic), java_key(mq.broker_name), mq.queue_id)


# --------------------------------------------------------------------------- 5.x requests

#: The broker config keys rmqlb keeps from GET_BROKER_CONFIG (what broker-side assignment
#: reads, and how long a connection without heartbeat stays in a consumer list); every other
#: line of the answer (paths, addresses, tuning) is dropped on decoding.
BROKER_CONFIG_ATTRS: Mapping[str, str] = {
    "serverLoadBalancerEnable": "server_load_balancer_enable",
    "defaultMessageRequestMode": "default_message_request_mode",
    "defaultPopShareQueueNum": "default_pop_share_queue_num",
    "loadBalancePollNameServerInterval": "load_balance_poll_name_server_interval",
    "channelExpiredTimeout": "channel_expired_timeout",
}
#: ... by their Java names (the model's :class:`~rmqlb.model.BrokerConfig` attribute names
#: in :data:`BROKER_CONFIG_ATTRS`).
BROKER_CONFIG_KEYS = tuple(BROKER_CONFIG_ATTRS)


def decode_broker_config(body: bytes) -> dict[str, str]:
    """GET_BROKER_CONFIG body (``java.util.Properties`` text, ``key=value`` lines) -> the
    values of :data:`BROKER_CONFIG_KEYS` it has (nothing else is kept)."""
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(f"broker config body: not UTF-8 ({exc.reason})") from None
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in BROKER_CONFIG_KEYS:
            out[key.strip()] = value.strip()
    return out


def encode_data_version_field(
    counter: int, timestamp: int = 0, dialect: Dialect | int = Dialect.V4
) -> str:
    """A ``DataVersion`` as a response header field carries it (GET_BROKER_CONFIG; 5.x adds
    ``stateVersion``)."""
    state = 0 if _dialect(dialect) is Dialect.V5 else None
    return fastjson.dumps(Bean(counter=counter, stateVersion=state, timestamp=timestamp)).decode()


def encode_broker_config(values: Mapping[str, str]) -> bytes:
    """``key=value`` lines in key order, as ``MixAll.properties2String`` writes them."""
    return "".join(f"{k}={v}\n" for k, v in sorted(values.items())).encode()
