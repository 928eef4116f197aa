"""The ``rmqlb.snapshot/1`` format, defined once: every object, key, type, limit and default.

Each JSON object of the format is a :class:`Record` below; each of its keys a :class:`Field`
giving the JSON key, the attribute of the :mod:`rmqlb.model.snapshot` dataclass it fills (the
Python name of the field; ``via`` reaches into a nested object, as ``queue.topic``), its JSON
type with limits, whether it is required, its default and a description. Fields are listed
in the order they are written. Everything else reads the format from here:

- :func:`rmqlb.snapshot.schema.generate_schema` renders the records as the shipped JSON Schema;
- :mod:`rmqlb.snapshot._write` walks the records to write a snapshot (keys, order, what is
  left out);
- :mod:`rmqlb.snapshot._parse` takes its keys, limits and defaults from the fields (its loops
  stay hand-written: they are the hot path of big snapshots and name the JSON path of every
  problem);
- :mod:`rmqlb.pipeline.units` slices raw documents by the keys named here.

Why plain declarations rather than pydantic models as the one definition: the loader must not
import pydantic (start-up time; and pydantic validation took about three times as long as
decoding the JSON of a big snapshot), yet it has to read its keys and limits from the
definition. This module imports nothing but the model and costs well under a millisecond to
import. The strategy object is checked by the loader against :class:`Strategy` here, then
built by :mod:`rmqlb.model.strategy` (the same JSON is ``simulate``'s input), which writes it
too; that module cannot read this one (this one imports the model), so tests keep its keys
and the parameters each strategy reads (:attr:`Strategy.parameters`) in agreement.
``tests/unit/snapshot/test_spec.py`` checks every other part against this module;
``docs/snapshot.md`` says how to add a field.

>>> QueueData.read_queue_nums.key, QueueData.read_queue_nums.type
('readQueueNums', Int(maximum=1000000, minimum=0, unit='queues'))
>>> [f.key for f in QueueOffset.fields][:3], QueueOffset.topic.attr
(['topic', 'brokerName', 'queueId'], 'queue.topic')
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, ClassVar, TypeAlias

from rmqlb.model import snapshot as _model
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import STRATEGY_NAMES, HashCharset
from rmqlb.ranges import QUEUE_COUNT, VIRTUAL_NODES

FORMAT = "rmqlb.snapshot/1"
#: Largest ``readQueueNums``/``writeQueueNums`` accepted for one broker (a typo of a few
#: extra digits would otherwise make the diagnosis allocate billions of queues).
MAX_QUEUE_NUMS = QUEUE_COUNT.maximum
#: Largest ``virtualNodeCnt`` accepted (the ring costs ``consumers * vnodes``).
MAX_VIRTUAL_NODES = VIRTUAL_NODES.maximum
#: The one broker of a shorthand topic (``{"queues": N}``).
SHORTHAND_BROKER = "broker-a"
#: The running-info property a consumer's strategy is read from when it has no ``strategy``.
STRATEGY_PROPERTY = "allocateMessageQueueStrategy"
#: Ids as object keys (broker ids in ``addrs``, logical queue ids in ``currIdMap``) are
#: decimal numbers.
ID_KEY_PATTERN = r"^[0-9]+$"


# -- JSON types ---------------------------------------------------------------------------
#
# Small immutable value classes rather than frozen dataclasses: each of those costs about a
# third of a millisecond to create, and every command that reads a snapshot imports this.


class _JsonType:
    """A JSON type of the spec: immutable, equal to another of its kind with equal
    parameters (its ``__slots__``)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _JsonType)
            and type(other) is type(self)
            and other._values() == self._values()
        )

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={v!r}" for n, v in zip(self.__slots__, self._values(), strict=True))
        return f"{type(self).__name__}({args})"


class Str(_JsonType):
    """A string (``min_length``: at least that many characters)."""

    __slots__ = ("min_length",)
    min_length: int | None

    def __init__(self, min_length: int | None = None) -> None:
        super().__init__(min_length=min_length)


class Int(_JsonType):
    """An integer (never a boolean) within ``minimum``..``maximum`` where given; ``unit``
    names what it counts, for messages."""

    __slots__ = ("maximum", "minimum", "unit")
    minimum: int | None
    maximum: int | None
    unit: str

    def __init__(
        self, minimum: int | None = None, maximum: int | None = None, unit: str = ""
    ) -> None:
        super().__init__(minimum=minimum, maximum=maximum, unit=unit)


