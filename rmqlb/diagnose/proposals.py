"""Proven fix proposals: every number a hint promises is checked by running the allocator.

A :class:`~rmqlb.diagnose.report.Proposal` changes one thing of a (group, topic): the queue
count per broker (read = write), the consumer count or replica range, CONSISTENT_HASH's
``virtualNodeCnt``, or the strategy. It is offered only when the bit-exact allocator, run on
the changed inputs at every consumer count the :class:`Subject` covers, shows the problem it
fixes gone, every subscribing consumer busy, and no other allocation problem that the current
setting does not already have: a fix for idle consumers that leaves some consumers with 2
queues and others with 1 would trade IDLE_CONSUMER for IMBALANCE, and is rejected; so is a
"fix" for IMBALANCE that idles consumers.

The search is bounded, so it stays cheap for big groups: each dimension tries a fixed set of
candidates in order of how small the change is (counts one by one up to :data:`STEPS` away,
then multiples or fractions of the other side's count; a ladder of virtual node counts), each
candidate allocates the whole group in one call per consumer count, stops at its first failing
count (the largest first, where idleness starts), and a work budget caps the whole search.

Worked example: 16 queues, replicas 16..24, AVG, IMBALANCE above max/min 1.5. 24 queues would
keep every consumer busy, but 16 consumers would hold 2 or 1 (max/min 2.0): rejected. The
first queue count that passes at every count is 48 (2 to 3 queues each); with 16 queues only
16 consumers pass (1 each)::

    >>> subject = uniform_subject("T", ["broker-a"], 16, Avg(), (16, 24))
    >>> found = find_proposals(subject, Problem.IDLE)
    >>> [p.to_json() for p in found]  # doctest: +NORMALIZE_WHITESPACE
    [{'replicas': 16, 'proof': {'consumers': '16', 'sampled': False, 'minQueues': 1,
      'maxQueues': 1}},
     {'queues': 48, 'proof': {'consumers': '16..24', 'sampled': False, 'minQueues': 2,
      'maxQueues': 3}}]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from rmqlb.allocate import allocate_sorted
from rmqlb.allocate.consistent_hash import (
    HashMemo,
    allocate_consistent_hash,
    hasher,
    queue_keys,
    sweep_virtual_nodes,
)
from rmqlb.diagnose.report import Proof, Proposal
from rmqlb.errors import AllocationError, InputError
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    ConsistentHash,
    HashCharset,
    Params,
    StrategySpec,
    describe,
    params_of,
)

MAX_QUEUES = 65536
"""Largest queue count per broker a proposal may name."""
STEPS = 64
"""Counts tried one by one on each side of today's value."""
JUMPS = 8
"""Multiples (queues) or fractions (consumers) of the other side's count tried beyond."""
VNODES_ONE_BY_ONE = 1024
"""Virtual node counts screened up to here in one pass per consumer count (distinct client
ids), or tried one by one; beyond, :data:`VNODE_LADDER`."""
VNODE_LADDER = (1280, 1600, 2000, 2560, 3200, 4000, 5000)
BUDGET = 3_000_000
"""Work units (about 0.1 µs each) one search may spend: queues + consumers of each
allocation, :data:`POINT_COST` per ring point of CONSISTENT_HASH and :data:`HASH_COST` per
MD5 of a key it had not hashed yet; a third of a second at most."""
POINT_COST = 6
HASH_COST = 10


class Problem(StrEnum):
    """What the allocation rules report, as a proof sees it."""

    IDLE = "idle"  # IDLE_CONSUMER: a subscriber gets no queue
    IMBALANCE = "imbalance"  # IMBALANCE: max/min queues of busy subscribers above threshold
    NON_SUBSCRIBER = "non-subscriber"  # UNCONSUMED_QUEUE: queues fall to a non-subscriber
    NOBODY = "nobody"  # UNCONSUMED_QUEUE: queues fall to nobody


@dataclass(frozen=True, slots=True)
class Population:
    """A group at one consumer count: ``cid_all`` in Java order, and who subscribes."""

    cid_all: tuple[str, ...]
    subscribers: frozenset[str]

    @property
    def count(self) -> int:
        """How many consumers (entries of ``cidAll``)."""
        return len(self.cid_all)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The allocation problems at one population, and the busy subscribers' spread."""

    problems: frozenset[Problem]
    low: int
    high: int
    idle: int


