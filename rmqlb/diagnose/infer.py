"""Strategy parameters the wire does not carry, inferred from what the clients hold.

A client's running info names its strategy's class (``AllocateMessageQueueConsistentHash``)
but not its parameters: the virtual node count of a hash ring, MACHINE_ROOM's rooms, the
CONFIG lists, MACHINE_ROOM_NEARBY's room resolvers and inner strategy. Computing *expected*
with a guessed value turns a healthy group into false alarms (a ring built with 5 virtual
nodes, checked against Java's default 10, "mismatches" on every client). So when nobody
stated the parameters (:attr:`~rmqlb.model.strategy.Params.UNKNOWN`) and every client's
holdings are known, :func:`infer_strategy` looks for the value that makes every holding
exactly what the strategy gives (each topic over the cidAll its clients take, comparing only
the clients that balance themselves), in order of likelihood:

- CONSISTENT_HASH: the Java default 10 first; then every count from 1 to 1024 in one pass
  (:func:`~rmqlb.allocate.consistent_hash.sweep_virtual_nodes`), the smallest exact count
  winning (neighbouring counts often give the very same shares: the report lists them); then
  a few common large counts, the first exact one winning. A group too big for the whole
  range within :data:`RING_POINT_BUDGET` ring points searches a shorter one and says so.
- MACHINE_ROOM: the rooms (``room@`` prefixes) of the brokers whose queues the clients hold,
  then those plus other brokers' rooms.
- CONFIG: each client's list is what it holds.
- MACHINE_ROOM_NEARBY: the naming conventions rmqlb knows (a broker's room is its name up to
  ``@``; a client's room is its instance name up to ``-``, or its unit name) with the inner
  strategies AVG, AVG_BY_CIRCLE and CONSISTENT_HASH.

Queues every value gets wrong (held twice, outside the route, by a client the topic's cidAll
leaves out or that does not subscribe the topic: :meth:`Holdings.unexplainable`) do not count
against a value, as long as the holdings tell some value from another; CONFIG's lists explain
queues held twice or outside the route.

No exact value: CONSISTENT_HASH first looks for one count per client (clients built with
different counts, a config rollout): when each client holds exactly its own ring's share for
some count, the status is ``mixed``, *expected* uses the count most of them run and the others
are the STRATEGY_INCONSISTENT rule's to report (:func:`_mixed_counts`). Otherwise
CONSISTENT_HASH keeps Java's default 10, the others (which have no usable default) use the
closest candidate, and the report names the closest either way. Holdings
not all known: CONSISTENT_HASH assumes the default and every finding that depends on it says
so; the others leave *expected* uncomputed. Stated parameters are never overridden.

Worked example: three clients built with 5 virtual nodes hold their ring(5) shares. Ring(10)
gives other shares, so the default is rejected; the sweep finds ring(5) exact, and ring(6)
to ring(9) too (their extra points happen to take no queue); 5 is the smallest, *expected*
uses it and the note says "virtual nodes: 5, inferred from what the 3 clients hold".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypeVar

from rmqlb.allocate import allocate_sorted
from rmqlb.allocate._common import Assignment
from rmqlb.allocate.consistent_hash import (
    as_hashed,
    queue_keys,
    ring_hashes,
    sweep_virtual_nodes,
)
from rmqlb.allocate.machine_room import broker_room
from rmqlb.diagnose.context import rebalance_cid_all, topic_cid_all
from rmqlb.diagnose.report import InferenceStatus, StrategyInference
from rmqlb.errors import AllocationError
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import Consumer, Group, Rebalance, Snapshot
from rmqlb.model.strategy import (
    DEFAULT_VIRTUAL_NODES,
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    HashCharset,
    MachineRoom,
    MachineRoomNearby,
    Params,
    RoomPattern,
    StrategySpec,
    describe,
    params_of,
    queue_to_json,
    strategy_to_json,
    with_params,
)

UTF_8 = HashCharset.UTF_8
MAX_SWEPT_VNODES = 1024
"""Every virtual node count from 1 to this one is tried (in one pass)."""
LARGE_VNODES = (2000, 2048, 4096, 5000, 8192, 10000)
"""Common large counts tried one by one when nothing up to :data:`MAX_SWEPT_VNODES` fits."""
RING_POINT_BUDGET = 500_000
"""Ring points (clients x virtual nodes) one search may hash: bounds its time (~1 s)."""
MAX_MIXED_COUNTS = 3
"""Virtual node counts a group's clients may be inferred to run at most (a rollout's two, and
one more): clients needing more are not explained by counts of their own."""
MAX_ROOM_SETS = 256
"""MACHINE_ROOM candidate room sets tried at most."""
BROKER_ROOMS = RoomPattern(r"^([^@]+)")
"""A broker's room: its name up to ``@`` (the ``room@name`` convention; no ``@``: the name)."""
CONSUMER_ROOMS: tuple[tuple[RoomPattern, str], ...] = (
    (RoomPattern(r"^(?:[^@]*@)?([^-]*)"), "a client's room is its instance name up to '-'"),
    (RoomPattern(r"^[^@]*@[^@]*@(.+)$"), "a client's room is its unit name (IP@instance@unit)"),
)
"""Client-id conventions for a client's room, most common first."""
_BROKER_ROOMS_TEXT = "a broker's room is its name up to '@'"


@dataclass(frozen=True, slots=True)
class Inferred:
    """What :func:`infer_strategy` settled: the spec *expected* uses (``None``: expected is
    not computed, and ``blocked`` says why) and what the report says about it."""

    strategy: StrategySpec | None
    report: StrategyInference
    blocked: str | None = None
    #: The clients that run another value than ``strategy`` (status ``mixed``): their specs.
    client_strategies: tuple[tuple[str, StrategySpec], ...] = ()


