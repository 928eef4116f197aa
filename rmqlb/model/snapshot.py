"""The cluster snapshot: routes, groups, consumers and offsets as rmqlb sees them.

Pure frozen dataclasses mirroring the ``rmqlb.snapshot/1`` JSON format (design §4). The
file format itself (validation, camelCase, schema) lives in :mod:`rmqlb.snapshot`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from rmqlb.model.javaorder import filter_tags
from rmqlb.model.queue import WHOLE_BROKER, MessageQueue
from rmqlb.model.strategy import StrategySpec

PERM_READ = 4
PERM_WRITE = 2
PERM_INHERIT = 1
RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"
#: ``MQVersion.Version.V5_0_0.ordinal()``: the first client version that can ask the broker,
#: and the first broker that pops.
V5_0_0 = 413
#: ``MQVersion.Version.V5_1_0.ordinal()``: the first broker that stores a message in a retry
#: topic of more than 127 bytes (``HookUtils.checkBeforePutMessage``, message version 2).
V5_1_0 = 433
#: ``MQVersion.Version.V5_1_1.ordinal()``: the first ``DefaultLitePullConsumer`` whose running
#: info lists the queues it holds (``mqTable``, from its assigned queues).
V5_1_1 = 435


def pop_retry_topic(topic: str, group: str) -> str:
    """The POP retry topic of ``group`` for ``topic`` (``KeyBuilder.buildPopRetryTopic``):
    where a popped message that was not acknowledged in time goes. A 5.x client the brokers
    balance subscribes it once it consumes ``topic`` by PULL; the brokers create it at its
    first POP retry.

    >>> pop_retry_topic("OrderTopic", "G")
    '%RETRY%G_OrderTopic'
    """
    return f"{RETRY_PREFIX}{group}_{topic}"


def subscribes_retry(subscriptions: Iterable[Subscription]) -> bool:
    """Whether ``subscriptions`` hold a ``%RETRY%`` topic: a remoting push consumer
    subscribes its group's, a 5.x gRPC client none (how a client a Proxy lists is told).

    >>> subscribes_retry([Subscription("T"), Subscription("%RETRY%G")])
    True
    """
    return any(s.topic.startswith(RETRY_PREFIX) for s in subscriptions)


#: ``consumerOffset`` of a queue the group never committed an offset for (the broker's own
#: ``ConsumerOffsetManager.queryOffset`` answer); lag then counts from the broker's min offset.
NEVER_COMMITTED = -1


#: The running-info property of a 5.x push consumer saying whether it balances itself
#: (``DefaultMQPushConsumer.clientRebalance``, ``"true"`` by default).
CLIENT_REBALANCE_PROPERTY = "clientRebalance"
#: The running-info property saying whether a push consumer is orderly.
CONSUME_ORDERLY_PROPERTY = "PROP_CONSUMEORDERLY"
#: The running-info property holding a push consumer's message model.
MESSAGE_MODEL_PROPERTY = "messageModel"


class Rebalance(StrEnum):
    """Who computes a client's queues."""

    #: The client, with its own strategy (every 4.x client; a 5.x one by default).
    CLIENT = "client"
    #: A broker of the topic, asked with QUERY_ASSIGNMENT (a 5.x push consumer with
    #: ``clientRebalance=false``, not orderly, not broadcasting).
    BROKER = "broker"
    #: A 5.x Proxy, for its gRPC clients (they pop through it).
    PROXY = "proxy"


class RequestMode(StrEnum):
    """How a (topic, group) is served by a 5.x broker (``MessageRequestMode``)."""

    PULL = "PULL"
    POP = "POP"


