"""Pydantic models that describe ``rmqlb.snapshot/1`` field by field.

They are the source of the shipped JSON Schema (:func:`rmqlb.snapshot.schema.generate_schema`)
and a second opinion in tests; loading uses the faster hand-written validator of
:mod:`rmqlb.snapshot._parse`. Importing this module imports pydantic: keep it out of start-up.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema

nonneg = Annotated[int, Field(ge=0)]
queue_nums = Annotated[int, Field(ge=0, le=1_000_000)]


class _Model(BaseModel):
    """camelCase aliases; unknown keys allowed (forward compatibility)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", strict=True
    )


class QueueRef(_Model):
    """A queue: topic (may be left out in a consumer's lists when it subscribes exactly
    one topic), broker name and queue id."""

    topic: str | SkipJsonSchema[None] = Field(
        None, description="Topic; defaults to the consumer's only one."
    )
    broker_name: str
    queue_id: nonneg


class PopQueueRef(QueueRef):
    """A queue a 5.x pop consumer is served from; queue id -1 means every queue of that
    broker."""

    queue_id: Annotated[int, Field(ge=-1)]


class QueueData(_Model):
    """One broker's share of a topic route (Java QueueData)."""

    broker_name: str
    read_queue_nums: queue_nums = Field(description="Queues consumers read: ids 0..n-1.")
    write_queue_nums: queue_nums = Field(description="Queues producers write: ids 0..n-1.")
    perm: nonneg = Field(6, description="Permission bits: 4 read, 2 write, 1 inherit.")
    topic_sys_flag: int = 0


class TopicRoute(_Model):
    """A topic's route: one QueueData per broker."""

    queue_datas: list[QueueData]


class TopicShorthand(_Model):
    """Hand-written what-ifs: N queues on one broker 'broker-a', read = write = N, perm 6."""

    queues: queue_nums


class Strategy(_Model):
    """An allocation strategy: AVG, AVG_BY_CIRCLE, CONSISTENT_HASH (virtualNodeCnt),
    MACHINE_ROOM (consumeridcs), MACHINE_ROOM_NEARBY (inner, brokerRooms, consumerRooms:
    an object mapping names to rooms, or a regex whose first group is the room), CONFIG
    (config: client id -> queues), UNKNOWN (className). A parameter left out is unknown (the
    Java default stands in, or rmqlb infers it); inferred: true marks parameters rmqlb dump
    inferred from what the clients held."""

    name: Literal[
        "AVG",
        "AVG_BY_CIRCLE",
        "CONSISTENT_HASH",
        "MACHINE_ROOM",
        "MACHINE_ROOM_NEARBY",
        "CONFIG",
        "UNKNOWN",
    ]
    virtual_node_cnt: Annotated[int, Field(ge=0, le=100_000)] | SkipJsonSchema[None] = None
    consumeridcs: list[str] | None = None
    inner: Strategy | None = None
    broker_rooms: dict[str, str] | str | None = None
    consumer_rooms: dict[str, str] | str | None = None
    config: dict[str, list[QueueRef]] | None = None
    class_name: str | None = None
    inferred: bool | None = Field(
        None,
        description="The parameters were inferred by rmqlb from what the clients held "
        "(clients do not report them).",
    )


class Subscription(_Model):
    """One topic a client subscribes (Java SubscriptionData)."""

    topic: str
    expression_type: str = Field("TAG", description="TAG or SQL92.")
    sub_string: str = Field("*", description="The expression, e.g. 'TagA || TagB'.")
    sub_version: int = Field(0, description="Broker keeps the greatest one per topic.")


class ProcessQueue(_Model):
    """One held queue's state inside a client (Java ProcessQueueInfo); times in epoch ms of
    the client's clock, 0 = never."""

    topic: str | SkipJsonSchema[None] = Field(
        None, description="Topic; defaults to the consumer's only one."
    )
    broker_name: str
    queue_id: nonneg
    cached_msg_count: int = Field(0, description="Messages pulled, not yet consumed.")
    cached_msg_size_mib: int = Field(
        0, alias="cachedMsgSizeInMiB", description="Their size in MiB."
    )
    commit_offset: int = 0
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0
    locked: bool = Field(False, description="Orderly: the broker lock is held.")
    last_lock_timestamp: int = 0
    dropped: bool = False


class ConsumeStatus(_Model):
    """A client's consume statistics for one topic (last minute)."""

    pull_rt: float | int = Field(0, alias="pullRT", description="Pull round trip, ms.")
    pull_tps: float | int = Field(0, alias="pullTPS")
    consume_rt: float | int = Field(0, alias="consumeRT", description="Consume time, ms.")
    consume_ok_tps: float | int = Field(0, alias="consumeOKTPS")
    consume_failed_tps: float | int = Field(0, alias="consumeFailedTPS")
    consume_failed_msgs: int = Field(0, description="Failed messages in the last hour.")