@dataclass(frozen=True, slots=True)
class _Topic:
    """One subscribed topic with a route: ``mqAll``, the cidAll its clients allocate from
    (Java order, an id once per connection listed) and what each entry holds of the topic.
    ``subscribers``: the clients subscribing it whose holdings are compared; the others hold
    nothing here (a client no consumer answers for, or one a broker or Proxy balances)."""

    topic: str
    mq_all: list[MessageQueue]
    cid_all: list[str]
    subscribers: frozenset[str]
    held: list[frozenset[MessageQueue]]  # aligned with cid_all
    stray: frozenset[MessageQueue]  # held by clients cid_all leaves out: wrong whatever spec


@dataclass(frozen=True, slots=True)
class Holdings:
    """What the consumers that balance themselves hold, per subscribed topic with a route.

    ``cid_all`` is their client ids in Java order, duplicates included (one entry per
    consumer); ``unknown`` counts those whose holdings are not known.
    """

    cid_all: list[str]
    topics: list[_Topic]
    unknown: int

    @property
    def clients(self) -> int:
        """Distinct client ids."""
        return len(set(self.cid_all))

    def allocate(self, spec: StrategySpec) -> list[Assignment] | None:
        """``spec`` over every topic (``None`` where Java would throw)."""
        out: list[Assignment] = []
        for t in self.topics:
            if not t.mq_all:
                out.append({cid: [] for cid in t.cid_all})
                continue
            try:
                out.append(allocate_sorted(spec, t.mq_all, t.cid_all))
            except AllocationError:
                return None
        return out

    def differing(self, spec: StrategySpec) -> int | None:
        """How many queues some client holds other than ``spec`` gives it (``None``: throws).

        A client gets the queues of a topic only when it subscribes it (Java rebalances only
        its own subscriptions); CONFIG lists count for their own topic only.
        """
        allocation = self.allocate(spec)
        if allocation is None:
            return None
        bad: set[MessageQueue] = set()
        for t, expected in zip(self.topics, allocation, strict=True):
            bad |= t.stray
            for cid, held in zip(t.cid_all, t.held, strict=True):
                want: set[MessageQueue] = set()
                if cid in t.subscribers:
                    want = {q for q in expected.get(cid, ()) if q.topic == t.topic}
                bad |= held ^ want
        return len(bad)

    def unexplainable(self, *, lists: bool = False) -> int:
        """How many queues every spec gets wrong (:meth:`differing` counts them whatever the
        spec): held by a client the topic's cidAll leaves out or by one that does not
        subscribe the topic; held twice or outside ``mqAll`` too, unless ``lists`` (CONFIG:
        its lists may overlap and name any queue)."""
        bad: set[MessageQueue] = set()
        for t in self.topics:
            bad |= t.stray
            routed = set(t.mq_all)
            seen: set[MessageQueue] = set()
            for cid, held in zip(t.cid_all, t.held, strict=True):
                if cid not in t.subscribers:
                    bad |= held
                if not lists:
                    bad |= (held & seen) | (held - routed)
                    seen |= held
        return len(bad)


def holdings(
    snapshot: Snapshot,
    group: Group,
    consumers: Sequence[Consumer],
    balance: Mapping[str, Rebalance],
) -> Holdings:
    """The holdings of the ``consumers`` (already in Java order of client id) that balance
    themselves (``balance``), and each topic's cidAll as
    :func:`~rmqlb.diagnose.context.topic_context` takes it: the list the topic's brokers
    agree on, else the group's."""
    own = [c for c in consumers if balance.get(c.client_id, Rebalance.CLIENT) is Rebalance.CLIENT]
    ids = [c.client_id for c in consumers]
    names: dict[str, None] = {}
    for c in own:
        for s in c.subscriptions:
            names.setdefault(s.topic)
    topics: list[_Topic] = []
    for name in sorted(names, key=java_key):
        route = snapshot.topics.get(name)
        if route is None:
            continue
        listed = topic_cid_all(group, route, ids, balance) if group.on_brokers else None
        cid_all = rebalance_cid_all(ids if listed is None else listed, balance)
        mq_all = sorted(route.readable_queues(), key=queue_sort_key)
        subscribers = frozenset(c.client_id for c in own if c.subscribes(name))
        processes: dict[str, list[Consumer]] = {}
        for c in own:
            processes.setdefault(c.client_id, []).append(c)
        held: list[frozenset[MessageQueue]] = []
        for cid in cid_all:  # the k-th entry of an id: its k-th process, if any
            mine = processes.get(cid)
            held.append(_of_topic(mine.pop(0), name) if mine else _NONE)
        stray = frozenset(
            q for left in processes.values() for p in left for q in _of_topic(p, name)
        )
        topics.append(_Topic(name, mq_all, cid_all, subscribers, held, stray))
    unknown = sum(1 for c in own if c.assigned is None)
    return Holdings([c.client_id for c in own], topics, unknown)


_NONE: frozenset[MessageQueue] = frozenset()


def _of_topic(c: Consumer, topic: str) -> frozenset[MessageQueue]:
    return frozenset(q for q in c.assigned or () if q.topic == topic)


def infer_strategy(
    spec: StrategySpec,
    snapshot: Snapshot,
    group: Group,
    consumers: Sequence[Consumer],
    balance: Mapping[str, Rebalance],
) -> Inferred | None:
    """Settle ``spec``'s parameters for a CLUSTERING group (``None`` when they are stated).

    ``consumers`` are the group's consumers in Java order of client id; only the holdings of
    those that balance themselves (``balance``) are compared. Parameters marked inferred (a
    snapshot written by ``rmqlb dump``) are searched again, so the report is the same as when
    they were inferred; if the search now disagrees (a redacted snapshot), the recorded value
    is kept.
    """
    params = params_of(spec)
    if params is Params.GIVEN:
        return None
    held = holdings(snapshot, group, consumers, balance)
    found = _search(spec, held)
    if params is Params.INFERRED and not (
        found.report.status is InferenceStatus.inferred and found.strategy == spec
    ):
        return _recorded(spec, held)
    return found


