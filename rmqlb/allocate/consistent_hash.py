"""CONSISTENT_HASH — ``AllocateMessageQueueConsistentHash``: an MD5 hash ring.

Java builds, for every client, a ring (a ``TreeMap<Long, VirtualNode>``) holding
``virtualNodeCnt`` virtual nodes per client of sorted ``cidAll``; virtual node ``i`` of
client ``c`` sits at ``hash(c + "-" + i)``. A queue goes to the first ring position
``>= hash("MessageQueue [topic=T, brokerName=B, queueId=N]")``, wrapping to the smallest.
``hash`` is the first four bytes of the MD5 of the key's bytes, read as an unsigned big-endian
integer; the bytes are ``String.getBytes()``'s, in the JVM's default charset
(:class:`~rmqlb.model.strategy.HashCharset`: UTF-8, or the locale's of an older JVM, which
writes ``?`` for every character it lacks). Details that decide exactness:

* ``TreeMap.put`` on an equal hash *replaces* the earlier virtual node: the later client wins.
* A client listed twice adds its virtual nodes again numbered from the count it already has
  on the ring (``getExistingReplicas``): ``c-10 .. c-19`` the second time.
* ``virtualNodeCnt`` 0 gives an empty ring: nobody gets anything.

Every client builds the same ring, so rmqlb builds it once and routes every queue once.
For big groups (at least :data:`NUMPY_MIN_WORK` ring points plus queues, distinct client ids)
the sort and the ring lookup run in numpy when it is installed (it comes with the ``spark``
extra); the result is identical, only the bookkeeping moves from Python to C.

Worked example: clients ``a`` and ``b`` with 1 virtual node each sit at ``md5("a-0")[:4]``
and ``md5("b-0")[:4]``; a queue hashing between them goes to the upper one.
"""

from __future__ import annotations

import codecs
import importlib
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache, partial
from itertools import groupby
from operator import attrgetter
from struct import Struct
from typing import Any, TypeVar

from rmqlb.allocate._common import Assignment, java_check
from rmqlb.errors import AllocationError
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import HashCharset

UTF_8 = HashCharset.UTF_8

_FIRST_WORD = Struct(">I").unpack_from
_TOPIC_BROKER = attrgetter("topic", "broker_name")
T = TypeVar("T")

NUMPY_MIN_WORK = 50_000
"""Ring points + queues from which the numpy path pays for importing numpy."""


#: Java's GBK encoder where Python's ``gbk`` codec differs from it outside the private use
#: area: the characters Python cannot write that Java writes (CP936's codes) ...
_JAVA_GBK_ONLY = {"\u20ac": b"\xa2\xe3", "\u2641": b"\xa8\x92"}
#: ... and the one Python writes that Java does not.
_PYTHON_GBK_ONLY = str.maketrans({"\u2295": "?"})
_JAVA_GBK_ERRORS = "rmqlb-java-gbk"


#: The codes CP936 lends private use characters U+E766..U+E864, as Java's GBK encoder writes
#: them (OpenJDK 17's ``String.getBytes("GBK")``, every one compared): runs of (first
#: character, last character, code of the first); U+E76C, whose code went to the euro sign,
#: has none (``?``).
_JAVA_GBK_LENT = (
    (0xE766, 0xE76B, 0xA2AB), (0xE76D, 0xE76D, 0xA2E4), (0xE76E, 0xE76F, 0xA2EF),
    (0xE770, 0xE771, 0xA2FD), (0xE772, 0xE77C, 0xA4F4), (0xE77D, 0xE784, 0xA5F7),
    (0xE785, 0xE78C, 0xA6B9), (0xE78D, 0xE793, 0xA6D9), (0xE794, 0xE795, 0xA6EC),
    (0xE796, 0xE796, 0xA6F3), (0xE797, 0xE79F, 0xA6F6), (0xE7A0, 0xE7AE, 0xA7C2),
    (0xE7AF, 0xE7BB, 0xA7F2), (0xE7BC, 0xE7C6, 0xA896), (0xE7C7, 0xE7C7, 0xA8BC),
    (0xE7C8, 0xE7C8, 0xA8BF), (0xE7C9, 0xE7CC, 0xA8C1), (0xE7CD, 0xE7E1, 0xA8EA),
    (0xE7E2, 0xE7E2, 0xA958), (0xE7E3, 0xE7E3, 0xA95B), (0xE7E4, 0xE7E6, 0xA95D),
    (0xE7E7, 0xE7F3, 0xA989), (0xE7F4, 0xE800, 0xA997), (0xE801, 0xE80F, 0xA9F0),
    (0xE810, 0xE814, 0xD7FA), (0xE815, 0xE843, 0xFE50), (0xE844, 0xE864, 0xFE80),
)  # fmt: skip


