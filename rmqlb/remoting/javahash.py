"""Iteration order of Java's hash containers, so encoded maps and sets come out as Java's do.

fastjson writes a ``HashMap``, ``HashSet`` or ``ConcurrentHashMap`` in its iteration order:
table slot by slot, where a key's slot is ``(h ^ h >>> 16) & (size - 1)`` of its
``hashCode()`` ``h``, and keys sharing a slot in the order they were put. The table size is
fixed by the constructor and doubles as the container fills, so the order is deterministic
whenever the keys' ``hashCode`` is (strings, integers, ``MessageQueue``, ``SubscriptionData``;
not objects with identity hashes such as a broker's ``Connection``).

Growth rules (JDK 8-21): a ``HashMap`` doubles when its size *exceeds* 3/4 of the table, a
``ConcurrentHashMap`` when its size *reaches* 3/4. Within a slot, insertion order is exact for
``HashMap`` (its resize keeps relative order); a ``ConcurrentHashMap`` resize may reorder
colliding keys, which this module does not model.

Worked example: ``"broker-a".hashCode()`` is 372697965 and ``"broker-b"``'s 372697966; spread,
they fall in slots 11 and 8 of a 16-slot table (91 and 88 of 128), so a NameServer lists
``broker-b`` first whatever order the brokers registered in::

    >>> HashTable().order(["broker-a", "broker-b"], java_string_hash)
    ['broker-b', 'broker-a']
    >>> concurrent_map(1024).size, hash_map(1024).size
    (2048, 1024)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

_MAX_TABLE = 1 << 30


def java_int(value: int) -> int:
    """``value`` wrapped to a signed 32-bit Java ``int``.

    >>> java_int(2**31), java_int(-1)
    (-2147483648, -1)
    """
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """Java ``String.hashCode()`` (over UTF-16 code units, signed 32-bit).

    >>> java_string_hash("TagA")
    2598919
    """
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return java_int(h)


def message_queue_hash(topic: str, broker_name: str, queue_id: int) -> int:
    """``MessageQueue.hashCode()``: brokerName, then queueId, then topic (4.x and 5.x).

    >>> message_queue_hash("T", "b", 0)
    124053
    """
    result = 31 + java_string_hash(broker_name)
    result = java_int(31 * result + queue_id)
    return java_int(31 * result + java_string_hash(topic))


def subscription_hash(
    topic: str,
    sub_string: str,
    expression_type: str,
    *,
    tags: Iterable[str] = (),
    codes: Iterable[int] = (),
    class_filter_mode: bool = False,
) -> int:
    """``SubscriptionData.hashCode()`` (a ``Set``'s hash is the sum of its elements')."""
    result = 31 + (1231 if class_filter_mode else 1237)
    result = java_int(31 * result + java_int(sum(codes)))
    result = java_int(31 * result + java_string_hash(sub_string))
    result = java_int(31 * result + java_int(sum(java_string_hash(t) for t in tags)))
    result = java_int(31 * result + java_string_hash(topic))
    return java_int(31 * result + java_string_hash(expression_type))


def table_size_for(capacity: int) -> int:
    """Java's ``tableSizeFor``: the smallest power of two >= ``capacity`` (at least 1)."""
    size = 1
    while size < capacity and size < _MAX_TABLE:
        size *= 2
    return size


@dataclass(frozen=True, slots=True)
class HashTable:
    """A Java hash container by its starting table size and kind.

    ``HashTable()`` is ``new HashMap<>()`` / ``new HashSet<>()`` (16 slots); see
    :func:`hash_map`, :func:`concurrent_map` and :func:`concurrent_put_all` for the others.
    """

    size: int = 16
    concurrent: bool = False

    def final_size(self, count: int) -> int:
        """The table size after ``count`` distinct keys were put."""
        size = self.size
        while size < _MAX_TABLE and (
            count >= size - (size >> 2) if self.concurrent else count > size * 3 // 4
        ):
            size *= 2
        return size

    def order(self, items: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
        """``items`` (in insertion order; repeats count once) in the container's order."""
        unique = list(dict.fromkeys(items))
        mask = self.final_size(len(unique)) - 1

        def slot(item: T) -> int:
            h = hash_of(item) & 0xFFFFFFFF
            return (h ^ (h >> 16)) & mask

        return sorted(unique, key=slot)  # stable: insertion order within a slot


def hash_map(initial_capacity: int) -> HashTable:
    """``new HashMap<>(n)`` / ``new HashSet<>(n)``."""
    return HashTable(table_size_for(initial_capacity))


def concurrent_map(initial_capacity: int | None = None) -> HashTable:
    """``new ConcurrentHashMap<>(n)`` (``None``: the no-argument constructor, 16 slots)."""
    if initial_capacity is None:
        return HashTable(16, concurrent=True)
    n = initial_capacity
    return HashTable(table_size_for(n + (n >> 1) + 1), concurrent=True)


def concurrent_put_all(count: int) -> HashTable:
    """An empty ``new ConcurrentHashMap<>()`` after ``putAll`` of ``count`` entries.

    ``putAll`` presizes the table first (``tryPresize``): it allocates
    ``tableSizeFor(count * 1.5 + 1)`` slots and, while that target is above 3/4 of the table,
    doubles it. So two entries land in a table of 8, not 16 as put one by one would
    (measured on OpenJDK 17: 1 -> 2, 2 -> 8, 3-5 -> 16, 6-10 -> 32, 11-21 -> 64 slots).

    >>> [concurrent_put_all(n).size for n in (1, 2, 3, 6, 11, 22)]
    [2, 8, 16, 32, 64, 128]
    """
    target = table_size_for(count + (count >> 1) + 1)
    size = target
    while target > size - (size >> 2) and size < _MAX_TABLE:
        size *= 2
    return HashTable(size, concurrent=True)


def java_hash_set_order(items: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """Iteration order of a ``java.util.HashSet`` built by adding ``items`` in order.

    >>> java_hash_set_order([20, 3, 17], lambda v: v)
    [17, 3, 20]
    """
    return HashTable().order(items, hash_of)