def evaluate(
    strategy: StrategySpec,
    mq_all: Sequence[MessageQueue],
    population: Population,
    threshold: float,
    hashes: HashMemo | None = None,
) -> Outcome | None:
    """Allocate the whole group once and judge it as the rules do (``None``: Java throws).
    ``hashes`` keeps CONSISTENT_HASH's MD5s across calls.

    >>> qs = [MessageQueue("T", "b", i) for i in range(8)]
    >>> evaluate(Avg(), qs, Population(("c1", "c2", "c3"), frozenset({"c1", "c2", "c3"})), 1.5)
    Outcome(problems=frozenset(), low=2, high=3, idle=0)
    """
    cid_all = population.cid_all
    subscribers = [c for c in dict.fromkeys(cid_all) if c in population.subscribers]
    if not cid_all:
        return Outcome(frozenset(), 0, 0, 0)
    if not mq_all:
        return Outcome(frozenset({Problem.IDLE} if subscribers else ()), 0, 0, len(subscribers))
    try:
        if isinstance(strategy, ConsistentHash) and hashes is not None:
            assignment = allocate_consistent_hash(
                mq_all, cid_all, strategy.virtual_node_cnt, hashes, strategy.charset
            )
        else:
            assignment = allocate_sorted(strategy, mq_all, cid_all)
    except (AllocationError, InputError):
        return None
    problems: set[Problem] = set()
    sizes = [len(assignment.get(c, ())) for c in subscribers]
    busy = [s for s in sizes if s]
    idle = len(sizes) - len(busy)
    if idle:
        problems.add(Problem.IDLE)
    if len(busy) >= 2 and max(busy) / min(busy) > threshold:
        problems.add(Problem.IMBALANCE)
    held = sum(map(len, assignment.values()))
    if held < len(mq_all):
        problems.add(Problem.NOBODY)
    if sum(len(qs) for c, qs in assignment.items() if c not in population.subscribers):
        problems.add(Problem.NON_SUBSCRIBER)
    return Outcome(frozenset(problems), min(busy, default=0), max(busy, default=0), idle)


Populations = Callable[[tuple[int, int], int], Sequence[Population]]
"""``(replica range, readable queues of the topic) -> the populations to allocate``."""


@dataclass(frozen=True)
class Subject:
    """One (group, topic) as the search may vary it.

    - ``brokers``/``reads``: the topic's readable brokers (Java order) and their
      ``readQueueNums`` today; a queue proposal sets every one of them to the same count;
    - ``replicas``: what a replica proposal varies, today (a count is ``(m, m)``);
    - ``populations``: the consumer lists to allocate for a replica range, given the
      topic's readable queue total (``rmqlb check`` samples counts around it);
    - ``vary_replicas``: whether consumer counts can be proven (known or irrelevant ids);
    - ``counts``: the consumer counts ``populations`` would give, without building them (for
      the screen below; ``None``: build the populations);
    - ``assumed``: the strategy's parameter is a guess (clients that do not report it): only
      changes that set it are proven whatever it is (a virtual node count, a strategy);
    - ``shrink``: fewer queues or consumers may be proposed (not on a partial capture);
    - ``static``: the queues are a 5.x static topic's logical ones, whose count
      ``mqadmin updateStaticTopic`` raises and never lowers.

    AVG and AVG_BY_CIRCLE give every consumer ``n // m`` or ``n // m + 1`` queues, so a
    candidate whose counts cannot pass (fewer queues than consumers, or an uneven split above
    the threshold) is screened out by arithmetic before any allocation: only candidates that
    pass the screen are allocated, and only the allocation proves them.
    """

    topic: str
    brokers: tuple[str, ...]
    reads: tuple[int, ...]
    strategy: StrategySpec
    replicas: tuple[int, int]
    threshold: float
    populations: Populations
    vary_replicas: bool = True
    member: str | None = None
    max_replicas: int = 10_000
    counts: Callable[[tuple[int, int], int], Sequence[int]] | None = None
    assumed: bool = False
    shrink: bool = True
    static: bool = False


