"""Hypothesis properties of the allocators, checked against straightforward per-client ports
of the Java strategies (one ``allocate(currentCID)`` call per client, ``indexOf`` and all)."""

from __future__ import annotations

from collections import Counter
from functools import cmp_to_key
from hashlib import md5

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlb.allocate import allocate, allocate_for, allocate_sorted, consistent_hash
from rmqlb.allocate.consistent_hash import (
    UTF_8,
    HashMemo,
    allocate_consistent_hash,
    build_ring,
    ring_hashes,
)
from rmqlb.model.javaorder import java_key, java_sorted
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    ConsistentHash,
    HashCharset,
    MachineRoom,
    StrategySpec,
)

# --------------------------------------------------------------------------- generators

BMP_HIGH = st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF)
SUPPLEMENTARY = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF)
ASCII = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
# Strings mixing the three ranges whose orders differ between code points and UTF-16 units.
MIXED_TEXT = st.text(st.one_of(ASCII, BMP_HIGH, SUPPLEMENTARY), max_size=6)

BROKERS = st.sampled_from(["broker-a", "broker-b", "hz@broker-c", "sh@broker-d", "\ufffdb", "😀b"])
QUEUE = st.builds(MessageQueue, st.sampled_from(["T", "TopicTest"]), BROKERS, st.integers(0, 40))
QUEUES = st.lists(QUEUE, min_size=1, max_size=60, unique=True)
CLIENT_ID = st.text(st.one_of(ASCII, BMP_HIGH, SUPPLEMENTARY), min_size=1, max_size=8)
DISTINCT_CIDS = st.lists(CLIENT_ID, min_size=1, max_size=12, unique=True)
CIDS_WITH_DUPLICATES = st.lists(
    st.sampled_from(["a", "b", "c", "10.0.0.1@1", "c106893", "c147464"]), min_size=1, max_size=8
)
SPLITTING = st.one_of(st.just(Avg()), st.just(AvgByCircle()), st.integers(1, 6).map(ConsistentHash))
ANY_STRATEGY = st.one_of(
    SPLITTING, st.integers(0, 3).map(ConsistentHash), st.just(MachineRoom(frozenset({"hz"})))
)


def utf16_cmp(a: str, b: str) -> int:
    """Java ``String.compareTo`` sign: compare UTF-16 code units (big-endian bytes)."""
    x, y = a.encode("utf-16-be", "surrogatepass"), b.encode("utf-16-be", "surrogatepass")
    return (x > y) - (x < y)


def queue_cmp(p: MessageQueue, q: MessageQueue) -> int:
    """Java ``MessageQueue.compareTo``."""
    return (
        utf16_cmp(p.topic, q.topic)
        or utf16_cmp(p.broker_name, q.broker_name)
        or (p.queue_id > q.queue_id) - (p.queue_id < q.queue_id)
    )


# --------------------------------------------------------------------------- Java, per client


def java_avg(cid: str, mq_all: list[MessageQueue], cid_all: list[str]) -> list[MessageQueue]:
    index = cid_all.index(cid)
    mod = len(mq_all) % len(cid_all)
    if len(mq_all) <= len(cid_all):
        average = 1
    elif mod > 0 and index < mod:
        average = len(mq_all) // len(cid_all) + 1
    else:
        average = len(mq_all) // len(cid_all)
    start = index * average if mod > 0 and index < mod else index * average + mod
    span = min(average, len(mq_all) - start)
    return [mq_all[(start + i) % len(mq_all)] for i in range(span)]


def java_circle(cid: str, mq_all: list[MessageQueue], cid_all: list[str]) -> list[MessageQueue]:
    index = cid_all.index(cid)
    return [mq_all[i] for i in range(index, len(mq_all)) if i % len(cid_all) == index]


def ring_hash(key: str) -> int:
    """Java's ``MD5Hash.hash``: the first four bytes of MD5(UTF-8 key), unsigned big-endian."""
    return int.from_bytes(md5(key.encode("utf-8", "replace")).digest()[:4], "big")


def java_ring(cid_all: list[str], vnodes: int) -> dict[int, str]:
    """``ConsistentHashRouter``'s constructor, literally: addNode per client, TreeMap.put."""
    ring: dict[int, str] = {}
    for cid in cid_all:
        existing = sum(1 for owner in ring.values() if owner == cid)
        for i in range(vnodes):
            ring[ring_hash(f"{cid}-{i + existing}")] = cid
    return ring


