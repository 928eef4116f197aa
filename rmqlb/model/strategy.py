"""Allocation strategy specifications: pure data, one class per Java strategy.

A spec says *which* strategy and with *which* parameters; the algorithms live in
:mod:`rmqlb.allocate`. The JSON form (``{"name": "AVG"}`` ...) is the contract of design §3
and of the snapshot format; :func:`strategy_from_json` / :func:`strategy_to_json` are its only
readers and writers, and :func:`parse_strategy_spec` reads the CLI form
(``CONSISTENT_HASH:vnodes=20``).

A client reports only its strategy's class, never its parameters (virtual nodes, rooms,
CONFIG lists). Every spec with parameters therefore says where they come from
(:class:`Params`): stated by someone (``GIVEN``), not carried so the Java default or nothing
stands in (``UNKNOWN``), or found by rmqlb from what the clients hold (``INFERRED``). The
provenance never takes part in equality: ``ConsistentHash(10)`` equals a reported
``CONSISTENT_HASH`` with unknown virtual nodes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias

from rmqlb.errors import InputError
from rmqlb.model.queue import MessageQueue
from rmqlb.ranges import VIRTUAL_NODES


class Params(StrEnum):
    """Where a strategy's parameters come from."""

    GIVEN = "given"  # stated: --strategy with parameters, a snapshot strategy object with them
    UNKNOWN = "unknown"  # not carried (a client reports only its class): a default stands in
    INFERRED = "inferred"  # found from what the clients hold (``rmqlb dump`` records it)


DEFAULT_VIRTUAL_NODES = 10
"""``AllocateMessageQueueConsistentHash()``'s virtual node count."""


class HashCharset(StrEnum):
    """The bytes a hash ring hashes: ``String.getBytes()`` in the JVM's default charset.

    UTF-8 from Java 18 on (and wherever ``file.encoding`` says so); before, the locale's: a
    POSIX locale (a container where none is set) gives US-ASCII (``ANSI_X3.4-1968``), a
    Latin-1 one ISO-8859-1, ``zh_CN.GBK`` GBK. Each writes ``?`` for a character it lacks.
    """

    UTF_8 = "UTF-8"
    US_ASCII = "US-ASCII"
    ISO_8859_1 = "ISO-8859-1"
    GBK = "GBK"

    @property
    def codec(self) -> str:
        """Python's codec of the charset."""
        return _CODECS[self]

    @property
    def locale(self) -> str:
        """The locale that makes it a Java 17 JVM's default charset."""
        return _LOCALES[self]


_CODECS = {
    HashCharset.UTF_8: "utf-8",
    HashCharset.US_ASCII: "ascii",
    HashCharset.ISO_8859_1: "latin-1",
    HashCharset.GBK: "gbk",
}
_LOCALES = {
    HashCharset.UTF_8: "a UTF-8 locale",
    HashCharset.US_ASCII: "a POSIX locale",
    HashCharset.ISO_8859_1: "a Latin-1 locale",
    HashCharset.GBK: "a GBK locale",
}


@dataclass(frozen=True, slots=True)
class Avg:
    """``AllocateMessageQueueAveragely`` (``AVG``): contiguous blocks."""

    name = "AVG"


@dataclass(frozen=True, slots=True)
class AvgByCircle:
    """``AllocateMessageQueueAveragelyByCircle`` (``AVG_BY_CIRCLE``): round robin."""

    name = "AVG_BY_CIRCLE"


@dataclass(frozen=True, slots=True)
class ConsistentHash:
    """``AllocateMessageQueueConsistentHash`` (``CONSISTENT_HASH``); ``charset``: the
    clients' JVM charset the ring's keys are hashed in (only non-ASCII keys tell);
    ``charset_stated``: the user named it (``:charset=``), so no other is inferred."""

    virtual_node_cnt: int = DEFAULT_VIRTUAL_NODES
    params: Params = field(default=Params.GIVEN, compare=False, repr=False)
    charset: HashCharset = HashCharset.UTF_8
    charset_stated: bool = field(default=False, compare=False, repr=False)
    name = "CONSISTENT_HASH"


@dataclass(frozen=True, slots=True)
class MachineRoom:
    """``AllocateMessageQueueByMachineRoom`` (``MACHINE_ROOM``): brokers named ``room@name``."""

    consumeridcs: frozenset[str] = frozenset()
    params: Params = field(default=Params.GIVEN, compare=False, repr=False)
    name = "MACHINE_ROOM"