#: A consumer's queue lists may leave ``topic`` out only when it subscribes exactly one topic.
_TOPIC_RULE: dict[str, Any] = {
    "if": {
        "properties": {"subscriptions": {"minItems": 1, "maxItems": 1}},
        "required": ["subscriptions"],
    },
    "else": {
        "properties": {
            key: {"items": {"required": ["topic"]}}
            for key in ("assigned", "popAssigned", "processQueues")
        }
    },
}


def _topic_required_unless_one_subscription(schema: dict[str, Any]) -> None:
    schema.update(_TOPIC_RULE)


class Consumer(_Model):
    """One client connection of a group, as its running info reports it."""

    model_config = ConfigDict(json_schema_extra=_topic_required_unless_one_subscription)

    client_id: Annotated[str, Field(min_length=1)] = Field(
        description="IP@instanceName[@unitName]; may repeat (two processes, one id)."
    )
    subscriptions: list[Subscription | str] = Field(
        description="Subscriptions; a plain string subscribes every tag of that topic."
    )
    client_addr: str | None = None
    language: str | None = None
    version: int | None = None
    strategy: Strategy | None = Field(
        None,
        description="What the client reports; else read from "
        "properties.allocateMessageQueueStrategy.",
    )
    consume_orderly: bool | None = None
    consume_type: str | None = Field(
        None, description="CONSUME_PASSIVELY, CONSUME_ACTIVELY or CONSUME_POP."
    )
    assigned: list[QueueRef] | None = Field(
        None, description="Queues the client holds; absent = unknown, [] = none."
    )
    pop_assigned: list[PopQueueRef] | None = None
    start_time: int | None = None
    properties: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    process_queues: list[ProcessQueue] | None = Field(
        None, description="Each held queue's state; absent = not reported."
    )
    status: dict[str, ConsumeStatus] = Field(
        default_factory=dict, description="Consume statistics by topic."
    )


class QueueOffset(_Model):
    """Consume progress of one queue."""

    topic: str
    broker_name: str
    queue_id: nonneg
    broker_offset: int = Field(description="The broker's max offset.")
    consumer_offset: Annotated[int, Field(ge=-1)] = Field(
        description="The committed offset; -1 = never committed."
    )
    last_timestamp: int = Field(0, description="Store time of the last consumed message.")
    min_offset: nonneg | None = Field(None, description="The broker's min offset.")


class GroupConfig(_Model):
    """One broker's subscription-group config of the group."""

    consume_enable: bool = True
    notify_consumer_ids_changed_enable: bool = True
    retry_max_times: int = 16
    consume_message_orderly: bool = False


class Group(_Model):
    """A consumer group."""

    message_model: Literal["CLUSTERING", "BROADCASTING"] = "CLUSTERING"
    consume_type: str | None = None
    strategy: Strategy | None = Field(None, description="The assumed strategy.")
    consumers: list[Consumer] = Field(default_factory=list)
    offsets: list[QueueOffset] = Field(default_factory=list)
    configs: dict[str, GroupConfig] = Field(
        default_factory=dict, description="Subscription-group config by broker name."
    )


class BrokerInfo(_Model):
    """A broker: cluster and addresses by broker id (0 = master)."""

    cluster: str | None = None
    addrs: dict[Annotated[str, Field(pattern=r"^[0-9]+$")], str] = Field(
        default_factory=dict, json_schema_extra={"propertyNames": {"pattern": r"^[0-9]+$"}}
    )


class Source(_Model):
    """Where the snapshot came from."""

    namesrv: list[str] | str = Field(default_factory=list)
    rmqlb: str | None = None


class CaptureError(_Model):
    """A request that failed during capture."""

    target: str = ""
    request: str = ""
    message: str
    group: str | None = Field(None, description="The consumer group the request was about.")
    topic: str | None = Field(None, description="The topic the request was about.")


class Snapshot(_Model):
    """rmqlb.snapshot/1: routes, groups, consumers and offsets of a cluster."""

    format: Literal["rmqlb.snapshot/1"]
    captured_at: str | None = None
    source: Source | None = None
    brokers: dict[str, BrokerInfo] = Field(default_factory=dict)
    topics: dict[str, TopicRoute | TopicShorthand]
    groups: dict[str, Group]
    errors: list[CaptureError] = Field(default_factory=list)


Strategy.model_rebuild()
Snapshot.model_rebuild()