class Number(_JsonType):
    """A number, integer or not (rates and times)."""


class Bool(_JsonType):
    """``true`` or ``false``."""


class Scalar(_JsonType):
    """Any JSON scalar: string, number, boolean or null."""


class Const(_JsonType):
    """Exactly this string."""

    __slots__ = ("value",)
    value: str

    def __init__(self, value: str) -> None:
        super().__init__(value=value)


class Regex(_JsonType):
    """A regular expression (Python syntax) whose first group captures ``captures``."""

    __slots__ = ("captures",)
    captures: str

    def __init__(self, captures: str) -> None:
        super().__init__(captures=captures)


class Choice(_JsonType):
    """One of these strings."""

    __slots__ = ("values",)
    values: tuple[str, ...]

    def __init__(self, values: tuple[str, ...]) -> None:
        super().__init__(values=values)


class ArrayOf(_JsonType):
    """An array of ``item``."""

    __slots__ = ("item",)
    item: Type

    def __init__(self, item: Type) -> None:
        super().__init__(item=item)


class MapOf(_JsonType):
    """An object mapping names (matching ``key_pattern`` where given) to ``value``."""

    __slots__ = ("key_pattern", "value")
    value: Type
    key_pattern: str | None

    def __init__(self, value: Type, key_pattern: str | None = None) -> None:
        super().__init__(value=value, key_pattern=key_pattern)


class Ref(_JsonType):
    """A nested record, by name (a record may contain itself)."""

    __slots__ = ("record",)
    record: str

    def __init__(self, record: str) -> None:
        super().__init__(record=record)


class AnyOf(_JsonType):
    """One of ``options``; rmqlb writes the first (the canonical form)."""

    __slots__ = ("options",)
    options: tuple[Type, ...]

    def __init__(self, options: tuple[Type, ...]) -> None:
        super().__init__(options=options)


Type: TypeAlias = (
    Str | Int | Number | Bool | Scalar | Const | Regex | Choice | ArrayOf | MapOf | Ref | AnyOf
)

_REQUIRED: Any = object()


class Field:
    """One key of a record.

    ``default`` is what an absent key means (``None``: unknown; an empty list or object:
    none); a ``required`` field has none. ``nullable``: ``null`` is accepted and means the
    same as absent. ``sparse``: written only when not empty or zero (else left out, like
    every ``None``). ``attr`` is set from the name the record gives the field.
    """

    def __init__(
        self,
        key: str,
        type: Type,
        *,
        required: bool = False,
        default: Any = None,
        nullable: bool = False,
        sparse: bool = False,
        doc: str = "",
    ) -> None:
        self.key = key
        self.type = type
        self.required = required
        self.default = _REQUIRED if required else default
        self.nullable = nullable
        self.sparse = sparse
        self.doc = doc
        self.name = ""
        self.attr = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.attr = name

    def via(self, prefix: str) -> Field:
        """This field, read from attribute ``prefix`` of the model object."""
        field = copy.copy(self)
        field.attr = f"{prefix}.{self.attr}"
        return field

    def __repr__(self) -> str:
        return f"Field({self.key!r} -> {self.attr})"