def _gbk_private_use(ch: str) -> bytes:
    """The code Java's GBK encoder writes for private use character ``ch``: U+E000..U+E4C5
    fill rows AA..AF and F8..FE (cells A1..FE) of GBK's user-defined areas, U+E4C6..U+E765
    rows A1..A7 (cells 40..7E, 80..A0), U+E766..U+E864 the codes CP936 lends them
    (:data:`_JAVA_GBK_LENT`); ``?`` for any other character."""
    code = ord(ch)
    i = code - 0xE000
    if 0 <= i < 13 * 94:
        row, cell = divmod(i, 94)
        return bytes((0xAA + row if row < 6 else 0xF8 + row - 6, 0xA1 + cell))
    i -= 13 * 94
    if 0 <= i < 7 * 96:
        row, cell = divmod(i, 96)
        return bytes((0xA1 + row, 0x40 + cell if cell < 63 else 0x80 + cell - 63))
    for first, last, lent in _JAVA_GBK_LENT:
        if first <= code <= last:
            return (lent + code - first).to_bytes(2, "big")
    return b"?"


def _java_gbk_errors(exc: UnicodeError) -> tuple[bytes, int]:
    """What Java's GBK encoder writes for the characters Python's codec cannot: CP936's
    code, the code of a private use character (:func:`_gbk_private_use`), else ``?`` (a
    surrogate pair is one character)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start : exc.end]
    out = b"".join(_JAVA_GBK_ONLY.get(ch) or _gbk_private_use(ch) for ch in text)
    return out, exc.end


codecs.register_error(_JAVA_GBK_ERRORS, _java_gbk_errors)


def _java_encoded(keys: Sequence[str], charset: HashCharset) -> list[bytes]:
    """``String.getBytes()`` of every key in ``charset``, other than UTF-8: ``?`` for each
    character the charset cannot write."""
    codec = charset.codec
    if charset is HashCharset.GBK:
        table = _PYTHON_GBK_ONLY
        return [k.translate(table).encode(codec, _JAVA_GBK_ERRORS) for k in keys]
    return [k.encode(codec, "replace") for k in keys]


def ring_hashes(keys: Sequence[str], charset: HashCharset = UTF_8) -> list[int]:
    """Java ``MD5Hash.hash`` of every key, in one tight loop (the hot path of the strategy):
    the first 4 bytes of MD5(key in ``charset``), unsigned big-endian. A character the
    charset cannot write (an unpaired surrogate in UTF-8, any non-ASCII one in US-ASCII, a
    surrogate pair counting as one) is written ``?``, as ``String.getBytes`` does."""
    from hashlib import md5  # noqa: PLC0415  (hashlib loads OpenSSL: only rings need it)

    word, digest = _FIRST_WORD, md5
    if charset is not UTF_8:
        return [word(digest(b).digest())[0] for b in _java_encoded(keys, charset)]
    try:
        return [word(digest(k.encode()).digest())[0] for k in keys]
    except UnicodeEncodeError:  # an unpaired surrogate somewhere: Java writes "?"
        return [word(digest(k.encode("utf-8", "replace")).digest())[0] for k in keys]


def as_hashed(key: str, charset: HashCharset) -> str:
    """``key`` as a ring in ``charset`` hashes it: ``?`` for every character the charset
    cannot write. Keys alike here take one ring position.

    >>> as_hashed("10.0.0.1@杭州", HashCharset.US_ASCII), as_hashed("a\U0001f600", UTF_8)
    ('10.0.0.1@??', 'a😀')
    """
    if charset is UTF_8:
        return key.encode("utf-8", "replace").decode()
    return _java_encoded([key], charset)[0].decode(charset.codec, "replace")


Hasher = Callable[[Sequence[str]], list[int]]
"""How a list of keys becomes ring positions: :func:`ring_hashes`, or a :class:`HashMemo`."""


class HashMemo:
    """:func:`ring_hashes` in ``charset`` that remembers every key it hashed.

    For searches that allocate one group many times with slowly growing rings (virtual node
    counts 11, 12, 13 ...): each key is hashed once, the answer is the same.
    """

    def __init__(self, charset: HashCharset = UTF_8) -> None:
        self.charset = charset
        self.known: dict[str, int] = {}
        self.hashed = 0

    def __call__(self, keys: Sequence[str]) -> list[int]:
        known = self.known
        missing = [k for k in dict.fromkeys(keys) if k not in known]
        if missing:
            known.update(zip(missing, ring_hashes(missing, self.charset), strict=True))
            self.hashed += len(missing)
        return list(map(known.__getitem__, keys))


def hasher(memo: HashMemo | None, charset: HashCharset) -> Hasher:
    """``memo`` where it hashes in ``charset``, else :func:`ring_hashes` in ``charset``."""
    if memo is not None and memo.charset is charset:
        return memo
    return partial(ring_hashes, charset=charset)


def check_virtual_node_cnt(virtual_node_cnt: int) -> None:
    """The constructor's check: a negative count throws before any allocation."""
    if virtual_node_cnt < 0:
        raise AllocationError(f"illegal virtualNodeCnt :{virtual_node_cnt}")