def java_consistent_hash(
    cid: str, mq_all: list[MessageQueue], cid_all: list[str], vnodes: int
) -> list[MessageQueue]:
    ring = java_ring(cid_all, vnodes)
    if not ring:
        return []
    positions = sorted(ring)
    out = []
    for mq in mq_all:
        h = ring_hash(mq.java_string())
        tail = [p for p in positions if p >= h]
        if ring[tail[0] if tail else positions[0]] == cid:
            out.append(mq)
    return out


def java_machine_room(
    cid: str, mq_all: list[MessageQueue], cid_all: list[str], idcs: frozenset[str]
) -> list[MessageQueue]:
    index = cid_all.index(cid)
    pre = []
    for mq in mq_all:
        parts = mq.broker_name.split("@")
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) == 2 and parts[0] in idcs:
            pre.append(mq)
    mod, rem = divmod(len(pre), len(cid_all))
    out = pre[mod * index : mod * index + mod]
    if rem > index:
        out.append(pre[index + mod * len(cid_all)])
    return out


def java_group(
    spec: StrategySpec, mq_all: list[MessageQueue], cid_all: list[str]
) -> dict[str, list[MessageQueue]]:
    """What every client of the group computes for itself."""
    out = {}
    for cid in dict.fromkeys(cid_all):
        match spec:
            case Avg():
                out[cid] = java_avg(cid, mq_all, cid_all)
            case AvgByCircle():
                out[cid] = java_circle(cid, mq_all, cid_all)
            case ConsistentHash(virtual_node_cnt=n):
                out[cid] = java_consistent_hash(cid, mq_all, cid_all, n)
            case MachineRoom(consumeridcs=idcs):
                out[cid] = java_machine_room(cid, mq_all, cid_all, idcs)
            case _:
                raise AssertionError(spec)
    return out


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(spec=SPLITTING, mqs=QUEUES, cids=DISTINCT_CIDS)
def test_every_queue_exactly_once(
    spec: StrategySpec, mqs: list[MessageQueue], cids: list[str]
) -> None:
    got = allocate(spec, mqs, cids)
    held = Counter(mq for queues in got.values() for mq in queues)
    assert set(held) == set(mqs)
    assert set(held.values()) == {1}
    assert set(got) == set(cids)


@settings(max_examples=150, deadline=None)
@given(
    spec=ANY_STRATEGY,
    mqs=QUEUES,
    cids=DISTINCT_CIDS,
    data=st.data(),
)
def test_independent_of_input_order(
    spec: StrategySpec, mqs: list[MessageQueue], cids: list[str], data: st.DataObject
) -> None:
    shuffled_q = data.draw(st.permutations(mqs))
    shuffled_c = data.draw(st.permutations(cids))
    assert allocate(spec, mqs, cids) == allocate(spec, shuffled_q, shuffled_c)


@settings(max_examples=150, deadline=None)
@given(spec=ANY_STRATEGY, mqs=QUEUES, cids=DISTINCT_CIDS)
def test_matches_java_per_client(
    spec: StrategySpec, mqs: list[MessageQueue], cids: list[str]
) -> None:
    mq_all = sorted(mqs, key=cmp_to_key(queue_cmp))
    cid_all = sorted(cids, key=cmp_to_key(utf16_cmp))
    assert allocate(spec, mqs, cids) == java_group(spec, mq_all, cid_all)


@settings(max_examples=150, deadline=None)
@given(spec=ANY_STRATEGY, mqs=QUEUES, cids=CIDS_WITH_DUPLICATES)
def test_duplicated_client_ids_behave_like_index_of(
    spec: StrategySpec, mqs: list[MessageQueue], cids: list[str]
) -> None:
    mq_all = sorted(mqs, key=cmp_to_key(queue_cmp))
    cid_all = sorted(cids, key=cmp_to_key(utf16_cmp))
    got = allocate_sorted(spec, mq_all, cid_all)
    assert got == java_group(spec, mq_all, cid_all)
    assert list(got) == list(dict.fromkeys(cid_all))