def rebalance_from_properties(properties: Mapping[str, str]) -> Rebalance | None:
    """Who balances a push consumer, from its running-info properties; ``None`` when they do
    not say (a 4.x client, or none reported).

    ``RebalancePushImpl.clientRebalance``: ``clientRebalance=false`` asks the broker unless
    the consumer is orderly or broadcasting.

    >>> rebalance_from_properties({"clientRebalance": "false"})
    <Rebalance.BROKER: 'broker'>
    >>> rebalance_from_properties({"clientRebalance": "false", "PROP_CONSUMEORDERLY": "true"})
    <Rebalance.CLIENT: 'client'>
    >>> rebalance_from_properties({}) is None
    True
    """
    value = properties.get(CLIENT_REBALANCE_PROPERTY)
    if value == "true":
        return Rebalance.CLIENT
    if value != "false":
        return None
    orderly = properties.get(CONSUME_ORDERLY_PROPERTY) == "true"
    broadcasting = properties.get(MESSAGE_MODEL_PROPERTY) == "BROADCASTING"
    return Rebalance.CLIENT if orderly or broadcasting else Rebalance.BROKER


#: Pull consumers by the running-info property of their implementation (``MixAll.
#: object2Properties`` of the consumer object lists its fields): they consume actively
#: (``CONSUME_ACTIVELY``), by a strategy over ``subscribe()``d topics or by queues the
#: application chose (``assign()``, or pulls of its own).
LITE_PULL_CONSUMER = "DefaultLitePullConsumer"
PULL_CONSUMER = "DefaultMQPullConsumer"
_PULL_CONSUMER_PROPERTIES = {
    "defaultLitePullConsumerImpl": LITE_PULL_CONSUMER,
    "defaultMQPullConsumerImpl": PULL_CONSUMER,
}


#: The clients :func:`lists_no_queues` is true of, as the texts that explain it name them.
UNREPORTING_CLIENTS = f"a {LITE_PULL_CONSUMER} before 5.1.1, or a {PULL_CONSUMER}"
#: The consume type of a pull consumer's heartbeat (``ConsumeType.CONSUME_ACTIVELY``).
CONSUME_ACTIVELY = "CONSUME_ACTIVELY"


def pull_consumer_kind(properties: Mapping[str, str]) -> str | None:
    """The pull consumer class a client's running-info properties name, ``None`` for any
    other client (a push consumer).

    >>> pull_consumer_kind({"defaultLitePullConsumerImpl": "...Impl@1b2c"})
    'DefaultLitePullConsumer'
    """
    for key, kind in _PULL_CONSUMER_PROPERTIES.items():
        if key in properties:
            return kind
    return None


def lists_no_queues(
    properties: Mapping[str, str], version: int | None, consume_type: str | None = None
) -> bool:
    """Whether a client's running info never lists the queues it holds: a
    ``DefaultMQPullConsumer`` (no version does), or a ``DefaultLitePullConsumer`` or any
    other pull consumer (``CONSUME_ACTIVELY``: a subclass names no impl field) before 5.1.1,
    an unknown version counting as before. Its empty ``mqTable`` says nothing of what it
    holds.

    >>> lists_no_queues({"defaultLitePullConsumerImpl": "x"}, 409)
    True
    >>> lists_no_queues({"defaultLitePullConsumerImpl": "x"}, V5_1_1)
    False
    >>> lists_no_queues({}, 409, CONSUME_ACTIVELY)
    True
    """
    kind = pull_consumer_kind(properties)
    if kind == PULL_CONSUMER:
        return True
    pulls = kind == LITE_PULL_CONSUMER or consume_type == CONSUME_ACTIVELY
    return pulls and (version is None or version < V5_1_1)


class MessageModel(StrEnum):
    """How a group consumes: shared queues (CLUSTERING) or every client reads all."""

    CLUSTERING = "CLUSTERING"
    BROADCASTING = "BROADCASTING"


_MODELS = frozenset(m.value for m in MessageModel)


