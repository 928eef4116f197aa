"""RocketMQ's built-in topics and consumer groups (Java ``MixAll`` / ``TopicValidator``).

They live on every broker and are never a user's load-balancing problem: ``--all-groups``
and the config check skip them.
"""

from __future__ import annotations

SYSTEM_GROUPS: frozenset[str] = frozenset(
    {
        "DEFAULT_CONSUMER",
        "TOOLS_CONSUMER",
        "SCHEDULE_CONSUMER",
        "FILTERSRV_CONSUMER",
        "__MONITOR_CONSUMER",
        "SELF_TEST_C_GROUP",
        "CID_ONS-HTTP-PROXY",
        "CID_ONSAPI_PERMISSION",
        "CID_ONSAPI_OWNER",
        "CID_ONSAPI_PULL",
        "CID_RMQ_SYS_TRANS",
        "CID_DefaultHeartBeatSyncerTopic",
    }
)
SYSTEM_GROUP_PREFIXES: tuple[str, ...] = ("CID_RMQ_SYS_", "CID_ONSAPI_")

SYSTEM_TOPICS: frozenset[str] = frozenset(
    {
        "TBW102",
        "SCHEDULE_TOPIC_XXXX",
        "BenchmarkTest",
        "RMQ_SYS_TRANS_HALF_TOPIC",
        "RMQ_SYS_TRACE_TOPIC",
        "RMQ_SYS_TRANS_OP_HALF_TOPIC",
        "TRANS_CHECK_MAX_TIME_TOPIC",
        "SELF_TEST_TOPIC",
        "OFFSET_MOVED_EVENT",
        "CHECKPOINT_TOPIC",
    }
)


#: What uses each built-in group that a cluster may show consumption of (Java source).
_GROUP_ROLES: dict[str, str] = {
    "CID_RMQ_SYS_REVIVE_GROUP": (
        "the brokers' POP revive service (PopReviveService) reads their revive topic "
        "(rmq_sys_REVIVE_LOG_<cluster>) with it, to bring back the popped messages that were "
        "not acknowledged within their invisible time; its lag is the checkpoint and ack "
        "records the revive service has not finished with"
    ),
    "CID_RMQ_SYS_TRANS": (
        "the brokers' transaction check reads the half and op topics of transactional "
        "messages with it (TransactionalMessageUtil)"
    ),
    "CID_DefaultHeartBeatSyncerTopic": (
        "each 5.x Proxy consumes DefaultHeartBeatSyncerTopic with it in BROADCASTING "
        "(AbstractSystemMessageSyncer), to share its gRPC clients' heartbeats with the other "
        "Proxies"
    ),
    "TOOLS_CONSUMER": "mqadmin and other admin tools read messages with it, one request at a time",
    "SCHEDULE_CONSUMER": "the brokers' delay-message service counts what it delivers under it",
}


def system_group_role(name: str) -> str:
    """What uses built-in group ``name``, in words.

    >>> system_group_role("CID_RMQ_SYS_TRANS")[:28]
    "the brokers' transaction che"
    >>> system_group_role("CID_ONSAPI_OWNER")
    'RocketMQ creates it on every broker (SubscriptionGroupManager) or for its own tools'
    """
    return _GROUP_ROLES.get(
        name, "RocketMQ creates it on every broker (SubscriptionGroupManager) or for its own tools"
    )


def is_system_group(name: str) -> bool:
    """Whether ``name`` is one of RocketMQ's built-in consumer groups.

    >>> is_system_group("CID_RMQ_SYS_TRACE"), is_system_group("OrderGroup")
    (True, False)
    """
    return name in SYSTEM_GROUPS or name.startswith(SYSTEM_GROUP_PREFIXES)


SYSTEM_TOPIC_PREFIXES: tuple[str, ...] = ("rmq_sys_", "RMQ_SYS_", "SCHEDULE_TOPIC_")


def is_system_topic(name: str) -> bool:
    """Whether ``name`` is one of RocketMQ's built-in topics.

    >>> is_system_topic("TBW102"), is_system_topic("rmq_sys_SYNC_BROKER_MEMBER_b")
    (True, True)
    >>> is_system_topic("OrderTopic"), is_system_topic("%RETRY%OrderGroup")
    (False, False)
    """
    return name in SYSTEM_TOPICS or name.startswith(SYSTEM_TOPIC_PREFIXES)