@dataclass(frozen=True, slots=True)
class RoomTable:
    """Rooms given by an explicit mapping (broker name or client id -> room)."""

    rooms: Mapping[str, str] = field(default_factory=dict)

    def resolve(self, key: str) -> str | None:
        """The room of ``key``, or ``None`` when it is not in the table."""
        return self.rooms.get(key)


@dataclass(frozen=True, slots=True)
class RoomPattern:
    """Rooms taken from the first group of a regular expression searched in the name."""

    pattern: str

    def resolve(self, key: str) -> str | None:
        """The first group of the first match, or ``None`` when nothing matches."""
        match = re.search(self.pattern, key)
        if match is None or not match.groups():
            return None
        return match.group(1)


RoomRule: TypeAlias = RoomTable | RoomPattern


@dataclass(frozen=True, slots=True)
class MachineRoomNearby:
    """``AllocateMachineRoomNearby`` (``MACHINE_ROOM_NEARBY``) around an inner strategy.

    ``broker_rooms`` resolves a queue's broker name to its room (Java's
    ``brokerDeployIn``), ``consumer_rooms`` a client id to its room (``consumerDeployIn``).
    """

    inner: StrategySpec
    broker_rooms: RoomRule = field(default_factory=RoomTable)
    consumer_rooms: RoomRule = field(default_factory=RoomTable)
    params: Params = field(default=Params.GIVEN, compare=False, repr=False)
    name = "MACHINE_ROOM_NEARBY"


@dataclass(frozen=True, slots=True)
class Config:
    """``AllocateMessageQueueByConfig`` (``CONFIG``): every client returns its own list."""

    config: Mapping[str, tuple[MessageQueue, ...]] = field(default_factory=dict)
    params: Params = field(default=Params.GIVEN, compare=False, repr=False)
    name = "CONFIG"


@dataclass(frozen=True, slots=True)
class Unknown:
    """A strategy rmqlb cannot reproduce (a custom class a client reports)."""

    class_name: str
    name = "UNKNOWN"


StrategySpec: TypeAlias = (
    Avg | AvgByCircle | ConsistentHash | MachineRoom | MachineRoomNearby | Config | Unknown
)

STRATEGY_NAMES: tuple[str, ...] = (
    "AVG",
    "AVG_BY_CIRCLE",
    "CONSISTENT_HASH",
    "MACHINE_ROOM",
    "MACHINE_ROOM_NEARBY",
    "CONFIG",
)

# Java class simple names, as a client reports them in ``allocateMessageQueueStrategy``.
JAVA_CLASS_NAMES: dict[str, str] = {
    "AllocateMessageQueueAveragely": "AVG",
    "AllocateMessageQueueAveragelyByCircle": "AVG_BY_CIRCLE",
    "AllocateMessageQueueConsistentHash": "CONSISTENT_HASH",
    "AllocateMessageQueueByMachineRoom": "MACHINE_ROOM",
    "AllocateMachineRoomNearby": "MACHINE_ROOM_NEARBY",
    "AllocateMessageQueueByConfig": "CONFIG",
}


ParamSpec: TypeAlias = ConsistentHash | MachineRoom | MachineRoomNearby | Config
"""The strategies with parameters the wire does not carry."""


def params_of(spec: StrategySpec) -> Params:
    """Where ``spec``'s parameters come from (``GIVEN`` for strategies without any)."""
    if isinstance(spec, ConsistentHash | MachineRoom | MachineRoomNearby | Config):
        return spec.params
    return Params.GIVEN


def with_params(spec: StrategySpec, params: Params) -> StrategySpec:
    """``spec`` with its parameters marked as coming from ``params`` (unchanged without any).

    >>> with_params(ConsistentHash(5), Params.INFERRED).params
    <Params.INFERRED: 'inferred'>
    """
    if isinstance(spec, ConsistentHash | MachineRoom | MachineRoomNearby | Config):
        return dataclasses.replace(spec, params=params)
    return spec