@dataclass(frozen=True, slots=True)
class QueueData:
    """One broker's share of a topic route (Java ``QueueData``)."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int = PERM_READ | PERM_WRITE
    topic_sys_flag: int = 0

    @property
    def readable(self) -> bool:
        """``PermName.isReadable``: the client puts these queues in ``mqAll``."""
        return bool(self.perm & PERM_READ)

    @property
    def writeable(self) -> bool:
        """``PermName.isWriteable``: producers send to these queues."""
        return bool(self.perm & PERM_WRITE)


#: ``MixAll.LOGICAL_QUEUE_MOCK_BROKER_PREFIX``: the broker name of a static topic's logical
#: queues begins with it.
LOGICAL_BROKER_PREFIX = "__syslo__"
#: ``MixAll.METADATA_SCOPE_GLOBAL``: the scope ``mqadmin updateStaticTopic`` writes.
GLOBAL_SCOPE = "__global__"


def logical_broker(scope: str) -> str:
    """The broker name a 5.x client gives the logical queues of ``scope``
    (``TopicQueueMappingUtils.getMockBrokerName``).

    >>> logical_broker("__global__"), logical_broker("east")
    ('__syslo__global__', '__syslo__east')
    """
    if scope == GLOBAL_SCOPE:
        return LOGICAL_BROKER_PREFIX + scope[2:]
    return LOGICAL_BROKER_PREFIX + scope


def is_logical_broker(name: str) -> bool:
    """Whether queues of broker ``name`` are a static topic's logical ones.

    >>> is_logical_broker("__syslo__global__"), is_logical_broker("broker-a")
    (True, False)
    """
    return name.startswith(LOGICAL_BROKER_PREFIX)


@dataclass(frozen=True, slots=True)
class QueueMapping:
    """One broker's part of a 5.x static topic, as its route carries it (Java
    ``TopicQueueMappingInfo``): the logical queues of ``scope`` (``total_queues`` of them)
    and, for those it hosts now, the physical queue id on this broker of each."""

    scope: str | None
    epoch: int
    total_queues: int
    curr_id_map: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TopicRoute:
    """A topic's route as the NameServer returns it (only what allocation needs).

    ``queue_mappings`` (by broker name) makes it a 5.x static topic: a 5.x client then
    consumes logical queues (:meth:`logical_counts`) instead of the brokers' queues.
    """

    topic: str
    queue_datas: tuple[QueueData, ...]
    queue_mappings: Mapping[str, QueueMapping] = field(default_factory=dict)

    def logical_counts(self) -> dict[str, int]:
        """A static topic's logical queues, as a 5.x client lists them
        (``ClientMetadata.topicRouteData2EndpointsForStaticTopic``): per scope, the logical
        broker name and ids ``0..n-1``, ``n`` the largest ``totalQueues`` among its mappings
        (whether or not a broker hosts each id now). Mappings without a scope add none;
        empty when the topic is not static.

        >>> route = TopicRoute("T", (), {"broker-a": QueueMapping("__global__", 1, 4, {1: 0}),
        ...                              "broker-b": QueueMapping("__global__", 1, 6, {0: 0})})
        >>> route.logical_counts()
        {'__syslo__global__': 6}
        """
        counts: dict[str, int] = {}
        for mapping in self.queue_mappings.values():
            # Java keeps the largest total of the mappings whose epoch is >= -1 (the epoch it
            # compares with is never updated)
            if mapping.scope is not None and mapping.epoch >= -1:
                name = logical_broker(mapping.scope)
                counts[name] = max(counts.get(name, 0), mapping.total_queues)
        return counts

    def logical_queue(self) -> dict[tuple[str, int], MessageQueue]:
        """Each physical queue hosting a logical queue now, ``(broker, queue id)``, and that
        logical queue: where the mappings of a scope disagree, the newest epoch's (as the
        client routes it)."""
        newest: dict[tuple[str, int], tuple[int, str, int]] = {}
        counts = self.logical_counts()
        for broker, mapping in sorted(self.queue_mappings.items()):
            if mapping.scope is None:
                continue
            name = logical_broker(mapping.scope)
            for logical_id, physical_id in mapping.curr_id_map.items():
                if logical_id >= counts.get(name, 0):
                    continue  # past the scope's queues: the client lists no such queue
                known = newest.get((name, logical_id))
                if known is None or known[0] <= mapping.epoch:
                    newest[name, logical_id] = (mapping.epoch, broker, physical_id)
        return {
            (broker, physical_id): MessageQueue(self.topic, name, logical_id)
            for (name, logical_id), (_, broker, physical_id) in newest.items()
        }

    def read_as(self) -> dict[tuple[str, int], MessageQueue]:
        """What a pull of broker queue ``(broker, queue id)`` of a static topic reads when
        it does not say it is logical (a client before 5.0): a 5.x broker takes the id for
        a logical one (``TopicQueueMappingManager.buildTopicQueueMappingContext``) and
        serves it where it hosts that logical queue now; elsewhere it refuses the pull
        (NOT_LEADER_FOR_QUEUE), and such a queue is not here.

        >>> TopicRoute("T", (), {"broker-a": QueueMapping("__global__", 1, 2, {1: 0})}).read_as()
        {('broker-a', 1): MessageQueue(topic='T', broker_name='__syslo__global__', queue_id=1)}
        """
        counts = self.logical_counts()
        out: dict[tuple[str, int], MessageQueue] = {}
        for broker, mapping in self.queue_mappings.items():
            if mapping.scope is None:
                continue
            name = logical_broker(mapping.scope)
            for logical_id in mapping.curr_id_map:
                if logical_id < counts.get(name, 0):
                    out[broker, logical_id] = MessageQueue(self.topic, name, logical_id)
        return out

    def readable_queues(self) -> list[MessageQueue]:
        """``mqAll`` as the Java client builds it: readable brokers, ids ``0..readQueueNums-1``;
        a static topic's logical queues (:meth:`logical_counts`) as a 5.x client lists them.

        Several QueueData for one broker name yield the union (the client keeps a set).
        """
        if self.queue_mappings:
            return [
                MessageQueue(self.topic, name, qid)
                for name, count in self.logical_counts().items()
                for qid in range(count)
            ]
        seen: set[MessageQueue] = set()
        out: list[MessageQueue] = []
        for qd in self.queue_datas:
            if not qd.readable:
                continue
            for qid in range(qd.read_queue_nums):
                mq = MessageQueue(self.topic, qd.broker_name, qid)
                if mq not in seen:
                    seen.add(mq)
                    out.append(mq)
        return out


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """The broker config values broker-side assignment depends on (GET_BROKER_CONFIG), and
    how long the broker keeps a connection without heartbeat in its consumer lists
    (``channel_expired_timeout``, ms; a 5.1+ setting, 120,000 fixed before); ``None``: not
    read (the Java defaults are in :data:`BROKER_DEFAULTS`)."""

    server_load_balancer_enable: bool | None = None
    default_message_request_mode: RequestMode | None = None
    default_pop_share_queue_num: int | None = None
    load_balance_poll_name_server_interval: int | None = None
    channel_expired_timeout: int | None = None


#: How long (ms) a broker keeps a connection without heartbeat in its consumer lists: fixed
#: before 5.1, the default of ``channelExpiredTimeout`` since.
CHANNEL_EXPIRED_TIMEOUT_MS = 120_000

#: ``BrokerConfig``'s defaults in 5.0.0 .. 5.1.4.
BROKER_DEFAULTS = BrokerConfig(
    server_load_balancer_enable=True,
    default_message_request_mode=RequestMode.PULL,
    default_pop_share_queue_num=-1,
    load_balance_poll_name_server_interval=30_000,
    channel_expired_timeout=CHANNEL_EXPIRED_TIMEOUT_MS,
)


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A broker of the cluster: its cluster name and addresses by broker id (0 = master)."""

    broker_name: str
    cluster: str | None = None
    addrs: Mapping[int, str] = field(default_factory=dict)
    version: int | None = None
    config: BrokerConfig | None = None

    def master_addr(self) -> str | None:
        """The master address (id 0), else the lowest id's address, else ``None``."""
        if 0 in self.addrs:
            return self.addrs[0]
        return self.addrs[min(self.addrs)] if self.addrs else None