def uniform_subject(
    topic: str,
    brokers: Sequence[str],
    queues: int,
    strategy: StrategySpec,
    replicas: tuple[int, int],
    *,
    threshold: float = 1.5,
) -> Subject:
    """A subject whose consumers all subscribe, with generated client ids (for examples)."""

    def populations(span: tuple[int, int], _: int) -> list[Population]:
        out = []
        for count in range(span[0], span[1] + 1):
            ids = tuple(sorted((f"10.0.0.1@c-{i:05d}" for i in range(count)), key=java_key))
            out.append(Population(ids, frozenset(ids)))
        return out

    ordered = tuple(sorted(brokers, key=java_key))
    return Subject(
        topic, ordered, (queues,) * len(ordered), strategy, replicas, threshold, populations
    )


class _Exhausted(Exception):
    """The search spent its budget."""


@dataclass
class _Search:
    subject: Subject
    target: Problem
    budget: int
    baseline: frozenset[Problem] = frozenset()
    forbidden: frozenset[Problem] = frozenset()
    _queues: dict[str, list[MessageQueue]] = field(default_factory=dict)
    hashes: HashMemo = field(default_factory=HashMemo)

    def mq_all(self, reads: Sequence[int]) -> list[MessageQueue]:
        out: list[MessageQueue] = []
        for broker, count in zip(self.subject.brokers, reads, strict=True):
            have = self._queues.setdefault(broker, [])
            if len(have) < count:
                have.extend(
                    MessageQueue(self.subject.topic, broker, i) for i in range(len(have), count)
                )
            out.extend(have[:count])
        return out

    def spend(self, cost: int) -> None:
        self.budget -= cost
        if self.budget < 0:
            raise _Exhausted

    def outcomes(
        self,
        reads: Sequence[int],
        replicas: tuple[int, int],
        strategy: StrategySpec,
        forbidden: frozenset[Problem] | None,
    ) -> tuple[list[int], list[Outcome]] | None:
        """Allocate at every population; ``None`` at the first forbidden problem or throw."""
        mq_all = self.mq_all(reads)
        populations = sorted(
            self.subject.populations(replicas, len(mq_all)), key=lambda p: -p.count
        )
        counts: list[int] = []
        outcomes: list[Outcome] = []
        for population in populations:
            work = len(mq_all) + population.count
            if isinstance(strategy, ConsistentHash):
                work += POINT_COST * population.count * strategy.virtual_node_cnt
            self.spend(work)
            hashed = self.hashes.hashed
            outcome = evaluate(strategy, mq_all, population, self.subject.threshold, self.hashes)
            self.spend(HASH_COST * (self.hashes.hashed - hashed))
            if outcome is None or (forbidden is not None and outcome.problems & forbidden):
                return None
            counts.append(population.count)
            outcomes.append(outcome)
        return (counts, outcomes) if outcomes else None

    def screened_out(
        self, reads: Sequence[int], replicas: tuple[int, int], strategy: StrategySpec
    ) -> bool:
        """Whether arithmetic already rules the candidate out (AVG and AVG_BY_CIRCLE only)."""
        if not isinstance(strategy, Avg | AvgByCircle):
            return False
        n = sum(reads)
        if self.subject.counts is not None:
            counts: Sequence[int] = self.subject.counts(replicas, n)
        else:
            counts = [p.count for p in self.subject.populations(replicas, n)]
        self.spend(len(counts))
        for m in counts:
            if m == 0:
                continue
            if n < m:
                return True  # some consumer idles
            low, high = n // m, -(-n // m)
            if Problem.IMBALANCE in self.forbidden and high / low > self.subject.threshold:
                return True
        return False

    def prove(
        self,
        *,
        reads: Sequence[int] | None = None,
        replicas: tuple[int, int] | None = None,
        strategy: StrategySpec | None = None,
    ) -> Proof | None:
        reads = reads if reads is not None else self.subject.reads
        replicas = replicas if replicas is not None else self.subject.replicas
        strategy = strategy if strategy is not None else self.subject.strategy
        if self.screened_out(reads, replicas, strategy):
            return None
        result = self.outcomes(reads, replicas, strategy, self.forbidden)
        if result is None:
            return None
        counts, outcomes = result
        ordered = tuple(sorted(set(counts)))
        every = ordered == tuple(range(ordered[0], ordered[-1] + 1))
        worst = max(outcomes, key=lambda o: (o.high / o.low if o.low else 0.0, o.high))
        return Proof(ordered, every, worst.low, worst.high)