@settings(max_examples=150, deadline=None)
@given(
    spec=ANY_STRATEGY,
    mqs=QUEUES,
    cids=CIDS_WITH_DUPLICATES,
    asked=st.lists(st.sampled_from(["a", "c", "c147464", "x"]), max_size=4),
)
def test_allocate_for_is_the_whole_groups_allocation_of_the_clients_asked(
    spec: StrategySpec, mqs: list[MessageQueue], cids: list[str], asked: list[str]
) -> None:
    mq_all = sorted(mqs, key=cmp_to_key(queue_cmp))
    cid_all = sorted(cids, key=cmp_to_key(utf16_cmp))
    whole = allocate_sorted(spec, mq_all, cid_all)
    got = allocate_for(spec, mq_all, cid_all, asked)
    assert got == {cid: whole[cid] for cid in asked if cid in whole}


@settings(max_examples=200, deadline=None)
@given(
    cids=st.lists(
        st.sampled_from(["c106893", "c147464", "c184767", "c189073", "a", "b"]), max_size=7
    ),
    vnodes=st.integers(0, 4),
)
def test_build_ring_matches_java_tree_map_loop(cids: list[str], vnodes: int) -> None:
    # The alphabet holds two colliding pairs (c106893/c147464, c184767/c189073 at vnode 0).
    cid_all = java_sorted(cids)
    assert build_ring(cid_all, vnodes) == java_ring(cid_all, vnodes)


@settings(max_examples=300, deadline=None)
@given(st.lists(MIXED_TEXT, max_size=12))
def test_java_order_matches_utf16_comparator(items: list[str]) -> None:
    assert java_sorted(items) == sorted(items, key=cmp_to_key(utf16_cmp))
    for a in items[:4]:
        for b in items[:4]:
            assert (java_key(a) < java_key(b)) == (utf16_cmp(a, b) < 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(MessageQueue, MIXED_TEXT, MIXED_TEXT, st.integers(0, 3)), max_size=10))
def test_queue_order_matches_java_compare_to(mqs: list[MessageQueue]) -> None:
    assert sorted(mqs, key=queue_sort_key) == sorted(mqs, key=cmp_to_key(queue_cmp))


def test_supplementary_sorts_before_high_bmp() -> None:
    # U+1F600 is D83D DE00 in UTF-16, below U+FFFD; by code point it is above.
    assert java_sorted(["\ufffd", "\U0001f600"]) == ["\U0001f600", "\ufffd"]


# --------------------------------------------------------------------------- numpy fast path


def _both_paths(
    mqs: list[MessageQueue], cids: list[str], vnodes: int, charset: HashCharset = UTF_8
) -> tuple[dict[str, list[MessageQueue]], dict[str, list[MessageQueue]]]:
    np = pytest.importorskip("numpy")
    mq_all = sorted(mqs, key=queue_sort_key)
    cid_all = java_sorted(cids)
    slow: dict[str, list[MessageQueue]] = {cid: [] for cid in cid_all}
    fast: dict[str, list[MessageQueue]] = {cid: [] for cid in cid_all}
    hashes = consistent_hash.hasher(None, charset)
    consistent_hash._route_python(mq_all, cid_all, vnodes, slow, hashes)
    consistent_hash._route_numpy(np, mq_all, vnodes, fast, charset)
    return slow, fast


@settings(max_examples=150, deadline=None)
@given(
    mqs=QUEUES,
    cids=st.lists(
        st.one_of(CLIENT_ID, st.sampled_from(["c106893", "c147464", "c184767", "c189073"])),
        min_size=1,
        max_size=12,
        unique=True,
    ),
    vnodes=st.integers(1, 5),
    charset=st.sampled_from(HashCharset),
)
def test_numpy_path_matches_python_path(
    mqs: list[MessageQueue], cids: list[str], vnodes: int, charset: HashCharset
) -> None:
    slow, fast = _both_paths(mqs, cids, vnodes, charset)
    assert fast == slow


def test_numpy_path_on_a_group_big_enough_to_use_it() -> None:
    cids = [f"10.0.{i // 256}.{i % 256}@{i}" for i in range(3_000)]
    mqs = [MessageQueue("T", f"broker-{b}", q) for b in range(30) for q in range(1_000)]
    assert len(cids) * 10 + len(mqs) >= consistent_hash.NUMPY_MIN_WORK
    slow, fast = _both_paths(mqs, cids, 10)
    assert fast == slow
    assert allocate(ConsistentHash(10), mqs, cids) == slow


