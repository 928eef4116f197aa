"""Hand-checked worked examples: the seed write-ups' experiments and Java's corner cases.

Every expected value here was worked out by hand from the Java source, not by running rmqlb.
"""

from __future__ import annotations

from hashlib import md5

import pytest

from rmqlb.allocate import allocate
from rmqlb.allocate.consistent_hash import build_ring, ring_hashes
from rmqlb.allocate.machine_room import allocate_machine_room, in_rooms
from rmqlb.errors import AllocationError
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import Avg, AvgByCircle, ConsistentHash, MachineRoom

TOPIC = "lhy-test-topic"


def queues(count: int, broker: str = "broker-a", topic: str = TOPIC) -> list[MessageQueue]:
    return [MessageQueue(topic, broker, i) for i in range(count)]


def ids(assigned: list[MessageQueue]) -> list[int]:
    return [mq.queue_id for mq in assigned]


# --------------------------------------------------------------------------- AVG, the seeds


def test_sixteen_queues_three_consumers_split_6_5_5() -> None:
    # n=16, m=3: mod=1; index 0 < mod takes 16//3+1 = 6 from 0; index 1 takes 5 from
    # 1*5+1 = 6; index 2 takes 5 from 2*5+1 = 11.
    got = allocate(Avg(), queues(16), ["cid-2", "cid-0", "cid-1"])
    assert list(got) == ["cid-0", "cid-1", "cid-2"]
    assert ids(got["cid-0"]) == [0, 1, 2, 3, 4, 5]
    assert ids(got["cid-1"]) == [6, 7, 8, 9, 10]
    assert ids(got["cid-2"]) == [11, 12, 13, 14, 15]


def test_sixteen_queues_two_processes_split_8_8() -> None:
    # The seed's experiment: a second consumer process halves the 16 queues.
    got = allocate(Avg(), queues(16), ["192.168.0.7@2222", "192.168.0.7@1111"])
    assert ids(got["192.168.0.7@1111"]) == list(range(8))
    assert ids(got["192.168.0.7@2222"]) == list(range(8, 16))


def test_one_queue_two_consumers_leaves_one_idle() -> None:
    # n <= m: averageSize 1, the first client in Java order takes queue 0, the other nothing.
    got = allocate(Avg(), queues(1), ["consumer2", "consumer1"])
    assert got == {"consumer1": [MessageQueue(TOPIC, "broker-a", 0)], "consumer2": []}


def test_two_queues_three_consumers() -> None:
    got = allocate(Avg(), queues(2), ["c", "a", "b"])
    assert {cid: ids(qs) for cid, qs in got.items()} == {"a": [0], "b": [1], "c": []}


def test_two_queues_three_consumers_by_circle() -> None:
    got = allocate(AvgByCircle(), queues(2), ["c", "a", "b"])
    assert {cid: ids(qs) for cid, qs in got.items()} == {"a": [0], "b": [1], "c": []}


def test_ten_consumers_sixteen_queues_six_take_two() -> None:
    # design §1: 16 queues / 10 consumers -> 6 consumers hold 2, 4 hold 1.
    cids = [f"c{i}" for i in range(10)]
    sizes = [len(qs) for qs in allocate(Avg(), queues(16), cids).values()]
    assert sizes == [2, 2, 2, 2, 2, 2, 1, 1, 1, 1]


def test_queues_sorted_by_broker_then_id_before_allocating() -> None:
    mqs = queues(3, "broker-b") + queues(3, "broker-a")
    got = allocate(Avg(), mqs, ["x", "y"])
    assert [mq.label() for mq in got["x"]] == ["broker-a:0", "broker-a:1", "broker-a:2"]
    assert [mq.label() for mq in got["y"]] == ["broker-b:0", "broker-b:1", "broker-b:2"]


def test_empty_queue_list_throws_like_java() -> None:
    with pytest.raises(AllocationError, match="mqAll is null or mqAll empty"):
        allocate(Avg(), [], ["a"])


# --------------------------------------------------------------------------- MACHINE_ROOM


@pytest.mark.parametrize(
    ("broker", "idcs", "counted"),
    [
        ("roomA@broker-a", {"roomA"}, True),
        ("roomA@", {"roomA"}, False),  # Java drops the trailing "": one part
        ("@x", {""}, True),  # a leading "" is kept: ["", "x"], and "" is a listed room
        ("@x", {"x"}, False),
        ("a@b@c", {"a"}, False),  # three parts
        ("roomA", {"roomA"}, False),  # no "@": one part
        ("roomB@broker-b", {"roomA"}, False),
    ],
)
def test_machine_room_split_semantics(broker: str, idcs: set[str], counted: bool) -> None:
    assert in_rooms(broker, frozenset(idcs)) is counted
    got = allocate(MachineRoom(frozenset(idcs)), [MessageQueue(TOPIC, broker, 0)], ["c1"])
    assert got["c1"] == ([MessageQueue(TOPIC, broker, 0)] if counted else [])