#: What a TAG expression lets through: its tags, or ``None`` for every tag (``*``).
Tags = frozenset[str] | None
#: What an expression filters (:meth:`Subscription.filter_key`): its type and its tags, or
#: the text of an expression of another type.
FilterKey = tuple[str, Tags | str]


@dataclass(frozen=True, slots=True)
class Subscription:
    """One topic a client subscribes to (Java ``SubscriptionData``)."""

    topic: str
    expression_type: str = "TAG"
    sub_string: str = "*"
    sub_version: int = 0

    def tags(self) -> Tags:
        """The tags a TAG expression lets through (``None``: every tag), as Java's
        ``FilterAPI`` reads it (:func:`~rmqlb.model.javaorder.filter_tags`)."""
        tags = filter_tags(self.sub_string)
        return None if tags is None else frozenset(tags)

    def filter_key(self) -> FilterKey:
        """What the expression filters, as the broker and the client read it: ``'A || B'``
        and ``'B||A'`` are one filter; expressions of other types compare by their text.

        >>> Subscription("T", sub_string="A || B").filter_key() == Subscription(
        ...     "T", sub_string="B||A").filter_key()
        True
        """
        if self.expression_type != "TAG":
            return self.expression_type, self.sub_string
        return "TAG", self.tags()


@dataclass(frozen=True, slots=True)
class ProcessQueueState:
    """One held queue's consumption state inside a client (Java ``ProcessQueueInfo``).

    Timestamps are the client's clock in epoch milliseconds (0: never).
    """

    queue: MessageQueue
    cached_msg_count: int = 0
    cached_msg_size_mib: int = 0
    commit_offset: int = 0
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0
    locked: bool = False
    last_lock_timestamp: int = 0
    dropped: bool = False

    def lag(self, max_offset: int | None) -> int | None:
        """What the client has yet to consume of this queue by its own progress: the
        broker's ``max_offset`` minus its commit offset (``None``: either unknown, the
        commit offset before the client commits one).

        >>> pq = ProcessQueueState(MessageQueue("T", "b", 0), commit_offset=40)
        >>> pq.lag(100), pq.lag(None), ProcessQueueState(pq.queue, commit_offset=-1).lag(100)
        (60, None, None)
        """
        if max_offset is None or self.commit_offset < 0:
            return None
        return max(0, max_offset - self.commit_offset)