def build_ring(
    cid_all: Sequence[str], virtual_node_cnt: int, charset: HashCharset = UTF_8
) -> dict[int, str]:
    """The hash ring as Java's ``ConsistentHashRouter`` leaves it: position -> client id."""
    values = {cid: cid for cid in cid_all}
    return _ring(cid_all, virtual_node_cnt, values, partial(ring_hashes, charset=charset))


def _ring(
    cid_all: Sequence[str],
    virtual_node_cnt: int,
    value: Mapping[str, T],
    hashes: Hasher = ring_hashes,
) -> dict[int, T]:
    """The ring with ``value[client id]`` at every position of that client."""
    if virtual_node_cnt <= 0:
        return {}
    if len(set(cid_all)) == len(cid_all):
        suffixes = ["-" + str(i) for i in range(virtual_node_cnt)]
        keys = [cid + suffix for cid in cid_all for suffix in suffixes]
        values = [v for v in map(value.__getitem__, cid_all) for _ in suffixes]
        # dict() keeps the last value for an equal key: TreeMap.put's replace, in insert order.
        return dict(zip(hashes(keys), values, strict=True))
    ring: dict[int, str] = {}
    owned: dict[str, int] = {}
    for cid in cid_all:
        existing = owned.get(cid, 0)
        for i in range(virtual_node_cnt):
            (position,) = hashes([cid + "-" + str(i + existing)])
            previous = ring.get(position)
            if previous is not None:
                owned[previous] -= 1
            ring[position] = cid
            owned[cid] = owned.get(cid, 0) + 1
    return {position: value[cid] for position, cid in ring.items()}


def queue_keys(mq_all: Sequence[MessageQueue]) -> list[str]:
    """``MessageQueue.toString()`` of every queue (what the ring routes on)."""
    keys: list[str] = []
    for (topic, broker), run in groupby(mq_all, key=_TOPIC_BROKER):
        prefix = f"MessageQueue [topic={topic}, brokerName={broker}, queueId="
        keys.extend([f"{prefix}{mq.queue_id}]" for mq in run])
    return keys


