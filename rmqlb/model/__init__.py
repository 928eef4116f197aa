"""Pure data: queues (Java-ordered), strategy specs, snapshots. No I/O."""

from rmqlb.model.javaorder import java_key, java_sorted, java_split
from rmqlb.model.queue import MessageQueue, queue_sort_key, sort_queues
from rmqlb.model.snapshot import (
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

__all__ = [
    "BrokerInfo",
    "CaptureError",
    "ConsumeStatus",
    "Consumer",
    "Group",
    "GroupConfig",
    "MessageModel",
    "MessageQueue",
    "ProcessQueueState",
    "QueueData",
    "QueueOffset",
    "Snapshot",
    "Source",
    "Subscription",
    "TopicRoute",
    "java_key",
    "java_sorted",
    "java_split",
    "queue_sort_key",
    "sort_queues",
]