class Record:
    """A JSON object of the format. Subclasses list their :class:`Field` s as class
    attributes; a subclass of another record starts with its fields (read ``via`` an
    attribute when given) and may redefine some. The docstring is the description."""

    #: The dataclass the record is read into (``None``: expanded by the loader).
    model: ClassVar[type | None] = None
    #: Every field, in the order they are written.
    fields: ClassVar[tuple[Field, ...]] = ()
    #: JSON key -> field.
    by_key: ClassVar[dict[str, Field]] = {}
    #: Keys that exclude each other: a document must not give them all (the schema's
    #: ``"not": {"required": [...]}``). For the forms of one value, each requiring one of
    #: them, where a document giving both would be ambiguous.
    exclusive: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, via: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = {v.key: v for v in vars(cls).values() if isinstance(v, Field)}
        fields: dict[str, Field] = {}
        for inherited in cls.fields:
            field = own.pop(inherited.key, inherited)
            if via:
                field = field.via(via)
                setattr(cls, field.name, field)
            fields[field.key] = field
        fields.update(own)
        cls.fields = tuple(fields.values())
        cls.by_key = fields
        RECORDS[cls.__name__] = cls

    @classmethod
    def description(cls) -> str:
        """The record's docstring as one text."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def required_keys(cls) -> tuple[str, ...]:
        """The keys a document must give."""
        return tuple(f.key for f in cls.fields if f.required)


RECORDS: dict[str, type[Record]] = {}


def record(ref: Ref) -> type[Record]:
    """The record ``ref`` names."""
    return RECORDS[ref.record]


# -- the records, innermost first ---------------------------------------------------------

_TOPIC_DOC = "Topic; defaults to the consumer's only one."
_MODES = Choice(tuple(m.value for m in _model.RequestMode))
_QUEUE_NUMS = Int(minimum=0, maximum=MAX_QUEUE_NUMS, unit="queues")
_NONNEG = Int(minimum=0)


class QueueRef(Record):
    """A queue: topic (may be left out in a consumer's lists when it subscribes exactly
    one topic), broker name and queue id."""

    model: ClassVar[type | None] = MessageQueue
    topic = Field("topic", Str(), doc=_TOPIC_DOC)
    broker_name = Field("brokerName", Str(), required=True)
    queue_id = Field("queueId", _NONNEG, required=True)


class PopQueueRef(QueueRef):
    """A queue a 5.x pop consumer is served from; queue id -1 means every queue of that
    broker."""

    queue_id = Field("queueId", Int(minimum=-1), required=True)


class QueueData(Record):
    """One broker's share of a topic route (Java QueueData)."""

    model = _model.QueueData
    broker_name = Field("brokerName", Str(), required=True)
    read_queue_nums = Field(
        "readQueueNums", _QUEUE_NUMS, required=True, doc="Queues consumers read: ids 0..n-1."
    )
    write_queue_nums = Field(
        "writeQueueNums", _QUEUE_NUMS, required=True, doc="Queues producers write: ids 0..n-1."
    )
    perm = Field(
        "perm",
        _NONNEG,
        default=_model.PERM_READ | _model.PERM_WRITE,
        doc="Permission bits: 4 read, 2 write, 1 inherit.",
    )
    topic_sys_flag = Field("topicSysFlag", Int(), default=0, sparse=True)


class QueueMapping(Record):
    """One broker's part of a 5.x static topic (Java TopicQueueMappingInfo, as the route
    carries it): its scope's logical queues and the physical queue of each it hosts now."""

    model = _model.QueueMapping
    scope = Field("scope", Str(), doc='"__global__" unless the topic was given another scope.')
    epoch = Field("epoch", Int(), required=True)
    total_queues = Field(
        "totalQueues", _QUEUE_NUMS, required=True, doc="The scope's logical queues: ids 0..n-1."
    )
    curr_id_map = Field(
        "currIdMap",
        MapOf(_NONNEG, key_pattern=ID_KEY_PATTERN),
        default={},
        doc="Logical queue id -> the physical queue id on this broker.",
    )


class TopicRoute(Record):
    """A topic's route: one QueueData per broker; a 5.x static topic also maps logical
    queues to them (topicQueueMappingByBroker, by broker name)."""

    model = _model.TopicRoute
    queue_datas = Field("queueDatas", ArrayOf(Ref("QueueData")), required=True)
    queue_mappings = Field(
        "topicQueueMappingByBroker", MapOf(Ref("QueueMapping")), default={}, sparse=True
    )


class TopicShorthand(Record):
    """Hand-written what-ifs: N queues on one broker 'broker-a', read = write = N, perm 6."""

    queues = Field("queues", _QUEUE_NUMS, required=True)


#: A topic is a route or a shorthand, never both.
TopicRoute.exclusive = TopicShorthand.exclusive = (
    TopicShorthand.queues.key,
    TopicRoute.queue_datas.key,
)


_ROOMS = AnyOf((MapOf(Str()), Regex(captures="room")))
_STRATEGY_NAMES = (*STRATEGY_NAMES, "UNKNOWN")


