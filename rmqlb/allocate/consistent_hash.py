"""CONSISTENT_HASH — ``AllocateMessageQueueConsistentHash``: an MD5 hash ring.

Java builds, for every client, a ring (a ``TreeMap<Long, VirtualNode>``) holding
``virtualNodeCnt`` virtual nodes per client of sorted ``cidAll``; virtual node ``i`` of
client ``c`` sits at ``hash(c + "-" + i)``. A queue goes to the first ring position
``>= hash("MessageQueue [topic=T, brokerName=B, queueId=N]")``, wrapping to the smallest.
``hash`` is the first four bytes of the MD5 of the UTF-8 key, read as an unsigned big-endian
integer. Details that decide exactness:

* ``TreeMap.put`` on an equal hash *replaces* the earlier virtual node: the later client wins.
* A client listed twice adds its virtual nodes again numbered from the count it already has
  on the ring (``getExistingReplicas``): ``c-10 .. c-19`` the second time.
* ``virtualNodeCnt`` 0 gives an empty ring: nobody gets anything.

Every client builds the same ring, so rmqlb builds it once and routes every queue once.

Worked example: clients ``a`` and ``b`` with 1 virtual node each sit at ``md5("a-0")[:4]``
and ``md5("b-0")[:4]``; a queue hashing between them goes to the upper one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from hashlib import md5

from rmqlb.allocate._common import Assignment, java_check
from rmqlb.errors import AllocationError
from rmqlb.model.queue import MessageQueue


def ring_hash(key: str) -> int:
    """Java ``MD5Hash.hash``: first 4 bytes of MD5(UTF-8 key), unsigned big-endian.

    Unpaired surrogates are encoded as ``?`` like ``String.getBytes(UTF_8)`` does.
    """
    return int.from_bytes(md5(key.encode("utf-8", "replace")).digest()[:4], "big")


def check_virtual_node_cnt(virtual_node_cnt: int) -> None:
    """The constructor's check: a negative count throws before any allocation."""
    if virtual_node_cnt < 0:
        raise AllocationError(f"illegal virtualNodeCnt :{virtual_node_cnt}")


def build_ring(cid_all: Sequence[str], virtual_node_cnt: int) -> dict[int, str]:
    """The hash ring as Java's ``ConsistentHashRouter`` leaves it: position -> client id."""
    ring: dict[int, str] = {}
    if len(set(cid_all)) == len(cid_all):
        for cid in cid_all:
            prefix = cid + "-"
            for i in range(virtual_node_cnt):
                ring[ring_hash(prefix + str(i))] = cid
        return ring
    owned: dict[str, int] = {}
    for cid in cid_all:
        existing = owned.get(cid, 0)
        for i in range(virtual_node_cnt):
            position = ring_hash(f"{cid}-{i + existing}")
            previous = ring.get(position)
            if previous is not None:
                owned[previous] -= 1
            ring[position] = cid
            owned[cid] = owned.get(cid, 0) + 1
    return ring


def allocate_consistent_hash(
    mq_all: Sequence[MessageQueue], cid_all: Sequence[str], virtual_node_cnt: int
) -> Assignment:
    """Allocate a whole group at once (one ring); inputs already in Java order."""
    check_virtual_node_cnt(virtual_node_cnt)
    java_check(mq_all, cid_all)
    result: Assignment = {cid: [] for cid in cid_all}
    ring = build_ring(cid_all, virtual_node_cnt)
    if not ring:
        return result
    positions = sorted(ring)
    owners = [result[ring[p]] for p in positions]
    last = len(positions)
    for mq in mq_all:
        key = f"MessageQueue [topic={mq.topic}, brokerName={mq.broker_name}, queueId={mq.queue_id}]"
        slot = bisect_left(positions, ring_hash(key))
        owners[slot if slot < last else 0].append(mq)
    return result