def _queue_candidates(now: int, total_consumers: int, brokers: int, up: bool) -> list[int]:
    """Per-broker queue counts to try, nearest first (see the module docstring)."""
    if up:
        near = list(range(now + 1, min(now + STEPS, MAX_QUEUES) + 1))
        far = [-(-k * total_consumers // brokers) for k in range(1, JUMPS + 1)]
        far = [q for q in far if now + STEPS < q <= MAX_QUEUES]
        return near + sorted(set(far))
    return list(range(now - 1, max(now - STEPS, 0), -1))


def _count_candidates(now: int, queues: int, limit: int, up: bool) -> list[int]:
    """Consumer counts to try, nearest first: one by one, then ``queues // k``."""
    if up:
        near = list(range(now + 1, min(now + STEPS, limit) + 1))
        far = sorted({queues // k for k in range(1, JUMPS + 1)})
        return near + [c for c in far if now + STEPS < c <= limit]
    near = list(range(now - 1, max(now - STEPS, 0), -1))
    far = sorted({queues // k for k in range(1, JUMPS + 1)}, reverse=True)
    return near + [c for c in far if 0 < c < now - STEPS]


def find_proposals(
    subject: Subject,
    target: Problem,
    budget: int = BUDGET,
    hashes: HashMemo | None = None,
) -> tuple[Proposal, ...]:
    """The proven proposals that remove ``target`` (see the module docstring), in the order
    a hint states them: virtual nodes, more queues, fewer queues, consumers, strategy.
    ``hashes`` shares CONSISTENT_HASH's MD5s with other searches of the same group."""
    if not isinstance(subject.strategy, Avg | AvgByCircle | ConsistentHash):
        return ()
    search = _Search(subject, target, budget, hashes=hashes or HashMemo())
    try:
        base = search.outcomes(subject.reads, subject.replicas, subject.strategy, None)
    except _Exhausted:
        return ()
    if base is None:
        return ()
    search.baseline = frozenset().union(*(o.problems for o in base[1]))
    if target not in search.baseline:
        return ()
    # Counts never buy a fix with idle consumers; other problems may stay if already there.
    search.forbidden = (frozenset(Problem) - search.baseline) | {target, Problem.IDLE}
    found: dict[str, list[Proposal]] = {}
    steps: list[tuple[str, Callable[[_Search], list[Proposal]]]] = [
        ("strategy", _strategy_proposals),
        ("replicas", _replica_proposals),
        ("queues", _queue_proposals),
        ("vnodes", _vnode_proposals),
    ]
    if subject.assumed or params_of(subject.strategy) is Params.UNKNOWN:
        # today's parameter is a guess: only changes that set it are proven whatever it is
        steps = [(name, step) for name, step in steps if name in ("strategy", "vnodes")]
    for name, step in steps:
        try:
            found[name] = step(search)
        except _Exhausted:
            break
    order = ["vnodes", "queues", "replicas", "strategy"]
    return rank_proposals([p for name in order for p in found.get(name, ())], target)


def _strategy_proposals(search: _Search) -> list[Proposal]:
    spec = search.subject.strategy
    if not isinstance(spec, ConsistentHash):
        return []
    proof = search.prove(strategy=Avg())
    return [] if proof is None else [Proposal(proof, strategy="AVG", current=describe(spec))]


def _vnode_proposals(search: _Search) -> list[Proposal]:
    spec = search.subject.strategy
    if not isinstance(spec, ConsistentHash):
        return []
    now = spec.virtual_node_cnt
    screened = _vnode_screen(search, now)
    near = range(max(now + 1, 1), VNODES_ONE_BY_ONE + 1) if screened is None else screened
    for vnodes in (v for v in [*near, *VNODE_LADDER] if v > now):
        proof = search.prove(strategy=ConsistentHash(vnodes, charset=spec.charset))
        if proof is not None:
            known = not search.subject.assumed and params_of(spec) is not Params.UNKNOWN
            return [Proposal(proof, vnodes=vnodes, current=now if known else None)]
    return []


def _charset(spec: StrategySpec) -> HashCharset:
    """The charset a CONSISTENT_HASH ring of ``spec`` hashes in (UTF-8 for the others)."""
    return spec.charset if isinstance(spec, ConsistentHash) else HashCharset.UTF_8


def _vnode_screen(search: _Search, now: int) -> list[int] | None:
    """The virtual node counts above ``now`` (up to :data:`VNODES_ONE_BY_ONE`, less when the
    budget is short) that pass at every population, from one sweep of the ring per population
    (:func:`~rmqlb.allocate.consistent_hash.sweep_virtual_nodes`); ``None`` when a population
    repeats a client id, which the sweep does not model. The allocator still proves them."""
    subject = search.subject
    mq_all = search.mq_all(subject.reads)
    populations = subject.populations(subject.replicas, len(mq_all))
    if any(len(set(p.cid_all)) != p.count for p in populations):
        return None
    points = sum(p.count for p in populations) * (POINT_COST + HASH_COST)
    top = min(VNODES_ONE_BY_ONE, search.budget // max(points, 1))
    if top <= now:
        return []
    search.spend(points * top)
    charset = _charset(subject.strategy)
    queue_hashes = hasher(search.hashes, charset)(queue_keys(mq_all))
    passing: set[int] | None = None
    for population in sorted(populations, key=lambda p: -p.count):
        ok = _sweep_passing(population, queue_hashes, top, now, search)
        passing = ok if passing is None else passing & ok
        if not passing:
            return []
    return sorted(passing or ())


def _sweep_passing(
    population: Population, queue_hashes: Sequence[int], top: int, now: int, search: _Search
) -> set[int]:
    """The counts in ``now+1 .. top`` at which ``population`` has no forbidden problem."""
    cids = population.cid_all
    subscribing = [c in population.subscribers for c in cids]
    subs = [i for i, s in enumerate(subscribing) if s]
    others = [i for i, s in enumerate(subscribing) if not s]
    forbidden, threshold = search.forbidden, search.subject.threshold
    owner = [0] * len(queue_hashes)
    counts = [0] * len(cids)
    out: set[int] = set()
    charset = _charset(search.subject.strategy)
    for n, moves in sweep_virtual_nodes(cids, queue_hashes, top, charset):
        for q, o in moves:
            if n != top:
                counts[owner[q]] -= 1
            owner[q] = o
            counts[o] += 1
        if n <= now:
            break
        held = [counts[i] for i in subs]
        busy = [k for k in held if k]
        problems = set()
        if len(busy) < len(held):
            problems.add(Problem.IDLE)
        if len(busy) >= 2 and max(busy) / min(busy) > threshold:
            problems.add(Problem.IMBALANCE)
        if any(counts[i] for i in others):
            problems.add(Problem.NON_SUBSCRIBER)
        if not problems & forbidden:
            out.add(n)
    return out


def _queue_proposals(search: _Search) -> list[Proposal]:
    subject = search.subject
    if search.target not in (Problem.IDLE, Problem.IMBALANCE) or not subject.brokers:
        return []
    if subject.static and len(subject.brokers) > 1:
        return []  # logical queues of several scopes: no one count to set
    brokers = len(subject.brokers)
    now = max(subject.reads)
    out: list[Proposal] = []
    for q in _queue_candidates(now, subject.replicas[1], brokers, up=True):
        proof = search.prove(reads=(q,) * brokers)
        if proof is not None:
            out.append(Proposal(proof, queues=q, current=now))
            break
    uniform = len(set(subject.reads)) == 1
    if search.target is Problem.IMBALANCE and uniform and subject.shrink and not subject.static:
        # at most halve the topic: fewer queues also means less parallelism
        fewer = _queue_candidates(now, subject.replicas[1], brokers, up=False)
        for q in (q for q in fewer if 2 * q >= now):
            proof = search.prove(reads=(q,) * brokers)
            if proof is not None:
                out.append(Proposal(proof, queues=q, current=now))
                break
    return out


def busy_consumers(replicas: tuple[int, int], queues: int) -> int:
    """How many consumers hold a queue today at the fewest replicas (AVG-like: one per queue
    up to the queue count): no proposal for idle consumers goes below it."""
    return min(replicas[0], queues)


def _replica_proposals(search: _Search) -> list[Proposal]:
    subject = search.subject
    if not subject.vary_replicas or search.target not in (Problem.IDLE, Problem.IMBALANCE):
        return []
    low, high = subject.replicas
    queues = sum(subject.reads)
    member = subject.member
    out: list[Proposal] = []
    # fixing idle consumers never costs busy ones; an even split may, and its hint says so
    floor = busy_consumers((low, high), queues) if search.target is Problem.IDLE else 1

    def first(candidates: Sequence[tuple[int, int]]) -> Proposal | None:
        for span in candidates:
            proof = search.prove(replicas=span)
            if proof is not None:
                return Proposal(proof, replicas=span, member=member, current=(low, high))
        return None

    if low < high:  # keep the minimum, lower the maximum: the widest range that passes
        capped = [
            (low, h)
            for h in _count_candidates(high, queues, subject.max_replicas, up=False)
            if h >= low
        ]
        found = first(capped)
        if found is not None:
            out.append(found)
    if not out and subject.shrink:
        below = first([(c, c) for c in _count_candidates(low, queues, low, up=False) if c >= floor])
        if below is not None:
            out.append(below)
    if search.target is Problem.IMBALANCE:
        above = first(
            [(c, c) for c in _count_candidates(high, queues, subject.max_replicas, up=True)]
        )
        if above is not None:
            out.append(above)
    return out


def _hurts(p: Proposal, target: Problem) -> bool:
    """Whether ``p`` takes something away: fewer queues (less parallelism, messages to drain)
    or fewer consumers than today (for idle consumers only idle ones go: see
    :func:`busy_consumers`)."""
    if p.queues is not None and isinstance(p.current, int):
        return p.queues < p.current
    if p.replicas is not None and isinstance(p.current, tuple):
        return target is not Problem.IDLE and p.replicas[1] < p.current[0]
    return False


def _change(p: Proposal) -> float:
    """How much ``p`` changes, relative to today: a queue or consumer count by its relative
    change, a virtual node count or a strategy as a whole (every queue may move)."""
    now: float | None = None
    new: float = 0
    if p.queues is not None:
        new, now = p.queues, p.current if isinstance(p.current, int) else None
    elif p.replicas is not None:
        new = p.replicas[1]
        now = p.current[1] if isinstance(p.current, tuple) else None
    else:  # another virtual node count or strategy redraws the whole allocation
        return 1.0
    return 1.0 if not now else abs(new - now) / now


def rank_proposals(proposals: Sequence[Proposal], target: Problem) -> tuple[Proposal, ...]:
    """Proposals that take nothing away first, then by how little they change (stable)."""
    return tuple(sorted(proposals, key=lambda p: (_hurts(p, target), _change(p))))


# --------------------------------------------------------------------------- wording


@dataclass(frozen=True, slots=True)
class Wording:
    """What a hint needs besides the proposals: names, and who the replicas belong to.

    ``check``: the proposals come from ``rmqlb check`` (replicas of a declared member, client
    ids of its model) rather than from a running group; ``target``: the problem they fix;
    ``merged``: the topic's one broker is :data:`~rmqlb.model.queue.MERGED_BROKER` (a
    cluster export's counts, summed over its masters); ``static``: its queues are a 5.x
    static topic's logical ones, whose count is set on ``cluster``.
    """

    topic: str
    group: str
    brokers: int
    strategy: StrategySpec
    check: bool = False
    target: Problem | None = None
    merged: bool = False
    static: bool = False
    cluster: str = "<cluster>"


def _queues_word(n: int) -> str:
    return f"{n:,} queue{'' if n == 1 else 's'}"


def _amount(proof: Proof) -> str:
    if proof.low == proof.high:
        return _queues_word(proof.low)
    return f"{proof.low:,} to {_queues_word(proof.high)}"


def proof_text(proof: Proof, counted: bool = False) -> str:
    """What the allocator showed, ``counted`` when the proposal itself names the count.

    >>> proof_text(Proof((16, 17, 18), True, 2, 3))
    'at every count from 16 to 18 all consumers are busy, max/min at most 3/2'
    >>> proof_text(Proof((5,), True, 2, 2)), proof_text(Proof((5,), True, 2, 2), counted=True)
    ('5 consumers get 2 queues each', 'each gets 2 queues')
    """
    counts = proof.counts
    if len(counts) == 1:
        each = " each" if proof.low == proof.high else ""
        if counted:
            return f"{'it' if counts[0] == 1 else 'each'} gets {_amount(proof)}"
        plural = "" if counts[0] == 1 else "s"
        return f"{counts[0]:,} consumer{plural} get {_amount(proof)}{each}"
    sampled = "" if proof.every else " checked"
    where = f"at every{sampled} count from {counts[0]:,} to {counts[-1]:,}"
    if proof.low == proof.high:
        return f"{where} the queues split evenly"
    return f"{where} all consumers are busy, max/min at most {proof.high}/{proof.low}"


def _replicas_text(span: tuple[int, int]) -> str:
    return str(span[0]) if span[0] == span[1] else f"{span[0]}..{span[1]}"


def proposal_text(p: Proposal, w: Wording, first_queue_clause: bool = True) -> str:
    """One proposal as a clause of a hint, with its proof."""
    proof = proof_text(p.proof)
    if p.vnodes is not None:
        now = "unknown" if p.current is None else p.current
        return f"set virtualNodeCnt to {p.vnodes} (now {now}): with it {proof}"
    if p.queues is not None and w.static:  # only raised (Subject.static)
        return (
            f"raise the logical queues of static topic {w.topic} to {p.queues:,} (mqadmin "
            f"updateStaticTopic -c {w.cluster} -t {w.topic} -qn {p.queues}): with "
            f"{_queues_word(p.queues)} {proof}"
        )
    if p.queues is not None:
        q, now = p.queues, p.current if isinstance(p.current, int) else 0
        where = f" on each of its {w.brokers} brokers" if w.brokers > 1 else ""
        if w.merged:
            where = " in all, over the cluster's masters (the export sums them)"
        total = q * max(w.brokers, 1)
        if q > now:
            verb = f"raise readQueueNums and writeQueueNums of {w.topic} to {q:,}{where}"
            return f"{verb}: with {_queues_word(total)} {proof}"
        verb = (
            f"lower them to {q:,}{where}"
            if not first_queue_clause
            else f"lower readQueueNums and writeQueueNums of {w.topic} to {q:,}{where}"
        )
        return (
            f"{verb}, fewer than today's {now:,} (lower writeQueueNums first and readQueueNums "
            f"only once {_drained_text(q, now)} drained): with {_queues_word(total)} {proof}"
        )
    if p.replicas is not None:
        span = _replicas_text(p.replicas)
        proof = proof_text(p.proof, counted=True)
        fewer = _fewer_text(p, w)
        if w.check:
            owner = f" of {p.member}" if p.member else ""
            return f"set replicas{owner} to {span}{fewer}: {proof}"
        noun = "consumer" if p.replicas == (1, 1) else "consumers"
        return f"run {span} {noun} in {w.group}{fewer}: {proof}"
    return f"switch {w.group} to {p.strategy}: {proof}"


def _drained_text(kept: int, now: int) -> str:
    """The queue ids a shrink from ``now`` to ``kept`` queues per broker leaves to drain.

    >>> _drained_text(2, 3), _drained_text(4, 8)
    ('queue 2 is', 'queues 4..7 are')
    """
    return f"queue {kept} is" if kept == now - 1 else f"queues {kept}..{now - 1} are"


def _fewer_text(p: Proposal, w: Wording) -> str:
    """What a replica proposal below today's count takes away, in words ("" otherwise)."""
    if p.replicas is None or not isinstance(p.current, tuple) or p.replicas[1] >= p.current[0]:
        return ""
    k = p.current[0] - p.replicas[1]
    if w.target is Problem.IDLE:
        return f" ({plural(k, 'consumer')} fewer: {'it was' if k == 1 else 'they were'} idle)"
    return f" ({plural(k, 'consumer')} fewer than today: less consuming capacity)"


def proposals_hint(proposals: Sequence[Proposal], w: Wording) -> str:
    """The hint stating every proven proposal (empty when there is none)."""
    if not proposals:
        return ""
    clauses: list[str] = []
    seen_queue = False
    for p in proposals:  # "lower them" only right after a clause that names the queues
        clauses.append(proposal_text(p, w, first_queue_clause=not seen_queue))
        seen_queue = p.queues is not None
    text = "; or ".join(clauses)
    if isinstance(w.strategy, ConsistentHash):
        ids = "these client ids"
        if w.check:
            ids = "the client ids check models (real ids hash differently)"
        why = (
            "CONSISTENT_HASH places queues by hash, so an even division does not balance it; "
            if w.target is Problem.IMBALANCE
            else ""
        )
        text = f"{why}computed on the ring of {ids}, which a consumer joining or leaving "
        text += "redraws: " + "; or ".join(clauses)
    return text