def _search(spec: StrategySpec, held: Holdings) -> Inferred:
    match spec:
        case ConsistentHash(charset=charset, charset_stated=stated):
            # a charset stated without a count is searched alone; a recorded one is searched
            # for again as explain -n found it
            if spec.params is Params.UNKNOWN:
                return _consistent_hash(held, charset, others=not stated)
            return _consistent_hash(held)
        case MachineRoom():
            return _machine_room(held)
        case Config():
            return _config(held)
        case MachineRoomNearby(inner=inner):
            return _nearby(held, inner)
        case _:  # pragma: no cover - specs without parameters are never UNKNOWN
            raise AssertionError(f"{spec.name} has no parameters")


def _plural(n: int, noun: str) -> str:
    """``1 client`` / ``3 clients`` (the rules' wording helper lives above this module)."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _unknown_reason(held: Holdings) -> str:
    return (
        f"{held.unknown} of {_plural(len(held.cid_all), 'client')} did not report the queues "
        f"{'it holds' if held.unknown == 1 else 'they hold'}"
    )


def _source(held: Holdings) -> str:
    verb = "holds" if held.clients == 1 else "hold"
    return f"inferred from what the {_plural(held.clients, 'client')} {verb}"


def count_ranges(values: Sequence[int], limit: int = 4) -> str:
    """Sorted counts with runs folded: ``6..9, 12 and 160..163`` (at most ``limit`` runs).

    >>> count_ranges([6, 7, 8, 9, 12, 160, 161])
    '6..9, 12 and 160, 161'
    """
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    texts = [f"{r[0]}..{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs[:limit]]
    if len(runs) > limit:
        texts.append(f"{len(runs) - limit} more")
    if len(texts) == 1:
        return texts[0]
    return ", ".join(texts[:-1]) + " and " + texts[-1]


# ----- CONSISTENT_HASH ------------------------------------------------------------------------


def _vnode_counts(held: Holdings, charset: HashCharset) -> tuple[dict[int, int], str]:
    """Queues differing for every count of the sweep, and the range searched: one sweep per
    distinct cidAll among the topics (almost always one), rings hashed in ``charset``."""
    lists = _by_cid_all(held)
    top = _top(lists)
    counts = dict.fromkeys(range(1, top + 1), 0)
    for cids, topics in lists.items():
        for n, wrong in _sweep(cids, topics, top, charset).items():
            counts[n] += wrong
    return counts, f"1..{top}"


def _by_cid_all(held: Holdings) -> dict[tuple[str, ...], list[_Topic]]:
    """The topics by the cidAll they are allocated over (almost always one list)."""
    lists: dict[tuple[str, ...], list[_Topic]] = {}
    for t in held.topics:
        lists.setdefault(tuple(t.cid_all), []).append(t)
    return lists


def _top(lists: Mapping[tuple[str, ...], list[_Topic]]) -> int:
    """The greatest count swept: :data:`MAX_SWEPT_VNODES`, less for many ring points."""
    points = sum(map(len, lists))
    return min(MAX_SWEPT_VNODES, max(1, RING_POINT_BUDGET // max(points, 1)))


def _sweep(
    cids: Sequence[str], topics: Sequence[_Topic], top: int, charset: HashCharset = UTF_8
) -> dict[int, int]:
    """Queues of ``topics`` (which share cidAll ``cids``) differing for every count."""
    hashes: list[int] = []
    for t in topics:
        hashes.extend(ring_hashes(queue_keys(t.mq_all), charset))
    nobody, impossible = -1, -2
    target: list[int] = []  # per queue: the client that must own it, or nobody/impossible
    topic_of: list[int] = []
    subscribes: list[list[bool]] = []  # per topic: whether each client subscribes it
    outside = 0  # held queues no allocation can give (not in mqAll)
    for ti, t in enumerate(topics):
        subscribes.append([cid in t.subscribers for cid in cids])
        holders: dict[MessageQueue, list[int]] = {}
        for k, qs in enumerate(t.held):
            for q in qs:
                holders.setdefault(q, []).append(k)
        for q in t.mq_all:
            who = holders.pop(q, [])
            topic_of.append(ti)
            if q in t.stray or len(who) > 1 or (who and not subscribes[ti][who[0]]):
                target.append(impossible)
            else:
                target.append(who[0] if who else nobody)
        outside += len(holders.keys() | (t.stray - set(t.mq_all)))

    def bad(g: int, owner: int) -> bool:
        want = target[g]
        if want == nobody:
            return subscribes[topic_of[g]][owner]
        return want != owner

    if not cids:  # nobody to own a queue: what is held is wrong whatever the count
        return dict.fromkeys(range(1, top + 1), outside + target.count(impossible))
    owner: list[int] = [0] * len(target)
    wrong = outside
    counts: dict[int, int] = {}
    for n, moves in sweep_virtual_nodes(cids, hashes, top, charset):
        if n == top:
            for g, o in moves:
                owner[g] = o
            wrong += sum(1 for g in range(len(target)) if bad(g, owner[g]))
        else:
            for g, o in moves:
                wrong += bad(g, o) - bad(g, owner[g])
                owner[g] = o
        counts[n] = wrong
    return counts


def _consistent_hash(
    held: Holdings, charset: HashCharset = UTF_8, *, others: bool = True
) -> Inferred:
    """The virtual node count the clients' holdings fit, searched with rings hashed in
    ``charset`` (stated with ``--strategy``, else UTF-8), then, where that fits none, a key
    is not ASCII and ``others`` (no charset was stated), in the other charsets
    (:func:`_other_charsets`)."""
    default = DEFAULT_VIRTUAL_NODES
    assumed_spec = ConsistentHash(default, charset=charset)
    fix = "pass `--strategy CONSISTENT_HASH:vnodes=N` if the clients use another count"
    if held.unknown:
        reason = _unknown_reason(held)
        return Inferred(
            assumed_spec,
            StrategyInference(
                InferenceStatus.assumed,
                value=default,
                searched="",
                note=f"virtual nodes: unknown, the Java default {default} assumed — the wire "
                f"does not carry it and {reason}; {fix}",
                assumption=f" (assuming the Java default of {default} virtual nodes: the "
                "clients do not report virtualNodeCnt)",
                parameter="virtualNodeCnt",
                default=default,
                clients=held.clients,
            ),
        )
    if charset is UTF_8 and held.differing(assumed_spec) == 0:
        return _confirmed(held, 0)
    if any(len(set(t.cid_all)) < len(t.cid_all) for t in held.topics):
        return Inferred(
            assumed_spec,
            StrategyInference(
                InferenceStatus.assumed,
                value=default,
                searched="",
                note=f"virtual nodes: unknown, the Java default {default} assumed — the wire "
                "does not carry it and a client id shared by several processes keeps it from "
                f"being inferred; {fix}",
                assumption=f" (assuming the Java default of {default} virtual nodes: the "
                "clients do not report virtualNodeCnt)",
                parameter="virtualNodeCnt",
                default=default,
                clients=held.clients,
            ),
        )
    # A count fits when it gets wrong only the queues every count gets wrong (held twice, say,
    # in a rebalance caught half way): those are findings of their own, not the ring's.
    fixed = held.unexplainable()
    counts, searched, fits = _count_search(held, fixed, charset)
    told_apart = any(wrong != fixed for wrong in counts.values())  # else the holdings say nothing
    found = _fitting(held, fixed, fits, searched, charset) if told_apart else None
    if found is not None:
        return found
    # Keys with non-ASCII characters: rings hashed in another charset (a Java 17 JVM takes
    # the locale's) put them elsewhere; the same search in each.
    searches_others = told_apart and others and charset is UTF_8
    other = next(iter(_non_ascii_names(held)), None) if searches_others else None
    tried = _other_charsets(held) if other is not None else []
    for each in tried:
        _, each_searched, each_fits = _count_search(held, fixed, each)
        found = _fitting(held, fixed, each_fits, each_searched, each)
        if found is not None:
            return found
    if told_apart:
        mixed = _mixed_counts(held, searched, [charset, *tried])
        if mixed is not None:
            return mixed
    # fewest queues wrong; on a tie the default, then the smallest count
    closest = min(counts, key=lambda n: (counts[n], n != default, n))
    differ = counts[closest]
    wrong_text = f"the closest, {closest}, gets {_plural(differ, 'queue')} wrong"
    return Inferred(
        assumed_spec,
        StrategyInference(
            InferenceStatus.unexplained,
            value=default,
            searched=searched,
            note=f"virtual nodes: unknown, the Java default {default} assumed — no count in "
            f"{searched} makes what the {_plural(held.clients, 'client')} hold exact; "
            f"{wrong_text}: a rebalance in progress, or clients built with different counts"
            f"{_charset_text(other, tried)}",
            assumption=f" (assuming the Java default of {default} virtual nodes: the clients "
            f"do not report virtualNodeCnt and no count tried fits what they hold; {wrong_text})",
            closest=closest,
            differing=differ,
            parameter="virtualNodeCnt",
            default=default,
            clients=held.clients,
        ),
    )


def _client_sweep(
    cids: Sequence[str], topics: Sequence[_Topic], top: int, charset: HashCharset
) -> list[list[int]]:
    """Per client of ``cids`` (distinct) and count ``n`` (index ``n - 1``): how many queues
    of the topics it subscribes its own share of ring(n) and what it holds differ by."""
    hashes: list[int] = []
    topic_of: list[int] = []
    held_by: list[set[int]] = [set() for _ in cids]
    wrong = [0] * len(cids)  # held queues outside mqAll: wrong whatever the count
    subscribes = [[cid in t.subscribers for cid in cids] for t in topics]
    base = 0
    for ti, t in enumerate(topics):
        hashes.extend(ring_hashes(queue_keys(t.mq_all), charset))
        topic_of.extend([ti] * len(t.mq_all))
        index = {q: base + i for i, q in enumerate(t.mq_all)}
        for k, qs in enumerate(t.held):
            for q in qs:
                g = index.get(q)
                if g is None or not subscribes[ti][k]:
                    wrong[k] += 1
                else:
                    held_by[k].add(g)
        base += len(t.mq_all)
    out = [[0] * top for _ in cids]
    owner = [0] * len(hashes)
    for n, moves in sweep_virtual_nodes(cids, hashes, top, charset):
        if n == top:
            for g, o in moves:
                owner[g] = o
                wrong[o] += subscribes[topic_of[g]][o] and g not in held_by[o]
            for k, queues in enumerate(held_by):
                wrong[k] += sum(1 for g in queues if owner[g] != k)
        else:
            for g, b in moves:
                a = owner[g]
                if a == b:
                    continue
                of_topic = subscribes[topic_of[g]]
                if of_topic[a]:
                    wrong[a] += 1 if g in held_by[a] else -1
                if of_topic[b]:
                    wrong[b] += -1 if g in held_by[b] else 1
                owner[g] = b
        for k, w in enumerate(wrong):
            out[k][n - 1] = w
    return out


def _count_search(
    held: Holdings, fixed: int, charset: HashCharset
) -> tuple[dict[int, int], str, list[int]]:
    """Queues differing for every count tried (the sweep, then :data:`LARGE_VNODES` while no
    count fits), the counts searched, and those that fit: rings hashed in ``charset``."""
    counts, searched = _vnode_counts(held, charset)
    fits = sorted(n for n, wrong in counts.items() if wrong == fixed)
    if not fits:
        for n in LARGE_VNODES:
            if n * held.clients > RING_POINT_BUDGET:
                break
            wrong = held.differing(ConsistentHash(n, charset=charset))
            assert wrong is not None  # a hash ring never throws
            counts[n] = wrong
            searched += f", {n}"
            if wrong == fixed:
                fits = [n]
                break
    return counts, searched, fits


def _fitting(
    held: Holdings, fixed: int, fits: Sequence[int], searched: str, charset: HashCharset
) -> Inferred | None:
    """The count the clients' holdings fit (Java's default first, else the smallest), as
    confirmed or inferred; ``None`` when none does."""
    if not fits:
        return None
    default = DEFAULT_VIRTUAL_NODES
    n = default if default in fits else fits[0]
    if held.differing(ConsistentHash(n, charset=charset)) != fixed:
        return None
    if n == default and charset is UTF_8:
        return _confirmed(held, fixed)
    alternatives = list(fits[1:] if n == fits[0] else [f for f in fits if f != n])
    also = ""
    if alternatives:  # counts close together often give the very same rings' shares
        named = "Java's default is" if n == default else "the smallest count is"
        also = f" ({count_ranges(alternatives)} would give the same queues: {named} named)"
    option = f"CONSISTENT_HASH:vnodes={n}"
    hashed = ""
    if charset is not UTF_8:
        option += f":charset={charset}"
        written = "" if charset is HashCharset.US_ASCII else f"their ids' {charset} bytes, "
        hashed = (
            f", hashed in {charset} (the clients' JVMs' default charset, Java 17 and older "
            f"under {charset.locale}: {written}'?' for each character of their ids it lacks)"
        )
    return Inferred(
        ConsistentHash(n, Params.INFERRED, charset),
        StrategyInference(
            InferenceStatus.inferred,
            value=n,
            searched=searched,
            note=f"virtual nodes: {n}{hashed}, {_source(held)} — the wire does not carry "
            f"it; pass `--strategy {option}` to fix it{also}{_unexplainable_text(fixed)}",
            alternatives=tuple(alternatives),
            option=option,
            parameter="virtualNodeCnt",
            default=default,
            clients=held.clients,
        ),
    )


def _non_ascii_names(held: Holdings) -> list[str]:
    """The client ids and broker names of ``held`` with a non-ASCII character: only such
    keys hash otherwise in another charset than in UTF-8."""
    return [
        name
        for t in held.topics
        for name in dict.fromkeys((*t.cid_all, *(mq.broker_name for mq in t.mq_all)))
        if not name.isascii()
    ]


def _other_charsets(held: Holdings) -> list[HashCharset]:
    """The charsets other than UTF-8 a ring of ``held``'s keys may be hashed in, each once
    it writes them otherwise than the ones before it (US-ASCII first, what a POSIX locale
    gives; ISO-8859-1 only where a key holds Latin-1 letters)."""
    names = _non_ascii_names(held)
    out: list[HashCharset] = []
    seen: set[tuple[str, ...]] = set()
    for charset in (HashCharset.US_ASCII, HashCharset.GBK, HashCharset.ISO_8859_1):
        written = tuple(as_hashed(name, charset) for name in names)
        if written not in seen:
            seen.add(written)
            out.append(charset)
    return out


def _charset_text(name: str | None, tried: Sequence[HashCharset]) -> str:
    """What the unexplained note adds where ``name`` (a ring key) is not ASCII: the clients
    may hash in different charsets, as none of ``tried`` fits them all."""
    if name is None:
        return ""
    listed = ", ".join(c.value for c in (UTF_8, *tried))
    return (
        f", or JVMs hashing {name!r} in different charsets (none of {listed} fits every "
        "client: Java 17 and older take the locale's)"
    )


def _mixed_counts(
    held: Holdings, searched: str, charsets: Sequence[HashCharset]
) -> Inferred | None:
    """The clients built with different virtual node counts, or whose JVMs hash in different
    charsets (``charsets``: the one searched first, then the others tried), when no one ring
    fits them all: the ring exact for the most clients leaves others, each holding exactly its
    own ring's share for another count or charset (``None`` otherwise).

    *Expected* uses the ring exact for the most clients (on a tie the first charset, then the
    default count, then the smallest). A client it does not fit gets a ring of its own, the
    one exact for the most such clients, and so on, up to :data:`MAX_MIXED_COUNTS` rings in
    all; unless what it holds is a part of its share under the first ring, or that share and
    more: one membership change leaves every client so, so that is a rebalance caught half
    way, not another ring (:func:`_apart`). With no client of another ring, or one that no
    ring fits, ``None``.
    """
    lists = _by_cid_all(held)
    top = _top(lists)
    ids = list(dict.fromkeys(held.cid_all))
    exact: dict[str, set[_Ring]] = {cid: set() for cid in ids}
    for charset in charsets:
        totals = {cid: [0] * top for cid in ids}
        for listed, topics in lists.items():
            if len(set(listed)) != len(listed) or not set(listed) <= totals.keys():
                return None
            wrongs = _client_sweep(listed, topics, top, charset)
            for cid, wrong in zip(listed, wrongs, strict=True):
                totals[cid] = [a + b for a, b in zip(totals[cid], wrong, strict=True)]
        for cid, wrong in totals.items():
            exact[cid].update((charset, n + 1) for n, w in enumerate(wrong) if w == 0)
    if not any(exact.values()):
        return None
    first = charsets[0]
    most = _likeliest(exact.values(), first)
    odd = _apart(held, most, [cid for cid in ids if most not in exact[cid]])
    if not odd or not all(exact[cid] for cid in odd):
        return None
    chosen = dict.fromkeys(ids, most)
    left = {cid: exact[cid] for cid in odd}
    for _ in range(MAX_MIXED_COUNTS - 1):
        ring = _likeliest(left.values(), first)
        for cid in [cid for cid, fits in left.items() if ring in fits]:
            chosen[cid] = ring
            del left[cid]
        if not left:
            break
    else:
        return None  # more rings than a rollout leaves: no explanation of this kind
    runs: dict[_Ring, list[str]] = {}
    for cid in ids:
        if most in exact[cid] or chosen[cid] != most:
            runs.setdefault(chosen[cid], []).append(cid)
    mixed_charsets = len({charset for charset, _ in runs}) > 1
    parts = []
    for ring, cids in runs.items():
        alike = set.intersection(*(exact[cid] for cid in cids)) - {ring}
        same = sorted(n for charset, n in alike if charset is ring[0])
        also = f"; {count_ranges(same)} give the same queues" if same else ""
        shown = cids[:3]
        label = _ring_text(ring, mixed_charsets)
        parts.append(f"{label} ({', '.join(shown)}{' and more' if len(cids) > 3 else ''}{also})")
    moving = [cid for cid in ids if cid not in runs.get(most, ()) and chosen[cid] == most]
    if moving:
        parts.append(
            f"{_plural(len(moving), 'client')} {'holds' if len(moving) == 1 else 'hold'} a part "
            f"of {'its' if len(moving) == 1 else 'their'} share under "
            f"{_ring_text(most, mixed_charsets)} or that share and more: a rebalance in progress"
        )
    if mixed_charsets:
        what = (
            "virtual nodes and charsets: the clients' JVMs hash their rings in different "
            "charsets (Java 17 and older take the locale's)"
        )
        if len({n for _, n in runs}) > 1:
            what += " and run different counts"
    else:
        what = "virtual nodes: the clients run different counts"
    most_text = _ring_text(most, mixed_charsets)
    return Inferred(
        ConsistentHash(most[1], Params.INFERRED, most[0]),
        StrategyInference(
            InferenceStatus.mixed,
            value=most[1],
            searched=searched,
            note=f"{what}, inferred from what each holds: {'; '.join(parts)} — the wire does "
            f"not carry {'them' if mixed_charsets else 'it'}; expected uses {most_text}, the "
            f"{'ring' if mixed_charsets else 'count'} "
            f"{'most of them run' if len(runs[most]) > 1 else 'one of them runs'}",
            parameter="virtualNodeCnt",
            default=DEFAULT_VIRTUAL_NODES,
            clients=held.clients,
            client_values=tuple((cid, chosen[cid][1]) for cid in ids),
        ),
        client_strategies=tuple(
            (cid, ConsistentHash(chosen[cid][1], Params.INFERRED, chosen[cid][0]))
            for cid in ids
            if chosen[cid] != most
        ),
    )


_Ring = tuple[HashCharset, int]
"""A ring a client may build: the charset it hashes in and its virtual node count."""


def _ring_text(ring: _Ring, charset: bool) -> str:
    """A ring's count, with its charset when ``charset`` (the clients' charsets differ)."""
    return f"{ring[1]} in {ring[0]}" if charset else str(ring[1])


def _likeliest(fits: Iterable[set[_Ring]], first: HashCharset) -> _Ring:
    """The ring exact for the most clients of ``fits`` (their exact rings): on a tie one
    hashed in ``first``, then the default count, then the smallest."""
    tally = Counter(ring for rings in fits for ring in rings)
    default = DEFAULT_VIRTUAL_NODES
    return min(
        tally, key=lambda r: (-tally[r], r[0] is not first, r[1] != default, r[1], r[0].value)
    )


def _apart(held: Holdings, most: _Ring, odd: Sequence[str]) -> list[str]:
    """The ``odd`` clients that both hold queues the ring ``most`` does not give them and
    miss some it gives them (the others hold a part of that share, or that share and
    more)."""
    allocation = held.allocate(ConsistentHash(most[1], charset=most[0]))
    assert allocation is not None  # a hash ring never throws
    out = []
    for cid in odd:
        share: set[MessageQueue] = set()
        mine: set[MessageQueue] = set()
        for t, expected in zip(held.topics, allocation, strict=True):
            if cid in t.subscribers:
                share.update(q for q in expected.get(cid, ()) if q.topic == t.topic)
            for listed, qs in zip(t.cid_all, t.held, strict=True):
                if listed == cid:
                    mine |= qs
        if mine - share and share - mine:
            out.append(cid)
    return out


def _confirmed(held: Holdings, fixed: int) -> Inferred:
    """The Java default count, which gets wrong only the ``fixed`` queues every count does."""
    default = DEFAULT_VIRTUAL_NODES
    return Inferred(
        ConsistentHash(default),
        StrategyInference(
            InferenceStatus.confirmed,
            value=default,
            searched=str(default),
            note=f"virtual nodes: {default} (the Java default), confirmed by what the "
            f"{_plural(held.clients, 'client')} hold — the wire does not carry it"
            f"{_unexplainable_text(fixed)}",
            parameter="virtualNodeCnt",
            default=default,
            clients=held.clients,
        ),
    )


_T = TypeVar("_T")


def _unexplainable_text(fixed: int, value: str = "count", *, lists: bool = False) -> str:
    """What a note says of the ``fixed`` queues no ``value`` explains (nothing when there
    are none); ``lists``: CONFIG's, which explain queues held twice or outside the route."""
    if not fixed:
        return ""
    held = "1 queue is held" if fixed == 1 else f"{fixed:,} queues are held"
    ways = "" if lists else "twice, outside the route, or "
    return (
        f"; {held} in a way no {value} gives ({ways}by a client the brokers do not list for "
        f"its topic or that does not subscribe it): the findings name "
        f"{'it' if fixed == 1 else 'them'}"
    )