class Strategy(Record):
    """An allocation strategy: AVG, AVG_BY_CIRCLE, CONSISTENT_HASH (virtualNodeCnt, charset),
    MACHINE_ROOM (consumeridcs), MACHINE_ROOM_NEARBY (inner, brokerRooms, consumerRooms:
    an object mapping names to rooms, or a regex whose first group is the room), CONFIG
    (config: client id -> queues), UNKNOWN (className). A parameter left out, or null, is
    unknown (the Java default stands in, or rmqlb infers it); inferred: true marks parameters
    rmqlb dump inferred from what the clients held. Every parameter is checked whatever the
    name (a key means one thing in every strategy object); those of another strategy are
    then ignored."""

    name = Field("name", Choice(_STRATEGY_NAMES), required=True)
    virtual_node_cnt = Field(
        "virtualNodeCnt",
        Int(minimum=0, maximum=MAX_VIRTUAL_NODES, unit="virtual nodes"),
        nullable=True,
    )
    charset = Field(
        "charset",
        Choice(tuple(c.value for c in HashCharset)),
        nullable=True,
        doc="CONSISTENT_HASH: the clients' JVM charset the ring's keys are hashed in "
        "(String.getBytes()); UTF-8 when absent. Java 17 and older take the locale's: "
        "US-ASCII under a POSIX locale, ISO-8859-1 under a Latin-1 one, GBK under zh_CN.GBK; "
        "each writes '?' for a character it lacks.",
    )
    consumeridcs = Field("consumeridcs", ArrayOf(Str()), nullable=True)
    inner = Field("inner", Ref("InnerStrategy"), nullable=True)
    broker_rooms = Field("brokerRooms", _ROOMS, nullable=True)
    consumer_rooms = Field("consumerRooms", _ROOMS, nullable=True)
    config = Field("config", MapOf(ArrayOf(Ref("QueueRef"))), nullable=True)
    class_name = Field("className", Str(), nullable=True)
    inferred = Field(
        "inferred",
        Bool(),
        nullable=True,
        doc="The parameters were inferred by rmqlb from what the clients held "
        "(clients do not report them).",
    )
    #: The parameters each strategy reads (``name`` and ``inferred`` aside).
    parameters: ClassVar[dict[str, tuple[Field, ...]]] = {
        "AVG": (),
        "AVG_BY_CIRCLE": (),
        "CONSISTENT_HASH": (virtual_node_cnt, charset),
        "MACHINE_ROOM": (consumeridcs,),
        "MACHINE_ROOM_NEARBY": (inner, broker_rooms, consumer_rooms),
        "CONFIG": (config,),
        "UNKNOWN": (class_name,),
    }


class InnerStrategy(Strategy):
    """The strategy MACHINE_ROOM_NEARBY allocates with inside each room: any but
    MACHINE_ROOM_NEARBY itself."""

    name = Field(
        "name",
        Choice(tuple(n for n in _STRATEGY_NAMES if n != "MACHINE_ROOM_NEARBY")),
        required=True,
    )


class Subscription(Record):
    """One topic a client subscribes (Java SubscriptionData)."""

    model = _model.Subscription
    topic = Field("topic", Str(), required=True)
    expression_type = Field("expressionType", Str(), default="TAG", doc="TAG or SQL92.")
    sub_string = Field("subString", Str(), default="*", doc="The expression, e.g. 'TagA || TagB'.")
    sub_version = Field(
        "subVersion", Int(), default=0, doc="Broker keeps the greatest one per topic."
    )


class ProcessQueue(QueueRef, via="queue"):
    """One held queue's state inside a client (Java ProcessQueueInfo); times in epoch ms of
    the client's clock, 0 = never."""

    model = _model.ProcessQueueState
    cached_msg_count = Field(
        "cachedMsgCount", Int(), default=0, doc="Messages pulled, not yet consumed."
    )
    cached_msg_size_mib = Field("cachedMsgSizeInMiB", Int(), default=0, doc="Their size in MiB.")
    commit_offset = Field("commitOffset", Int(), default=0)
    last_pull_timestamp = Field("lastPullTimestamp", Int(), default=0)
    last_consume_timestamp = Field("lastConsumeTimestamp", Int(), default=0)
    locked = Field("locked", Bool(), default=False, doc="Orderly: the broker lock is held.")
    last_lock_timestamp = Field("lastLockTimestamp", Int(), default=0)
    dropped = Field("dropped", Bool(), default=False)


