"""Validate decoded ``rmqlb.snapshot/1`` JSON into :class:`~rmqlb.model.Snapshot`.

A hand-written validator rather than pydantic models: on a snapshot of 100,000 queues and
5,000 consumers pydantic took about three times as long as decoding the JSON, while these
loops stay well under it (``bench/bench_explain.py``). The JSON Schema is still generated from
pydantic models (:mod:`rmqlb.snapshot.schema`), and tests keep the two in agreement.

Every problem raises :class:`~rmqlb.errors.InputError` with one line naming the JSON path::

    snap.json: groups.GroupA.consumers[2].assigned[0].queueId: expected an integer, got a string

Unknown keys are ignored everywhere (forward compatibility: a newer rmqlb may add fields); a
wrong ``format`` is an error, so a file of another kind is caught at once.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Mapping
from operator import itemgetter
from typing import Any, NoReturn

from rmqlb.errors import InputError
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import (
    NEVER_COMMITTED,
    BrokerInfo,
    CaptureError,
    Consumer,
    ConsumeStatus,
    Group,
    GroupConfig,
    MessageModel,
    ProcessQueueState,
    QueueData,
    QueueOffset,
    Snapshot,
    Source,
    Subscription,
    TopicRoute,
)
from rmqlb.model.strategy import (
    ConsistentHash,
    MachineRoomNearby,
    StrategySpec,
    strategy_from_class_name,
    strategy_from_json,
)
from rmqlb.snapshot._fast import (
    OFFSET_SETTERS,
    QUEUE_SETTERS,
    gc_paused,
    new_consumer,
    new_queue,
)

SNAPSHOT_FORMAT = "rmqlb.snapshot/1"
SHORTHAND_BROKER = "broker-a"
#: Largest ``readQueueNums``/``writeQueueNums`` accepted for one broker (a typo of a few
#: extra digits would otherwise make the diagnosis allocate billions of queues).
MAX_QUEUE_NUMS = 1_000_000
#: Largest ``virtualNodeCnt`` accepted (the ring costs ``consumers * vnodes``).
MAX_VIRTUAL_NODES = 100_000
STRATEGY_PROPERTY = "allocateMessageQueueStrategy"

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_%\-]+$")

# One C call instead of three ``dict.get`` per queue reference (KeyError/TypeError: the slow,
# path-naming checks take over).
_QUEUE_REF = itemgetter("topic", "brokerName", "queueId")
_OFFSET_REF = itemgetter("topic", "brokerName", "queueId", "brokerOffset", "consumerOffset")
_UNSEEN = object()
_ABSENT: Any = object()  # a key left out (as opposed to given as null)


def _cache_key(raw: dict[str, Any]) -> Hashable | None:
    """A key equal only for equal objects with equal value types (``1``, ``1.0`` and ``True``
    compare equal but validate differently), or ``None`` when a value is unhashable."""
    key = (tuple(raw.items()), tuple(map(type, raw.values())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def child(path: str, key: str) -> str:
    """The JSON path of ``key`` under ``path``: ``groups.GroupA`` or ``topics["a.b"]``."""
    part = f".{key}" if _PLAIN_KEY.match(key) else f"[{json.dumps(key, ensure_ascii=False)}]"
    return part[1:] if not path else path + part


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


class _Parser:
    """One parse: the source name for messages and an intern table for queues."""

    def __init__(self, source: str) -> None:
        self.source = source
        # topic -> broker -> queue id -> the one MessageQueue object (int keys: no tuple
        # per queue to build and keep)
        self.queues: dict[str, dict[str, dict[int, MessageQueue]]] = {}
        # Subscriptions and strategies repeat across thousands of consumers: the validated
        # result of each distinct JSON object, keyed by :func:`_cache_key`.
        self.subscriptions: dict[Hashable, Subscription] = {}
        self.strategies: dict[Hashable, StrategySpec] = {}

    # -- errors and scalar checks -------------------------------------------------------

    def fail(self, path: str, message: str) -> NoReturn:
        where = f"{path}: " if path else ""
        raise InputError(f"{self.source}: {where}{message}")

    def expected(self, path: str, what: str, value: Any) -> NoReturn:
        self.fail(path, f"expected {what}, got {_kind(value)}")

    def obj(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.expected(path, "an object", value)
        return value

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            self.expected(path, "an array", value)
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            self.expected(path, "a string", value)
        return value

    def opt_string(self, value: Any, path: str) -> str | None:
        return None if value is None else self.string(value, path)

    def integer(self, value: Any, path: str, minimum: int | None = None) -> int:
        if type(value) is not int:  # bool is an int subclass: refuse it
            self.expected(path, "an integer", value)
        if minimum is not None and value < minimum:
            self.fail(path, f"expected an integer >= {minimum}, got {value}")
        return value

    def opt_integer(self, value: Any, path: str) -> int | None:
        return None if value is None else self.integer(value, path)

    def opt_bool(self, value: Any, path: str) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            self.expected(path, "a boolean", value)
        return value

    def required(self, raw: Mapping[str, Any], key: str, path: str) -> Any:
        if key not in raw:
            self.fail(path, f"missing required field {key!r}")
        return raw[key]

    def by_id(self, topic: str, broker: str) -> dict[int, MessageQueue]:
        """The intern table of one (topic, broker)."""
        by_broker = self.queues.get(topic)
        if by_broker is None:
            by_broker = self.queues[topic] = {}
        table = by_broker.get(broker)
        if table is None:
            table = by_broker[broker] = {}
        return table

    # -- the document -------------------------------------------------------------------

    def snapshot(self, data: Any) -> Snapshot:
        raw = self.obj(data, "")
        fmt = self.required(raw, "format", "")
        if fmt != SNAPSHOT_FORMAT:
            shown = json.dumps(fmt, ensure_ascii=False)[:60]
            self.fail("format", f"expected {SNAPSHOT_FORMAT!r}, got {shown}")
        topics_raw = self.obj(self.required(raw, "topics", ""), "topics")
        topics = {
            self.string(name, "topics"): self.topic(name, value, child("topics", name))
            for name, value in topics_raw.items()
        }
        groups_raw = self.obj(self.required(raw, "groups", ""), "groups")
        groups = {
            name: self.group(name, value, child("groups", name))
            for name, value in groups_raw.items()
        }
        brokers_raw = self.obj(raw.get("brokers", {}), "brokers")
        brokers = {
            name: self.broker(name, value, child("brokers", name))
            for name, value in brokers_raw.items()
        }
        errors_raw = self.array(raw.get("errors", []), "errors")
        errors = tuple(self.capture_error(e, f"errors[{i}]") for i, e in enumerate(errors_raw))
        return Snapshot(
            topics=topics,
            groups=groups,
            brokers=brokers,
            captured_at=self.opt_string(raw.get("capturedAt"), "capturedAt"),
            source=self.source_info(raw.get("source")),
            errors=errors,
        )

    def source_info(self, value: Any) -> Source | None:
        if value is None:
            return None
        raw = self.obj(value, "source")
        namesrv = raw.get("namesrv", [])
        if isinstance(namesrv, str):  # "a:9876;b:9876", as NAMESRV_ADDR spells it
            namesrv = [part for part in namesrv.split(";") if part]
        items = self.array(namesrv, "source.namesrv")
        return Source(
            namesrv=tuple(self.string(v, f"source.namesrv[{i}]") for i, v in enumerate(items)),
            rmqlb=self.opt_string(raw.get("rmqlb"), "source.rmqlb"),
        )

    def capture_error(self, value: Any, path: str) -> CaptureError:
        raw = self.obj(value, path)
        return CaptureError(
            target=self.string(raw.get("target", ""), f"{path}.target"),
            request=self.string(raw.get("request", ""), f"{path}.request"),
            message=self.string(self.required(raw, "message", path), f"{path}.message"),
            group=self.opt_string(raw.get("group"), f"{path}.group"),
            topic=self.opt_string(raw.get("topic"), f"{path}.topic"),
        )

    def broker(self, name: str, value: Any, path: str) -> BrokerInfo:
        raw = self.obj(value, path)
        addrs_raw = self.obj(raw.get("addrs", {}), f"{path}.addrs")
        addrs: dict[int, str] = {}
        for key, addr in addrs_raw.items():
            where = child(f"{path}.addrs", key)
            try:
                broker_id = int(key)
            except ValueError:
                self.fail(where, f"broker id must be an integer, got {key!r}")
            if broker_id < 0:
                self.fail(where, f"broker id must be >= 0, got {broker_id}")
            addrs[broker_id] = self.string(addr, where)
        return BrokerInfo(
            broker_name=name,
            cluster=self.opt_string(raw.get("cluster"), f"{path}.cluster"),
            addrs=addrs,
        )

    def topic(self, name: str, value: Any, path: str) -> TopicRoute:
        raw = self.obj(value, path)
        has_datas = "queueDatas" in raw
        if "queues" in raw:
            if has_datas:
                self.fail(path, "give either 'queues' (shorthand) or 'queueDatas', not both")
            count = self.integer(raw["queues"], f"{path}.queues", minimum=0)
            if count > MAX_QUEUE_NUMS:
                self.fail(f"{path}.queues", f"at most {MAX_QUEUE_NUMS} queues, got {count}")
            return TopicRoute(name, (QueueData(SHORTHAND_BROKER, count, count, 6),))
        if not has_datas:
            self.fail(path, "missing required field 'queueDatas' (or the shorthand 'queues': N)")
        datas = self.array(raw["queueDatas"], f"{path}.queueDatas")
        return TopicRoute(
            name, tuple(self.queue_data(d, f"{path}.queueDatas[{i}]") for i, d in enumerate(datas))
        )

    def queue_data(self, value: Any, path: str) -> QueueData:
        raw = self.obj(value, path)
        broker = self.string(self.required(raw, "brokerName", path), f"{path}.brokerName")
        nums = []
        for key in ("readQueueNums", "writeQueueNums"):
            n = self.integer(self.required(raw, key, path), f"{path}.{key}", minimum=0)
            if n > MAX_QUEUE_NUMS:
                self.fail(f"{path}.{key}", f"at most {MAX_QUEUE_NUMS} queues, got {n}")
            nums.append(n)
        perm = self.integer(raw.get("perm", 6), f"{path}.perm", minimum=0)
        flag = self.integer(raw.get("topicSysFlag", 0), f"{path}.topicSysFlag")
        return QueueData(broker, nums[0], nums[1], perm, flag)

    def strategy(self, value: Any, path: str) -> StrategySpec:
        spec = strategy_from_json(value, where=f"{self.source}: {path}")
        self.check_strategy(spec, path)
        return spec

    def check_strategy(self, spec: StrategySpec, path: str) -> None:
        if isinstance(spec, ConsistentHash) and not 0 <= spec.virtual_node_cnt <= MAX_VIRTUAL_NODES:
            self.fail(
                f"{path}.virtualNodeCnt",
                f"expected 0..{MAX_VIRTUAL_NODES}, got {spec.virtual_node_cnt}",
            )
        if isinstance(spec, MachineRoomNearby):
            if isinstance(spec.inner, MachineRoomNearby):
                self.fail(f"{path}.inner", "the inner strategy cannot be MACHINE_ROOM_NEARBY")
            self.check_strategy(spec.inner, f"{path}.inner")

    def group(self, name: str, value: Any, path: str) -> Group:
        raw = self.obj(value, path)
        model_raw = raw.get("messageModel", "CLUSTERING")
        try:
            model = MessageModel(model_raw)
        except ValueError:
            self.fail(
                f"{path}.messageModel",
                f"expected 'CLUSTERING' or 'BROADCASTING', got {json.dumps(model_raw)[:40]}",
            )
        strategy_raw = raw.get("strategy")
        strategy = None if strategy_raw is None else self.strategy(strategy_raw, f"{path}.strategy")
        consumers_raw = self.array(raw.get("consumers", []), f"{path}.consumers")
        consumers = tuple(
            self.consumer(c, f"{path}.consumers[{i}]") for i, c in enumerate(consumers_raw)
        )
        offsets_raw = self.array(raw.get("offsets", []), f"{path}.offsets")
        return Group(
            name=name,
            message_model=model,
            consume_type=self.opt_string(raw.get("consumeType"), f"{path}.consumeType"),
            strategy=strategy,
            consumers=consumers,
            offsets=self.offsets(offsets_raw, f"{path}.offsets"),
            configs=self.group_configs(raw.get("configs", _ABSENT), f"{path}.configs"),
        )

    def group_configs(self, value: Any, path: str) -> dict[str, GroupConfig]:
        """Each broker's subscription-group config of the group (``{}`` when absent)."""
        out: dict[str, GroupConfig] = {}
        default = GroupConfig()
        for broker, item in self.obj({} if value is _ABSENT else value, path).items():
            where = child(path, broker)
            raw = self.obj(item, where)
            out[broker] = GroupConfig(
                consume_enable=self.flag(raw, "consumeEnable", where, default.consume_enable),
                notify_consumer_ids_changed_enable=self.flag(
                    raw,
                    "notifyConsumerIdsChangedEnable",
                    where,
                    default.notify_consumer_ids_changed_enable,
                ),
                retry_max_times=self.integer(
                    raw.get("retryMaxTimes", default.retry_max_times), f"{where}.retryMaxTimes"
                ),
                consume_message_orderly=self.flag(
                    raw, "consumeMessageOrderly", where, default.consume_message_orderly
                ),
            )
        return out

    def subscription(self, value: Any, path: str) -> Subscription:
        if isinstance(value, str):  # shorthand: "TopicA" subscribes every tag
            return Subscription(value)
        raw = self.obj(value, path)
        return Subscription(
            topic=self.string(self.required(raw, "topic", path), f"{path}.topic"),
            expression_type=self.string(raw.get("expressionType", "TAG"), f"{path}.expressionType"),
            sub_string=self.string(raw.get("subString", "*"), f"{path}.subString"),
            sub_version=self.integer(raw.get("subVersion", 0), f"{path}.subVersion"),
        )

    def consumer(self, value: Any, path: str) -> Consumer:
        if type(value) is dict:
            fast = self.plain_consumer(value, path)
            if fast is not None:
                return fast
        return self.checked_consumer(value, path)

    def cached_subscription(self, value: Any) -> Subscription | None:
        """A subscription seen before (validated then), else validated now; ``None`` when
        invalid (the caller re-checks it with its path)."""
        key: Hashable | None = value if type(value) is str else None
        if type(value) is dict:
            key = _cache_key(value)
        if key is None:
            return None
        sub = self.subscriptions.get(key)
        if sub is None:
            try:
                sub = self.subscriptions[key] = self.subscription(value, "")
            except InputError:
                return None
        return sub

    def cached_strategy(self, value: Any) -> StrategySpec | None:
        """Like :meth:`cached_subscription`, for a consumer's strategy object."""
        key = _cache_key(value) if type(value) is dict else None
        if key is None:
            return None
        spec = self.strategies.get(key)
        if spec is None:
            try:
                spec = self.strategies[key] = self.strategy(value, "")
            except InputError:
                return None
        return spec

    def plain_consumer(self, raw: dict[str, Any], path: str) -> Consumer | None:
        """The common, valid consumer without building a JSON path per field; ``None``
        sends anything unusual to :meth:`checked_consumer`, which names the problem (and
        gives the same result for whatever this path merely declines)."""
        get = raw.get
        client_id = get("clientId")
        subs_raw = get("subscriptions")
        if type(client_id) is not str or not client_id or type(subs_raw) is not list:
            return None
        subs: list[Subscription] = []
        for item in subs_raw:
            sub = self.cached_subscription(item)
            if sub is None:
                return None
            subs.append(sub)
        if "properties" in raw or "processQueues" in raw or "status" in raw:
            return None
        strategy_raw = get("strategy")
        strategy: StrategySpec | None = None
        if strategy_raw is not None:
            strategy = self.cached_strategy(strategy_raw)
            if strategy is None:
                return None
        addr = get("clientAddr")
        language = get("language")
        consume_type = get("consumeType")
        version = get("version")
        orderly = get("consumeOrderly")
        start_time = get("startTime")
        if not (
            (addr is None or type(addr) is str)
            and (language is None or type(language) is str)
            and (consume_type is None or type(consume_type) is str)
            and (version is None or type(version) is int)
            and (orderly is None or type(orderly) is bool)
            and (start_time is None or type(start_time) is int)
        ):
            return None
        default_topic = subs[0].topic if len(subs) == 1 else None
        assigned = get("assigned")
        pop_assigned = get("popAssigned")
        return new_consumer(
            client_id,
            tuple(subs),
            addr,
            language,
            version,
            strategy,
            orderly,
            consume_type,
            None
            if assigned is None
            else self.queue_list(assigned, f"{path}.assigned", default_topic),
            None
            if pop_assigned is None
            else self.queue_list(pop_assigned, f"{path}.popAssigned", default_topic, min_id=-1),
            start_time,
            {},
        )

    def checked_consumer(self, value: Any, path: str) -> Consumer:
        raw = self.obj(value, path)
        client_id = self.string(self.required(raw, "clientId", path), f"{path}.clientId")
        if not client_id:
            self.fail(f"{path}.clientId", "must not be empty")
        subs_raw = self.array(self.required(raw, "subscriptions", path), f"{path}.subscriptions")
        subs = tuple(
            self.subscription(s, f"{path}.subscriptions[{i}]") for i, s in enumerate(subs_raw)
        )
        default_topic = subs[0].topic if len(subs) == 1 else None
        props_raw = self.obj(raw.get("properties", {}), f"{path}.properties")
        props: dict[str, str] = {}
        for key, prop in props_raw.items():
            if isinstance(prop, (Mapping, list)):
                self.expected(child(f"{path}.properties", key), "a string", prop)
            props[key] = prop if isinstance(prop, str) else json.dumps(prop)
        strategy_raw = raw.get("strategy")
        strategy: StrategySpec | None
        if strategy_raw is not None:
            strategy = self.strategy(strategy_raw, f"{path}.strategy")
        elif props.get(STRATEGY_PROPERTY):
            strategy = strategy_from_class_name(props[STRATEGY_PROPERTY])
        else:
            strategy = None
        return Consumer(
            client_id=client_id,
            subscriptions=subs,
            client_addr=self.opt_string(raw.get("clientAddr"), f"{path}.clientAddr"),
            language=self.opt_string(raw.get("language"), f"{path}.language"),
            version=self.opt_integer(raw.get("version"), f"{path}.version"),
            strategy=strategy,
            consume_orderly=self.opt_bool(raw.get("consumeOrderly"), f"{path}.consumeOrderly"),
            consume_type=self.opt_string(raw.get("consumeType"), f"{path}.consumeType"),
            assigned=self.queue_list(raw.get("assigned"), f"{path}.assigned", default_topic),
            pop_assigned=self.queue_list(
                raw.get("popAssigned"), f"{path}.popAssigned", default_topic, min_id=-1
            ),
            start_time=self.opt_integer(raw.get("startTime"), f"{path}.startTime"),
            properties=props,
            process_queues=self.process_queues(
                raw.get("processQueues"), f"{path}.processQueues", default_topic
            ),
            status=self.status_table(raw.get("status", _ABSENT), f"{path}.status"),
        )

    def count(self, raw: Mapping[str, Any], key: str, where: str) -> int:
        """An optional integer field of ``raw`` (0 when absent)."""
        return self.integer(raw.get(key, 0), f"{where}.{key}")

    def flag(self, raw: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
        """An optional boolean field of ``raw`` (absent: ``default``; null is not a boolean)."""
        if key not in raw:
            return default
        value = raw[key]
        if not isinstance(value, bool):
            self.expected(f"{where}.{key}", "a boolean", value)
        return value

    def rate(self, raw: Mapping[str, Any], key: str, where: str) -> float:
        """An optional number field of ``raw`` (0.0 when absent; NaN refused)."""
        value = raw.get(key, 0)
        if type(value) not in (int, float) or math.isnan(value):
            self.expected(f"{where}.{key}", "a number", value)
        return float(value)

    def process_queues(
        self, value: Any, path: str, default_topic: str | None
    ) -> tuple[ProcessQueueState, ...] | None:
        """A client's held-queue states; ``None`` when absent (not reported)."""
        if value is None:
            return None
        out = []
        for i, item in enumerate(self.array(value, path)):
            where = f"{path}[{i}]"
            raw = self.obj(item, where)
            topic, broker, qid = self.queue_ref(raw, where, default_topic)
            out.append(
                ProcessQueueState(
                    queue=new_queue(topic, broker, qid),
                    cached_msg_count=self.count(raw, "cachedMsgCount", where),
                    cached_msg_size_mib=self.count(raw, "cachedMsgSizeInMiB", where),
                    commit_offset=self.count(raw, "commitOffset", where),
                    last_pull_timestamp=self.count(raw, "lastPullTimestamp", where),
                    last_consume_timestamp=self.count(raw, "lastConsumeTimestamp", where),
                    locked=self.flag(raw, "locked", where, False),
                    last_lock_timestamp=self.count(raw, "lastLockTimestamp", where),
                    dropped=self.flag(raw, "dropped", where, False),
                )
            )
        return tuple(out)

    def status_table(self, value: Any, path: str) -> dict[str, ConsumeStatus]:
        """A client's consume statistics by topic (``{}`` when absent)."""
        out: dict[str, ConsumeStatus] = {}
        for topic, item in self.obj({} if value is _ABSENT else value, path).items():
            where = child(path, topic)
            raw = self.obj(item, where)
            out[topic] = ConsumeStatus(
                pull_rt=self.rate(raw, "pullRT", where),
                pull_tps=self.rate(raw, "pullTPS", where),
                consume_rt=self.rate(raw, "consumeRT", where),
                consume_ok_tps=self.rate(raw, "consumeOKTPS", where),
                consume_failed_tps=self.rate(raw, "consumeFailedTPS", where),
                consume_failed_msgs=self.count(raw, "consumeFailedMsgs", where),
            )
        return out

    def queue_list(
        self, value: Any, path: str, default_topic: str | None, min_id: int = 0
    ) -> tuple[MessageQueue, ...] | None:
        """A list of queue references; the hot path of big snapshots, so kept lean.

        Decoded JSON repeats one string object for equal strings, so a topic or broker
        that *is* the previous one (already checked) skips the checks and the table lookup.
        """
        if value is None:
            return None
        items = self.array(value, path)
        out: list[MessageQueue] = []
        append = out.append
        ref = _QUEUE_REF
        last_topic: Any = _UNSEEN  # never a decoded value: the first item is always checked
        last_broker: Any = _UNSEEN
        table: dict[int, MessageQueue] = {}
        new = object.__new__
        set_topic, set_broker, set_id = QUEUE_SETTERS
        for i, item in enumerate(items):
            try:
                topic, broker, qid = ref(item)
            except (KeyError, TypeError):
                topic, broker, qid = self.queue_ref(item, f"{path}[{i}]", default_topic, min_id)
            if type(qid) is not int or qid < min_id:
                topic, broker, qid = self.queue_ref(item, f"{path}[{i}]", default_topic, min_id)
            if topic is not last_topic or broker is not last_broker:
                if type(topic) is not str or type(broker) is not str:
                    topic, broker, qid = self.queue_ref(item, f"{path}[{i}]", default_topic, min_id)
                table = self.by_id(topic, broker)
                last_topic, last_broker = topic, broker
            mq = table.get(qid)
            if mq is None:  # new_queue() inlined: the first sight of 100,000 queues
                mq = table[qid] = new(MessageQueue)
                set_topic(mq, topic)
                set_broker(mq, broker)
                set_id(mq, qid)
            append(mq)
        return tuple(out)

    def queue_ref(
        self, value: Any, path: str, default_topic: str | None, min_id: int = 0
    ) -> tuple[str, str, int]:
        """A queue reference; ``popAssigned`` allows queue id -1 (5.x POP: every queue of
        that broker)."""
        raw = self.obj(value, path)
        if "topic" in raw or default_topic is None:
            topic = self.string(self.required(raw, "topic", path), f"{path}.topic")
        else:
            topic = default_topic
        broker = self.string(self.required(raw, "brokerName", path), f"{path}.brokerName")
        qid = self.integer(self.required(raw, "queueId", path), f"{path}.queueId", minimum=min_id)
        return topic, broker, qid

    def offsets(self, items: list[Any], path: str) -> tuple[QueueOffset, ...]:
        """Offsets: one per queue, so the other hot path of big snapshots (same shortcuts
        as :meth:`queue_list`)."""
        out: list[QueueOffset] = []
        append = out.append
        ref = _OFFSET_REF
        # QueueOffset built through its slot setters, inline: one Python call less each
        new = object.__new__
        set_queue, set_broker, set_consumer, set_last, set_min = OFFSET_SETTERS
        last_topic: Any = _UNSEEN  # never a decoded value: the first item is always checked
        last_broker: Any = _UNSEEN
        table: dict[int, MessageQueue] = {}
        for i, item in enumerate(items):
            try:
                topic, broker, qid, broker_offset, consumer_offset = ref(item)
                last = item.get("lastTimestamp", 0)
                low = item.get("minOffset")
            except (KeyError, TypeError, AttributeError):
                ok = False
            else:
                ok = (
                    type(qid) is int
                    and qid >= 0
                    and type(broker_offset) is int
                    and type(consumer_offset) is int
                    and consumer_offset >= NEVER_COMMITTED
                    and type(last) is int
                    and (low is None or (type(low) is int and low >= 0))
                )
            if not ok:
                (topic, broker, qid), broker_offset, consumer_offset, last, low = self.offset(
                    item, f"{path}[{i}]"
                )
            if topic is not last_topic or broker is not last_broker:
                if type(topic) is not str or type(broker) is not str:
                    (topic, broker, qid), broker_offset, consumer_offset, last, low = self.offset(
                        item, f"{path}[{i}]"
                    )
                table = self.by_id(topic, broker)
                last_topic, last_broker = topic, broker
            mq = table.get(qid)
            if mq is None:
                mq = table[qid] = new_queue(topic, broker, qid)
            off: QueueOffset = new(QueueOffset)
            set_queue(off, mq)
            set_broker(off, broker_offset)
            set_consumer(off, consumer_offset)
            set_last(off, last)
            set_min(off, low)
            append(off)
        return tuple(out)

    def offset(
        self, value: Any, path: str
    ) -> tuple[tuple[str, str, int], int, int, int, int | None]:
        """One offset, checked field by field: ``consumerOffset`` -1 is "never committed"."""
        raw = self.obj(value, path)
        key = self.queue_ref(raw, path, None)
        broker_offset = self.integer(
            self.required(raw, "brokerOffset", path), f"{path}.brokerOffset"
        )
        consumer_offset = self.integer(
            self.required(raw, "consumerOffset", path),
            f"{path}.consumerOffset",
            minimum=NEVER_COMMITTED,
        )
        last = self.integer(raw.get("lastTimestamp", 0), f"{path}.lastTimestamp")
        low = raw.get("minOffset")
        if low is not None:
            low = self.integer(low, f"{path}.minOffset", minimum=0)
        return key, broker_offset, consumer_offset, last, low


def parse_snapshot(data: Any, source: str = "<input>") -> Snapshot:
    """Validate decoded JSON (``json.load`` output) into a :class:`Snapshot`.

    Raises :class:`InputError` with one line naming ``source`` and the JSON path.

    >>> snap = parse_snapshot({"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": 2}},
    ...                        "groups": {}})
    >>> [q.label() for q in snap.topics["T"].readable_queues()]
    ['broker-a:0', 'broker-a:1']
    """
    with gc_paused():
        try:
            return _Parser(source).snapshot(data)
        except RecursionError:
            raise InputError(f"{source}: document nested too deeply") from None
