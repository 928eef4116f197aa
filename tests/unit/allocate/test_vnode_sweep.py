"""``sweep_virtual_nodes``: one pass over ring(top) .. ring(1) gives, for every count, exactly
the owners ``allocate_consistent_hash`` computes for that count (equal hashes included)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlb.allocate import consistent_hash
from rmqlb.allocate.consistent_hash import (
    allocate_consistent_hash,
    queue_keys,
    ring_hashes,
    sweep_virtual_nodes,
)
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.strategy import HashCharset

ASCII = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
SUPPLEMENTARY = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF)
CLIENT_IDS = st.lists(
    st.text(st.one_of(ASCII, SUPPLEMENTARY), min_size=1, max_size=10),
    min_size=1,
    max_size=6,
    unique=True,
)
QUEUES = st.lists(
    st.builds(
        MessageQueue,
        st.sampled_from(["T", "%RETRY%G"]),
        st.sampled_from(["broker-a", "broker-b", "hz@broker-c"]),
        st.integers(0, 30),
    ),
    min_size=1,
    max_size=40,
    unique=True,
)


def owners_by_count(
    cids: Sequence[str], queues: Sequence[MessageQueue], top: int
) -> Iterator[tuple[int, dict[MessageQueue, str]]]:
    """The sweep's moves replayed: every count with the owner of every queue."""
    owner: dict[int, int] = {}
    hashes = consistent_hash.ring_hashes(queue_keys(queues))  # looked up late: tests patch it
    for n, moves in sweep_virtual_nodes(cids, hashes, top):
        for q, client in moves:
            owner[q] = client
        yield n, {queues[q]: cids[c] for q, c in owner.items()}


def allocated_owners(
    cids: Sequence[str], queues: Sequence[MessageQueue], n: int
) -> dict[MessageQueue, str]:
    allocation = allocate_consistent_hash(queues, cids, n)
    return {mq: cid for cid, mqs in allocation.items() for mq in mqs}


def check_every_count(cids: list[str], queues: list[MessageQueue], top: int) -> None:
    cids = sorted(cids, key=java_key)
    queues = sorted(queues, key=queue_sort_key)
    seen = []
    for n, owners in owners_by_count(cids, queues, top):
        seen.append(n)
        assert owners == allocated_owners(cids, queues, n), f"virtualNodeCnt {n}"
    assert seen == list(range(top, 0, -1))


@settings(max_examples=60, deadline=None)
@given(CLIENT_IDS, QUEUES, st.integers(1, 40))
def test_every_count_matches_the_allocator(
    cids: list[str], queues: list[MessageQueue], top: int
) -> None:
    check_every_count(cids, queues, top)


@pytest.mark.parametrize("buckets", [7, 29, 101])
def test_equal_hashes_keep_the_last_insert_as_treemap_put(
    buckets: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a hash squeezed into a few buckets most ring points collide: the sweep must keep,
    at every count, the point TreeMap.put leaves (the allocator is the reference)."""
    real = ring_hashes

    def squeezed(keys: Sequence[str], charset: HashCharset = HashCharset.UTF_8) -> list[int]:
        return [h % buckets for h in real(keys, charset)]

    monkeypatch.setattr(consistent_hash, "ring_hashes", squeezed)
    cids = [f"10.0.0.{i}@{4000 + i}#{i * 7919}" for i in range(5)]
    queues = [MessageQueue("T", b, i) for b in ("broker-a", "broker-b") for i in range(12)]
    check_every_count(cids, queues, 25)


def test_nothing_to_sweep() -> None:
    assert list(sweep_virtual_nodes([], [1, 2], 5)) == []
    assert list(sweep_virtual_nodes(["a"], [1], 0)) == []