def _best_fit(scores: Sequence[tuple[int, _T]], fixed: int) -> _T | None:
    """The first candidate (most likely first) that gets wrong only the ``fixed`` queues
    every candidate gets wrong, when the holdings tell some candidate from another (else
    they say nothing of any); ``None`` when there is none."""
    if all(wrong == fixed for wrong, _ in scores):
        return None
    return next((candidate for wrong, candidate in scores if wrong == fixed), None)


# ----- MACHINE_ROOM -----------------------------------------------------------------------------


def _room_sets(held: Holdings) -> tuple[list[frozenset[str]], list[str]]:
    """Candidate consumeridcs, most likely first, and every room of the brokers.

    First the rooms of the brokers whose queues the clients hold, then the sets that differ
    from it by one room, by two, ... (at most :data:`MAX_ROOM_SETS`): exact holdings are
    explained by the first, inexact ones come closest with a near one.
    """
    rooms: set[str] = set()
    used: set[str] = set()
    for t in held.topics:
        rooms.update(
            r for r in map(broker_room, {q.broker_name for q in t.mq_all}) if r is not None
        )
        for qs in t.held:
            used.update(r for r in map(broker_room, {q.broker_name for q in qs}) if r is not None)
    every = sorted(rooms | used, key=java_key)
    sets: list[frozenset[str]] = []
    for distance in range(len(every) + 1):
        for flip in combinations(every, distance):
            sets.append(frozenset(used.symmetric_difference(flip)))
            if len(sets) >= MAX_ROOM_SETS:
                return sets, sorted(rooms, key=java_key)
    return sets, sorted(rooms, key=java_key)