def allocate_consistent_hash(
    mq_all: Sequence[MessageQueue],
    cid_all: Sequence[str],
    virtual_node_cnt: int,
    hashes: HashMemo | None = None,
    charset: HashCharset = UTF_8,
) -> Assignment:
    """Allocate a whole group at once (one ring); inputs already in Java order.

    ``hashes`` remembers ring and queue hashes across calls (same answer, no numpy path),
    when it hashes in ``charset``, the clients' JVM charset.
    """
    check_virtual_node_cnt(virtual_node_cnt)
    java_check(mq_all, cid_all)
    result: Assignment = {cid: [] for cid in cid_all}
    if virtual_node_cnt == 0 or not cid_all:
        return result
    work = len(cid_all) * virtual_node_cnt + len(mq_all)
    big = work >= NUMPY_MIN_WORK and len(result) == len(cid_all) and hashes is None
    np = _numpy() if big else None
    if np is not None:
        _route_numpy(np, mq_all, virtual_node_cnt, result, charset)
    else:
        _route_python(mq_all, cid_all, virtual_node_cnt, result, hasher(hashes, charset))
    return result


def _route_python(
    mq_all: Sequence[MessageQueue],
    cid_all: Sequence[str],
    virtual_node_cnt: int,
    result: Assignment,
    hashes: Hasher = ring_hashes,
) -> None:
    """Build the ring and append every queue to its owner's list in ``result``."""
    ring = _ring(cid_all, virtual_node_cnt, result, hashes)
    positions = sorted(ring)
    owners = list(map(ring.__getitem__, positions))
    owners.append(owners[0])  # past the largest position: wrap to the smallest
    lookup = bisect_left
    slots = [lookup(positions, h) for h in hashes(queue_keys(mq_all))]
    for mq, slot in zip(mq_all, slots, strict=True):
        owners[slot].append(mq)


@cache
def _numpy() -> Any:
    """numpy when installed, else ``None`` (imported on first use only: start-up stays lean)."""
    try:
        return importlib.import_module("numpy")
    except ImportError:
        return None


def _first_words(np: Any, keys: Sequence[str], charset: HashCharset = UTF_8) -> Any:
    """:func:`ring_hashes` as a numpy ``uint32`` array."""
    from hashlib import md5  # noqa: PLC0415

    digest = md5
    if charset is not UTF_8:
        raw = b"".join([digest(b).digest()[:4] for b in _java_encoded(keys, charset)])
        return np.frombuffer(raw, dtype=">u4").astype(np.uint32)
    try:
        raw = b"".join([digest(k.encode()).digest()[:4] for k in keys])
    except UnicodeEncodeError:  # an unpaired surrogate somewhere: Java writes "?"
        raw = b"".join([digest(k.encode("utf-8", "replace")).digest()[:4] for k in keys])
    return np.frombuffer(raw, dtype=">u4").astype(np.uint32)


def _route_numpy(
    np: Any,
    mq_all: Sequence[MessageQueue],
    virtual_node_cnt: int,
    result: Assignment,
    charset: HashCharset = UTF_8,
) -> None:
    """:func:`_route_python` for distinct client ids (``result`` in cidAll order), in numpy.

    Ring point ``k`` (insert order) belongs to client ``k // virtual_node_cnt``. ``np.unique``
    keeps the first of equal values, so it runs on the reversed points: the *last* insert of
    an equal hash wins, as with ``TreeMap.put``. ``searchsorted`` (left) is the ceiling lookup.
    """
    suffixes = ["-" + str(i) for i in range(virtual_node_cnt)]
    points = _first_words(np, [cid + suffix for cid in result for suffix in suffixes], charset)
    positions, first = np.unique(points[::-1], return_index=True)
    owner = (len(points) - 1 - first) // virtual_node_cnt
    slots = np.searchsorted(positions, _first_words(np, queue_keys(mq_all), charset))
    slots[slots == len(positions)] = 0  # past the largest position: wrap to the smallest
    lists = list(result.values())
    for mq, client in zip(mq_all, owner[slots].tolist(), strict=True):
        lists[client].append(mq)