@dataclass(frozen=True, slots=True)
class ConsumeStatus:
    """A client's consume statistics for one topic (Java ``ConsumeStatus``, last minute)."""

    pull_rt: float = 0.0
    pull_tps: float = 0.0
    consume_rt: float = 0.0
    consume_ok_tps: float = 0.0
    consume_failed_tps: float = 0.0
    consume_failed_msgs: int = 0


@dataclass(frozen=True, slots=True)
class Consumer:
    """One client of a group as its running info reports it.

    ``assigned`` is the set of queues the client actually holds (keys of its ``mqTable``);
    ``None`` means unknown (the client could not be asked), ``()`` means it holds nothing.
    ``strategy`` is the strategy the client reports, ``None`` when unknown. ``rebalance``
    says who computes its queues as reported (``None``: not reported; the loader reads
    :data:`CLIENT_REBALANCE_PROPERTY` when it is absent); ``proxy`` is the address of the
    Proxy that listed it (a gRPC client), ``None`` for a client a broker listed.
    """

    client_id: str
    subscriptions: tuple[Subscription, ...] = ()
    client_addr: str | None = None
    language: str | None = None
    version: int | None = None
    strategy: StrategySpec | None = None
    consume_orderly: bool | None = None
    consume_type: str | None = None
    assigned: tuple[MessageQueue, ...] | None = None
    pop_assigned: tuple[MessageQueue, ...] | None = None
    start_time: int | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    process_queues: tuple[ProcessQueueState, ...] | None = None
    status: Mapping[str, ConsumeStatus] = field(default_factory=dict)
    rebalance: Rebalance | None = None
    proxy: str | None = None

    def subscription(self, topic: str) -> Subscription | None:
        """This client's subscription to ``topic``, if any."""
        for sub in self.subscriptions:
            if sub.topic == topic:
                return sub
        return None

    def subscribes(self, topic: str) -> bool:
        """Whether this client subscribes to ``topic``."""
        return self.subscription(topic) is not None

    @property
    def message_model(self) -> MessageModel | None:
        """The message model the client reports (running info's ``messageModel``; ``None``:
        not reported)."""
        value = self.properties.get(MESSAGE_MODEL_PROPERTY)
        return MessageModel(value) if value in _MODELS else None

    @property
    def pulls_actively(self) -> bool:
        """Whether this client is a pull consumer: besides the queues a strategy gives it
        over the topics it subscribes, it may pull queues of its application's choosing
        (``assign()``), of topics it does not subscribe."""
        return (
            self.consume_type == CONSUME_ACTIVELY or pull_consumer_kind(self.properties) is not None
        )

    @property
    def queues_unreported(self) -> bool:
        """Whether what this client holds is unknown because its kind never reports it (a
        pull consumer, :func:`lists_no_queues`), not because it could not be asked."""
        return self.assigned is None and lists_no_queues(
            self.properties, self.version, self.consume_type
        )

    def holds(self, queue: MessageQueue) -> bool:
        """Whether this client holds ``queue``: among its queues, or among its POP queues
        (by its id, or as every queue of its broker, :data:`WHOLE_BROKER`)."""
        if self.assigned is not None and queue in self.assigned:
            return True
        return any(
            p.queue_id in (queue.queue_id, WHOLE_BROKER)
            and p.broker_name == queue.broker_name
            and p.topic == queue.topic
            for p in self.pop_assigned or ()
        )