def _rooms_text(rooms: Iterable[str]) -> str:
    return ",".join(sorted(rooms, key=java_key))


def _rooms_inferred(
    held: Holdings, idcs: frozenset[str], rooms: Sequence[str], tried: int, fixed: int
) -> Inferred:
    """consumeridcs ``idcs``, which get wrong only the ``fixed`` queues no set explains."""
    value = sorted(idcs, key=java_key)
    fix = ""
    if value:
        what = f"consumeridcs: {_rooms_text(idcs)}"
        fix = f"; pass `--strategy MACHINE_ROOM:idcs={_rooms_text(idcs)}` to fix it"
    elif rooms:
        what = "consumeridcs: none of the brokers' rooms"
    else:
        what = "consumeridcs: any (no broker is named room@name, so nothing is allocated)"
    return Inferred(
        MachineRoom(idcs, Params.INFERRED),
        StrategyInference(
            InferenceStatus.inferred,
            value=value,
            searched=f"{_plural(tried, 'set')} of rooms",
            note=f"{what}, {_source(held)} — the wire does not carry it{fix}"
            f"{_unexplainable_text(fixed, 'set of rooms')}",
            option=f"MACHINE_ROOM:idcs={_rooms_text(idcs)}" if value else None,
            parameter="consumeridcs",
            default=None,
            clients=held.clients,
        ),
    )