def test_machine_room_deals_blocks_then_remainder() -> None:
    # 5 counted queues, 2 clients: mod=2, rem=1. c0 takes [0,2) plus index 0+2*2 = 4;
    # c1 takes [2,4). The broker outside the rooms is consumed by nobody.
    mqs = queues(5, "hz@b1") + queues(2, "sh@b2")
    got = allocate_machine_room(
        sorted(mqs, key=lambda q: (q.broker_name, q.queue_id)), ["c0", "c1"], frozenset({"hz"})
    )
    assert ids(got["c0"]) == [0, 1, 4]
    assert ids(got["c1"]) == [2, 3]


# --------------------------------------------------------------------------- CONSISTENT_HASH


def ring_hash(key: str) -> int:
    """Java's ``MD5Hash.hash`` by hand: the first four bytes of MD5(UTF-8 key), big-endian;
    ``String.getBytes(UTF_8)`` writes an unpaired surrogate as ``?``."""
    digest = md5(key.encode("utf-8", "replace")).digest()
    return (digest[0] << 24) | (digest[1] << 16) | (digest[2] << 8) | digest[3]


def test_ring_hash_is_first_four_md5_bytes_big_endian() -> None:
    assert ring_hashes(["10.0.0.1@1234-0"]) == [ring_hash("10.0.0.1@1234-0")]


def test_unpaired_surrogate_hashes_as_question_mark() -> None:
    assert ring_hashes(["a\ud800-0"]) == ring_hashes(["a?-0"])
    # One key that cannot be encoded: the whole batch falls back to the same replacement.
    assert ring_hashes(["b-0", "a\ud800-0"]) == [ring_hash("b-0"), ring_hash("a?-0")]
    assert build_ring(["a\ud800"], 1) == {ring_hash("a?-0"): "a\ud800"}


def test_duplicate_client_id_continues_numbering() -> None:
    # getExistingReplicas: the second "c" finds 10 nodes of "c" already, so adds c-10..c-19.
    ring = build_ring(["c", "c"], 10)
    assert ring == {ring_hash(f"c-{i}"): "c" for i in range(20)}
    assert len(ring) == 20


# Two client ids whose only virtual node ("<id>-0") hashes to the same 32-bit position:
# md5("c106893-0") and md5("c147464-0") both start with c9 73 fd 44 (found by searching
# "c<n>-0" for n up to ~150,000).
COLLIDING = ("c106893", "c147464")


def test_collision_pair_really_collides() -> None:
    first, second = COLLIDING
    assert md5(f"{first}-0".encode()).digest()[:4] == md5(f"{second}-0".encode()).digest()[:4]
    assert ring_hash(f"{first}-0") == ring_hash(f"{second}-0")


def test_equal_hash_replaces_earlier_node() -> None:
    # TreeMap.put on an equal key replaces: the later client in sorted cidAll owns the point.
    first, second = COLLIDING
    ring = build_ring([first, second], 1)
    assert ring == {ring_hash(f"{first}-0"): second}
    got = allocate(ConsistentHash(1), queues(8), [second, first])
    assert got[first] == []
    assert ids(got[second]) == list(range(8))


def test_replaced_node_with_duplicate_client() -> None:
    # cidAll = [A, A, B]: A-0 at h, then A-1 (existing 1), then B-0 at h replaces A-0.
    a, b = COLLIDING
    ring = build_ring([a, a, b], 1)
    assert ring == {ring_hash(f"{a}-0"): b, ring_hash(f"{a}-1"): a}


def test_zero_virtual_nodes_assign_nothing() -> None:
    got = allocate(ConsistentHash(0), queues(4), ["b", "a"])
    assert got == {"a": [], "b": []}


def test_negative_virtual_nodes_throw_like_the_constructor() -> None:
    with pytest.raises(AllocationError, match="illegal virtualNodeCnt :-1"):
        allocate(ConsistentHash(-1), queues(4), ["a"])


def test_lookup_takes_first_position_at_or_above_and_wraps() -> None:
    # Two clients with one node each; a queue goes to the first node >= its hash, and past
    # the largest node to the smallest.
    lo, hi = sorted(["a", "b"], key=lambda c: ring_hash(f"{c}-0"))
    lo_pos, hi_pos = ring_hash(f"{lo}-0"), ring_hash(f"{hi}-0")
    got = allocate(ConsistentHash(1), queues(64), ["a", "b"])
    for cid, mine in got.items():
        for mq in mine:
            h = ring_hash(mq.java_string())
            expected = hi if lo_pos < h <= hi_pos else lo
            assert cid == expected, (mq, h)
    assert sum(len(v) for v in got.values()) == 64