@dataclass(frozen=True, slots=True)
class QueueOffset:
    """Consume progress of one queue.

    ``broker_offset`` is the broker's max offset, ``min_offset`` its min offset (``None``:
    not captured), ``consumer_offset`` the group's committed offset or
    :data:`NEVER_COMMITTED`, ``last_timestamp`` the store time of the last consumed message.
    """

    queue: MessageQueue
    broker_offset: int
    consumer_offset: int
    last_timestamp: int = 0
    min_offset: int | None = None

    @property
    def committed(self) -> bool:
        """Whether the group ever committed an offset for this queue."""
        return self.consumer_offset >= 0

    @property
    def lag(self) -> int:
        """Messages not yet consumed: max offset - committed offset, or - min offset when
        nothing was ever committed (never negative)."""
        base = self.consumer_offset if self.consumer_offset >= 0 else (self.min_offset or 0)
        return max(0, self.broker_offset - base)


def logical_offsets(
    offsets: Iterable[QueueOffset], routes: Mapping[str, TopicRoute | None]
) -> list[QueueOffset]:
    """``offsets`` (the brokers' queues) with those of a static topic's physical queues
    given to the logical queues they host now (:meth:`TopicRoute.logical_queue`): what a
    5.x client consumes and ``mqadmin consumerProgress`` lists. The offsets of a logical
    queue that no remapping moved are its physical queue's, so they are kept as they are;
    any other queue's offsets stay with the queue they came from.
    """
    static = {
        topic: route.logical_queue()
        for topic, route in routes.items()
        if route is not None and route.queue_mappings
    }
    if not static:
        return list(offsets)
    out: list[QueueOffset] = []
    for o in offsets:
        mq = o.queue
        logical = static.get(mq.topic, {}).get((mq.broker_name, mq.queue_id))
        out.append(o if logical is None else replace(o, queue=logical))
    return out