class ConsumeStatus(Record):
    """A client's consume statistics for one topic (last minute)."""

    model = _model.ConsumeStatus
    pull_rt = Field("pullRT", Number(), default=0, doc="Pull round trip, ms.")
    pull_tps = Field("pullTPS", Number(), default=0)
    consume_rt = Field("consumeRT", Number(), default=0, doc="Consume time, ms.")
    consume_ok_tps = Field("consumeOKTPS", Number(), default=0)
    consume_failed_tps = Field("consumeFailedTPS", Number(), default=0)
    consume_failed_msgs = Field(
        "consumeFailedMsgs", Int(), default=0, doc="Failed messages in the last hour."
    )


class Consumer(Record):
    """One client connection of a group, as its running info reports it."""

    model = _model.Consumer
    client_id = Field(
        "clientId",
        Str(min_length=1),
        required=True,
        doc="IP@instanceName[@unitName]; may repeat (two processes, one id).",
    )
    client_addr = Field("clientAddr", Str(), nullable=True)
    language = Field("language", Str(), nullable=True)
    version = Field("version", Int(), nullable=True)
    strategy = Field(
        "strategy",
        Ref("Strategy"),
        nullable=True,
        doc=f"What the client reports; else read from properties.{STRATEGY_PROPERTY}.",
    )
    consume_orderly = Field("consumeOrderly", Bool(), nullable=True)
    consume_type = Field(
        "consumeType",
        Str(),
        nullable=True,
        doc="CONSUME_PASSIVELY, CONSUME_ACTIVELY or CONSUME_POP.",
    )
    start_time = Field("startTime", Int(), nullable=True)
    subscriptions = Field(
        "subscriptions",
        ArrayOf(AnyOf((Ref("Subscription"), Str()))),
        required=True,
        doc="Subscriptions; a plain string subscribes every tag of that topic.",
    )
    assigned = Field(
        "assigned",
        ArrayOf(Ref("QueueRef")),
        nullable=True,
        doc="Queues the client holds; absent = unknown, [] = none.",
    )
    pop_assigned = Field("popAssigned", ArrayOf(Ref("PopQueueRef")), nullable=True)
    properties = Field("properties", MapOf(Scalar()), default={}, sparse=True)
    process_queues = Field(
        "processQueues",
        ArrayOf(Ref("ProcessQueue")),
        nullable=True,
        doc="Each held queue's state; absent = not reported.",
    )
    status = Field(
        "status",
        MapOf(Ref("ConsumeStatus")),
        default={},
        sparse=True,
        doc="Consume statistics by topic.",
    )
    rebalance = Field(
        "rebalance",
        Choice(tuple(r.value for r in _model.Rebalance)),
        nullable=True,
        doc="Who computes its queues: client, broker (5.x QUERY_ASSIGNMENT) or proxy (a gRPC "
        "client); absent = not reported (read from "
        f"properties.{_model.CLIENT_REBALANCE_PROPERTY}).",
    )
    proxy = Field(
        "proxy", Str(), nullable=True, doc="The address of the Proxy that listed this client."
    )
    #: The queue lists whose queues may leave ``topic`` out when the consumer subscribes
    #: exactly one topic (it is then that topic).
    one_topic_lists: ClassVar[tuple[Field, ...]] = (assigned, pop_assigned, process_queues)


class QueueOffset(QueueRef, via="queue"):
    """Consume progress of one queue."""

    model = _model.QueueOffset
    topic = Field("topic", Str(), required=True)
    broker_offset = Field("brokerOffset", Int(), required=True, doc="The broker's max offset.")
    consumer_offset = Field(
        "consumerOffset",
        Int(minimum=_model.NEVER_COMMITTED),
        required=True,
        doc=f"The committed offset; {_model.NEVER_COMMITTED} = never committed.",
    )
    last_timestamp = Field(
        "lastTimestamp", Int(), default=0, doc="Store time of the last consumed message."
    )
    min_offset = Field("minOffset", _NONNEG, nullable=True, doc="The broker's min offset.")