def test_numpy_path_with_a_surrogate_key() -> None:
    slow, fast = _both_paths([MessageQueue("T", "b", i) for i in range(20)], ["a\ud800", "b"], 3)
    assert fast == slow


def test_gbk_keys_are_the_bytes_a_java_gbk_encoder_writes() -> None:
    """Java's GBK as OpenJDK 17 writes it (its bytes read off ``String.getBytes("GBK")``):
    Python's gbk codec, but for the euro sign and U+2641 (CP936 codes Python lacks), U+2295
    (Python writes it, Java does not), the private use characters of GBK's user-defined
    areas and those CP936 lends other codes (U+E766..U+E864; U+E76C has none, as its code
    went to the euro sign); a surrogate pair is one '?'."""
    text = "a€♁⊕杭\ue000\ue4c5\ue4c6\ue765\U0001f600"
    written = consistent_hash._java_encoded([text], HashCharset.GBK)[0]
    assert written.hex() == "61a2e3a8923fbabcaaa1fefea140a7a03f"
    lent = "\ue766\ue76b\ue76c\ue76d\ue7c7\ue7e2\ue810\ue815\ue843\ue844\ue864\ue865"
    written = consistent_hash._java_encoded([lent], HashCharset.GBK)[0]
    assert written.hex() == "a2aba2b03fa2e4a8bca958d7fafe50fe7efe80fea0" + "3f"


def test_a_us_ascii_ring_is_the_utf_8_ring_of_the_keys_with_question_marks() -> None:
    """US-ASCII writes '?' for each character it lacks (a surrogate pair is one): the ring's
    points are those of the '?' forms (what the real suite sees Java do); ASCII keys hash
    alike in both charsets."""
    keys = ["10.0.0.1@杭州-0", "a\U0001f600b-3", "x\ud800-1", "plain-7"]
    marked = ["10.0.0.1@??-0", "a?b-3", "x?-1", "plain-7"]
    assert ring_hashes(keys, HashCharset.US_ASCII) == ring_hashes(marked)
    assert ring_hashes(keys[3:], HashCharset.US_ASCII) == ring_hashes(keys[3:])
    assert ring_hashes(keys[:1], HashCharset.US_ASCII) != ring_hashes(keys[:1])
    cids = ["10.0.0.1@杭州", "10.0.0.2@北京"]
    mqs = [MessageQueue("T", "broker-a", i) for i in range(16)]
    ascii_ring = allocate(ConsistentHash(3, charset=HashCharset.US_ASCII), mqs, cids)
    marked_ring = allocate(ConsistentHash(3), mqs, ["10.0.0.1@??", "10.0.0.2@??"])
    assert list(ascii_ring) == cids
    assert list(ascii_ring.values()) == list(marked_ring.values())
    assert ascii_ring != allocate(ConsistentHash(3), mqs, cids)


# --------------------------------------------------------------------------- memoized hashes


@settings(max_examples=100, deadline=None)
@given(
    mqs=QUEUES,
    cids=st.one_of(DISTINCT_CIDS, CIDS_WITH_DUPLICATES),
    vnodes=st.lists(st.integers(0, 6), min_size=1, max_size=4),
)
def test_memoized_hashes_give_java_answer(
    mqs: list[MessageQueue], cids: list[str], vnodes: list[int]
) -> None:
    # One memo across several rings, as the proposal search uses it.
    memo = HashMemo()
    mq_all = sorted(mqs, key=cmp_to_key(queue_cmp))
    cid_all = sorted(cids, key=cmp_to_key(utf16_cmp))
    for n in vnodes:
        got = allocate_consistent_hash(mq_all, cid_all, n, memo)
        assert got == java_group(ConsistentHash(n), mq_all, cid_all)


def test_memo_hashes_each_key_once() -> None:
    memo = HashMemo()
    mq_all = [MessageQueue("T", "b", i) for i in range(8)]
    allocate_consistent_hash(mq_all, ["a", "b"], 10, memo)
    first = memo.hashed
    allocate_consistent_hash(mq_all, ["a", "b"], 12, memo)
    assert (first, memo.hashed) == (8 + 20, 8 + 24)