def describe(spec: StrategySpec) -> str:
    """A short label: ``AVG``, ``CONSISTENT_HASH(vnodes=20)``, ``MACHINE_ROOM_NEARBY(AVG)``.

    Parameters nobody knows are left out: a client reporting only the class of
    CONSISTENT_HASH shows as ``CONSISTENT_HASH``.

    >>> describe(ConsistentHash(20)), describe(ConsistentHash(params=Params.UNKNOWN))
    ('CONSISTENT_HASH(vnodes=20)', 'CONSISTENT_HASH')
    >>> describe(ConsistentHash(5, charset=HashCharset.US_ASCII))
    'CONSISTENT_HASH(vnodes=5, US-ASCII)'
    """
    if params_of(spec) is Params.UNKNOWN:
        return spec.name
    match spec:
        case ConsistentHash(virtual_node_cnt=n, charset=HashCharset.UTF_8):
            return f"CONSISTENT_HASH(vnodes={n})"
        case ConsistentHash(virtual_node_cnt=n, charset=charset):
            return f"CONSISTENT_HASH(vnodes={n}, {charset})"
        case MachineRoom(consumeridcs=idcs):
            return f"MACHINE_ROOM({','.join(sorted(idcs))})"
        case MachineRoomNearby(inner=inner):
            return f"MACHINE_ROOM_NEARBY({describe(inner)})"
        case Unknown(class_name=cls):
            return cls
        case _:
            return spec.name


def same_algorithm(a: StrategySpec, b: StrategySpec) -> bool:
    """Whether two specs may allocate identically: equal, or the same strategy where one's
    parameters are unknown (a client's report cannot contradict them). CONFIG lists are per
    client, so they are ignored."""
    if a is b:  # consumers share one spec object per distinct strategy (the loader's cache)
        return True
    if isinstance(a, Config) and isinstance(b, Config):
        return True
    if a.name == b.name and Params.UNKNOWN in (params_of(a), params_of(b)):
        return True
    return a == b


def strategy_from_class_name(value: str) -> StrategySpec:
    """Read a client's ``allocateMessageQueueStrategy`` property.

    Java prints the strategy object, e.g.
    ``org.apache.rocketmq...AllocateMessageQueueAveragely@6d06d69c``; only the class matters,
    so the parameters of the strategies that have some are :attr:`Params.UNKNOWN`.

    >>> strategy_from_class_name("x.y.AllocateMessageQueueAveragelyByCircle@1f")
    AvgByCircle()
    >>> strategy_from_class_name("x.y.AllocateMessageQueueConsistentHash@2a").params
    <Params.UNKNOWN: 'unknown'>
    """
    simple = value.split("@", 1)[0].rsplit(".", 1)[-1].strip()
    name = JAVA_CLASS_NAMES.get(simple)
    unknown = Params.UNKNOWN
    if name == "AVG":
        return Avg()
    if name == "AVG_BY_CIRCLE":
        return AvgByCircle()
    if name == "CONSISTENT_HASH":
        return ConsistentHash(params=unknown)
    if name == "MACHINE_ROOM":
        return MachineRoom(params=unknown)
    if name == "MACHINE_ROOM_NEARBY":
        return MachineRoomNearby(Avg(), params=unknown)
    if name == "CONFIG":
        return Config(params=unknown)
    return Unknown(simple or value)


def _short(text: str) -> str:
    """``text`` as a message shows it: its first 80 characters."""
    return text if len(text) <= 80 else f"{text[:80]}…"


def _integer(value: Any) -> int | None:
    """``value`` as an integer of the JSON form, or ``None``: an int (never a boolean) or an
    integral float (``5.0``), which JSON Schema and fastjson count as an integer too.

    >>> _integer(5), _integer(5.0), _integer(5.5), _integer(True), _integer(float("nan"))
    (5, 5, None, None, None)
    """
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():  # False for NaN and the infinities
        return int(value)
    return None


def _queue_from_json(raw: Any, where: str, topic: str) -> MessageQueue:
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected an object with brokerName and queueId")
    broker = raw.get("brokerName")
    qid = _integer(raw.get("queueId"))
    if not isinstance(broker, str) or qid is None:
        raise InputError(f"{where}: expected brokerName (string) and queueId (integer)")
    queue_topic = raw.get("topic", topic)
    if not isinstance(queue_topic, str):
        raise InputError(f"{where}.topic: expected a string")
    return MessageQueue(queue_topic, broker, qid)


def _rooms_from_json(raw: Any, where: str) -> RoomRule:
    if isinstance(raw, str):
        _check_pattern(raw, where)
        return RoomPattern(raw)
    if raw is None:
        return RoomTable({})
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise InputError(f"{where}: expected an object mapping names to rooms, or a regex")
    return RoomTable(dict(raw))