def _machine_room(held: Holdings) -> Inferred:
    if held.unknown:
        return Inferred(
            None,
            StrategyInference(
                InferenceStatus.unknown,
                value=None,
                searched="",
                note="consumeridcs: unknown — the wire does not carry it and "
                f"{_unknown_reason(held)}, so expected is not computed; pass "
                "`--strategy MACHINE_ROOM:idcs=ROOM,...` with the clients' rooms",
                parameter="consumeridcs",
                default=None,
                clients=held.clients,
            ),
            blocked="its consumeridcs is unknown (the wire does not carry it) and "
            f"{_unknown_reason(held)}",
        )
    sets, rooms = _room_sets(held)
    scored: list[tuple[int, frozenset[str]]] = []
    for idcs in sets:
        wrong = held.differing(MachineRoom(idcs))
        assert wrong is not None  # MACHINE_ROOM never throws for distinct non-empty ids
        if wrong == 0:
            return _rooms_inferred(held, idcs, rooms, len(sets), 0)
        scored.append((wrong, idcs))
    fixed = held.unexplainable()
    fit = _best_fit(scored, fixed)
    if fit is not None:
        return _rooms_inferred(held, fit, rooms, len(sets), fixed)
    wrong, idcs = min(scored, key=lambda item: item[0])
    closest = sorted(idcs, key=java_key)
    shown = _rooms_text(idcs) or "none"
    miss = (
        f"no set of the brokers' rooms ({_rooms_text(rooms) or 'none'}) makes what the "
        f"{_plural(held.clients, 'client')} hold exact"
    )
    return Inferred(
        MachineRoom(idcs),
        StrategyInference(
            InferenceStatus.unexplained,
            value=closest,
            searched=f"{_plural(len(sets), 'set')} of rooms",
            note=f"consumeridcs: unknown — {miss}; expected uses the closest, {shown} "
            f"({_plural(wrong, 'queue')} differ{'s' if wrong == 1 else ''})",
            assumption=f" (assuming consumeridcs {shown}, the closest to what the clients hold: "
            "they do not report it)",
            closest=closest,
            differing=wrong,
            parameter="consumeridcs",
            default=None,
            clients=held.clients,
        ),
    )


