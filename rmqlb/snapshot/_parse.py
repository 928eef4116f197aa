"""Validate decoded ``rmqlb.snapshot/1`` JSON into :class:`~rmqlb.model.Snapshot`.

The format is defined in :mod:`rmqlb.snapshot.spec`; the loader takes every key, limit and
default from there and restates none. Scalar fields are checked by :meth:`_Parser.value`
against their spec type. The hot paths (queue lists, offsets, plain consumers, held-queue
states: one per queue of a big snapshot) are hand-written loops over keys and limits read
from the spec once, at import; they accept only what is plainly valid and hand anything else
to the checked path, which names the problem.

Hand-written rather than pydantic models: on a snapshot of 100,000 queues and 5,000
consumers pydantic took about three times as long as decoding the JSON, while these loops
stay well under it (``bench/bench_explain.py``). Tests keep the loader in agreement with the
spec and with the JSON Schema generated from it.

Every problem raises :class:`~rmqlb.errors.InputError` with one line naming the JSON path::

    snap.json: groups.GroupA.consumers[2].assigned[0].queueId: expected an integer, got a string

Unknown keys are ignored everywhere (forward compatibility: a newer rmqlb may add fields); a
wrong ``format`` is an error, so a file of another kind is caught at once.

An integer may be written as an integral float (``5.0``, ``1e3``): JSON Schema counts it as an
integer, and so does RocketMQ's fastjson for an int field. It is read as the int it is (the
model holds only ints); ``5.5``, NaN, the infinities and booleans are refused. The fast paths
test ``type(x) is int`` and hand anything else to the checked path, which converts.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Mapping
from operator import itemgetter
from typing import Any, NoReturn

from rmqlb.errors import InputError
from rmqlb.model._fast import (
    OFFSET_SETTERS,
    QUEUE_SETTERS,
    gc_paused,
    new_consumer,
    new_queue,
    setter,
)
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import (
    Assignment,
    BrokerConfig,
    BrokerInfo,
    CaptureError,
    Consumer,
    ConsumeStatus,
    DeadLetters,
    Group,
    GroupConfig,
    GroupOnBroker,
    MessageModel,
    MessageRequestMode,
    ProcessQueueState,
    QueueData,
    QueueMapping,
    QueueOffset,
    Rebalance,
    RequestMode,
    Snapshot,
    Source,
    Subscription,
    TopicRoute,
    rebalance_from_properties,
)
from rmqlb.model.strategy import (
    StrategySpec,
    strategy_from_class_name,
    strategy_from_json,
)
from rmqlb.snapshot import spec

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_%\-]+$")
# searched as a JSON Schema validator does (``re.search``): digits only, no sign or space
_ID_KEY = re.compile(spec.ID_KEY_PATTERN)


def _minimum(field: spec.Field) -> int:
    """The least value of an integer field with a lower limit."""
    assert isinstance(field.type, spec.Int) and field.type.minimum is not None, field
    return field.type.minimum


# The records the loader reads, and what its hot loops take from them once.
_Q, _POP, _OFF, _C = spec.QueueRef, spec.PopQueueRef, spec.QueueOffset, spec.Consumer
# One C call instead of three ``dict.get`` per queue reference (KeyError/TypeError: the slow,
# path-naming checks take over).
_QUEUE_REF = itemgetter(_Q.topic.key, _Q.broker_name.key, _Q.queue_id.key)
_OFFSET_REF = itemgetter(
    _OFF.topic.key,
    _OFF.broker_name.key,
    _OFF.queue_id.key,
    _OFF.broker_offset.key,
    _OFF.consumer_offset.key,
)
_MIN_QUEUE_ID = _minimum(_Q.queue_id)
_MIN_POP_QUEUE_ID = _minimum(_POP.queue_id)
_MIN_CONSUMER_OFFSET = _minimum(_OFF.consumer_offset)
_MIN_MIN_OFFSET = _minimum(_OFF.min_offset)
# The keys the fast consumer path reads.
(
    _CLIENT_ID,
    _SUBSCRIPTIONS,
    _STRATEGY,
    _CLIENT_ADDR,
    _LANGUAGE,
    _CONSUME_TYPE,
    _VERSION,
    _CONSUME_ORDERLY,
    _START_TIME,
    _ASSIGNED,
    _POP_ASSIGNED,
    _PROPERTIES,
    _PROCESS_QUEUES,
    _STATUS,
    _REBALANCE,
    _PROXY,
) = (
    f.key
    for f in (
        _C.client_id,
        _C.subscriptions,
        _C.strategy,
        _C.client_addr,
        _C.language,
        _C.consume_type,
        _C.version,
        _C.consume_orderly,
        _C.start_time,
        _C.assigned,
        _C.pop_assigned,
        _C.properties,
        _C.process_queues,
        _C.status,
        _C.rebalance,
        _C.proxy,
    )
)
_REBALANCES = {r.value: r for r in Rebalance}
_LAST_TIMESTAMP, _MIN_OFFSET = _OFF.last_timestamp.key, _OFF.min_offset.key
_LAST_TIMESTAMP_DEFAULT = _OFF.last_timestamp.default


def _state_fields() -> tuple[spec.Field, ...]:
    """A held queue's fields after its queue: unbounded integers and booleans, which the
    fast path checks by their Python type alone."""
    fields = tuple(f for f in spec.ProcessQueue.fields if not f.attr.startswith("queue."))
    for f in fields:
        assert f.type in (spec.Int(), spec.Bool()) and not f.required and not f.nullable, f
    return fields


_PQ_TOPIC, _PQ_BROKER_NAME, _PQ_QUEUE_ID = (
    spec.ProcessQueue.topic.key,
    spec.ProcessQueue.broker_name.key,
    spec.ProcessQueue.queue_id.key,
)
_MIN_PQ_QUEUE_ID = _minimum(spec.ProcessQueue.queue_id)
_PQ_STATE_FIELDS = _state_fields()
#: Per state field of a held queue: key, default, the one Python type of a valid value.
_PQ_STATE = tuple(
    (f.key, f.default, bool if isinstance(f.type, spec.Bool) else int) for f in _PQ_STATE_FIELDS
)
_PQ_STATE_SETTERS = tuple(setter(ProcessQueueState, f.attr) for f in _PQ_STATE_FIELDS)
_PQ_SET_QUEUE = setter(ProcessQueueState, spec.ProcessQueue.queue_id.attr.partition(".")[0])
_UNSEEN = object()


def _cache_key(raw: dict[str, Any]) -> Hashable | None:
    """A key equal only for equal objects with equal value types (``1``, ``1.0`` and ``True``
    compare equal but validate differently), or ``None`` when a value is unhashable."""
    key = (tuple(raw.items()), tuple(map(type, raw.values())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _at(path: str, key: str) -> str:
    """The JSON path of spec key ``key`` (a plain name) under ``path``."""
    return f"{path}.{key}" if path else key


def child(path: str, key: str) -> str:
    """The JSON path of ``key`` under ``path``: ``groups.GroupA`` or ``topics["a.b"]``."""
    part = f".{key}" if _PLAIN_KEY.match(key) else f"[{json.dumps(key, ensure_ascii=False)}]"
    return part[1:] if not path else path + part


def _integral(value: Any) -> Any:
    """An integral float (``5.0``) as the int it is; any other value unchanged.

    >>> _integral(5.0), _integral(-0.0), _integral(1e20), _integral(5.5), _integral(True)
    (5, 0, 100000000000000000000, 5.5, True)
    """
    # is_integer() is False for NaN and the infinities
    return int(value) if type(value) is float and value.is_integer() else value


def _fits(value: Any, t: spec.Type) -> bool:
    """Whether ``value`` is of scalar type ``t`` (an integer never a boolean, within limits;
    an integral float not yet converted does not fit: see :func:`_integral`)."""
    if isinstance(t, spec.Int):
        low, high = t.minimum, t.maximum
        return (
            type(value) is int and (low is None or value >= low) and (high is None or value <= high)
        )
    if isinstance(t, spec.Str):
        return type(value) is str and (not t.min_length or len(value) >= t.min_length)
    if isinstance(t, spec.Bool):
        return type(value) is bool
    if isinstance(t, spec.Number):
        return type(value) in (int, float) and not math.isnan(value)
    raise AssertionError(f"not a scalar type: {t}")


#: For the options of a strategy parameter that may be one of several types: the decoded
#: Python type each is read from, and how a message names it.
_JSON_KIND: dict[type[spec.Type], type] = {spec.MapOf: Mapping, spec.Regex: str}
_WHAT: dict[type[spec.Type], str] = {spec.MapOf: "an object", spec.Regex: "a regular expression"}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        # not JSON, but Python's json and the decoder read them: "expected a number, got NaN"
        return "a number" if math.isfinite(value) else json.dumps(value)
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

    def integer(self, value: Any, path: str, minimum: int | None = None) -> int:
        """An integer (an integral float converted; never a boolean) of at least ``minimum``."""
        number = _integral(value)
        if type(number) is not int:  # bool is an int subclass: refuse it
            self.expected(path, "an integer", value)
        if minimum is not None and number < minimum:
            self.fail(path, f"expected an integer >= {minimum}, got {value}")
        return number

    def required(self, raw: Mapping[str, Any], field: spec.Field, path: str) -> Any:
        if field.key not in raw:
            self.fail(path, f"missing required field {field.key!r}")
        return raw[field.key]

    def value(self, raw: Mapping[str, Any], field: spec.Field, path: str) -> Any:
        """Scalar field ``field`` of ``raw`` (the object at ``path``), checked against its
        type in the spec: its default when absent, or null where the spec allows null."""
        value = raw.get(field.key, _UNSEEN)
        if value is _UNSEEN:
            if field.required:
                self.fail(path, f"missing required field {field.key!r}")
            return field.default
        # the tests of _fits, inlined: this runs for every scalar of the checked paths
        t = field.type
        if isinstance(t, spec.Int):
            low, high = t.minimum, t.maximum
            # _integral() inlined
            number = int(value) if type(value) is float and value.is_integer() else value
            if (
                type(number) is int
                and (low is None or number >= low)
                and (high is None or number <= high)
            ):
                return number
        elif isinstance(t, spec.Str):
            if type(value) is str and (not t.min_length or len(value) >= t.min_length):
                return value
        elif isinstance(t, spec.Bool):
            if type(value) is bool:
                return value
        elif isinstance(t, spec.Number):
            if type(value) in (int, float) and not math.isnan(value):
                return float(value)
        elif isinstance(t, spec.Choice):
            if type(value) is str and value in t.values:
                return value
        else:
            raise AssertionError(f"not a scalar field: {field}")
        if value is None and field.nullable:
            return None
        self.refuse(t, value, _at(path, field.key))

    def refuse(self, t: spec.Type, value: Any, where: str) -> NoReturn:
        """The error for scalar ``value`` that does not fit type ``t``."""
        match t:
            case spec.Int(minimum=low, maximum=high, unit=unit):
                self.integer(value, where, low)
                self.fail(where, f"at most {high} {unit}".rstrip() + f", got {value}")
            case spec.Str():
                self.string(value, where)
                self.fail(where, "must not be empty")
            case spec.Bool():
                self.expected(where, "a boolean", value)
            case spec.Choice(values=values):
                choices = " or ".join(repr(v) for v in values)
                self.fail(where, f"expected {choices}, got {json.dumps(value)[:40]}")
            case _:
                self.expected(where, "a number", value)

    def scalars(
        self, raw: Mapping[str, Any], fields: tuple[spec.Field, ...], path: str
    ) -> dict[str, Any]:
        """Scalar ``fields`` of ``raw`` (checked in order), by model attribute: a record made
        of scalars is read with ``Model(**scalars)``."""
        return {f.attr: self.value(raw, f, path) for f in fields}

    def collection(self, raw: Mapping[str, Any], field: spec.Field, path: str) -> Any:
        """Array or object field ``field`` of ``raw``, checked to be one (its default, an
        empty one, when absent)."""
        value = raw.get(field.key, field.default)
        if isinstance(field.type, spec.ArrayOf):
            return self.array(value, _at(path, field.key))
        return self.obj(value, _at(path, field.key))

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
        f = spec.Snapshot
        fmt = self.required(raw, f.format, "")
        if fmt != spec.FORMAT:
            shown = json.dumps(fmt, ensure_ascii=False)[:60]
            self.fail(f.format.key, f"expected {spec.FORMAT!r}, got {shown}")
        topics_raw = self.obj(self.required(raw, f.topics, ""), f.topics.key)
        topics = {
            self.string(name, f.topics.key): self.topic(name, value, child(f.topics.key, name))
            for name, value in topics_raw.items()
        }
        groups_raw = self.obj(self.required(raw, f.groups, ""), f.groups.key)
        groups = {
            name: self.group(name, value, child(f.groups.key, name))
            for name, value in groups_raw.items()
        }
        brokers = {
            name: self.broker(name, value, child(f.brokers.key, name))
            for name, value in self.collection(raw, f.brokers, "").items()
        }
        errors_raw = self.collection(raw, f.errors, "")
        errors = tuple(
            self.capture_error(e, f"{f.errors.key}[{i}]") for i, e in enumerate(errors_raw)
        )
        return Snapshot(
            topics=topics,
            groups=groups,
            brokers=brokers,
            captured_at=self.value(raw, f.captured_at, ""),
            source=self.source_info(raw.get(f.source.key)),
            errors=errors,
        )

    def source_info(self, value: Any) -> Source | None:
        if value is None:
            return None
        f, path = spec.Source, spec.Snapshot.source.key
        raw = self.obj(value, path)
        namesrv = raw.get(f.namesrv.key, f.namesrv.default)
        if isinstance(namesrv, str):  # "a:9876;b:9876", as NAMESRV_ADDR spells it
            namesrv = [part for part in namesrv.split(";") if part]
        where = _at(path, f.namesrv.key)
        items = self.array(namesrv, where)
        return Source(
            namesrv=tuple(self.string(v, f"{where}[{i}]") for i, v in enumerate(items)),
            rmqlb=self.value(raw, f.rmqlb, path),
            proxies=self.strings(self.collection(raw, f.proxies, path), _at(path, f.proxies.key)),
        )

    def strings(self, items: list[Any], path: str) -> tuple[str, ...]:
        """An array of strings."""
        return tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(items))

    def capture_error(self, value: Any, path: str) -> CaptureError:
        raw = self.obj(value, path)
        return CaptureError(**self.scalars(raw, spec.CaptureError.fields, path))

    def broker(self, name: str, value: Any, path: str) -> BrokerInfo:
        raw = self.obj(value, path)
        f = spec.BrokerInfo
        addrs: dict[int, str] = {}
        for key, addr in self.collection(raw, f.addrs, path).items():
            where = child(_at(path, f.addrs.key), key)
            if not _ID_KEY.search(key):  # int() would take " 1", "+1", "1_0"
                self.fail(where, f"broker id must be an integer >= 0 (digits only), got {key!r}")
            addrs[int(key)] = self.string(addr, where)
        config_raw = raw.get(f.config.key)
        return BrokerInfo(
            broker_name=name,
            cluster=self.value(raw, f.cluster, path),
            addrs=addrs,
            version=self.value(raw, f.version, path),
            config=None
            if config_raw is None
            else self.broker_config(config_raw, _at(path, f.config.key)),
        )

    def broker_config(self, value: Any, path: str) -> BrokerConfig:
        raw = self.obj(value, path)
        values = self.scalars(raw, spec.BrokerConfig.fields, path)
        mode_attr = spec.BrokerConfig.default_message_request_mode.attr
        values[mode_attr] = self.mode(values[mode_attr])
        return BrokerConfig(**values)

    @staticmethod
    def mode(value: str | None) -> RequestMode | None:
        """A checked request mode as the enum member (``None`` stays ``None``)."""
        return None if value is None else RequestMode(value)

    def topic(self, name: str, value: Any, path: str) -> TopicRoute:
        raw = self.obj(value, path)
        datas_key = spec.TopicRoute.queue_datas.key
        shorthand = spec.TopicShorthand.queues
        if shorthand.key in raw:
            if datas_key in raw:  # the spec's exclusive keys of a topic
                self.fail(
                    path,
                    f"give either {shorthand.key!r} (shorthand) or {datas_key!r}, not both",
                )
            count = self.value(raw, shorthand, path)
            perm = spec.QueueData.perm.default
            return TopicRoute(name, (QueueData(spec.SHORTHAND_BROKER, count, count, perm),))
        if datas_key not in raw:
            self.fail(
                path,
                f"missing required field {datas_key!r} (or the shorthand {shorthand.key!r}: N)",
            )
        where = _at(path, datas_key)
        datas = self.array(raw[datas_key], where)
        mappings_field = spec.TopicRoute.queue_mappings
        mappings = self.collection(raw, mappings_field, path)
        where_mappings = _at(path, mappings_field.key)
        return TopicRoute(
            name,
            tuple(self.queue_data(d, f"{where}[{i}]") for i, d in enumerate(datas)),
            {
                broker: self.queue_mapping(m, child(where_mappings, broker))
                for broker, m in mappings.items()
            },
        )

    def queue_data(self, value: Any, path: str) -> QueueData:
        return QueueData(**self.scalars(self.obj(value, path), spec.QueueData.fields, path))

    def queue_mapping(self, value: Any, path: str) -> QueueMapping:
        """One broker's part of a static topic; ``currIdMap`` keyed by decimal ids."""
        raw = self.obj(value, path)
        f = spec.QueueMapping
        ids: dict[int, int] = {}
        for key, physical in self.collection(raw, f.curr_id_map, path).items():
            where = child(_at(path, f.curr_id_map.key), key)
            if not _ID_KEY.search(key):
                self.fail(where, f"logical queue id must be an integer >= 0, got {key!r}")
            ids[int(key)] = self.integer(physical, where, minimum=0)
        return QueueMapping(
            scope=self.value(raw, f.scope, path),
            epoch=self.value(raw, f.epoch, path),
            total_queues=self.value(raw, f.total_queues, path),
            curr_id_map=dict(sorted(ids.items())),
        )

    def strategy(self, value: Any, path: str) -> StrategySpec:
        """A strategy object, checked against the spec, then built by
        :func:`strategy_from_json`."""
        raw = self.strategy_object(value, path, spec.Strategy)
        return strategy_from_json(raw, where=f"{self.source}: {path}")

    def strategy_object(self, value: Any, path: str, rec: type[spec.Strategy]) -> dict[str, Any]:
        """``value`` checked as strategy record ``rec``: every parameter against its type,
        whatever the name (the named strategy then reads its own). Returns it without the
        parameters that are null (null means absent) and without unknown keys."""
        raw = self.obj(value, path)
        out = {rec.name.key: self.strategy_name(raw, rec, path)}
        for field in rec.fields:
            item = raw.get(field.key, _UNSEEN)
            if field is rec.name or item is _UNSEEN or (item is None and field.nullable):
                continue
            out[field.key] = self.typed(item, field.type, _at(path, field.key))
        return out

    def strategy_name(self, raw: Mapping[str, Any], rec: type[spec.Strategy], path: str) -> str:
        """The ``name`` of a strategy object, one of those ``rec`` allows."""
        name = self.required(raw, rec.name, path)
        where = _at(path, rec.name.key)
        if type(name) is not str:
            self.expected(where, "a strategy name", name)
        assert isinstance(rec.name.type, spec.Choice)
        allowed = rec.name.type.values
        if name in allowed:
            return name
        assert isinstance(spec.Strategy.name.type, spec.Choice)
        if rec is spec.InnerStrategy and name in spec.Strategy.name.type.values:
            self.fail(where, f"the inner strategy cannot be {name}")
        self.fail(where, f"unknown strategy {name!r} (known: {', '.join(allowed)})")

    def typed(self, value: Any, t: spec.Type, path: str) -> Any:
        """``value`` checked against type ``t`` of a strategy parameter (a nested strategy
        object comes back as :meth:`strategy_object` returns it)."""
        match t:
            case spec.Int():
                number = _integral(value)
                if not _fits(number, t):
                    self.refuse(t, value, path)
                return number
            case spec.Str() | spec.Bool():
                if not _fits(value, t):
                    self.refuse(t, value, path)
                return value
            case spec.Choice(values=values):
                if value not in values:
                    self.refuse(t, value, path)
                return value
            case spec.Regex(captures=captures):
                return self.regex(value, path, captures)
            case spec.ArrayOf(item=item):
                return [
                    self.typed(v, item, f"{path}[{i}]")
                    for i, v in enumerate(self.array(value, path))
                ]
            case spec.MapOf(value=item, key_pattern=None):
                return {
                    k: self.typed(v, item, child(path, k)) for k, v in self.obj(value, path).items()
                }
            case spec.AnyOf(options=options):
                for option in options:
                    if isinstance(value, _JSON_KIND[type(option)]):
                        return self.typed(value, option, path)
                self.expected(path, " or ".join(_WHAT[type(o)] for o in options), value)
            case spec.Ref():
                rec = spec.record(t)
                if issubclass(rec, spec.Strategy):
                    return self.strategy_object(value, path, rec)
                assert rec is spec.QueueRef, rec
                _, _, qid = self.queue_ref(value, path, "")  # a CONFIG queue without a topic: ""
                return {**value, _Q.queue_id.key: qid}  # the queue id an int
        raise AssertionError(f"not a type of a strategy parameter: {t}")

    def regex(self, value: Any, path: str, captures: str) -> str:
        """A regular expression whose first group captures ``captures``."""
        pattern = self.string(value, path)
        try:
            compiled = re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as exc:
            self.fail(path, f"invalid regular expression {pattern!r}: {exc}")
        if compiled.groups < 1:
            self.fail(path, f"regex {pattern!r} needs a group that captures the {captures}")
        return pattern

    def group(self, name: str, value: Any, path: str) -> Group:
        raw = self.obj(value, path)
        f = spec.Group
        model_raw = raw.get(f.message_model.key, f.message_model.default)
        try:
            model = MessageModel(model_raw)
        except ValueError:
            choices = " or ".join(repr(m.value) for m in MessageModel)
            self.fail(
                _at(path, f.message_model.key),
                f"expected {choices}, got {json.dumps(model_raw)[:40]}",
            )
        strategy_raw = raw.get(f.strategy.key)
        strategy = (
            None if strategy_raw is None else self.strategy(strategy_raw, _at(path, f.strategy.key))
        )
        where = _at(path, f.consumers.key)
        consumers = tuple(
            self.consumer(c, f"{where}[{i}]")
            for i, c in enumerate(self.collection(raw, f.consumers, path))
        )
        offsets_raw = self.collection(raw, f.offsets, path)
        return Group(
            name=name,
            message_model=model,
            consume_type=self.value(raw, f.consume_type, path),
            strategy=strategy,
            consumers=consumers,
            offsets=self.offsets(offsets_raw, _at(path, f.offsets.key)),
            configs=self.group_configs(
                self.collection(raw, f.configs, path), _at(path, f.configs.key)
            ),
            on_brokers={
                broker: self.group_on_broker(item, child(_at(path, f.on_brokers.key), broker))
                for broker, item in self.collection(raw, f.on_brokers, path).items()
            },
        )

    def group_on_broker(self, value: Any, path: str) -> GroupOnBroker:
        """What one broker knows of a group."""
        raw = self.obj(value, path)
        f = spec.GroupOnBroker
        ids_raw = raw.get(f.client_ids.key)
        ids = (
            None
            if ids_raw is None
            else self.strings(
                self.array(ids_raw, _at(path, f.client_ids.key)), _at(path, f.client_ids.key)
            )
        )
        modes_raw = raw.get(f.request_modes.key)
        modes: dict[str, MessageRequestMode] | None = None
        if modes_raw is not None:
            where = _at(path, f.request_modes.key)
            modes = {}
            for topic, item in self.obj(modes_raw, where).items():
                at = child(where, topic)
                values = self.scalars(self.obj(item, at), spec.MessageRequestMode.fields, at)
                mode_attr = spec.MessageRequestMode.mode.attr
                values[mode_attr] = RequestMode(values[mode_attr])
                modes[topic] = MessageRequestMode(**values)
        where = _at(path, f.assignments.key)
        assignments = tuple(
            self.assignment(item, f"{where}[{i}]")
            for i, item in enumerate(self.collection(raw, f.assignments, path))
        )
        dead_raw = raw.get(f.dead_letters.key)
        dead = None
        if dead_raw is not None:
            where = _at(path, f.dead_letters.key)
            dead = DeadLetters(
                **self.scalars(self.obj(dead_raw, where), spec.DeadLetters.fields, where)
            )
        subs_raw = raw.get(f.subscriptions.key)
        subs = None
        if subs_raw is not None:
            where = _at(path, f.subscriptions.key)
            subs = tuple(
                self.subscription_object(item, f"{where}[{i}]")
                for i, item in enumerate(self.array(subs_raw, where))
            )
        return GroupOnBroker(
            client_ids=ids,
            request_modes=modes,
            assignments=assignments,
            consume_tps=self.value(raw, f.consume_tps, path),
            dead_letters=dead,
            subscriptions=subs,
        )

    def assignment(self, value: Any, path: str) -> Assignment:
        """One QUERY_ASSIGNMENT answer; its queues default to its topic."""
        raw = self.obj(value, path)
        f = spec.Assignment
        topic = self.value(raw, f.topic, path)
        return Assignment(
            client_id=self.value(raw, f.client_id, path),
            topic=topic,
            strategy_name=self.value(raw, f.strategy_name, path),
            mode=self.mode(self.value(raw, f.mode, path)),
            queues=self.queue_list(
                raw.get(f.queues.key), _at(path, f.queues.key), topic, _MIN_POP_QUEUE_ID
            ),
        )

    def group_configs(self, configs: Mapping[str, Any], path: str) -> dict[str, GroupConfig]:
        """Each broker's subscription-group config of the group."""
        out: dict[str, GroupConfig] = {}
        for broker, item in configs.items():
            where = child(path, broker)
            raw = self.obj(item, where)
            out[broker] = GroupConfig(**self.scalars(raw, spec.GroupConfig.fields, where))
        return out

    def subscription(self, value: Any, path: str) -> Subscription:
        if isinstance(value, str):  # shorthand: "TopicA" subscribes every tag
            return Subscription(value)
        return self.subscription_object(value, path)

    def subscription_object(self, value: Any, path: str) -> Subscription:
        """A subscription written as an object (the only form a broker's table takes)."""
        raw = self.obj(value, path)
        return Subscription(**self.scalars(raw, spec.Subscription.fields, path))

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
        client_id = get(_CLIENT_ID)
        subs_raw = get(_SUBSCRIPTIONS)
        if type(client_id) is not str or not client_id or type(subs_raw) is not list:
            return None
        subs: list[Subscription] = []
        for item in subs_raw:
            sub = self.cached_subscription(item)
            if sub is None:
                return None
            subs.append(sub)
        if _PROPERTIES in raw or _PROCESS_QUEUES in raw or _STATUS in raw:
            return None
        strategy_raw = get(_STRATEGY)
        strategy: StrategySpec | None = None
        if strategy_raw is not None:
            strategy = self.cached_strategy(strategy_raw)
            if strategy is None:
                return None
        addr = get(_CLIENT_ADDR)
        language = get(_LANGUAGE)
        consume_type = get(_CONSUME_TYPE)
        version = get(_VERSION)
        orderly = get(_CONSUME_ORDERLY)
        start_time = get(_START_TIME)
        rebalance_raw = get(_REBALANCE)
        rebalance = _REBALANCES.get(rebalance_raw) if type(rebalance_raw) is str else None
        proxy = get(_PROXY)
        if not (
            (rebalance_raw is None or rebalance is not None)
            and (proxy is None or type(proxy) is str)
            and (addr is None or type(addr) is str)
            and (language is None or type(language) is str)
            and (consume_type is None or type(consume_type) is str)
            and (version is None or type(version) is int)
            and (orderly is None or type(orderly) is bool)
            and (start_time is None or type(start_time) is int)
        ):
            return None
        default_topic = subs[0].topic if len(subs) == 1 else None
        assigned = get(_ASSIGNED)
        pop_assigned = get(_POP_ASSIGNED)
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
            else self.queue_list(assigned, _at(path, _ASSIGNED), default_topic),
            None
            if pop_assigned is None
            else self.queue_list(
                pop_assigned, _at(path, _POP_ASSIGNED), default_topic, _MIN_POP_QUEUE_ID
            ),
            start_time,
            {},
            None,
            None,
            rebalance,
            proxy,
        )

    def checked_consumer(self, value: Any, path: str) -> Consumer:
        raw = self.obj(value, path)
        f = _C
        client_id = self.value(raw, f.client_id, path)
        where = _at(path, f.subscriptions.key)
        subs_raw = self.array(self.required(raw, f.subscriptions, path), where)
        subs = tuple(self.subscription(s, f"{where}[{i}]") for i, s in enumerate(subs_raw))
        default_topic = subs[0].topic if len(subs) == 1 else None
        props: dict[str, str] = {}
        for key, prop in self.collection(raw, f.properties, path).items():
            if isinstance(prop, (Mapping, list)):
                self.expected(child(_at(path, f.properties.key), key), "a string", prop)
            props[key] = prop if isinstance(prop, str) else json.dumps(prop)
        strategy_raw = raw.get(f.strategy.key)
        strategy: StrategySpec | None
        if strategy_raw is not None:
            strategy = self.cached_strategy(strategy_raw) or self.strategy(
                strategy_raw, _at(path, f.strategy.key)
            )
        elif props.get(spec.STRATEGY_PROPERTY):
            strategy = strategy_from_class_name(props[spec.STRATEGY_PROPERTY])
        else:
            strategy = None
        return Consumer(
            client_id=client_id,
            subscriptions=subs,
            client_addr=self.value(raw, f.client_addr, path),
            language=self.value(raw, f.language, path),
            version=self.value(raw, f.version, path),
            strategy=strategy,
            consume_orderly=self.value(raw, f.consume_orderly, path),
            consume_type=self.value(raw, f.consume_type, path),
            assigned=self.queue_list(raw.get(_ASSIGNED), _at(path, _ASSIGNED), default_topic),
            pop_assigned=self.queue_list(
                raw.get(_POP_ASSIGNED),
                _at(path, _POP_ASSIGNED),
                default_topic,
                _MIN_POP_QUEUE_ID,
            ),
            start_time=self.value(raw, f.start_time, path),
            properties=props,
            process_queues=self.process_queues(
                raw.get(_PROCESS_QUEUES), _at(path, _PROCESS_QUEUES), default_topic
            ),
            status=self.status_table(self.collection(raw, f.status, path), _at(path, _STATUS)),
            rebalance=self.rebalance(self.value(raw, f.rebalance, path), props),
            proxy=self.value(raw, f.proxy, path),
        )

    @staticmethod
    def rebalance(value: str | None, props: Mapping[str, str]) -> Rebalance | None:
        """Who balances a consumer: as given, else as its properties say."""
        return _REBALANCES[value] if value is not None else rebalance_from_properties(props)

    def process_queues(
        self, value: Any, path: str, default_topic: str | None
    ) -> tuple[ProcessQueueState, ...] | None:
        """A client's held-queue states; ``None`` when absent (not reported)."""
        if value is None:
            return None
        out: list[ProcessQueueState] = []
        for i, item in enumerate(self.array(value, path)):
            state = self.plain_process_queue(item, default_topic) if type(item) is dict else None
            if state is None:
                state = self.checked_process_queue(item, f"{path}[{i}]", default_topic)
            out.append(state)
        return tuple(out)

    def plain_process_queue(
        self, raw: dict[str, Any], default_topic: str | None
    ) -> ProcessQueueState | None:
        """The common, valid held-queue state (one per held queue of a live capture) without
        a JSON path per field; ``None`` sends anything unusual to
        :meth:`checked_process_queue`, which names the problem."""
        get = raw.get
        topic = get(_PQ_TOPIC, default_topic)
        broker = get(_PQ_BROKER_NAME)
        qid = get(_PQ_QUEUE_ID)
        if type(topic) is not str or type(broker) is not str or type(qid) is not int:
            return None
        if qid < _MIN_PQ_QUEUE_ID:
            return None
        values = [get(key, default) for key, default, _ in _PQ_STATE]
        for value, (_, _, kind) in zip(values, _PQ_STATE, strict=True):
            if type(value) is not kind:
                return None
        table = self.by_id(topic, broker)
        mq = table.get(qid)
        if mq is None:
            mq = table[qid] = new_queue(topic, broker, qid)
        state: ProcessQueueState = object.__new__(ProcessQueueState)
        _PQ_SET_QUEUE(state, mq)
        for set_value, value in zip(_PQ_STATE_SETTERS, values, strict=True):
            set_value(state, value)
        return state

    def checked_process_queue(
        self, item: Any, path: str, default_topic: str | None
    ) -> ProcessQueueState:
        """One held queue's state, checked field by field."""
        raw = self.obj(item, path)
        topic, broker, qid = self.queue_ref(raw, path, default_topic)
        state = self.scalars(raw, _PQ_STATE_FIELDS, path)
        return ProcessQueueState(queue=new_queue(topic, broker, qid), **state)

    def status_table(self, table: Mapping[str, Any], path: str) -> dict[str, ConsumeStatus]:
        """A client's consume statistics by topic."""
        out: dict[str, ConsumeStatus] = {}
        for topic, item in table.items():
            where = child(path, topic)
            raw = self.obj(item, where)
            out[topic] = ConsumeStatus(**self.scalars(raw, spec.ConsumeStatus.fields, where))
        return out

    def queue_list(
        self, value: Any, path: str, default_topic: str | None, min_id: int = _MIN_QUEUE_ID
    ) -> tuple[MessageQueue, ...] | None:
        """A list of queue references; the hot path of big snapshots, so kept lean.

        A topic and broker equal to the previous ones (already checked: only a string
        equals a string) skip the checks and the table lookup. Compared by value: the JSON
        decoder makes a new string object for every string value.
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
            if topic != last_topic or broker != last_broker:
                if type(topic) is not str or type(broker) is not str:
                    topic, broker, qid = self.queue_ref(item, f"{path}[{i}]", default_topic, min_id)
                table = self.by_id(topic, broker)
                last_topic, last_broker = topic, broker
            mq = table.get(qid)
            if mq is None:  # new_queue() inlined: the first sight of 100,000 queues
                mq = table[qid] = new(MessageQueue)
                set_topic(mq, last_topic)  # one string object per run of one broker
                set_broker(mq, last_broker)
                set_id(mq, qid)
            append(mq)
        return tuple(out)

    def queue_ref(
        self, value: Any, path: str, default_topic: str | None, min_id: int = _MIN_QUEUE_ID
    ) -> tuple[str, str, int]:
        """A queue reference; ``popAssigned`` allows queue id -1 (5.x POP: every queue of
        that broker)."""
        raw = self.obj(value, path)
        if _Q.topic.key in raw or default_topic is None:
            topic = self.string(self.required(raw, _Q.topic, path), _at(path, _Q.topic.key))
        else:
            topic = default_topic
        broker = self.value(raw, _Q.broker_name, path)
        where = _at(path, _Q.queue_id.key)
        qid = self.integer(self.required(raw, _Q.queue_id, path), where, minimum=min_id)
        return topic, broker, qid

    def offsets(self, items: list[Any], path: str) -> tuple[QueueOffset, ...]:
        """Offsets: one per queue, so the other hot path of big snapshots (same shortcuts
        as :meth:`queue_list`)."""
        out: list[QueueOffset] = []
        append = out.append
        ref = _OFFSET_REF
        last_key, last_default, min_key = _LAST_TIMESTAMP, _LAST_TIMESTAMP_DEFAULT, _MIN_OFFSET
        min_id, min_consumer_offset, min_low = _MIN_QUEUE_ID, _MIN_CONSUMER_OFFSET, _MIN_MIN_OFFSET
        # QueueOffset built through its slot setters, inline: one Python call less each
        new = object.__new__
        set_queue, set_broker, set_consumer, set_last, set_min = OFFSET_SETTERS
        last_topic: Any = _UNSEEN  # never a decoded value: the first item is always checked
        last_broker: Any = _UNSEEN
        table: dict[int, MessageQueue] = {}
        for i, item in enumerate(items):
            try:
                topic, broker, qid, broker_offset, consumer_offset = ref(item)
                last = item.get(last_key, last_default)
                low = item.get(min_key)
            except (KeyError, TypeError, AttributeError):
                ok = False
            else:
                ok = (
                    type(qid) is int
                    and qid >= min_id
                    and type(broker_offset) is int
                    and type(consumer_offset) is int
                    and consumer_offset >= min_consumer_offset
                    and type(last) is int
                    and (low is None or (type(low) is int and low >= min_low))
                )
            if not ok:
                (topic, broker, qid), broker_offset, consumer_offset, last, low = self.offset(
                    item, f"{path}[{i}]"
                )
            if topic != last_topic or broker != last_broker:
                if type(topic) is not str or type(broker) is not str:
                    (topic, broker, qid), broker_offset, consumer_offset, last, low = self.offset(
                        item, f"{path}[{i}]"
                    )
                table = self.by_id(topic, broker)
                last_topic, last_broker = topic, broker
            mq = table.get(qid)
            if mq is None:
                mq = table[qid] = new_queue(last_topic, last_broker, qid)
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
        return (
            key,
            self.value(raw, _OFF.broker_offset, path),
            self.value(raw, _OFF.consumer_offset, path),
            self.value(raw, _OFF.last_timestamp, path),
            self.value(raw, _OFF.min_offset, path),
        )


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
