"""MACHINE_ROOM_NEARBY — ``AllocateMachineRoomNearby``: consume in your own room first.

Queues are grouped by the room of their broker and clients by their own room (both rooms
sorted like a Java ``TreeMap<String, ...>``). A client takes:

1. its share, by the inner strategy, of its room's queues among its room's clients; then
2. for every room that has queues but no client at all, in room order, its share by the
   inner strategy of that room's queues among *all* clients.

Any queue or client whose room is unknown or empty makes Java throw
``IllegalArgumentException("Machine room is null for mq ...")`` (queues are resolved first).

Worked example, inner AVG, ``hz`` has brokers/queues ``a:0 a:1`` and client ``c1``, ``sh``
has ``b:0 b:1`` and no client, ``gz`` has client ``c2`` and no queue::

    c1 -> a:0 a:1 b:0      (all of hz, then half of sh)
    c2 -> b:1              (nothing in gz, the other half of sh)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rmqlb.allocate._common import Assignment, java_check
from rmqlb.errors import AllocationError
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import RoomRule

InnerAllocate = Callable[[Sequence[MessageQueue], Sequence[str]], Assignment]


def allocate_nearby(
    mq_all: Sequence[MessageQueue],
    cid_all: Sequence[str],
    inner: InnerAllocate,
    broker_rooms: RoomRule,
    consumer_rooms: RoomRule,
) -> Assignment:
    """Allocate a whole group at once; inputs already in Java order."""
    java_check(mq_all, cid_all)
    if not cid_all:
        return {}
    queues_by_room: dict[str, list[MessageQueue]] = {}
    for mq in mq_all:
        room = broker_rooms.resolve(mq.broker_name)
        if not room:
            raise AllocationError(f"Machine room is null for mq {mq.java_string()}")
        queues_by_room.setdefault(room, []).append(mq)
    clients_by_room: dict[str, list[str]] = {}
    room_of: dict[str, str] = {}
    for cid in cid_all:
        room = consumer_rooms.resolve(cid)
        if not room:
            raise AllocationError(f"Machine room is null for consumer id {cid}")
        clients_by_room.setdefault(room, []).append(cid)
        room_of[cid] = room

    result: Assignment = {cid: [] for cid in cid_all}
    for room, clients in clients_by_room.items():
        local = queues_by_room.get(room)
        if local:
            for cid, queues in inner(local, clients).items():
                result[cid].extend(queues)
    for room in sorted(queues_by_room, key=java_key):
        if room in clients_by_room:
            continue
        for cid, queues in inner(queues_by_room[room], cid_all).items():
            result[cid].extend(queues)
    return result