def physical_offsets(route: TopicRoute, offsets: Iterable[QueueOffset]) -> list[QueueOffset]:
    """``offsets`` with those of ``route``'s logical queues back on the broker queues
    hosting them now (:func:`logical_offsets` undone); the others as they are."""
    host = {logical: physical for physical, logical in route.logical_queue().items()}
    out: list[QueueOffset] = []
    for o in offsets:
        found = host.get(o.queue)
        out.append(o if found is None else replace(o, queue=MessageQueue(o.queue.topic, *found)))
    return out


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """One broker's subscription-group config of a group (what rmqlb diagnoses with)."""

    consume_enable: bool = True
    notify_consumer_ids_changed_enable: bool = True
    retry_max_times: int = 16
    consume_message_orderly: bool = False
    consume_broadcast_enable: bool = True
    #: Settings the diagnosis only carries into an advised ``mqadmin updateSubGroup`` (which
    #: writes a fresh config: what it is not given it resets). The retry topic's queues a
    #: send-back picks from, the broker id clients are told to pull from, and the one when
    #: they pull slowly.
    retry_queue_nums: int = 1
    broker_id: int = 0
    which_broker_when_consume_slowly: int = 1
    #: 5.x: the group's retry policy as the JSON text ``updateSubGroup -p`` takes; ``None``:
    #: the default (``{"type":"CUSTOMIZED"}``, or a 4.x broker's, which has none).
    group_retry_policy: str | None = None


@dataclass(frozen=True, slots=True)
class MessageRequestMode:
    """A (topic, group)'s request mode set on a broker (``SetMessageRequestModeRequestBody``,
    as GET_ALL_MESSAGE_REQUEST_MODE lists it)."""

    mode: RequestMode = RequestMode.PULL
    pop_share_queue_num: int = 0


@dataclass(frozen=True, slots=True)
class Assignment:
    """A broker's QUERY_ASSIGNMENT answer for one client and topic.

    ``queues`` ``None``: the broker answered without an assignment (an unknown strategy,
    an unknown topic, no consumer list); ``()``: it assigned nothing. Queue id -1 means every
    queue of that broker (POP).
    """

    client_id: str
    topic: str
    strategy_name: str | None = None
    mode: RequestMode | None = None
    queues: tuple[MessageQueue, ...] | None = None


@dataclass(frozen=True, slots=True)
class DeadLetters:
    """What one broker holds of a group's DLQ topic ``%DLQ%<group>`` (GET_TOPIC_STATS_INFO,
    its queues there summed): ``messages`` still stored (max - min offset), ``max_offset``
    every message ever put there, ``last_timestamp`` the store time of the newest (0: none).
    A message goes there once its consumers gave up on it after their retries; nothing
    consumes a DLQ."""

    messages: int
    max_offset: int
    last_timestamp: int = 0


@dataclass(frozen=True, slots=True)
class GroupOnBroker:
    """What one broker knows of a group: what broker-side assignment reads there.

    ``client_ids``: the broker's own consumer list (``None``: not read); ``request_modes``:
    the modes set for the group by topic (``None``: not read; a topic not listed takes the
    broker's default); ``assignments``: the broker's QUERY_ASSIGNMENT answers;
    ``consume_tps``: the messages per second the group fetches from this broker, as its
    GET_CONSUME_STATS answer says (``consumeTps``; ``None``: not read); ``dead_letters``:
    the group's DLQ topic on this broker (``None``: it has none there, or it was not read);
    ``subscriptions``: the one subscription per topic the broker keeps for the group (the
    greatest ``subVersion`` its heartbeats brought, the expression it filters pulls by;
    ``None``: not read).
    """

    client_ids: tuple[str, ...] | None = None
    request_modes: Mapping[str, MessageRequestMode] | None = None
    assignments: tuple[Assignment, ...] = ()
    consume_tps: float | None = None
    dead_letters: DeadLetters | None = None
    subscriptions: tuple[Subscription, ...] | None = None