def _check_pattern(pattern: str, where: str) -> None:
    try:
        compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:  # a{99999999999}: OverflowError
        raise InputError(f"{where}: invalid regular expression {pattern!r}: {exc}") from exc
    if compiled.groups < 1:
        raise InputError(f"{where}: regex {pattern!r} needs a group that captures the room")


def _charset(value: Any, where: str) -> HashCharset:
    """A hash ring's charset by its Java name (any case).

    >>> _charset("us-ascii", "x")
    <HashCharset.US_ASCII: 'US-ASCII'>
    """
    if isinstance(value, str):
        for charset in HashCharset:
            if value.strip().upper() == charset.value:
                return charset
    known = ", ".join(c.value for c in HashCharset)
    shown = _short(value) if isinstance(value, str) else type(value).__name__
    raise InputError(f"{where}: expected {known}, not {shown!r}")


def _provenance(raw: Mapping[str, Any], keys: tuple[str, ...], where: str) -> Params:
    """``GIVEN`` when every parameter key is there, ``INFERRED`` when also marked
    ``"inferred": true``, ``UNKNOWN`` when one is missing (a mark then has nothing to mark)."""
    inferred = raw.get("inferred")
    if inferred is None:
        inferred = False
    if not isinstance(inferred, bool):
        raise InputError(f"{where}.inferred: expected true or false")
    if not all(key in raw for key in keys):
        return Params.UNKNOWN
    return Params.INFERRED if inferred else Params.GIVEN


def strategy_from_json(raw: Any, where: str = "strategy", topic: str = "") -> StrategySpec:
    """Read the JSON form of design §3 (``{"name": "CONSISTENT_HASH", "virtualNodeCnt": 10}``).

    ``where`` names the JSON path in error messages; ``topic`` is the topic of CONFIG queues
    that do not name one. A parameter left out is :attr:`Params.UNKNOWN` (the default stands
    in); ``"inferred": true`` marks parameters rmqlb inferred (:attr:`Params.INFERRED`).
    Only the named strategy's parameters are read: the snapshot loader checks every one
    against the format's spec first (this module cannot import it) and leaves out nulls.
    """
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected an object with a 'name'")
    name = raw.get("name")
    if name == "AVG":
        return Avg()
    if name == "AVG_BY_CIRCLE":
        return AvgByCircle()
    if name == "CONSISTENT_HASH":
        vnodes = _integer(raw.get("virtualNodeCnt", DEFAULT_VIRTUAL_NODES))
        if vnodes is None:
            raise InputError(f"{where}.virtualNodeCnt: expected an integer")
        VIRTUAL_NODES.check(vnodes, f"{where}.virtualNodeCnt")
        charset = _charset(raw.get("charset", HashCharset.UTF_8), f"{where}.charset")
        params = _provenance(raw, ("virtualNodeCnt",), where)
        return ConsistentHash(vnodes, params, charset, "charset" in raw)
    if name == "MACHINE_ROOM":
        idcs = raw.get("consumeridcs", [])
        if not isinstance(idcs, list) or not all(isinstance(i, str) for i in idcs):
            raise InputError(f"{where}.consumeridcs: expected a list of room names")
        return MachineRoom(frozenset(idcs), _provenance(raw, ("consumeridcs",), where))
    if name == "MACHINE_ROOM_NEARBY":
        inner = strategy_from_json(raw.get("inner", {"name": "AVG"}), f"{where}.inner", topic)
        brokers = _rooms_from_json(raw.get("brokerRooms"), f"{where}.brokerRooms")
        consumers = _rooms_from_json(raw.get("consumerRooms"), f"{where}.consumerRooms")
        params = _provenance(raw, ("brokerRooms", "consumerRooms"), where)
        return MachineRoomNearby(inner, brokers, consumers, params)
    if name == "CONFIG":
        config = raw.get("config", {})
        if not isinstance(config, Mapping):
            raise InputError(f"{where}.config: expected an object mapping client ids to queues")
        lists: dict[str, tuple[MessageQueue, ...]] = {}
        for cid, queues in config.items():
            if not isinstance(queues, list):
                raise InputError(f"{where}.config.{cid}: expected a list of queues")
            lists[cid] = tuple(
                _queue_from_json(q, f"{where}.config.{cid}[{i}]", topic)
                for i, q in enumerate(queues)
            )
        return Config(lists, _provenance(raw, ("config",), where))
    if name == "UNKNOWN":
        cls = raw.get("className", "UNKNOWN")
        return Unknown(str(cls))
    known = ", ".join(STRATEGY_NAMES)
    raise InputError(f"{where}.name: unknown strategy {name!r} (known: {known})")