def sweep_virtual_nodes(
    cid_all: Sequence[str], queue_hashes: Sequence[int], top: int, charset: HashCharset = UTF_8
) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """Where every queue lands for each virtual node count from ``top`` down to 1, in one pass.

    Yields ``(n, moves)``: ``moves`` lists ``(queue index, client index)`` pairs, every queue
    for ``n = top``, then only the queues whose owner may have changed from ring(n+1) to
    ring(n); apply them in order (a queue may move twice in one step). ``cid_all`` are
    *distinct* client ids in Java order (a duplicated id numbers its second nodes from the
    count it already has, which breaks the prefix structure used here); ``queue_hashes`` are
    :func:`ring_hashes` of the queues' ``toString()``, in ``charset`` as the ring's points.

    Why it is cheap: ring(n) is ring(n+1) without one point per client (``cid-n``), so a
    queue changes owner only when the point it lands on disappears, and then moves to the next
    point still on the ring. Positions are hashed and sorted once, removed ones are skipped
    with union-find links, and a queue moves about ln(top) times in the whole pass. Equal
    positions keep the point ``TreeMap.put`` leaves there: the last inserted, i.e. the
    greatest (client index, node index) still on the ring.

    >>> from rmqlb.model.queue import MessageQueue
    >>> mqs = [MessageQueue("T", "broker-a", i) for i in range(4)]
    >>> steps = dict(sweep_virtual_nodes(["c1", "c2"], ring_hashes(queue_keys(mqs)), 3))
    >>> owners = dict(steps[3])
    >>> [["c1", "c2"][owners[q]] for q in range(4)] == [
    ...     cid for mq in mqs for cid, qs in allocate_consistent_hash(mqs, ["c1", "c2"], 3).items()
    ...     if mq in qs]
    True
    """
    if top < 1 or not cid_all:
        return
    keys = [cid + "-" + str(i) for cid in cid_all for i in range(top)]
    points = ring_hashes(keys, charset)  # point k: client k // top, node k % top
    order = sorted(range(len(points)), key=points.__getitem__)  # stable: equal hashes by k
    slot_of = [0] * len(points)
    slot_pos: list[int] = []
    winner: list[int] = []  # per slot: the point TreeMap keeps there (greatest k on the ring)
    shared: dict[int, list[int]] = {}  # slots holding several points, greatest k first
    for k in order:
        h = points[k]
        if slot_pos and slot_pos[-1] == h:
            s = len(slot_pos) - 1
            shared.setdefault(s, [winner[s]]).insert(0, k)
            winner[s] = k
        else:
            slot_pos.append(h)
            winner.append(k)
        slot_of[k] = len(slot_pos) - 1
    slots = len(slot_pos)
    link = list(range(slots))  # link[s] == s: s is on the ring

    def live_from(s: int) -> int:
        root = s
        while link[root] != root:
            root = link[root]
        while link[s] != root:  # path compression
            link[s], s = root, link[s]
        return root

    held: dict[int, list[int]] = {}
    first: list[tuple[int, int]] = []
    for q, h in enumerate(queue_hashes):
        s = bisect_left(slot_pos, h)
        if s == slots:  # past the largest position: wrap to the smallest
            s = 0
        held.setdefault(s, []).append(q)
        first.append((q, winner[s] // top))
    yield top, first
    for n in range(top - 1, 0, -1):  # ring(n+1) -> ring(n): the nodes numbered n go
        moves: list[tuple[int, int]] = []
        for k in range(n, len(points), top):
            s = slot_of[k]
            group = shared.get(s)
            if group is not None:
                left = [p for p in group if p % top < n]
                if left:
                    if left[0] != winner[s]:  # an equal-hash point shows again
                        winner[s] = left[0]
                        moves.extend((q, left[0] // top) for q in held.get(s, ()))
                    continue
            link[s] = s + 1 if s + 1 < slots else 0
            queues = held.pop(s, None)
            if queues:
                target = live_from(s)
                owner = winner[target] // top
                moves.extend((q, owner) for q in queues)
                held.setdefault(target, []).extend(queues)
        yield n, moves