class GroupConfig(Record):
    """One broker's subscription-group config of the group."""

    model = _model.GroupConfig
    consume_enable = Field("consumeEnable", Bool(), default=True)
    notify_consumer_ids_changed_enable = Field(
        "notifyConsumerIdsChangedEnable", Bool(), default=True
    )
    retry_max_times = Field("retryMaxTimes", Int(), default=16)
    consume_message_orderly = Field("consumeMessageOrderly", Bool(), default=False)
    consume_broadcast_enable = Field(
        "consumeBroadcastEnable",
        Bool(),
        default=True,
        doc="false: the broker refuses every pull of the group while it is BROADCASTING.",
    )
    retry_queue_nums = Field(
        "retryQueueNums", Int(), default=1, doc="The retry-topic queues a send-back picks from."
    )
    broker_id = Field("brokerId", Int(), default=0, doc="The broker id clients pull from.")
    which_broker_when_consume_slowly = Field(
        "whichBrokerWhenConsumeSlowly",
        Int(),
        default=1,
        doc="The broker id clients are told to pull from when they consume slowly.",
    )
    group_retry_policy = Field(
        "groupRetryPolicy",
        Str(),
        nullable=True,
        doc="5.x: the group's retry policy as JSON text (what mqadmin updateSubGroup -p "
        'takes); absent or null: the default, {"type":"CUSTOMIZED"}.',
    )


class MessageRequestMode(Record):
    """A (topic, group)'s request mode set on a 5.x broker (GET_ALL_MESSAGE_REQUEST_MODE)."""

    model = _model.MessageRequestMode
    mode = Field("mode", _MODES, required=True)
    pop_share_queue_num = Field(
        "popShareQueueNum",
        Int(),
        default=0,
        doc="POP: the shares of how many following clients each client also pops; "
        "<= 0 or >= clients - 1: every queue.",
    )


class Assignment(Record):
    """A broker's QUERY_ASSIGNMENT answer for one client and topic."""

    model = _model.Assignment
    client_id = Field("clientId", Str(min_length=1), required=True)
    topic = Field("topic", Str(), required=True)
    strategy_name = Field(
        "strategyName", Str(), nullable=True, doc="The strategy name the broker was asked with."
    )
    mode = Field("mode", _MODES, nullable=True)
    queues = Field(
        "queues",
        ArrayOf(Ref("PopQueueRef")),
        nullable=True,
        doc="The queues assigned (topic defaults to the answer's; queue id -1: every queue "
        "of that broker); absent = the broker answered without an assignment.",
    )


class DeadLetters(Record):
    """The group's DLQ topic (``%DLQ%<group>``) on one broker, its queues summed
    (GET_TOPIC_STATS_INFO): what the consumers gave up on after their retries."""

    model = _model.DeadLetters
    messages = Field(
        "messages", _NONNEG, required=True, doc="Messages stored there now (max - min offset)."
    )
    max_offset = Field(
        "maxOffset", _NONNEG, required=True, doc="Every message ever put there (max offset)."
    )
    last_timestamp = Field(
        "lastTimestamp", _NONNEG, default=0, doc="Store time of the newest, epoch ms (0: none)."
    )


class GroupOnBroker(Record):
    """What one broker knows of the group: its own consumer list, the request modes set
    there and its QUERY_ASSIGNMENT answers (5.x broker-side assignment reads these)."""

    model = _model.GroupOnBroker
    client_ids = Field(
        "clientIds",
        ArrayOf(Str()),
        nullable=True,
        doc="The broker's own consumer list (read for groups a broker assigns, for groups "
        "some broker lists a client id of more than once, and for groups the brokers list "
        "different clients of); absent = not read.",
    )
    request_modes = Field(
        "requestModes",
        MapOf(Ref("MessageRequestMode")),
        nullable=True,
        doc="Request modes set for the group, by topic; a topic not listed takes the "
        "broker's default; absent = not read.",
    )
    assignments = Field("assignments", ArrayOf(Ref("Assignment")), default=[], sparse=True)
    consume_tps = Field(
        "consumeTps",
        Number(),
        nullable=True,
        doc="Messages per second the group fetches from this broker (GET_CONSUME_STATS "
        "consumeTps); absent = not read.",
    )
    dead_letters = Field(
        "deadLetters",
        Ref("DeadLetters"),
        nullable=True,
        doc="The group's DLQ topic on this broker; absent = none there, or not read.",
    )
    subscriptions = Field(
        "subscriptions",
        ArrayOf(Ref("Subscription")),
        nullable=True,
        doc="The subscription the broker keeps per topic for the group (the greatest "
        "subVersion it was sent; it filters every pull by its expression), from its "
        "connection list (read for groups whose clients filter a topic differently); "
        "absent = not read.",
    )