# ----- CONFIG ------------------------------------------------------------------------------------


def _config(held: Holdings) -> Inferred:
    if held.unknown:
        return Inferred(
            None,
            StrategyInference(
                InferenceStatus.unknown,
                value=None,
                searched="",
                note="CONFIG lists: unknown — the wire does not carry them and "
                f"{_unknown_reason(held)}, so expected is not computed",
                parameter="config",
                default=None,
                clients=held.clients,
            ),
            blocked="the clients' CONFIG lists are unknown (the wire does not carry them) and "
            f"{_unknown_reason(held)}",
        )
    mine: dict[str, set[MessageQueue]] = {cid: set() for cid in held.cid_all}
    for t in held.topics:
        first: set[str] = set()  # an id's first process: its list stands for the others'
        for cid, qs in zip(t.cid_all, t.held, strict=True):
            if cid in mine and cid not in first:
                first.add(cid)
                mine[cid] |= qs
    lists = {cid: tuple(sorted(qs, key=queue_sort_key)) for cid, qs in mine.items()}
    value = {cid: [queue_to_json(q) for q in qs] for cid, qs in lists.items()}
    wrong = held.differing(Config(lists))
    fixed = held.unexplainable(lists=True)  # in no client's list: outside cidAll, unsubscribed
    if wrong == fixed:
        return Inferred(
            Config(lists, Params.INFERRED),
            StrategyInference(
                InferenceStatus.inferred,
                value=value,
                searched="each client's holdings",
                note=f"CONFIG lists: {_source(held)} (each client's list is what it holds) — "
                f"the wire does not carry them{_unexplainable_text(fixed, 'list', lists=True)}",
                parameter="config",
                default=None,
                clients=held.clients,
            ),
        )
    return Inferred(
        Config(lists),
        StrategyInference(
            InferenceStatus.unexplained,
            value=value,
            searched="each client's holdings",
            note="CONFIG lists: unknown — processes sharing a client id hold different queues, "
            "so no list makes them all exact; expected uses the first process's "
            f"({_plural(wrong or 0, 'queue')} differ{'s' if wrong == 1 else ''})",
            assumption=" (assuming each client's CONFIG list is what its first process holds: "
            "the clients do not report their lists)",
            closest=value,
            differing=wrong,
            parameter="config",
            default=None,
            clients=held.clients,
        ),
    )


