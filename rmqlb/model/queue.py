"""MessageQueue, ordered exactly like Java's ``MessageQueue.compareTo``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rmqlb.model.javaorder import java_key

#: Queue id of a 5.x POP assignment meaning every queue of that broker
#: (``QueryAssignmentProcessor.allocate4Pop``).
WHOLE_BROKER = -1
#: The broker name standing for every master of a cluster at once: ``mqadmin exportMetadata
#: -c`` sums each topic's queue counts over them, so ``check`` models such a topic as one
#: broker of this name (commands for it address the cluster, ``-c``).
MERGED_BROKER = "all-brokers"


@dataclass(frozen=True, slots=True, order=False)
class MessageQueue:
    """One queue of a topic on one broker.

    Ordering is Java's: topic, then broker name (both by UTF-16 code units), then queue id.
    Use :func:`queue_sort_key` for ``sorted``; ``<`` is defined with the same key.
    """

    topic: str
    broker_name: str
    queue_id: int

    def __lt__(self, other: MessageQueue) -> bool:
        return queue_sort_key(self) < queue_sort_key(other)

    def __le__(self, other: MessageQueue) -> bool:
        return queue_sort_key(self) <= queue_sort_key(other)

    def __gt__(self, other: MessageQueue) -> bool:
        return queue_sort_key(self) > queue_sort_key(other)

    def __ge__(self, other: MessageQueue) -> bool:
        return queue_sort_key(self) >= queue_sort_key(other)

    def java_string(self) -> str:
        """``MessageQueue.toString()``: the key the consistent-hash ring routes on."""
        return (
            f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, "
            f"queueId={self.queue_id}]"
        )

    def label(self) -> str:
        """Short human form, ``broker-a:3``."""
        return f"{self.broker_name}:{self.queue_id}"


def queue_sort_key(queue: MessageQueue) -> tuple[str, str, int]:
    """The one sort key for queues: Java ``MessageQueue.compareTo`` order."""
    return (java_key(queue.topic), java_key(queue.broker_name), queue.queue_id)


def sort_queues(queues: list[MessageQueue] | tuple[MessageQueue, ...]) -> list[MessageQueue]:
    """Return ``queues`` in Java order (``Collections.sort(mqAll)``)."""
    return sorted(queues, key=queue_sort_key)


def queue_ranges(
    queues: Iterable[MessageQueue], limit: int | None = None, with_topic: bool | None = None
) -> str:
    """The one spelling of a set of queues, used by every command and finding.

    Java order, duplicates dropped; three or more consecutive ids of a broker fold into
    ``broker-a:8..11``, one or two stay apart (``broker-a:3, broker-a:4``). At most
    ``limit`` parts, then ``and N more``. ``with_topic`` prefixes ``Topic/``; by default only
    when the queues span several topics.

    >>> qs = [MessageQueue("T", "broker-a", i) for i in (8, 9, 10, 11, 3, 4)]
    >>> queue_ranges(qs)
    'broker-a:3, broker-a:4, broker-a:8..11'
    >>> queue_ranges(qs, limit=2)
    'broker-a:3, broker-a:4 and 1 more'
    >>> queue_ranges([MessageQueue("A", "b", 0), MessageQueue("B", "b", 0)]), queue_ranges([])
    ('A/b:0, B/b:0', '')
    """
    ordered = sorted(set(queues), key=queue_sort_key)
    if with_topic is None:
        with_topic = len({q.topic for q in ordered}) > 1
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        first, j = ordered[i], i
        while (
            j + 1 < len(ordered)
            and (ordered[j + 1].topic, ordered[j + 1].broker_name)
            == (first.topic, first.broker_name)
            and ordered[j + 1].queue_id == ordered[j].queue_id + 1
        ):
            j += 1
        prefix = f"{first.topic}/" if with_topic else ""
        if j >= i + 2:
            parts.append(f"{prefix}{first.label()}..{ordered[j].queue_id}")
        else:
            parts += [f"{prefix}{q.label()}" for q in ordered[i : j + 1]]
        i = j + 1
    if limit is not None and len(parts) > limit:
        return ", ".join(parts[:limit]) + f" and {len(parts) - limit} more"
    return ", ".join(parts)