@dataclass(frozen=True, slots=True)
class Group:
    """A consumer group: its assumed strategy, its online clients and its offsets.

    ``consumers`` is a list, not a map: one client id may appear twice (two processes with
    one id), exactly as the broker lists it in ``cidAll``.
    """

    name: str
    message_model: MessageModel = MessageModel.CLUSTERING
    consume_type: str | None = None
    strategy: StrategySpec | None = None
    consumers: tuple[Consumer, ...] = ()
    offsets: tuple[QueueOffset, ...] = ()
    configs: Mapping[str, GroupConfig] = field(default_factory=dict)
    on_brokers: Mapping[str, GroupOnBroker] = field(default_factory=dict)

    @property
    def consumed_model(self) -> MessageModel:
        """The model the group is consumed in, hence where its offsets live: see
        :func:`consumed_model` (``message_model`` is the one the brokers list)."""
        return consumed_model(self.message_model, self.consumers)

    @property
    def broker_consume_tps(self) -> float | None:
        """The messages per second the brokers say the group fetches (their
        GET_CONSUME_STATS ``consumeTps``, summed; ``None``: no broker's rate captured)."""
        rates = [b.consume_tps for b in self.on_brokers.values() if b.consume_tps is not None]
        return round(sum(rates), 3) if rates else None


def consumed_model(listed: MessageModel, consumers: Iterable[Consumer]) -> MessageModel:
    """The model a group is consumed in: the one its clients report (CLUSTERING when any
    does), else the one the brokers list (the model of its latest heartbeat). The clients of
    a group that mixes both models and report CLUSTERING share its queues and commit its
    offsets on the brokers (MESSAGE_MODEL_INCONSISTENT names the mix)."""
    reported = {c.message_model for c in consumers}
    if MessageModel.CLUSTERING in reported:
        return MessageModel.CLUSTERING
    return MessageModel.BROADCASTING if MessageModel.BROADCASTING in reported else listed


def read_by_assign(consumers: Iterable[Consumer], offset_topics: Iterable[str]) -> set[str]:
    """The topics a group's pull consumers read where their application assign()s queues
    (in CLUSTERING: its callers check the model), none of its consumers subscribing them:
    those they hold and those the group has offsets of (``offset_topics``), no %RETRY%
    topic; none without a pull consumer."""
    consumers = list(consumers)
    pullers = [c for c in consumers if c.pulls_actively]
    if not pullers:
        return set()
    topics = {mq.topic for c in pullers for mq in c.assigned or ()}
    topics.update(offset_topics)
    topics -= {s.topic for c in consumers for s in c.subscriptions}
    return {t for t in topics if not t.startswith(RETRY_PREFIX)}


@dataclass(frozen=True, slots=True)
class CaptureError:
    """A request that failed while the snapshot was captured.

    ``group`` / ``topic`` name the consumer group or topic the request was about, when it was
    about one: a report can then say which of its lines the failure leaves incomplete.
    """

    target: str
    request: str
    message: str
    group: str | None = None
    topic: str | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """Where a snapshot came from."""

    namesrv: tuple[str, ...] = ()
    rmqlb: str | None = None
    proxies: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything rmqlb knows about a cluster at one moment."""

    topics: Mapping[str, TopicRoute]
    groups: Mapping[str, Group]
    brokers: Mapping[str, BrokerInfo] = field(default_factory=dict)
    captured_at: str | None = None
    source: Source | None = None
    errors: tuple[CaptureError, ...] = ()