# ----- MACHINE_ROOM_NEARBY ---------------------------------------------------------------------


def _nearby_value(spec: MachineRoomNearby) -> dict[str, Any]:
    raw = strategy_to_json(with_params(spec, Params.GIVEN))
    return {k: raw[k] for k in ("inner", "brokerRooms", "consumerRooms")}


def _nearby_inferred(
    held: Holdings, spec: MachineRoomNearby, how: str, tried: int, fixed: int
) -> Inferred:
    """Rooms and inner strategy ``spec``, which get wrong only the ``fixed`` queues no
    convention explains."""
    return Inferred(
        with_params(spec, Params.INFERRED),
        StrategyInference(
            InferenceStatus.inferred,
            value=_nearby_value(spec),
            searched=f"{_plural(tried, 'convention')}",
            note=f"rooms: {how}; {_source(held)} — the wire carries neither the room resolver "
            f"nor the inner strategy{_unexplainable_text(fixed, 'convention')}",
            parameter="rooms",
            default=None,
            clients=held.clients,
        ),
    )


def _nearby(held: Holdings, inner: StrategySpec) -> Inferred:
    if held.unknown:
        return Inferred(
            None,
            StrategyInference(
                InferenceStatus.unknown,
                value=None,
                searched="",
                note="rooms: unknown — the wire carries neither MACHINE_ROOM_NEARBY's room "
                f"resolver nor its inner strategy and {_unknown_reason(held)}, so expected is "
                "not computed",
                parameter="rooms",
                default=None,
                clients=held.clients,
            ),
            blocked="its rooms and inner strategy are unknown (the wire does not carry them) "
            f"and {_unknown_reason(held)}",
        )
    inners: list[StrategySpec] = []
    for spec in (with_params(inner, Params.GIVEN), Avg(), AvgByCircle(), ConsistentHash()):
        if spec not in inners and not isinstance(spec, MachineRoomNearby):
            inners.append(spec)
    tried: list[tuple[int, int, MachineRoomNearby, str]] = []
    count = 0
    for rule, text in CONSUMER_ROOMS:
        for candidate in inners:
            count += 1
            spec = MachineRoomNearby(candidate, BROKER_ROOMS, rule)
            wrong = held.differing(spec)
            if wrong is None:  # some broker or client has no room under this convention
                continue
            how = f"{_BROKER_ROOMS_TEXT}, {text}; inner strategy {describe(candidate)}"
            if wrong == 0:
                return _nearby_inferred(held, spec, how, count, 0)
            tried.append((wrong, count, spec, how))
    fixed = held.unexplainable()
    fit = _best_fit([(wrong, (spec, how)) for wrong, _, spec, how in tried], fixed)
    if fit is not None:
        return _nearby_inferred(held, *fit, count, fixed)
    searched = f"{_plural(count, 'convention')}"
    if not tried:
        return Inferred(
            None,
            StrategyInference(
                InferenceStatus.unknown,
                value=None,
                searched=searched,
                note="rooms: unknown — the wire does not carry MACHINE_ROOM_NEARBY's room "
                "resolver and no naming convention rmqlb knows gives every broker and client "
                "a room, so expected is not computed",
                parameter="rooms",
                default=None,
                clients=held.clients,
            ),
            blocked="its rooms are unknown (the wire does not carry them) and no naming "
            "convention rmqlb knows gives every broker and client a room",
        )
    wrong, _, spec, how = min(tried, key=lambda item: item[:2])
    return Inferred(
        spec,
        StrategyInference(
            InferenceStatus.unexplained,
            value=_nearby_value(spec),
            searched=searched,
            note=f"rooms: unknown — no room convention rmqlb knows makes what the "
            f"{_plural(held.clients, 'client')} hold exact; expected uses the closest ({how}; "
            f"{_plural(wrong, 'queue')} differ{'s' if wrong == 1 else ''})",
            assumption=f" (assuming {how}, the closest to what the clients hold: they do not "
            "report their rooms)",
            closest=_nearby_value(spec),
            differing=wrong,
            parameter="rooms",
            default=None,
            clients=held.clients,
        ),
    )


# ----- recorded by rmqlb dump ------------------------------------------------------------------


def _recorded(spec: StrategySpec, held: Holdings) -> Inferred:
    """Parameters a snapshot marks inferred that a search of the holdings does not settle on
    (a redacted snapshot: a hash ring is built from the client ids, renamed since)."""
    value: Any
    option: str | None = None
    match spec:
        case ConsistentHash(virtual_node_cnt=n):
            parameter, value, what = "virtualNodeCnt", n, f"virtual nodes: {n}"
            option = f"CONSISTENT_HASH:vnodes={n}"
        case MachineRoom(consumeridcs=idcs):
            parameter, value = "consumeridcs", sorted(idcs, key=java_key)
            what = f"consumeridcs: {_rooms_text(idcs) or 'none'}"
            option = f"MACHINE_ROOM:idcs={_rooms_text(idcs)}" if idcs else None
        case Config(config=config):
            parameter, what = "config", "CONFIG lists"
            value = {cid: [queue_to_json(q) for q in qs] for cid, qs in config.items()}
        case MachineRoomNearby():
            parameter, what, value = "rooms", f"rooms: {describe(spec)}", _nearby_value(spec)
        case _:  # pragma: no cover - only specs with parameters are marked inferred
            raise AssertionError(spec.name)
    wrong = None if held.unknown else held.differing(spec)
    check = ""
    if wrong:
        check = f" (what the clients hold now differs in {_plural(wrong, 'queue')})"
    return Inferred(
        spec,
        StrategyInference(
            InferenceStatus.inferred,
            parameter=parameter,
            value=value,
            default=DEFAULT_VIRTUAL_NODES if isinstance(spec, ConsistentHash) else None,
            clients=held.clients,
            searched="",
            note=f"{what}, recorded as inferred in the snapshot{check} — the wire does not "
            "carry it",
            option=option,
        ),
    )


__all__ = ["Holdings", "Inferred", "count_ranges", "holdings", "infer_strategy"]
