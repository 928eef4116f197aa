"""MessageQueue, ordered exactly like Java's ``MessageQueue.compareTo``."""

from __future__ import annotations

from dataclasses import dataclass

from rmqlb.model.javaorder import java_key


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