class Group(Record):
    """A consumer group."""

    model = _model.Group
    message_model = Field(
        "messageModel",
        Choice(tuple(m.value for m in _model.MessageModel)),
        default=_model.MessageModel.CLUSTERING.value,
    )
    consume_type = Field("consumeType", Str(), nullable=True)
    strategy = Field("strategy", Ref("Strategy"), nullable=True, doc="The assumed strategy.")
    consumers = Field("consumers", ArrayOf(Ref("Consumer")), default=[])
    offsets = Field("offsets", ArrayOf(Ref("QueueOffset")), default=[], sparse=True)
    configs = Field(
        "configs",
        MapOf(Ref("GroupConfig")),
        default={},
        sparse=True,
        doc="Subscription-group config by broker name.",
    )
    on_brokers = Field(
        "onBrokers",
        MapOf(Ref("GroupOnBroker")),
        default={},
        sparse=True,
        doc="What each broker knows of the group, by broker name.",
    )


class BrokerConfig(Record):
    """The broker config values 5.x broker-side assignment reads (GET_BROKER_CONFIG); a
    value left out is unknown."""

    model = _model.BrokerConfig
    server_load_balancer_enable = Field(
        "serverLoadBalancerEnable",
        Bool(),
        nullable=True,
        doc="false: QUERY_ASSIGNMENT gives every client every queue.",
    )
    default_message_request_mode = Field(
        "defaultMessageRequestMode",
        _MODES,
        nullable=True,
        doc="The mode of a (topic, group) none was set for (retry topics: always PULL).",
    )
    default_pop_share_queue_num = Field("defaultPopShareQueueNum", Int(), nullable=True)
    load_balance_poll_name_server_interval = Field(
        "loadBalancePollNameServerInterval",
        _NONNEG,
        nullable=True,
        doc="How often (ms) the broker refreshes the routes it assigns from.",
    )
    channel_expired_timeout = Field(
        "channelExpiredTimeout",
        _NONNEG,
        nullable=True,
        doc=(
            "How long (ms) the broker keeps a connection without heartbeat in its consumer "
            "lists (5.1+; 120000, fixed, before)."
        ),
    )


class BrokerInfo(Record):
    """A broker: cluster and addresses by broker id (0 = master)."""

    model = _model.BrokerInfo
    cluster = Field("cluster", Str(), nullable=True)
    addrs = Field("addrs", MapOf(Str(), key_pattern=ID_KEY_PATTERN), default={})
    version = Field(
        "version", Int(), nullable=True, doc="The broker's version code (as clients report it)."
    )
    config = Field("config", Ref("BrokerConfig"), nullable=True)


class Source(Record):
    """Where the snapshot came from."""

    model = _model.Source
    namesrv = Field("namesrv", AnyOf((ArrayOf(Str()), Str())), default=[])
    rmqlb = Field("rmqlb", Str(), nullable=True)
    proxies = Field(
        "proxies",
        ArrayOf(Str()),
        default=[],
        sparse=True,
        doc="The 5.x Proxy remoting addresses asked for their clients.",
    )


class CaptureError(Record):
    """A request that failed during capture."""

    model = _model.CaptureError
    target = Field("target", Str(), default="")
    request = Field("request", Str(), default="")
    message = Field("message", Str(), required=True)
    group = Field("group", Str(), nullable=True, doc="The consumer group the request was about.")
    topic = Field("topic", Str(), nullable=True, doc="The topic the request was about.")


class Snapshot(Record):
    """rmqlb.snapshot/1: routes, groups, consumers and offsets of a cluster."""

    model = _model.Snapshot
    format = Field("format", Const(FORMAT), required=True)
    captured_at = Field("capturedAt", Str(), nullable=True)
    source = Field("source", Ref("Source"), nullable=True)
    brokers = Field("brokers", MapOf(Ref("BrokerInfo")), default={}, sparse=True)
    topics = Field(
        "topics", MapOf(AnyOf((Ref("TopicRoute"), Ref("TopicShorthand")))), required=True
    )
    groups = Field("groups", MapOf(Ref("Group")), required=True)
    errors = Field("errors", ArrayOf(Ref("CaptureError")), default=[], sparse=True)