def _rooms_to_json(rule: RoomRule) -> Any:
    if isinstance(rule, RoomPattern):
        return rule.pattern
    return dict(rule.rooms)


def queue_to_json(mq: MessageQueue) -> dict[str, Any]:
    """A queue of a CONFIG list: ``{"topic", "brokerName", "queueId"}``."""
    return {"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id}


def strategy_to_json(spec: StrategySpec) -> dict[str, Any]:
    """The JSON form read by :func:`strategy_from_json`.

    Unknown parameters are left out; inferred ones are written with ``"inferred": true``.

    >>> strategy_to_json(ConsistentHash(5, Params.INFERRED))
    {'name': 'CONSISTENT_HASH', 'virtualNodeCnt': 5, 'inferred': True}
    >>> strategy_to_json(ConsistentHash(params=Params.UNKNOWN))
    {'name': 'CONSISTENT_HASH'}
    >>> strategy_to_json(ConsistentHash(5, charset=HashCharset.US_ASCII))
    {'name': 'CONSISTENT_HASH', 'virtualNodeCnt': 5, 'charset': 'US-ASCII'}
    >>> strategy_to_json(ConsistentHash(params=Params.UNKNOWN, charset=HashCharset.US_ASCII))
    {'name': 'CONSISTENT_HASH', 'charset': 'US-ASCII'}
    >>> strategy_to_json(ConsistentHash(params=Params.UNKNOWN, charset_stated=True))
    {'name': 'CONSISTENT_HASH', 'charset': 'UTF-8'}
    """
    params = params_of(spec)
    if params is Params.UNKNOWN:
        if isinstance(spec, ConsistentHash) and (
            spec.charset_stated or spec.charset is not HashCharset.UTF_8
        ):
            return {"name": spec.name, "charset": spec.charset.value}  # stated without a count
        return {"name": spec.name}
    out: dict[str, Any]
    match spec:
        case ConsistentHash(virtual_node_cnt=n, charset=charset):
            out = {"name": spec.name, "virtualNodeCnt": n}
            if charset is not HashCharset.UTF_8:
                out["charset"] = charset.value
        case MachineRoom(consumeridcs=idcs):
            out = {"name": spec.name, "consumeridcs": sorted(idcs)}
        case MachineRoomNearby(inner=inner, broker_rooms=b, consumer_rooms=c):
            out = {
                "name": spec.name,
                "inner": strategy_to_json(inner),
                "brokerRooms": _rooms_to_json(b),
                "consumerRooms": _rooms_to_json(c),
            }
        case Config(config=config):
            out = {
                "name": spec.name,
                "config": {
                    cid: [queue_to_json(q) for q in queues] for cid, queues in config.items()
                },
            }
        case Unknown(class_name=cls):
            out = {"name": spec.name, "className": cls}
        case _:
            out = {"name": spec.name}
    if params is Params.INFERRED:
        out["inferred"] = True
    return out


_PARAM_ALIASES = {
    "vnodes": "virtualNodeCnt",
    "virtualnodecnt": "virtualNodeCnt",
    "idcs": "consumeridcs",
    "consumeridcs": "consumeridcs",
    "inner": "inner",
    "charset": "charset",
}


def parse_strategy_spec(
    text: str,
    broker_rooms: RoomRule | None = None,
    consumer_rooms: RoomRule | None = None,
    config: Mapping[str, tuple[MessageQueue, ...]] | None = None,
    *,
    absent: Params = Params.GIVEN,
) -> StrategySpec:
    """Read the CLI form: ``NAME[:key=value[:key=value...]]``.

    Keys: ``vnodes`` and ``charset`` (CONSISTENT_HASH: ``UTF-8``, the default,
    ``US-ASCII``, ``ISO-8859-1`` or ``GBK``), ``idcs`` (MACHINE_ROOM, comma list), ``inner``
    (MACHINE_ROOM_NEARBY; its other parameters go to the inner strategy, so
    ``MACHINE_ROOM_NEARBY:inner=CONSISTENT_HASH:vnodes=20`` works). Rooms and CONFIG lists
    come from their own flags and are passed in. ``absent`` is what a CONSISTENT_HASH without
    ``vnodes`` means: the Java default constructor (``GIVEN``, for simulate and check), or a
    count still to be found (``UNKNOWN``, for explain, which may infer it).

    >>> parse_strategy_spec("CONSISTENT_HASH:vnodes=20")
    ConsistentHash(virtual_node_cnt=20, charset=<HashCharset.UTF_8: 'UTF-8'>)
    >>> parse_strategy_spec("CONSISTENT_HASH:vnodes=20:charset=US-ASCII").charset
    <HashCharset.US_ASCII: 'US-ASCII'>
    >>> parse_strategy_spec("machine_room:idcs=a,b").consumeridcs == frozenset({"a", "b"})
    True
    """
    name, _, rest = text.strip().partition(":")
    name = name.strip().upper().replace("-", "_")
    params: dict[str, str] = {}
    if rest:
        for item in rest.split(":"):
            key, eq, value = item.partition("=")
            canonical = _PARAM_ALIASES.get(key.strip().lower())
            if not eq or canonical is None:
                raise InputError(
                    f"strategy {text!r}: bad parameter {item!r} "
                    "(expected vnodes=N, charset=NAME, idcs=a,b or inner=NAME)"
                )
            params[canonical] = value.strip()
    allowed = {
        "AVG": set(),
        "AVG_BY_CIRCLE": set(),
        "CONSISTENT_HASH": {"virtualNodeCnt", "charset"},
        "MACHINE_ROOM": {"consumeridcs"},
        "MACHINE_ROOM_NEARBY": {"inner", "virtualNodeCnt", "charset", "consumeridcs"},
        "CONFIG": set(),
    }
    if name not in allowed:
        raise InputError(
            f"strategy {text!r}: unknown strategy {name!r} (known: {', '.join(STRATEGY_NAMES)})"
        )
    extra = set(params) - allowed[name]
    if extra:
        raise InputError(f"strategy {text!r}: {name} takes no parameter {sorted(extra)[0]!r}")
    if name == "AVG":
        return Avg()
    if name == "AVG_BY_CIRCLE":
        return AvgByCircle()
    if name == "CONSISTENT_HASH":
        raw = params.get("virtualNodeCnt", str(DEFAULT_VIRTUAL_NODES))
        try:
            vnodes = int(raw)
        except ValueError:
            shown = raw if len(raw) <= 30 else f"{raw[:30]}…"
            raise InputError(
                f"strategy {_short(text)!r}: vnodes must be an integer, not {shown!r}"
            ) from None
        VIRTUAL_NODES.check(vnodes, f"strategy {_short(text)!r}: vnodes")
        charset = _charset(params.get("charset", "UTF-8"), f"strategy {_short(text)!r}: charset")
        given = Params.GIVEN if "virtualNodeCnt" in params else absent
        return ConsistentHash(vnodes, given, charset, "charset" in params)
    if name == "MACHINE_ROOM":
        idcs = [i.strip() for i in params.get("consumeridcs", "").split(",") if i.strip()]
        if not idcs:
            raise InputError(f"strategy {text!r}: MACHINE_ROOM needs idcs=room1,room2")
        return MachineRoom(frozenset(idcs))
    if name == "MACHINE_ROOM_NEARBY":
        inner_text = params.get("inner", "AVG")
        if "virtualNodeCnt" in params:
            inner_text += f":vnodes={params['virtualNodeCnt']}"
        if "charset" in params:
            inner_text += f":charset={params['charset']}"
        if "consumeridcs" in params:
            inner_text += f":idcs={params['consumeridcs']}"
        try:
            inner = parse_strategy_spec(inner_text, config=config)
        except InputError as exc:
            raise InputError(f"strategy {text!r}: inner {exc}") from exc
        if isinstance(inner, MachineRoomNearby):
            raise InputError(f"strategy {text!r}: inner strategy cannot be MACHINE_ROOM_NEARBY")
        if broker_rooms is None or consumer_rooms is None:
            raise InputError(
                f"strategy {text!r}: MACHINE_ROOM_NEARBY needs rooms for brokers and consumers "
                "(--broker-room REGEX and --consumer-room REGEX, or --rooms FILE)"
            )
        return MachineRoomNearby(inner, broker_rooms, consumer_rooms)
    if config is None:
        raise InputError(f"strategy {text!r}: CONFIG needs per-client queue lists (--config FILE)")
    return Config(dict(config))
