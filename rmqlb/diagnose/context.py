"""What the rules look at: one group, one topic, expected and actual computed once.

The engine builds a :class:`GroupContext` per group and a :class:`TopicContext` per
(group, subscribed topic); rules only read them. Building a topic context runs the expected
allocation exactly once, over the whole group, as every Java client would:

- ``mq_all``: the route's readable queues (``perm & 4``), ids ``0..readQueueNums-1``, in Java
  order;
- ``cid_all``: *every* consumer of the group, duplicates included, in Java order (that is what
  the broker returns, whatever each client subscribes to); for a topic whose brokers all keep
  the same list in the snapshot (``onBrokers``), that list (:func:`topic_cid_all`: a client
  takes cidAll from a broker of the topic);
- the strategy: ``--strategy``, else the group's, else the consumers' when they agree, else AVG;
  parameters nobody stated (clients report only the class) are settled by
  :mod:`rmqlb.diagnose.infer` from what the clients hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from itertools import compress, repeat
from operator import attrgetter, is_, is_not, sub
from typing import TYPE_CHECKING, cast

from rmqlb.allocate import allocate_sorted, validate
from rmqlb.diagnose.balance import (
    POP_CONSUME_TYPE,
    client_balance,
    consumed_invisibly,
    is_proxy_client,
    through_proxy_remoting,
)
from rmqlb.diagnose.report import StrategyInference
from rmqlb.errors import AllocationError, InputError
from rmqlb.model._fast import new_queue
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import (
    RETRY_PREFIX,
    V5_0_0,
    CaptureError,
    Consumer,
    Group,
    MessageModel,
    QueueOffset,
    Rebalance,
    RequestMode,
    Snapshot,
    TopicRoute,
    is_logical_broker,
    physical_offsets,
    read_by_assign,
)
from rmqlb.model.strategy import (
    Avg,
    Config,
    Params,
    StrategySpec,
    describe,
    params_of,
    same_algorithm,
)

if TYPE_CHECKING:
    from rmqlb.diagnose.brokerside import BrokerSide

__all__ = ["POP_CONSUME_TYPE", "is_proxy_client"]


#: How long a held queue may go unconsumed while messages wait (CONSUMER_STALLED,
#: QUEUE_STALLED): the broker's long poll holds a pull at most 15 s, a push consumer commits
#: its offsets every 5 s.
STALL_MS = 60_000


@dataclass(frozen=True, slots=True)
class DiagnoseOptions:
    """Thresholds of the rules.

    - ``max_imbalance``: IMBALANCE (warning) when the most loaded consumer holds more than
      this many times the queues of the least loaded one (both holding at least one).
    - ``lag_skew_share`` / ``min_lag``: LAG_SKEW when one consumer holds more than this share
      of a topic's lag, and the topic's lag is at least ``min_lag`` messages.
    - ``max_listed``: how many queues or client ids a message names before ``and N more``.
    - ``stall_ms``: CONSUMER_STALLED when a held queue with lag was not pulled for longer
      than the client's ``pullInterval`` plus this, or its cached messages were not consumed
      for longer than this (the broker's long poll holds a pull at most 15 s).
    - ``stale_budget`` / ``stale_work``: how many alternative inputs the STALE_ALLOCATION
      search may try per topic (each is one allocation of the whole group), and how much
      work in all (queues plus client ids per allocation): big groups try fewer.
    - ``proposals``: search proven fixes for IDLE_CONSUMER, IMBALANCE and UNCONSUMED_QUEUE
      (:mod:`rmqlb.diagnose.proposals`); off where nobody reads the hints (the fleet audit)
      or where the caller proves them itself (``rmqlb check``, over replica ranges).
    - ``recent_ms``: a message consumed this long before the capture is evidence that the
      group is consumed, whatever its consumer list says (5.x proxy clients are not listed).
    - ``moving``: groups whose committed offsets moved between two polls (``--watch``).
    - ``earlier``: the group offsets of an earlier poll (``--watch``, the exporter), at
      least ``stall_ms`` before this one (:class:`PollHistory`): QUEUE_STALLED compares them.
    """

    max_imbalance: float = 1.5
    lag_skew_share: float = 0.5
    min_lag: int = 1000
    max_listed: int = 8
    stall_ms: int = STALL_MS
    stale_budget: int = 64
    stale_work: int = 1_000_000
    proposals: bool = True
    recent_ms: int = 300_000
    moving: frozenset[str] = frozenset()
    earlier: EarlierPoll | None = None


@dataclass(frozen=True, slots=True)
class EarlierPoll:
    """The group offsets of an earlier capture: group -> queue -> offset, and when."""

    captured_ms: int
    offsets: Mapping[str, Mapping[MessageQueue, QueueOffset]]


class PollHistory:
    """The captures of a repeated poll (``--watch``, the exporter), kept as long as the
    newest may need them: :meth:`earlier` gives the latest one at least ``gap_ms`` older
    than a new capture, for QUEUE_STALLED. A push consumer commits its offsets every 5 s and
    a healthy one consumes a waiting message well within ``stall_ms`` (60 s): an offset
    that stood still longer while messages waited is not being consumed."""

    def __init__(self, gap_ms: int = STALL_MS) -> None:
        self.gap_ms = gap_ms
        self.polls: list[EarlierPoll] = []

    def earlier(self, snapshot: Snapshot) -> EarlierPoll | None:
        """The poll to compare ``snapshot`` with (``None``: none old enough yet); then
        ``snapshot`` joins the history unless the newest kept poll is less than a quarter of
        ``gap_ms`` older (so a few polls are kept, however often one polls), and polls no
        later capture needs are dropped."""
        now = epoch_ms(snapshot.captured_at)
        if now is None:
            return None
        old = [p for p in self.polls if now - p.captured_ms >= self.gap_ms]
        chosen = old[-1] if old else None
        if chosen is not None:  # an older poll is never chosen again: captures get later
            self.polls = self.polls[self.polls.index(chosen) :]
        if not self.polls or now - self.polls[-1].captured_ms >= self.gap_ms // 4:
            offsets = {
                name: {o.queue: o for o in group.offsets} for name, group in snapshot.groups.items()
            }
            self.polls.append(EarlierPoll(now, offsets))
        return chosen


#: Requests that find groups rather than describe one: their failures leave the group list
#: in doubt, never a particular group.
DISCOVERY_REQUESTS = frozenset(
    {
        "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
        "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
        "QUERY_TOPIC_CONSUME_BY_WHO",
    }
)
#: The request of a topic's route (to the NameServer).
ROUTE_REQUEST = "GET_ROUTEINFO_BY_TOPIC"
#: Requests whose failure leaves a group's offsets, lag or queues unknown where they failed.
OFFSET_REQUESTS = frozenset(
    {"GET_CONSUME_STATS", "QUERY_CONSUMER_OFFSET", "GET_TOPIC_STATS_INFO", ROUTE_REQUEST}
)


def group_topics(group: Group) -> set[str]:
    """The group's retry topic and every topic its consumers subscribe or it has offsets for."""
    return (
        {RETRY_PREFIX + group.name}
        | {s.topic for c in group.consumers for s in c.subscriptions}
        | {o.queue.topic for o in group.offsets}
    )


class ErrorIndex:
    """A snapshot's capture errors by the group, topic or client they are about, built once:
    finding each group's errors by scanning them all made a 1,000-group capture that ran
    into its deadline (thousands of errors) quadratic."""

    def __init__(self, errors: Iterable[CaptureError]) -> None:
        self._errors = tuple(errors)
        self._by: dict[tuple[str, str], list[tuple[int, CaptureError]]] = {}
        for i, e in enumerate(self._errors):
            if e.group is not None:
                key = ("group", e.group)
            elif e.topic is not None:
                if e.request in DISCOVERY_REQUESTS:
                    continue
                key = ("topic", e.topic)
            else:
                key = ("client", e.target)
            self._by.setdefault(key, []).append((i, e))
        self._naming: dict[str, list[int]] | None = None  # built on the first question

    def of(self, group: Group) -> tuple[CaptureError, ...]:
        """Failures that leave what is known of ``group`` incomplete: requests about the
        group (or, in snapshots that do not say, about one of its clients), and requests
        about one of its topics (its route, its offsets) that failed; in capture order."""
        if not self._by:  # a complete capture: no need to list the group's topics
            return ()
        keys = [("group", group.name)]
        keys += [("topic", t) for t in group_topics(group)]
        keys += [("client", c.client_id) for c in group.consumers]
        found = {i: e for key in keys for i, e in self._by.get(key, ())}
        return tuple(found[i] for i in sorted(found))

    def of_topic(self, topic: str) -> list[CaptureError]:
        """Failures of requests about ``topic`` that name no group (its route, its stats)."""
        return [e for _, e in self._by.get(("topic", topic), ())]

    def naming(self, consumer: Consumer) -> list[CaptureError]:
        """The errors that name ``consumer``: its client id or address as their target or as
        a word of their target or message (punctuation around a word ignored); in capture
        order. Looked up, not scanned: a group of thousands of clients that did not answer
        has as many errors, and a scan per client took minutes."""
        if self._naming is None:
            self._naming = {}
            for i, e in enumerate(self._errors):
                for word in _words(e):
                    self._naming.setdefault(word, []).append(i)
        found = {
            i
            for key in (consumer.client_id, consumer.client_addr)
            if key
            for i in self._naming.get(key, ())
        }
        return [self._errors[i] for i in sorted(found)]


#: What may surround a client id or address in an error's text: "via broker-a (10.0.0.1:10911):".
_WORD_EDGES = "()[]{}<>,;:'\""


def _words(error: CaptureError) -> set[str]:
    """The words of ``error`` that can name a client: its whole target, and each
    whitespace-separated word of its target and message, as written and stripped of
    :data:`_WORD_EDGES`."""
    words = {error.target}
    for word in (*error.target.split(), *error.message.split()):
        words.add(word)
        words.add(word.strip(_WORD_EDGES))
    return words


_last_index: tuple[tuple[CaptureError, ...], ErrorIndex] | None = None


def error_index(errors: tuple[CaptureError, ...]) -> ErrorIndex:
    """The index of ``errors``, built once for the snapshot being diagnosed."""
    global _last_index  # noqa: PLW0603  (one snapshot at a time: a one-entry cache)
    if _last_index is None or _last_index[0] is not errors:
        _last_index = (errors, ErrorIndex(errors))
    return _last_index[1]


def group_errors(snapshot: Snapshot, group: Group) -> tuple[CaptureError, ...]:
    """Failures that leave what is known of ``group`` incomplete (see :class:`ErrorIndex`)."""
    return error_index(snapshot.errors).of(group)


class Mode(StrEnum):
    """How a group's queues are handed out, hence what can be checked."""

    CLUSTERING = "CLUSTERING"  # clients or brokers allocate: expected vs actual per queue
    BROADCASTING = "BROADCASTING"  # every client reads every queue
    POP = "POP"  # pop consumers whose assignment cannot be computed
    PROXY = "PROXY"  # 5.x gRPC clients behind a proxy (pop, running info unavailable)


def pops_topic(consumer: Consumer, topic: str) -> bool:
    """Whether ``consumer`` holds POP queues of ``topic`` (a broker lets it pop them)."""
    return any(mq.topic == topic for mq in consumer.pop_assigned or ())


def is_pop_client(consumer: Consumer, group: Group) -> bool:
    """Pop consumers: ``CONSUME_POP``, or queues in ``mqPopTable`` (``popAssigned``)."""
    return POP_CONSUME_TYPE in (consumer.consume_type, group.consume_type) or bool(
        consumer.pop_assigned
    )


def broker_addr(snapshot: Snapshot, broker: str) -> str:
    """The master address of ``broker`` for commands, ``<broker address>`` when unknown."""
    info = snapshot.brokers.get(broker)
    addr = info.master_addr() if info is not None else None
    return addr or f"<{broker} address>"


def cluster_name(snapshot: Snapshot) -> str:
    """The cluster of the snapshot's brokers when there is exactly one, for ``mqadmin -c``;
    ``<cluster>`` when it has none or several."""
    clusters = {b.cluster for b in snapshot.brokers.values() if b.cluster}
    return clusters.pop() if len(clusters) == 1 else "<cluster>"


def errors_about(snapshot: Snapshot, consumer: Consumer) -> list[CaptureError]:
    """The capture errors that name ``consumer`` (see :meth:`ErrorIndex.naming`)."""
    if not snapshot.errors:
        return []
    return error_index(snapshot.errors).naming(consumer)


def consumers_strategy(consumers: Sequence[Consumer]) -> StrategySpec | None:
    """The strategy every consumer that reports one agrees on, else ``None``.

    CONFIG strategies agree when all consumers use CONFIG; their lists are merged. A spec
    with stated parameters wins over reports that carry only the class.
    """
    reported = [c.strategy for c in consumers if c.strategy is not None]
    if not reported:
        return None
    first = reported[0]
    if not all(same_algorithm(first, s) for s in reported[1:]):
        return None
    if isinstance(first, Config):
        merged: dict[str, tuple[MessageQueue, ...]] = {}
        stated = False
        for spec in reported:
            assert isinstance(spec, Config)
            merged.update(spec.config)
            stated = stated or spec.params is not Params.UNKNOWN
        return Config(merged, Params.GIVEN if stated else Params.UNKNOWN)
    return next((s for s in reported if params_of(s) is not Params.UNKNOWN), first)


def choose_strategy(override: StrategySpec | None, group: Group) -> tuple[StrategySpec, str]:
    """The strategy used for *expected* and where it came from (design §4 precedence)."""
    if override is not None:
        return override, "given"
    if group.strategy is not None:
        return group.strategy, "group"
    agreed = consumers_strategy(group.consumers)
    if agreed is not None:
        return agreed, "consumers"
    return Avg(), "default"


@dataclass(slots=True)
class GroupContext:
    """One group, with its consumers in Java order of client id (duplicates kept)."""

    snapshot: Snapshot
    group: Group
    options: DiagnoseOptions
    strategy: StrategySpec
    strategy_source: str
    mode: Mode
    consumers: tuple[Consumer, ...]
    cid_all: list[str]
    live: bool
    offsets_by_queue: dict[MessageQueue, QueueOffset] | None = None
    now_ms: int | None = None  # the capture time (``capturedAt``), epoch ms
    inference: StrategyInference | None = None
    blocked: str | None = None
    errors: tuple[CaptureError, ...] = ()
    #: Ids on several connections that the brokers' own lists show are one client
    #: (:func:`single_clients`): their entries hold its queues once.
    single: frozenset[str] = frozenset()
    #: Clients inferred to run other parameters than ``strategy`` (their specs).
    client_strategies: Mapping[str, StrategySpec] | None = None
    #: :meth:`pops` by topic, as computed (several rules ask it of one topic).
    popped: dict[str, bool] = field(default_factory=dict)
    #: Clients reporting BROADCASTING in a group diagnosed as CLUSTERING (a mix of models:
    #: they read every queue and commit nothing on the brokers).
    broadcasters: frozenset[str] = frozenset()
    #: Pull consumers (:attr:`~rmqlb.model.Consumer.pulls_actively`): the queues a strategy
    #: gives one of a topic it does not subscribe are read where its application assign()s
    #: them.
    pullers: frozenset[str] = frozenset()
    #: Pull consumers whose running info lists no queue
    #: (:attr:`~rmqlb.model.Consumer.queues_unreported`).
    unreported: frozenset[str] = frozenset()

    @property
    def offsets_unknown(self) -> tuple[CaptureError, ...]:
        """The failures that leave some of the group's offsets, lag or queues unknown: no
        finding may then assert there are none, nor advise deleting or resetting."""
        return tuple(e for e in self.errors if e.request in OFFSET_REQUESTS)

    def consumption_evidence(self) -> str | None:
        """Why the group is being consumed although its consumer list may say otherwise
        (``None``: no sign): offsets that moved between two polls (``--watch``), a client's
        consume rate, or a message consumed shortly before the capture."""
        if self.name in self.options.moving:
            return "its committed offsets moved between two polls"
        rate = sum(st.consume_ok_tps for c in self.consumers for st in c.status.values())
        if rate > 0:
            return f"its clients report consuming {rate:,.1f} messages/s"
        fetched = self.group.broker_consume_tps
        if fetched:
            return f"its brokers count it fetching {fetched:,.1f} messages/s"
        if self.now_ms is None:
            return None
        last = max((o.last_timestamp for o in self.group.offsets), default=0)
        if last and self.now_ms - last <= self.options.recent_ms:
            ago = max(0, self.now_ms - last) // 1000
            return f"a message was consumed {ago:,} s before the capture"
        return None

    #: Who balances each client id, and why when inferred (absent: reported).
    balance: dict[str, Rebalance] | None = None
    balance_why: dict[str, str] | None = None

    def balanced_by(self, cid: str) -> Rebalance:
        """Who balances ``cid`` (the client itself when unknown)."""
        return (self.balance or {}).get(cid, Rebalance.CLIENT)

    def offset(self, mq: MessageQueue) -> QueueOffset | None:
        """The group's offset of ``mq`` (``None``: not captured)."""
        if self.offsets_by_queue is None:
            self.offsets_by_queue = {o.queue: o for o in self.group.offsets}
        return self.offsets_by_queue.get(mq)

    @property
    def name(self) -> str:
        """The group name."""
        return self.group.name

    @property
    def strategy_label(self) -> str:
        """``AVG``, ``CONSISTENT_HASH(vnodes=20)`` ..."""
        return describe(self.strategy)

    @property
    def assumption(self) -> str:
        """The clause a finding that depends on an assumed parameter appends ("" if none)."""
        return self.inference.assumption if self.inference is not None else ""

    def effective(self, spec: StrategySpec) -> StrategySpec:
        """What a client reporting ``spec`` runs: the group's strategy when ``spec`` is the
        same strategy with parameters the client did not report."""
        if params_of(spec) is Params.UNKNOWN and spec.name == self.strategy.name:
            return self.strategy
        return spec

    def strategy_of(self, c: Consumer) -> StrategySpec | None:
        """What consumer ``c`` runs: parameters inferred for it alone, else what it reports
        (:meth:`effective`); ``None`` when it reports no strategy."""
        own = (self.client_strategies or {}).get(c.client_id)
        if own is not None and c.strategy is not None and own.name == c.strategy.name:
            return own
        return None if c.strategy is None else self.effective(c.strategy)

    def pops(self, topic: str) -> bool:
        """Whether the group consumes ``topic`` by POP: a subscriber of it is a 5.x gRPC
        client behind a proxy or holds POP queues of it, or the brokers balance it and one
        serves the topic to the group by POP (its request mode). A POP request of ``topic``
        also pops the group's POP retry topic of it (``PopMessageProcessor``)."""
        known = self.popped.get(topic)
        if known is None:
            known = self.popped[topic] = self._pops(topic)
        return known

    def _pops(self, topic: str) -> bool:
        if not self.consumers and self.mode is Mode.PROXY:
            return any(o.queue.topic == topic for o in self.group.offsets)
        broker_balanced = False
        for c in self.consumers:
            if not c.subscribes(topic):
                continue
            balance = self.balanced_by(c.client_id)
            if balance is Rebalance.PROXY or pops_topic(c, topic):
                return True
            broker_balanced = broker_balanced or balance is Rebalance.BROKER
        return broker_balanced and any(
            view.request_modes is not None
            and (mode := view.request_modes.get(topic)) is not None
            and mode.mode is RequestMode.POP
            for view in self.group.on_brokers.values()
        )

    def subscribed_topics(self) -> list[str]:
        """Every topic some consumer subscribes: ordinary topics first, then retry topics."""
        topics = {s.topic for c in self.consumers for s in c.subscriptions}
        if not self.consumers and self.mode is Mode.PROXY:  # what its offsets show
            topics = {o.queue.topic for o in self.group.offsets}
        ordered = sorted(topics, key=java_key)
        return [t for t in ordered if not t.startswith(RETRY_PREFIX)] + [
            t for t in ordered if t.startswith(RETRY_PREFIX)
        ]

    def assigned_topics(self) -> list[str]:
        """The topics of a CLUSTERING group of pull consumers that none of its consumers
        subscribes, which they read where their application assign()s queues: those they
        hold, and those the group has offsets of."""
        if self.mode is not Mode.CLUSTERING or not self.pullers:
            return []
        offset_topics = {o.queue.topic for o in self.group.offsets}
        return sorted(read_by_assign(self.consumers, offset_topics), key=java_key)


@lru_cache(maxsize=8)  # one capture time per snapshot, asked for by each of its groups
def epoch_ms(captured_at: str | None) -> int | None:
    """``capturedAt`` (ISO 8601, UTC when no offset is given) in epoch milliseconds.

    >>> epoch_ms("1970-01-01T00:01:00Z"), epoch_ms(None), epoch_ms("yesterday")
    (60000, None, None)
    """
    if not captured_at:
        return None
    try:
        moment = datetime.fromisoformat(captured_at)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def broker_counts(group: Group, cid: str) -> dict[str, int]:
    """How often each broker that lists ``cid`` does, from the brokers' own lists where the
    capture kept them (``onBrokers``), in Java order of broker names."""
    return {
        broker: view.client_ids.count(cid)
        for broker, view in sorted(group.on_brokers.items(), key=lambda kv: java_key(kv[0]))
        if view.client_ids is not None and cid in view.client_ids
    }


def broker_lists(group: Group, route: TopicRoute) -> dict[str, tuple[str, ...]]:
    """The consumer list of ``group`` that each broker of ``route`` keeps, where the capture
    kept it (``onBrokers``; it does when the brokers' lists differ), in Java order of broker
    names."""
    brokers = {qd.broker_name for qd in route.queue_datas}
    return {
        broker: view.client_ids
        for broker, view in sorted(group.on_brokers.items(), key=lambda kv: java_key(kv[0]))
        if broker in brokers and view.client_ids is not None
    }


def topic_cid_all(
    group: Group, route: TopicRoute, cid_all: Sequence[str], balance: Mapping[str, Rebalance]
) -> list[str] | None:
    """The cidAll every client rebalancing ``route``'s topic takes, when the capture kept the
    consumer list of each broker of the topic and they are the same list (a client asks one
    broker of the topic): that list in Java order, with the Proxy clients of ``cid_all`` (the
    group's list; ``balance``: who balances each client), which no broker lists. ``None``:
    some broker's list is unknown, or they differ (BROKERS_DISAGREE), and the group's list
    stands."""
    lists = broker_lists(group, route)
    if not lists or set(lists) != {qd.broker_name for qd in route.queue_datas}:
        return None
    distinct = {tuple(sorted(ids, key=java_key)) for ids in lists.values()}
    if len(distinct) != 1:
        return None
    proxied = [cid for cid in cid_all if balance.get(cid) is Rebalance.PROXY]
    return sorted([*distinct.pop(), *proxied], key=java_key)


def rebalance_cid_all(cid_all: Sequence[str], balance: Mapping[str, Rebalance]) -> list[str]:
    """The cidAll a client balancing itself allocates from, out of a topic's ``cid_all``: the
    brokers' list, which leaves a Proxy's clients out."""
    return [cid for cid in cid_all if balance.get(cid, Rebalance.CLIENT) is not Rebalance.PROXY]


def single_clients(group: Group) -> frozenset[str]:
    """The ids on several connections that are one client: a client heartbeats to every
    broker of its topics, so processes sharing an id are listed alike by each of those
    brokers, and one of two or more brokers listing the id once means one client (the other
    entries are connections it closed that a broker still lists)."""
    if not any(view.client_ids for view in group.on_brokers.values()):
        return frozenset()
    repeated = {cid for cid, n in Counter(c.client_id for c in group.consumers).items() if n > 1}
    out = set()
    for cid in repeated:
        counts = broker_counts(group, cid)
        if len(counts) > 1 and min(counts.values()) == 1:
            out.add(cid)
    return frozenset(out)


def group_context(
    snapshot: Snapshot, group: Group, override: StrategySpec | None, options: DiagnoseOptions
) -> GroupContext:
    """Build the context of ``group`` (consumers sorted, strategy and mode chosen)."""
    consumers = tuple(sorted(group.consumers, key=lambda c: java_key(c.client_id)))
    strategy, source = choose_strategy(override, group)
    balance: dict[str, Rebalance] = {}
    why: dict[str, str] = {}
    for c in consumers:
        if c.client_id not in balance:
            balance[c.client_id], reason = client_balance(c, group)
            if reason is not None:
                why[c.client_id] = reason
    if group.consumed_model is MessageModel.BROADCASTING:
        mode = Mode.BROADCASTING
    elif consumers and all(b is Rebalance.PROXY for b in balance.values()):
        mode = Mode.PROXY
    elif not consumers and consumed_invisibly(snapshot, group, epoch_ms(snapshot.captured_at)):
        mode = Mode.PROXY  # consumed through a Proxy whose clients no broker lists
    else:
        mode = Mode.CLUSTERING
    live = bool(snapshot.source is not None and snapshot.source.namesrv)
    inference: StrategyInference | None = None
    blocked: str | None = None
    client_strategies: dict[str, StrategySpec] | None = None
    if (
        mode is Mode.CLUSTERING
        and Rebalance.CLIENT in balance.values()
        and params_of(strategy) is not Params.GIVEN
    ):
        # the search is imported only where there are parameters to settle
        from rmqlb.diagnose.infer import infer_strategy  # noqa: PLC0415

        found = infer_strategy(strategy, snapshot, group, consumers, balance)
        if found is not None:
            inference = found.report
            if found.strategy is None:
                blocked = found.blocked or found.report.note
            else:
                strategy = found.strategy
                client_strategies = dict(found.client_strategies) or None
    return GroupContext(
        snapshot=snapshot,
        group=group,
        options=options,
        strategy=strategy,
        strategy_source=source,
        mode=mode,
        consumers=consumers,
        cid_all=[c.client_id for c in consumers],
        single=single_clients(group),
        live=live,
        now_ms=epoch_ms(snapshot.captured_at),
        inference=inference,
        blocked=blocked,
        errors=group_errors(snapshot, group),
        balance=balance,
        balance_why=why,
        client_strategies=client_strategies,
        broadcasters=frozenset(
            c.client_id for c in consumers if c.message_model is MessageModel.BROADCASTING
        )
        if mode is Mode.CLUSTERING
        else frozenset(),
        pullers=frozenset(c.client_id for c in consumers if c.pulls_actively),
        unreported=frozenset(c.client_id for c in consumers if c.queues_unreported),
    )


def readable_spans(route: TopicRoute) -> tuple[dict[str, tuple[int, int]], int]:
    """Where each readable broker's queues sit in ``mqAll``: ``{broker: (first, count)}``.

    ``mqAll`` in Java order is broker name (Java order) then queue id, since every queue
    shares the topic; several QueueData of one broker give the union ``0..max-1``. A static
    topic's are its logical queues (:meth:`~rmqlb.model.TopicRoute.logical_counts`).
    """
    if route.queue_mappings:
        counts = route.logical_counts()
    else:
        counts = {}
        for qd in route.queue_datas:
            if qd.readable:
                counts[qd.broker_name] = max(counts.get(qd.broker_name, 0), qd.read_queue_nums)
    base: dict[str, tuple[int, int]] = {}
    n = 0
    for broker in sorted(counts, key=java_key):
        base[broker] = (n, counts[broker])
        n += counts[broker]
    return base, n


def before_5_0(g: GroupContext, topic: str) -> list[str]:
    """The remoting clients of ``g`` subscribing ``topic`` older than 5.0, which know no
    logical queue of a static topic: they allocate the brokers' own queues."""
    return list(
        dict.fromkeys(
            c.client_id
            for c in g.consumers
            if c.proxy is None
            and c.version is not None
            and c.version < V5_0_0
            and c.subscribes(topic)
        )
    )


def via_proxy_remoting(g: GroupContext, topic: str) -> list[str]:
    """The remoting clients of ``g`` subscribing ``topic`` that connect through a 5.1+
    Proxy's remoting port and balance themselves: the Proxy's routes carry no logical queue
    of a static topic, so, as a client before 5.0, they allocate the brokers' own queues and
    a 5.x broker reads each pull's id as a logical queue's (seen on the 5.1.4 kit)."""
    return list(
        dict.fromkeys(
            c.client_id for c in g.consumers if through_proxy_remoting(c) and c.subscribes(topic)
        )
    )


def broker_queue_readers(g: GroupContext, topic: str) -> list[str]:
    """The clients of ``g`` that read a static ``topic`` by the brokers' own queues:
    :func:`before_5_0`, then :func:`via_proxy_remoting` (apart: the first are never
    connected through a Proxy)."""
    return [*before_5_0(g, topic), *via_proxy_remoting(g, topic)]


@dataclass(frozen=True, slots=True)
class ConsumerList:
    """One consumer list some clients of a group allocate over: ``cid_all`` (Java order,
    as its source answers it), the ``takers`` that balance themselves over it, and who
    answers it (``proxy``: a Proxy's address; ``None``: the brokers)."""

    cid_all: tuple[str, ...]
    takers: frozenset[str]
    proxy: str | None = None


def consumer_lists(g: GroupContext, cid_all: Sequence[str]) -> tuple[ConsumerList, ...]:
    """The lists ``g``'s self-balancing clients allocate over when ``cid_all`` (the
    topic's list without the clients a Proxy balances) is not every one's. A 5.1+ Proxy in
    CLUSTER mode answers GET_CONSUMER_LIST_BY_GROUP from its own clients: the remoting
    clients connected to its remoting port and its gRPC clients, which no broker lists; the
    brokers list only the clients connected to them (both seen on the 5.1.4 kit). So the
    brokers' clients allocate over the brokers' list, each Proxy's remoting clients over
    that Proxy's. Empty when there is one list and it is ``cid_all``."""
    remoting = {c.client_id for c in g.consumers if through_proxy_remoting(c)}
    if not remoting:
        return ()
    by_proxy: dict[str, list[str]] = {}
    for c in g.consumers:
        if c.proxy is not None:
            by_proxy.setdefault(c.proxy, []).append(c.client_id)
    brokers = tuple(cid for cid in cid_all if cid not in remoting)
    lists = [ConsumerList(brokers, frozenset(brokers))] if brokers else []
    lists.extend(
        ConsumerList(
            tuple(sorted(dict.fromkeys(ids), key=java_key)),
            frozenset(cid for cid in ids if cid in remoting),
            proxy,
        )
        for proxy, ids in by_proxy.items()
        if remoting.intersection(ids)
    )
    if len(lists) == 1 and lists[0].cid_all == tuple(cid_all):
        return ()
    return tuple(lists)


def _split_allocation(
    strategy: StrategySpec,
    topic: str,
    mq_all: Sequence[MessageQueue],
    lists: Sequence[ConsumerList],
) -> tuple[dict[str, list[MessageQueue]] | None, str | None, bool]:
    """:func:`topic_allocation` over each of ``lists``, each list's takers keeping their
    share (the first error stops it)."""
    expected: dict[str, list[MessageQueue]] = {}
    for each in lists:
        got, error, throws = topic_allocation(strategy, topic, mq_all, each.cid_all)
        if got is None:
            return None, error, throws
        expected.update((cid, qs) for cid, qs in got.items() if cid in each.takers)
    return expected, None, False


def _old_client_shares(
    g: GroupContext,
    route: TopicRoute,
    cid_all: Sequence[str],
    expected: dict[str, list[MessageQueue]],
    lists: Sequence[ConsumerList] = (),
) -> None:
    """In ``expected`` (the logical queues' allocation), what each client before 5.0 of a
    static topic reads instead: its strategy's share of the brokers' readable queues (over
    its own list of ``lists``, else ``cid_all``), as the brokers read their ids
    (:meth:`~rmqlb.model.TopicRoute.read_as`)."""
    old = [cid for cid in broker_queue_readers(g, route.topic) if cid in expected]
    if not old:
        return
    queues = broker_queues(route)
    read_as = route.read_as()
    for each in lists or (ConsumerList(tuple(cid_all), frozenset(cid_all)),):
        mine = [cid for cid in old if cid in each.takers]
        if not mine:
            continue
        shares, _, _ = topic_allocation(g.strategy, route.topic, queues, each.cid_all)
        for cid in mine:
            held = (shares or {}).get(cid, ())
            reads = (read_as.get((q.broker_name, q.queue_id)) for q in held)
            expected[cid] = sorted((q for q in reads if q is not None), key=queue_sort_key)


def broker_queues(route: TopicRoute) -> list[MessageQueue]:
    """The brokers' own readable queues of ``route``, in Java order: a static topic's as a
    client before 5.0 (or a broker assigning it) lists them, without its logical queues."""
    return readable_queues(TopicRoute(route.topic, route.queue_datas))


def readable_queues(route: TopicRoute) -> list[MessageQueue]:
    """``mqAll`` in Java order: equal to ``sort_queues(route.readable_queues())``."""
    base, _ = readable_spans(route)
    return [
        MessageQueue(route.topic, broker, qid)
        for broker, (_, count) in base.items()
        for qid in range(count)
    ]


def _fill_queues(
    topic: str, base: dict[str, tuple[int, int]], slots: list[MessageQueue | None]
) -> list[MessageQueue]:
    """``mqAll`` reusing the queue objects already seen in assignments (saves memory)."""
    for broker, (first, count) in base.items():
        # only the empty slots, found in C
        empty = compress(range(count), map(is_, slots[first : first + count], repeat(None)))
        for qid in empty:
            slots[first + qid] = new_queue(topic, broker, qid)
    return slots  # type: ignore[return-value]  # every slot is filled now


@dataclass(slots=True)
class TopicContext:
    """One (group, topic): route, expected allocation and actual holdings, computed once.

    Per-queue facts are lists aligned with ``mq_all`` (index ``i`` is ``mq_all[i]``): on
    100,000 queues, hashing dataclass queues dominated the run time, while these lists cost
    one string lookup per queue (:meth:`index`).

    - ``expected``: every distinct client id -> the queues the strategy gives it (``None``
      when it cannot be computed: see ``allocation_error``); ``owner[i]`` inverts it.
    - ``actual[k]``: what ``g.consumers[k]`` holds of this topic (``None``: unknown), and
      ``actual_lag[k]`` the summed lag of those queues (``None``: some lag unknown, or no
      offsets).
    - ``holder[i]``: the first consumer holding queue ``i`` (``None``: nobody known);
      ``more_holders[i]``: the further ones (an id twice when it is on two connections);
      ``extra``: held queues outside ``mq_all`` with their holders.
    - ``lag[i]``: the queue's lag from the offsets (``None`` when the group has no offsets
      for the topic at all); ``offsets[i]`` the offset it comes from; ``outside_offsets``:
      the group's offsets of the topic's queues outside ``mq_all``, in queue order (messages
      written where no consumer is given the queue; none under BROADCASTING).
    - ``held_index[k]``: the positions in ``mq_all`` of ``actual[k]``, in order (``None``
      when unknown or when some held queue is outside ``mq_all``).
    - :meth:`exact`: per consumer, whether it holds exactly its expected queues.
    """

    g: GroupContext
    topic: str
    route: TopicRoute | None
    mq_all: list[MessageQueue]
    base: dict[str, tuple[int, int]]
    subscribers: frozenset[str]
    expected: Mapping[str, list[MessageQueue]] | None
    allocation_error: str | None
    allocation_throws: bool
    owner: list[str | None]
    actual: list[tuple[MessageQueue, ...] | None]
    actual_lag: list[int | None]
    holder: list[str | None]
    more_holders: dict[int, list[str]]
    extra: dict[MessageQueue, list[str]]
    lag: list[int | None] | None
    held_index: list[list[int] | None]
    offsets: list[QueueOffset | None] | None = None
    broker_side: BrokerSide | None = None
    outside_offsets: list[QueueOffset] = field(default_factory=list)
    #: The consumer lists the group's self-balancing clients allocate over, where they are
    #: not the topic's one (:func:`consumer_lists`): the brokers' first, then each Proxy's.
    lists: tuple[ConsumerList, ...] = ()
    #: Read only where pull consumers assign() its queues: nobody of the group subscribes
    #: it, so no strategy allocates it (``expected`` is ``None``).
    assigned: bool = False
    exact_by_consumer: list[bool] | None = field(default=None, init=False, repr=False)
    once_memo: tuple[dict[str, list[MessageQueue]] | None] | None = field(
        default=None, init=False, repr=False
    )

    def exact(self) -> list[bool]:
        """Per consumer (``g.consumers`` order): whether it holds exactly the queues the
        strategy gives it (``False`` when its holdings or the expected allocation are not
        known); computed once for the rules that ask (:func:`holds_expected`)."""
        if self.exact_by_consumer is None:
            expected = self.expected
            self.exact_by_consumer = [
                expected is not None
                and holds_expected(self, c.client_id, index, len(expected.get(c.client_id, ())))
                for c, index in zip(self.g.consumers, self.held_index, strict=True)
            ]
        return self.exact_by_consumer

    @property
    def shared(self) -> bool:
        """A broker serves the topic by POP: several clients may pop one queue."""
        return self.broker_side is not None and self.broker_side.pop

    @property
    def logical(self) -> bool:
        """Its queues are a 5.x static topic's logical ones (popped, the brokers' own)."""
        return any(map(is_logical_broker, self.base))

    @property
    def retry(self) -> bool:
        """Whether this is a ``%RETRY%`` topic (reported separately)."""
        return self.topic.startswith(RETRY_PREFIX)

    @property
    def actual_known(self) -> bool:
        """Every consumer's actual assignment is known."""
        return all(a is not None for a in self.actual)

    @property
    def checks_allocation(self) -> bool:
        """Client-side allocation applies and could be computed."""
        return self.g.mode is Mode.CLUSTERING and self.expected is not None

    def index(self, mq: MessageQueue) -> int | None:
        """The position of ``mq`` in ``mq_all``, ``None`` when it is not there."""
        span = self.base.get(mq.broker_name)
        if span is None or mq.topic != self.topic or not 0 <= mq.queue_id < span[1]:
            return None
        return span[0] + mq.queue_id

    def offset(self, mq: MessageQueue) -> QueueOffset | None:
        """The group's offset of ``mq`` (``None``: not captured): for a queue of ``mq_all``
        read from ``offsets`` by position, without the group's table of every offset."""
        i = self.index(mq)
        if i is None:
            return self.g.offset(mq)
        return None if self.offsets is None else self.offsets[i]

    @property
    def allocated_cid_all(self) -> list[str]:
        """The cidAll the topic's queues are allocated over: the group's, without the clients
        a Proxy serves (they pop any queue; no strategy gives them one)."""
        return rebalance_cid_all(self.g.cid_all, self.g.balance or {})

    def holdings(self) -> dict[str, tuple[MessageQueue, ...]]:
        """What each client holds of this topic, by client id, where its running info says
        (an id on several connections: its first answer)."""
        out: dict[str, tuple[MessageQueue, ...]] = {}
        for c, held in zip(self.g.consumers, self.actual, strict=True):
            if held is not None:
                out.setdefault(c.client_id, held)
        return out

    def unread_share(self, cid: str) -> list[MessageQueue] | None:
        """What the strategy gives ``cid``, a client that does not subscribe this topic,
        and nobody reads: all of it, but what a pull consumer holds itself (queues its
        application assign()s); ``None`` when a pull consumer's holdings are unreported."""
        share = (self.expected or {}).get(cid, [])
        if cid not in self.g.pullers:
            return list(share)
        if cid in self.g.unreported:
            return None
        held = set(self.holdings().get(cid, ()))
        return [mq for mq in share if mq not in held]

    def holders(self, i: int) -> list[str]:
        """Every consumer holding ``mq_all[i]`` (empty when nobody is known to)."""
        first = self.holder[i]
        if first is None:
            return []
        return [first, *self.more_holders.get(i, ())]

    def pulls(self, cid: str) -> bool:
        """Whether ``cid`` pulls the queues it holds of this topic: it balances itself, or a
        broker assigns them in PULL mode (a Proxy's client, or one a broker serves by POP,
        pops them)."""
        balance = self.g.balanced_by(cid)
        return balance is Rebalance.CLIENT or (balance is Rebalance.BROKER and not self.shared)

    def doubled(self, holders: Sequence[str]) -> bool:
        """Whether ``holders`` (two or more) of one queue consume it twice: always, but in a
        topic a broker serves by POP, where several clients pop a queue, only when one of
        them pulls it (balancing itself: a client older than 5.0, say), which each message
        can then reach as well as a client popping it."""
        return not self.shared or any(map(self.pulls, holders))

    def listed_once(self) -> dict[str, list[MessageQueue]] | None:
        """The strategy's allocation if cidAll listed every client id once (``None`` when it
        lists none twice, the brokers assign, the strategy is CONFIG, whose lists do not
        depend on cidAll, or the allocation cannot be computed); computed once for the rules
        that ask."""
        if self.once_memo is None:
            self.once_memo = (self._listed_once(),)
        return self.once_memo[0]

    def _listed_once(self) -> dict[str, list[MessageQueue]] | None:
        g = self.g
        if (
            self.expected is None
            or self.broker_side is not None
            or isinstance(g.strategy, Config)
            or len(set(g.cid_all)) == len(g.cid_all)
        ):
            return None
        once = dict.fromkeys(c for c in g.cid_all if g.balanced_by(c) is not Rebalance.PROXY)
        allocation, _, _ = expected_allocation(g.strategy, self.mq_all, list(once))
        return allocation

    def expected_count(self, client_id: str) -> int:
        """How many queues the strategy gives ``client_id`` (0 when not computed)."""
        if self.expected is None:
            return 0
        return len(self.expected.get(client_id, ()))

    def total_lag(self, queues: Sequence[MessageQueue]) -> int:
        """The summed lag of ``queues`` (0 without offsets)."""
        if self.lag is None:
            return 0
        lag = self.lag
        total = 0
        for mq in queues:
            i = self.index(mq)
            if i is not None:
                total += lag[i] or 0
        return total


def holds_expected(ctx: TopicContext, cid: str, index: list[int] | None, want: int) -> bool:
    """Whether ``cid`` holds exactly its ``want`` expected queues, from the positions of its
    held queues in ``mq_all`` (``index``; ``None``: some are outside it).

    No hashing of queues: ``owner`` says who should hold each position, and a contiguous
    block (as AVG gives) is compared as one slice, in C.
    """
    if index is None or len(index) != want:
        return False
    if not index:
        return True
    owner = ctx.owner
    lo, hi = index[0], index[-1]
    if hi - lo + 1 == want and index == list(range(lo, hi + 1)):
        return owner[lo : hi + 1] == [cid] * want
    if len(set(index)) != want:
        return False
    return all(owner[i] == cid for i in index)


def expected_allocation(
    strategy: StrategySpec, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
) -> tuple[dict[str, list[MessageQueue]] | None, str | None, bool]:
    """Run ``strategy`` over the whole group (inputs already in Java order).

    Returns ``(allocation, None, False)``, or ``(None, reason, True)`` where Java would throw,
    or ``(None, reason, False)`` for a custom strategy rmqlb cannot reproduce.
    """
    if not cid_all:
        return {}, None, False
    if not mq_all:
        return {cid: [] for cid in cid_all}, None, False
    try:
        validate(strategy)
        return allocate_sorted(strategy, mq_all, cid_all), None, False
    except AllocationError as exc:
        return None, exc.message, True
    except InputError as exc:
        return None, str(exc), False


def topic_allocation(
    strategy: StrategySpec, topic: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
) -> tuple[dict[str, list[MessageQueue]] | None, str | None, bool]:
    """:func:`expected_allocation` of one topic's rebalance: what each client holds of
    ``topic`` after it (a CONFIG list is returned for every topic, but only the topic's own
    queues stay held)."""
    expected, error, throws = expected_allocation(strategy, mq_all, cid_all)
    if expected is not None and isinstance(strategy, Config):
        expected = {cid: [q for q in qs if q.topic == topic] for cid, qs in expected.items()}
    return expected, error, throws


_topic_of = attrgetter("topic")


def _set_owners(
    owner: list[str | None],
    expected: Mapping[str, list[MessageQueue]],
    mq_all: list[MessageQueue],
    base: dict[str, tuple[int, int]],
    topic: str,
) -> None:
    """Fill ``owner`` from the expected allocation.

    Strategies hand out the very objects of ``mq_all``, AVG in contiguous blocks: a block
    equal to a slice of ``mq_all`` (compared in C, by identity first) is written as one
    slice.
    """
    for cid, queues in expected.items():
        if not queues:
            continue
        first = queues[0]
        span = base.get(first.broker_name)
        if span is not None and first.topic == topic and 0 <= first.queue_id < span[1]:
            start = span[0] + first.queue_id
            stop = start + len(queues)
            if mq_all[start:stop] == queues:
                owner[start:stop] = [cid] * len(queues)
                continue
        for mq in queues:
            span = base.get(mq.broker_name)
            if span is not None and mq.topic == topic and 0 <= mq.queue_id < span[1]:
                owner[span[0] + mq.queue_id] = cid


_queue_of = attrgetter("queue")


def _queue_sort_of(o: QueueOffset) -> tuple[str, str, int]:
    return queue_sort_key(o.queue)


_broker_offset_of = attrgetter("broker_offset")
_consumer_offset_of = attrgetter("consumer_offset")


def _offset_lags(
    offsets: Sequence[QueueOffset],
    topic: str,
    base: dict[str, tuple[int, int]],
    slots: list[MessageQueue | None],
) -> tuple[list[int | None] | None, list[QueueOffset | None] | None, list[QueueOffset]]:
    """Each queue's lag and offset (``None``: no offset for it; ``None`` overall: no offset
    of the topic at all), filling empty ``slots`` with the offsets' queue objects on the way;
    and the topic's offsets of queues outside ``mqAll`` (a broker without read permission,
    queue ids beyond ``readQueueNums``: no consumer is given them).

    Fast path, in C: one offset per queue in ``mqAll`` order (as dumps write them), seen
    by identity of the shared queue objects; anything else takes the per-offset loop.
    """
    n = len(slots)
    queues = list(map(_queue_of, offsets))
    if n and len(queues) == n:
        in_order = True
        for i in compress(range(n), map(is_not, queues, slots)):
            mq = queues[i]
            span = base.get(mq.broker_name)
            if (
                slots[i] is not None
                or span is None
                or mq.topic != topic
                or not 0 <= mq.queue_id < span[1]
                or span[0] + mq.queue_id != i
            ):
                in_order = False
                break
            slots[i] = mq
        committed = list(map(_consumer_offset_of, offsets))
        if in_order and min(committed) >= 0:  # else some never committed: lag from min offset
            produced = map(_broker_offset_of, offsets)
            behind: list[int] = list(map(sub, produced, committed))
            if min(behind) < 0:
                behind = [v if v > 0 else 0 for v in behind]
            return cast("list[int | None]", behind), list(offsets), []
    lag: list[int | None] | None = None
    found_offsets: list[QueueOffset | None] = []
    outside: list[QueueOffset] = []
    last_broker: str | None = None
    first = count = 0
    found = False
    for o in offsets:
        mq = o.queue
        if mq.topic != topic:
            continue
        if lag is None:
            lag = [None] * n
            found_offsets = [None] * n
        broker = mq.broker_name
        if broker is not last_broker:
            span = base.get(broker)
            found = span is not None
            if span is not None:
                first, count = span
            last_broker = broker
        qid = mq.queue_id
        if found and 0 <= qid < count:
            lag[first + qid] = o.lag
            found_offsets[first + qid] = o
        else:
            outside.append(o)
    return lag, (found_offsets if lag is not None else None), outside


def client_lag(
    c: Consumer,
    topic: str,
    base: dict[str, tuple[int, int]],
    offsets: Sequence[QueueOffset | None] | None,
) -> int | None:
    """What ``c`` has yet to consume of ``topic`` by its own progress: over the queues it
    holds (not dropped), the broker's max offset minus the commit offset its running info
    reports (``offsets`` aligned with ``mqAll``). ``None`` when its queues, a commit offset
    or a max offset are unknown. A BROADCASTING client's offsets are its own (no broker has
    them), so this is its lag.

    >>> from rmqlb.model import MessageQueue
    >>> from rmqlb.model.snapshot import Consumer, ProcessQueueState, QueueOffset
    >>> mq = MessageQueue("T", "b", 0)
    >>> c = Consumer("c1", process_queues=(ProcessQueueState(mq, commit_offset=40),))
    >>> client_lag(c, "T", {"b": (0, 1)}, [QueueOffset(mq, 100, -1)])
    60
    """
    if c.process_queues is None or offsets is None:
        return None
    total = 0
    for pq in c.process_queues:
        mq = pq.queue
        if mq.topic != topic or pq.dropped:
            continue
        span = base.get(mq.broker_name)
        o = offsets[span[0] + mq.queue_id] if span and 0 <= mq.queue_id < span[1] else None
        lag = pq.lag(None if o is None else o.broker_offset)
        if lag is None:
            return None
        total += lag
    return total


def _known_sum(lags: Iterable[int | None]) -> int | None:
    """The sum of ``lags``; ``None`` when one of them is unknown (never counted as 0).

    >>> _known_sum([3, 4]), _known_sum([3, None])
    (7, None)
    """
    try:
        return sum(cast("Iterable[int]", lags))
    except TypeError:  # an unknown lag: sum() stops at the first None, with no scan before
        return None


def topic_context(g: GroupContext, topic: str, *, assigned: bool = False) -> TopicContext:
    """Build the context of one subscribed topic of ``g`` (one allocation, one pass over the
    actual holdings and offsets); ``assigned``: a topic of :meth:`GroupContext.assigned_topics`
    (no allocation).

    The loops run once per queue of big groups: they look a broker's span up only when the
    broker changes (decoded JSON shares one string object per broker name), and leave what
    they can to C (:func:`_offset_lags`, the lag sums, :func:`_set_owners`).
    """
    route = g.snapshot.topics.get(topic)
    if route is not None and g.group.on_brokers:
        listed = topic_cid_all(g.group, route, g.cid_all, g.balance or {})
        if listed is not None and listed != g.cid_all:
            g = replace(g, cid_all=listed)  # what this topic's clients rebalance from
    # a static topic: a broker queue a client before 5.0 holds is the logical queue the
    # broker reads its id as (TopicRoute.read_as); those it cannot read stay outside mqAll
    hosted = route.read_as() if route is not None and route.queue_mappings else None
    group_offsets: Sequence[QueueOffset] = g.group.offsets
    view = route
    if route is not None and hosted is not None and g.pops(topic):
        # popped, a static topic is served from the brokers' own queues (queue id -1 each)
        view, hosted = TopicRoute(route.topic, route.queue_datas), None
        group_offsets = physical_offsets(route, group_offsets)
    old_ids = frozenset(broker_queue_readers(g, topic)) if hosted else frozenset()
    base, n = readable_spans(view) if view is not None else ({}, 0)
    subscribers = frozenset(c.client_id for c in g.consumers if c.subscribes(topic))
    slots: list[MessageQueue | None] = [None] * n
    actual: list[tuple[MessageQueue, ...] | None] = []
    positions: list[list[int] | None] = []  # per consumer: where its held queues are
    held_index: list[list[int] | None] = []
    holder: list[str | None] = [None] * n
    more: dict[int, list[str]] = {}
    extra: dict[MessageQueue, list[str]] = {}
    pop_like = g.mode in (Mode.POP, Mode.PROXY)
    single = g.single  # one client's entries hold its queues once
    only_topic = {topic}
    last_broker: str | None = None
    first = count = 0
    found = False
    for c in g.consumers:
        holdings = None if pop_like else _holdings(c, topic, base)
        if holdings is None:
            actual.append(None)
            positions.append(None)
            held_index.append(None)
            continue
        if set(map(_topic_of, holdings)) <= only_topic:
            mine = holdings
        else:
            mine = tuple(mq for mq in holdings if mq.topic == topic)
        if hosted and c.client_id in old_ids:
            mine = tuple(hosted.get((mq.broker_name, mq.queue_id), mq) for mq in mine)
        actual.append(mine)
        cid = c.client_id
        index: list[int] = []
        outside = False
        last_broker = None
        for mq in mine:
            broker = mq.broker_name
            if broker is not last_broker:
                span = base.get(broker)
                found = span is not None
                if span is not None:
                    first, count = span
                last_broker = broker
            qid = mq.queue_id
            if found and 0 <= qid < count:
                i = first + qid
                index.append(i)
                if holder[i] is None:
                    holder[i] = cid
                    slots[i] = mq
                elif cid not in single or (cid != holder[i] and cid not in more.get(i, ())):
                    more.setdefault(i, []).append(cid)
            else:  # held but outside mqAll: stale, or a broker that is not readable
                outside = True
                holders = extra.setdefault(mq, [])
                if cid not in single or cid not in holders:
                    holders.append(cid)
        positions.append(index)
        held_index.append(None if outside else index)
    lag, offsets, outside_offsets = _offset_lags(group_offsets, topic, base, slots)
    actual_lag: list[int | None]
    if g.mode is Mode.BROADCASTING:
        # Each client's own lag. The queues have none of their own: no broker keeps the
        # group's offsets (its rows there only carry the max offsets the lags come from).
        actual_lag = [client_lag(c, topic, base, offsets) for c in g.consumers]
        lag = offsets = None
        outside_offsets = []
    elif lag is None:
        actual_lag = [None] * len(positions)
    else:
        at = lag.__getitem__
        actual_lag = [None if index is None else _known_sum(map(at, index)) for index in positions]
    mq_all = _fill_queues(topic, base, slots)
    expected: dict[str, list[MessageQueue]] | None
    error: str | None = None
    throws = False
    side: BrokerSide | None = None
    balance = g.balance or {}
    if (
        g.mode is Mode.CLUSTERING
        and route is not None
        and not assigned
        and Rebalance.BROKER in balance.values()
    ):
        from rmqlb.diagnose.brokerside import broker_side  # noqa: PLC0415 (5.x brokers only)

        # only the clients a broker balances are compared with what the brokers answer
        held = {
            c.client_id: frozenset(a)
            for c, a in zip(g.consumers, actual, strict=True)
            if a is not None and balance.get(c.client_id) is Rebalance.BROKER
        }
        side = broker_side(
            g.snapshot,
            g.group,
            consumers=g.consumers,
            balance=balance,
            topic=topic,
            route=route,
            # a broker assigns a static topic's broker queues: it drops the logical mapping
            # from the routes it assigns from (TopicRouteInfoManager.updateSubscribeInfoTable)
            mq_all=broker_queues(route) if route.queue_mappings else mq_all,
            held=held,
            default_name=g.strategy.name,
        )
    cid_all = rebalance_cid_all(g.cid_all, balance)
    client_side = [cid for cid in cid_all if side is None or cid not in side.clients]
    lists = consumer_lists(g, cid_all) if g.mode is Mode.CLUSTERING else ()
    if g.mode is not Mode.CLUSTERING or route is None or assigned:
        expected = None
    elif side is not None and not client_side:
        expected = {}
    elif g.blocked is not None:  # parameters unknown and no default: nothing to compute
        expected, error = None, g.blocked
    elif lists:
        expected, error, throws = _split_allocation(g.strategy, topic, mq_all, lists)
    else:
        expected, error, throws = topic_allocation(g.strategy, topic, mq_all, cid_all)
    if expected is not None and route is not None and hosted is not None:
        _old_client_shares(g, route, cid_all, expected, lists)  # (not popped: logical queues)
    if expected is not None and side is not None:
        expected = {cid: qs for cid, qs in expected.items() if cid in client_side}
        for cid in side.clients:
            expected[cid] = side.expected.get(cid) or []
    owner: list[str | None] = [None] * n
    if expected is not None:
        _set_owners(owner, expected, mq_all, base, topic)
        brokers = next((each.takers for each in lists if each.proxy is None), None)
        if brokers is not None:  # a queue both sides take shows the holder the brokers
            # list, whose holdings are known (a Proxy relays no running-info request)
            _set_owners(
                owner, {c: q for c, q in expected.items() if c in brokers}, mq_all, base, topic
            )
    return TopicContext(
        g=g,
        topic=topic,
        route=route,
        mq_all=mq_all,
        base=base,
        subscribers=subscribers,
        expected=expected,
        allocation_error=error,
        allocation_throws=throws,
        owner=owner,
        actual=actual,
        actual_lag=actual_lag,
        holder=holder,
        more_holders=more,
        extra=dict(sorted(extra.items(), key=lambda item: queue_sort_key(item[0]))),
        lag=lag,
        held_index=held_index,
        offsets=offsets,
        broker_side=side,
        outside_offsets=sorted(outside_offsets, key=_queue_sort_of),
        assigned=assigned,
        lists=lists,
    )


def _holdings(
    c: Consumer, topic: str, base: dict[str, tuple[int, int]]
) -> tuple[MessageQueue, ...] | None:
    """What ``c`` holds: its queues and its POP queues, -1 of ``topic`` as every queue of
    that broker (``None``: unknown)."""
    assigned, popped = c.assigned, c.pop_assigned
    if not popped:
        return assigned
    out = list(assigned or ())
    for mq in popped:
        if mq.queue_id >= 0:
            out.append(mq)
        elif mq.topic == topic and mq.broker_name in base:
            out.extend(new_queue(topic, mq.broker_name, q) for q in range(base[mq.broker_name][1]))
    return tuple(dict.fromkeys(out))
