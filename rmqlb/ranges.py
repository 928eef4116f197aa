"""The one range of every number a user can give, checked here (``docs/limits.md``).

Command-line flags, simulate cases, check configs and snapshots all take their limits from
this module: virtual nodes, queue ids and counts, and (for every JSON integer of every input)
Java's ``long``, the type RocketMQ keeps offsets and times in.

>>> VIRTUAL_NODES.check(20, "vnodes")
20
>>> VIRTUAL_NODES.check(1_000_000_000, "vnodes")
Traceback (most recent call last):
...
rmqlb.errors.InputError: vnodes: 1000000000 is out of range (virtual nodes: at most 100,000)
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqlb.errors import InputError

__all__ = ["JAVA_INT", "JAVA_LONG", "QUEUE_COUNT", "QUEUE_ID", "VIRTUAL_NODES", "Range"]


@dataclass(frozen=True, slots=True)
class Range:
    """Integers from ``minimum`` to ``maximum`` (both included); ``unit`` names them."""

    minimum: int
    maximum: int
    unit: str
    bounds: str = ""

    def __contains__(self, value: object) -> bool:
        return type(value) is int and self.minimum <= value <= self.maximum

    def describe(self) -> str:
        """``queues: 0 to 1,000,000``."""
        return f"{self.unit}: {self.bounds or f'{self.minimum:,} to {self.maximum:,}'}"

    def check(self, value: int, where: str) -> int:
        """``value`` when in range, else an :class:`InputError` naming ``where``."""
        if self.minimum <= value <= self.maximum:
            return value
        shown = str(value) if len(str(value)) <= 30 else f"a {len(str(value))}-digit number"
        raise InputError(f"{where}: {shown} is out of range ({self.describe()})")


#: Java's ``long``: every JSON integer rmqlb reads (offsets, times) fits in it.
JAVA_LONG = Range(-(2**63), 2**63 - 1, "a Java long")
#: Java's ``int``.
JAVA_INT = Range(-(2**31), 2**31 - 1, "a Java int")
#: ``virtualNodeCnt`` of CONSISTENT_HASH: the ring costs consumers x virtual nodes. A
#: negative count is Java's to refuse (the allocation error simulate shows), so any int
#: below the maximum passes here; snapshots, which record running clients, say 0 at least.
VIRTUAL_NODES = Range(JAVA_INT.minimum, 100_000, "virtual nodes", "at most 100,000")
#: Queues of one topic on one broker (read/write queue nums), and queues per broker asked
#: for on the command line: a typo of a few extra digits must not allocate billions.
QUEUE_COUNT = Range(0, 1_000_000, "queues")
#: A queue id: a Java ``int`` that is not negative (``-1`` only where a snapshot field says).
QUEUE_ID = Range(0, 2**31 - 1, "queue ids")
