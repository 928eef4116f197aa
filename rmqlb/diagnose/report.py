"""What a diagnosis produces: findings and the expected-vs-actual tables, as pure data.

The JSON form (``rmqlb.report/1``, design §3 / the explain issue) is written by
:func:`report_to_json`; renderers read these dataclasses, never raw dicts.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import repeat
from operator import attrgetter, is_not
from typing import Any, overload

from rmqlb.errors import ExitCode
from rmqlb.failon import SEVERITY_RANK, gate
from rmqlb.model._fast import consume, setter
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import (
    CaptureError,
    Consumer,
    ConsumeStatus,
    MessageModel,
    ProcessQueueState,
    QueueOffset,
    Rebalance,
)

REPORT_FORMAT = "rmqlb.report/1"
_lag_of = attrgetter("lag")
_new = object.__new__
#: A row's fields in field order (what :meth:`QueueRows.fields` gives per row).
_row_fields = attrgetter("queue", "expected", "actual", "status", "lag", "offset")
#: A queue row's fields: queue, expected, actual, status, lag, offset.
RowFields = tuple[
    MessageQueue,
    "str | None",
    "tuple[str, ...] | None",
    "QueueStatus",
    "int | None",
    "QueueOffset | None",
]


class Severity(StrEnum):
    """How bad a finding is. Ordered: ``error`` > ``warning`` > ``info``."""

    error = "error"
    warning = "warning"
    info = "info"

    @property
    def rank(self) -> int:
        """2 for error, 1 for warning, 0 for info."""
        return SEVERITY_RANK[self]  # a member is its value: the same key


class Code(StrEnum):
    """Finding codes: stable API (design §5)."""

    IDLE_CONSUMER = "IDLE_CONSUMER"
    UNCONSUMED_QUEUE = "UNCONSUMED_QUEUE"
    DUPLICATE_ASSIGNMENT = "DUPLICATE_ASSIGNMENT"
    ASSIGNMENT_MISMATCH = "ASSIGNMENT_MISMATCH"
    SUBSCRIPTION_INCONSISTENT = "SUBSCRIPTION_INCONSISTENT"
    STRATEGY_INCONSISTENT = "STRATEGY_INCONSISTENT"
    IMBALANCE = "IMBALANCE"
    WRITE_EXCEEDS_READ = "WRITE_EXCEEDS_READ"
    QUEUE_NOT_READABLE = "QUEUE_NOT_READABLE"
    NO_CONSUMERS = "NO_CONSUMERS"
    LAG_SKEW = "LAG_SKEW"
    DUPLICATE_CLIENT_ID = "DUPLICATE_CLIENT_ID"
    CLIENT_UNREACHABLE = "CLIENT_UNREACHABLE"
    BROADCASTING = "BROADCASTING"
    POP_MODE = "POP_MODE"
    PROXY_CLIENTS = "PROXY_CLIENTS"
    QUEUES_UNREPORTED = "QUEUES_UNREPORTED"  # pull consumers whose running info lists no queue
    NO_ROUTE = "NO_ROUTE"  # a subscribed topic has no route in the snapshot
    ALLOCATION_FAILED = "ALLOCATION_FAILED"  # expected cannot be computed (Java throws/custom)
    STALE_ALLOCATION = "STALE_ALLOCATION"  # a client allocates from other inputs than the group's
    CONSUMER_STALLED = "CONSUMER_STALLED"  # a holder neither pulls nor consumes, or is silent
    QUEUE_STALLED = "QUEUE_STALLED"  # between two polls, a queue of unknown holder stood still
    FLOW_CONTROLLED = "FLOW_CONTROLLED"  # a holder's cache is full: it consumes too slowly
    CONSUME_FAILING = "CONSUME_FAILING"  # a holder's listener fails: retries, then the DLQ
    ORDERLY_LOCK_LOST = "ORDERLY_LOCK_LOST"  # an orderly holder lacks the broker lock of a queue
    CONSUME_DISABLED = "CONSUME_DISABLED"  # consumeEnable=false in the group's config
    QUEUE_NOT_WRITABLE = "QUEUE_NOT_WRITABLE"  # a readable broker of a topic takes no writes
    NO_QUEUES = "NO_QUEUES"  # a broker of a topic declares 0 read and 0 write queues
    TOPIC_NOT_ON_ALL_BROKERS = "TOPIC_NOT_ON_ALL_BROKERS"  # on some brokers of a cluster only
    BROKER_REBALANCE = "BROKER_REBALANCE"  # 5.x: the brokers assign some clients' queues
    BROKER_STRATEGY_UNKNOWN = "BROKER_STRATEGY_UNKNOWN"  # broker-assigned, strategy not AVG*
    POP_SHARE_ALL = "POP_SHARE_ALL"  # POP share number making every client pop every queue
    SERVER_LOAD_BALANCER_OFF = "SERVER_LOAD_BALANCER_OFF"  # 5.x: brokers answer every queue
    STATIC_TOPIC_OLD_CLIENT = "STATIC_TOPIC_OLD_CLIENT"  # a 4.x client on a 5.x static topic
    STATIC_TOPIC_BROKER_BALANCED = "STATIC_TOPIC_BROKER_BALANCED"  # brokers assign broker queues
    BROKERS_DISAGREE = "BROKERS_DISAGREE"  # brokers list different clients, or routes differ
    MIXED_REBALANCE = "MIXED_REBALANCE"  # client-side and broker-side clients in one group
    PROXY_CONSUMED = "PROXY_CONSUMED"  # consumed through a 5.x Proxy, clients not listed
    DEAD_LETTERS = "DEAD_LETTERS"  # messages the consumers gave up on wait in the group's DLQ
    POP_RETRY_TOO_LONG = "POP_RETRY_TOO_LONG"  # 5.0: a POP retry topic name a broker cannot store
    BROADCAST_LAG = "BROADCAST_LAG"  # a BROADCASTING client is behind on a topic
    SYSTEM_GROUP = "SYSTEM_GROUP"  # one of RocketMQ's own groups: nothing of a user's to balance
    MESSAGE_MODEL_INCONSISTENT = "MESSAGE_MODEL_INCONSISTENT"  # CLUSTERING and BROADCASTING clients
    PROXY_LIST_SPLIT = "PROXY_LIST_SPLIT"  # clients via a Proxy and the others see two lists


class QueueStatus(StrEnum):
    """A queue's row status in the queue table."""

    ok = "ok"  # held by exactly its expected consumer
    moved = "moved"  # held by one consumer, not the expected one
    unconsumed = "unconsumed"  # held by nobody (or expected to fall to a non-subscriber)
    duplicate = "duplicate"  # held by more than one consumer
    unknown = "unknown"  # actual assignment not known


@dataclass(frozen=True, slots=True)
class Proof:
    """What running the allocator on a proposal showed.

    ``counts`` are the consumer counts it was allocated at (``every``: all counts of their
    range, not a sample); at each of them every subscribing consumer got a queue. ``low`` and
    ``high`` are the fewest and most queues a consumer got at the count where that ratio is
    worst (the busiest first on a tie).
    """

    counts: tuple[int, ...]
    every: bool
    low: int
    high: int

    def consumers_text(self) -> str:
        """``16`` or ``16..24``."""
        lo, hi = min(self.counts), max(self.counts)
        return str(lo) if lo == hi else f"{lo}..{hi}"


@dataclass(frozen=True, slots=True)
class Proposal:
    """One proven change that removes a finding: a queue count per broker (read = write), a
    consumer count or replica range ``(low, high)``, CONSISTENT_HASH's virtual node count, or
    a strategy (its spec text, e.g. ``AVG``). ``member`` names the deployment whose replicas
    change (``rmqlb check``); ``current`` is today's value of what changes."""

    proof: Proof
    queues: int | None = None
    replicas: tuple[int, int] | None = None
    vnodes: int | None = None
    strategy: str | None = None
    member: str | None = None
    current: int | tuple[int, int] | str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"queues": 48, "proof": {...}}``; replicas as an int or ``"A..B"``."""
        out: dict[str, Any] = {}
        if self.queues is not None:
            out["queues"] = self.queues
        if self.replicas is not None:
            low, high = self.replicas
            out["replicas"] = low if low == high else f"{low}..{high}"
        if self.vnodes is not None:
            out["vnodes"] = self.vnodes
        if self.strategy is not None:
            out["strategy"] = self.strategy
        if self.member is not None:
            out["member"] = self.member
        p = self.proof
        out["proof"] = {
            "consumers": p.consumers_text(),
            "sampled": not p.every,
            "minQueues": p.low,
            "maxQueues": p.high,
        }
        return out


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem, with its numbers (``message``) and its fix (``hint``); ``proposals`` are
    the proven alternatives the hint states (see :mod:`rmqlb.diagnose.proposals`).

    ``id`` names the finding inside one report (``F1``, ``F2`` ... in report order) and
    ``caused_by`` is the id of the finding that explains it (``None`` for a root cause or
    a finding without a known cause); :func:`rmqlb.diagnose.diagnose` sets both.
    """

    code: Code
    severity: Severity
    group: str
    message: str
    hint: str
    topic: str | None = None
    consumers: tuple[str, ...] = ()
    queues: tuple[MessageQueue, ...] = ()
    id: str | None = None
    caused_by: str | None = None
    proposals: tuple[Proposal, ...] = ()


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One queue: who should hold it, who does, and its lag when offsets are known."""

    queue: MessageQueue
    expected: str | None
    actual: tuple[str, ...] | None
    status: QueueStatus
    lag: int | None = None
    offset: QueueOffset | None = None


class QueueRows(Sequence[QueueRow]):
    """A topic's queue rows, held as the columns the engine computes (one list per field of
    :class:`QueueRow`, ``lag``/``offsets`` ``None`` when no row has one).

    The rows are built only when read one by one (a table, a test), once; the JSON document
    is written from the columns (:meth:`fields`): a topic of 100,000 queues then makes no
    row object. Equal to the tuple of its rows, and to other rows equal to it.
    """

    __slots__ = ("_rows", "actual", "expected", "lag", "offsets", "queues", "status")

    def __init__(  # noqa: PLR0917  (one column per field, in field order)
        self,
        queues: Sequence[MessageQueue],
        expected: Sequence[str | None],
        actual: Sequence[tuple[str, ...] | None],
        status: Sequence[QueueStatus],
        lag: Sequence[int | None] | None = None,
        offsets: Sequence[QueueOffset | None] | None = None,
    ) -> None:
        n = len(queues)
        if not (
            len(expected) == len(actual) == len(status) == n
            and (lag is None or len(lag) == n)
            and (offsets is None or len(offsets) == n)
        ):
            raise ValueError("queue row columns of different lengths")
        self.queues = queues
        self.expected = expected
        self.actual = actual
        self.status = status
        self.lag = lag
        self.offsets = offsets
        self._rows: tuple[QueueRow, ...] | None = None

    def rows(self) -> tuple[QueueRow, ...]:
        """The rows as objects (built at the first call)."""
        if self._rows is None:
            self._rows = tuple(
                new_rows(
                    self.queues, self.expected, self.actual, self.status, self.lag, self.offsets
                )
            )
        return self._rows

    def fields(self) -> Iterator[RowFields]:
        """Each row's fields in field order, read from the columns (no row object)."""
        n = len(self.queues)
        return zip(
            self.queues,
            self.expected,
            self.actual,
            self.status,
            repeat(None, n) if self.lag is None else self.lag,
            repeat(None, n) if self.offsets is None else self.offsets,
            strict=True,
        )

    def lags(self) -> Sequence[int | None]:
        """Each row's lag."""
        return [None] * len(self.queues) if self.lag is None else self.lag

    def __len__(self) -> int:
        return len(self.queues)

    @overload
    def __getitem__(self, index: int) -> QueueRow: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[QueueRow, ...]: ...

    def __getitem__(self, index: int | slice) -> QueueRow | tuple[QueueRow, ...]:
        return self.rows()[index]

    def __iter__(self) -> Iterator[QueueRow]:
        return iter(self.rows())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, QueueRows):
            return self.rows() == other.rows()
        if isinstance(other, tuple):
            return self.rows() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.rows())

    def __repr__(self) -> str:
        return f"QueueRows({self.rows()!r})"


_row_queue, _row_expected, _row_actual, _row_status, _row_lag, _row_offset = (
    setter(QueueRow, name) for name in ("queue", "expected", "actual", "status", "lag", "offset")
)


def new_rows(  # noqa: PLR0917  (one column per field, in field order)
    queues: Sequence[MessageQueue],
    expected: Iterable[str | None],
    actual: Iterable[tuple[str, ...] | None],
    status: Iterable[QueueStatus],
    lag: Iterable[int | None] | None,
    offsets: Iterable[QueueOffset | None] | None = None,
) -> list[QueueRow]:
    """``[QueueRow(*fields) for fields in zip(queues, expected, actual, status, lag,
    offsets)]`` (``lag``/``offsets`` ``None``: ``None`` in every row), column by column: the
    loops run in C (the slots written through their descriptors, as
    :mod:`rmqlb.model._fast` does). The columns must be as long as ``queues``.

    >>> q = MessageQueue("T", "broker-a", 3)
    >>> new_rows([q], ["c1"], [("c1",)], [QueueStatus.ok], None) == [
    ...     QueueRow(q, "c1", ("c1",), QueueStatus.ok, None)]
    True
    """
    n = len(queues)
    rows: list[QueueRow] = list(map(_new, repeat(QueueRow, n)))
    consume(map(_row_queue, rows, queues))
    consume(map(_row_expected, rows, expected))
    consume(map(_row_actual, rows, actual))
    consume(map(_row_status, rows, status))
    consume(map(_row_lag, rows, repeat(None, n) if lag is None else lag))
    consume(map(_row_offset, rows, repeat(None, n) if offsets is None else offsets))
    return rows


def row_fields(rows: Sequence[QueueRow]) -> Iterator[RowFields]:
    """Each row's fields in field order; from the columns of :class:`QueueRows` not yet
    built as objects."""
    if isinstance(rows, QueueRows) and rows._rows is None:
        return rows.fields()
    return map(_row_fields, rows)


@dataclass(frozen=True, slots=True)
class ConsumerRow:
    """One consumer of a topic: expected and actual queue counts (actual ``None``: unknown),
    who balances it and, when the client did not report that, why rmqlb infers it."""

    client_id: str
    subscribes: bool
    strategy: str | None
    expected: int
    actual: int | None
    lag: int | None = None
    consumer: Consumer | None = None
    balanced_by: Rebalance = Rebalance.CLIENT
    balance_inferred: str | None = None

    def status(self, topic: str) -> ConsumeStatus | None:
        """The client's consume statistics of ``topic`` (``None``: not reported)."""
        return None if self.consumer is None else self.consumer.status.get(topic)

    def process_queues(self, topic: str) -> tuple[ProcessQueueState, ...] | None:
        """The client's held-queue states of ``topic`` (``None``: not reported)."""
        states = None if self.consumer is None else self.consumer.process_queues
        return None if states is None else tuple(s for s in states if s.queue.topic == topic)


@dataclass(frozen=True, slots=True)
class TopicReport:
    """The tables of one (group, topic)."""

    topic: str
    queues: Sequence[QueueRow]  # a tuple, or QueueRows (columns) from the engine
    consumers: tuple[ConsumerRow, ...]
    retry: bool = False
    #: How many of the rows are readable queues of the route (``mqAll``); the others are
    #: queues outside it with offsets or holders. ``None``: all of them.
    readable: int | None = None

    @property
    def lag(self) -> int | None:
        """The topic's total lag (``None``: no offset known)."""
        queues = self.queues
        lags = queues.lags() if isinstance(queues, QueueRows) else list(map(_lag_of, queues))
        if not any(map(is_not, lags, repeat(None))):
            return None
        return sum(filter(None, lags))

    def worst_client_lag(self) -> tuple[int | None, bool]:
        """Its most behind subscribing client's lag (for a BROADCASTING group, where each
        client consumes every message itself), and whether every such client's is known."""
        lags = [c.lag for c in self.consumers if c.subscribes]
        known = [lag for lag in lags if lag is not None]
        return (max(known) if known else None), len(known) == len(lags)


class InferenceStatus(StrEnum):
    """What rmqlb knows of strategy parameters the wire does not carry."""

    inferred = "inferred"  # one value makes every client's holdings exact: expected uses it
    confirmed = "confirmed"  # the Java default makes every client's holdings exact
    assumed = "assumed"  # holdings not all known: the Java default stands in, unverified
    unexplained = "unexplained"  # no value tried is exact: the default (or the closest) is used
    mixed = "mixed"  # each client holds exactly what its own value gives: they run different ones
    unknown = "unknown"  # no default and nothing to infer from: expected is not computed


@dataclass(frozen=True, slots=True)
class StrategyInference:
    """How the parameters of a group's strategy were settled when nobody stated them.

    ``value`` is the parameter's JSON value *expected* uses (``None`` when not computed),
    ``default`` Java's (``None`` when there is none), ``alternatives`` further values that
    explain the holdings as well, ``closest``/``differing`` the best inexact value and how many
    queues it gets wrong, ``option`` the ``--strategy`` text that states the value, ``note``
    the sentence the report shows and ``assumption`` the clause findings that depend on the
    parameter append (empty unless a value is assumed); ``client_values`` each client's own
    value when they differ (status ``mixed``).
    """

    status: InferenceStatus
    parameter: str
    value: Any
    default: Any
    clients: int
    searched: str
    note: str
    assumption: str = ""
    alternatives: tuple[Any, ...] = ()
    closest: Any = None
    differing: int | None = None
    option: str | None = None
    client_values: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class GroupReport:
    """One group: its model, the strategy used for *expected*, and its topics.

    ``inference`` says how that strategy's parameters were settled when the clients did not
    report them (``None``: stated, or the strategy has none); ``complete`` is false when the
    capture could not read all of its offsets (its lags are then lower bounds);
    ``unsubscribed_lag`` is the lag of its offsets on topics without a table here, which
    none of its consumers subscribes (every topic, when it has no consumer; ``None``: no
    such offset, or a BROADCASTING group, whose offsets are its clients').
    """

    group: str
    message_model: str
    strategy: str
    topics: tuple[TopicReport, ...]
    inference: StrategyInference | None = None
    complete: bool = True  # False: some of the group's offsets could not be read
    unsubscribed_lag: int | None = None

    @property
    def lag(self) -> int | None:
        """The group's total lag: over its topics, and its offsets on topics nobody
        subscribes, as ``status`` counts it (``None``: no offset known)."""
        known = [lag for lag in (t.lag for t in self.topics) if lag is not None]
        if self.unsubscribed_lag is not None:
            known.append(self.unsubscribed_lag)
        return sum(known) if known else None

    @property
    def broadcasting(self) -> bool:
        """Whether the group consumes in BROADCASTING mode (its lag is its clients')."""
        return self.message_model == MessageModel.BROADCASTING.value

    def broadcast_lag(self) -> tuple[int | None, bool]:
        """A BROADCASTING group's lag: on each topic its most behind client's, summed over
        its topics; and whether it is exact (every subscribing client's lag known, else a
        lower bound). ``(None, True)``: none known, so unknown rather than partial."""
        parts = [t.worst_client_lag() for t in self.topics]
        known = [lag for lag, _ in parts if lag is not None]
        if not known:
            return None, True
        return sum(known), all(every for _, every in parts)

    def total_lag(self) -> tuple[int | None, bool]:
        """The group's lag as every command states it, and whether it is exact: a
        BROADCASTING group's clients' (:meth:`broadcast_lag`), else :attr:`lag` (exact)."""
        return self.broadcast_lag() if self.broadcasting else (self.lag, True)

    def lag_by_consumer(self) -> dict[str, int]:
        """Each client's total lag over the queues it holds (where known)."""
        out: dict[str, int] = {}
        for t in self.topics:
            for c in t.consumers:
                if c.lag is not None:
                    out[c.client_id] = out.get(c.client_id, 0) + c.lag
        return out


@dataclass(frozen=True, slots=True)
class Report:
    """The whole diagnosis: group tables, findings (most severe first), capture errors."""

    groups: tuple[GroupReport, ...]
    findings: tuple[Finding, ...]
    errors: tuple[CaptureError, ...] = field(default=())
    captured_at: str | None = None

    @property
    def partial(self) -> bool:
        """Some data could not be collected."""
        return bool(self.errors)


#: Within one severity and impact, the finding that explains the others comes first: a split
#: subscription before the unconsumed queues it causes, a strategy mix before its duplicates.
#: Codes not listed (new rules get this for free) follow, by code.
PRECEDENCE: tuple[Code, ...] = (
    Code.CONSUME_DISABLED,
    Code.DUPLICATE_CLIENT_ID,
    Code.SUBSCRIPTION_INCONSISTENT,
    Code.STRATEGY_INCONSISTENT,
    Code.MESSAGE_MODEL_INCONSISTENT,
    Code.SERVER_LOAD_BALANCER_OFF,
    Code.STATIC_TOPIC_OLD_CLIENT,
    Code.STATIC_TOPIC_BROKER_BALANCED,
    Code.STALE_ALLOCATION,
    Code.CONSUMER_STALLED,
    Code.QUEUE_STALLED,
    Code.WRITE_EXCEEDS_READ,
    Code.NO_ROUTE,
    Code.ALLOCATION_FAILED,
    Code.UNCONSUMED_QUEUE,
    Code.DUPLICATE_ASSIGNMENT,
    Code.ORDERLY_LOCK_LOST,
    Code.NO_CONSUMERS,
    Code.QUEUE_NOT_READABLE,
    Code.CLIENT_UNREACHABLE,
    Code.FLOW_CONTROLLED,
    Code.POP_RETRY_TOO_LONG,
    Code.CONSUME_FAILING,
    Code.DEAD_LETTERS,
    Code.IDLE_CONSUMER,
    Code.LAG_SKEW,
    Code.ASSIGNMENT_MISMATCH,
    Code.IMBALANCE,
)
_PRECEDENCE = {code: i for i, code in enumerate(PRECEDENCE)}

RETRY = "%RETRY%"

SortKey = tuple[int, int, int, int, bool, int, str, str, str]


def _key(f: Finding, rank: int, messages: int, queues: int) -> SortKey:
    """The report order (design of the ordering rule, docs/findings.md): most severe first;
    within a severity, a finding with an effect now (queues or messages at stake) before one
    without, then the most messages, the most queues; ordinary topics before retry topics;
    causes before symptoms (:data:`PRECEDENCE`); then group, topic and code."""
    return (
        -rank,
        0 if messages or queues else 1,
        -messages,
        -queues,
        (f.topic or "").startswith(RETRY),
        _PRECEDENCE.get(f.code, len(_PRECEDENCE)),
        f.group,
        f.topic or "",
        f.code.value,
    )


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Report order without links (see :func:`tree_order`): most severe first, then by
    impact (its own queues), causes before symptoms, group, topic and code."""
    return sorted(findings, key=lambda f: _key(f, f.severity.rank, 0, len(set(f.queues))))


def tree_order(
    findings: Sequence[Finding],
    parents: Sequence[int | None],
    lag: Mapping[tuple[str, MessageQueue], int] | None = None,
) -> list[int]:
    """Causes before consequences: the positions of ``findings`` in report order.

    ``parents[i]`` is the position of the finding that causes ``findings[i]`` (``None``:
    none). Each cause is followed by its consequences (depth first). A tree ranks as a whole:
    by its most severe finding, then by its impact, the messages (``lag`` per queue where
    known, keyed by group and queue) and queues of all its findings together, so the root
    cause with the most at stake leads; consequences of one cause are ordered the same way.
    Without links and lags this is exactly :func:`sort_findings`.

    >>> a = Finding(Code.IMBALANCE, Severity.warning, "G", "m", "h")
    >>> b = Finding(Code.DUPLICATE_ASSIGNMENT, Severity.error, "G", "m", "h")
    >>> tree_order([a, b], [None, 0]), tree_order([a, b], [None, None])
    ([0, 1], [1, 0])
    """
    lags = lag or {}
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for i, parent in enumerate(parents):
        if parent is None or parent == i or not 0 <= parent < len(findings):
            roots.append(i)
        else:
            children.setdefault(parent, []).append(i)
    keys: dict[int, SortKey] = {}

    def subtree(i: int, seen: frozenset[int]) -> tuple[int, set[MessageQueue]]:
        rank, queues = findings[i].severity.rank, set(findings[i].queues)
        for k in children.get(i, ()):
            if k not in seen:
                below, more = subtree(k, seen | {i})
                rank, queues = max(rank, below), queues | more
        if i not in keys:
            group = findings[i].group
            messages = sum(lags.get((group, q), 0) for q in queues)
            keys[i] = _key(findings[i], rank, messages, len(queues))
        return rank, queues

    for i in range(len(findings)):
        subtree(i, frozenset())

    out: list[int] = []
    placed: set[int] = set()

    def walk(i: int) -> None:
        if i in placed:
            return
        placed.add(i)
        out.append(i)
        for k in sorted(children.get(i, ()), key=keys.__getitem__):
            walk(k)

    for i in sorted(roots, key=keys.__getitem__):
        walk(i)
    for i in range(len(findings)):  # a cycle has no root: keep its members anyway
        if i not in placed:
            walk(i)
    return out


def id_number(finding_id: str | None) -> int | None:
    """``3`` of ``G/F3``; ``None`` when the id is not numbered."""
    if finding_id is None:
        return None
    _, _, tail = finding_id.rpartition("/F")
    return int(tail) if tail.isdigit() else None


def order_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in report order: causes first, each followed by its consequences (linked by
    ``id`` / ``caused_by``). Numbered findings keep the engine's order (their numbers);
    others are ordered like :func:`sort_findings`."""
    items = list(findings)
    position = {f.id: i for i, f in enumerate(items) if f.id is not None}
    parents = [position.get(f.caused_by) if f.caused_by is not None else None for f in items]
    numbers = [id_number(f.id) for f in items]
    if items and all(n is not None for n in numbers):
        groups: dict[str, int] = {}
        for f in items:
            groups.setdefault(f.group, len(groups))
        rank = sorted(range(len(items)), key=lambda i: (groups[items[i].group], numbers[i]))
        order = {i: pos for pos, i in enumerate(rank)}
        placed: set[int] = set()
        out: list[int] = []

        def walk(i: int) -> None:
            if i in placed:
                return
            placed.add(i)
            out.append(i)
            for k in sorted((k for k, p in enumerate(parents) if p == i), key=order.__getitem__):
                walk(k)

        for i in rank:
            if parents[i] is None or parents[i] == i:
                walk(i)
        for i in rank:
            walk(i)
        return [items[i] for i in out]
    return [items[i] for i in tree_order(items, parents)]


def finding_depths(findings: Sequence[Finding]) -> list[int]:
    """How deep each finding sits under its causes (0: a root), for indenting renderers.

    >>> a = Finding(Code.STALE_ALLOCATION, Severity.error, "G", "m", "h", id="F1")
    >>> b = Finding(Code.DUPLICATE_ASSIGNMENT, Severity.error, "G", "m", "h", id="F2",
    ...             caused_by="F1")
    >>> finding_depths([a, b])
    [0, 1]
    """
    by_id = {f.id: f for f in findings if f.id is not None}
    depths: list[int] = []
    for f in findings:
        depth, seen, parent = 0, {f.id}, f.caused_by
        while parent is not None and parent in by_id and parent not in seen:
            depth += 1
            seen.add(parent)
            parent = by_id[parent].caused_by
        depths.append(depth)
    return depths


def exit_code(report: Report, fail_on: str = "error") -> ExitCode:
    """Design §3: 1 for findings at or above ``fail_on``, else 4 when data is partial, else 0
    (the rule lives in :func:`rmqlb.failon.gate`)."""
    return gate((f.severity for f in report.findings), fail_on, partial=report.partial)


def _queue_ref(mq: MessageQueue) -> dict[str, Any]:
    return {"brokerName": mq.broker_name, "queueId": mq.queue_id}


def finding_to_json(f: Finding) -> dict[str, Any]:
    """One finding in the report contract."""
    return {
        "code": f.code.value,
        "severity": f.severity.value,
        "group": f.group,
        "topic": f.topic,
        "consumers": list(f.consumers),
        "queues": [_queue_ref(q) for q in f.queues],
        "message": f.message,
        "hint": f.hint,
        "id": f.id,
        "causedBy": f.caused_by,
        "proposals": [p.to_json() for p in f.proposals],
    }


def inference_to_json(i: StrategyInference | None) -> dict[str, Any] | None:
    """A group's ``inference`` in the report contract (``None`` stays ``null``)."""
    if i is None:
        return None
    return {
        "status": i.status.value,
        "parameter": i.parameter,
        "value": i.value,
        "default": i.default,
        "clients": i.clients,
        "searched": i.searched,
        "alternatives": list(i.alternatives),
        "closest": i.closest,
        "differingQueues": i.differing,
        "strategyOption": i.option,
        "clientValues": dict(i.client_values) if i.client_values else None,
        "note": i.note,
    }


def _consumer_rows_json(rows: tuple[ConsumerRow, ...], topic: str) -> list[dict[str, Any]]:
    # the snapshot writer's forms of these, imported by the JSON report only: a table of a
    # live capture needs nothing of the snapshot package
    from rmqlb.snapshot._write import consume_status_json, process_queue_json  # noqa: PLC0415

    out = []
    for c in rows:
        consumer = c.consumer
        states = c.process_queues(topic)
        status = c.status(topic)
        out.append(
            {
                "clientId": c.client_id,
                "subscribes": c.subscribes,
                "strategy": c.strategy,
                "expected": c.expected,
                "actual": c.actual,
                "lag": c.lag,
                "clientAddr": None if consumer is None else consumer.client_addr,
                "version": None if consumer is None else consumer.version,
                "status": None if status is None else consume_status_json(status),
                "processQueues": (
                    None if states is None else [process_queue_json(s) for s in states]
                ),
                "balancedBy": c.balanced_by.value,
                "balancedByInferred": c.balance_inferred,
            }
        )
    return out


def report_to_json(report: Report, fail_on: str = "error") -> dict[str, Any]:
    """The ``rmqlb.report/1`` JSON document (tests and CI users depend on it)."""
    # Building ~100,000 row dicts next to a big snapshot triggers full garbage collections
    # that scan everything alive (15x the build time): pause the collector meanwhile.
    from rmqlb.diagnose._rowtext import queue_rows_text  # noqa: PLC0415  (imports this module)

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _document_json(
            report,
            fail_on,
            [
                _group_json(
                    g,
                    [_topic_json(g, t, json.loads(queue_rows_text(t.queues))) for t in g.topics],
                )
                for g in report.groups
            ],
        )
    finally:
        if was_enabled:
            gc.enable()


def _document_json(report: Report, fail_on: str, groups: Any) -> dict[str, Any]:
    """The document around its ``groups``."""
    return {
        "format": REPORT_FORMAT,
        "groups": groups,
        "findings": [finding_to_json(f) for f in report.findings],
        "errors": [
            {"target": e.target, "request": e.request, "message": e.message} for e in report.errors
        ],
        "exitCode": int(exit_code(report, fail_on)),
    }


def _group_json(g: GroupReport, topics: Any) -> dict[str, Any]:
    """One group around its ``topics``."""
    lag, exact = g.total_lag()  # a sum over every queue row (or client): once
    complete = g.complete and exact
    return {
        "group": g.group,
        "messageModel": g.message_model,
        "strategy": g.strategy,
        "lag": lag if complete else None,
        "lagKnown": lag,
        "lagComplete": complete,
        "lagByConsumer": g.lag_by_consumer(),
        "inference": inference_to_json(g.inference),
        "topics": topics,
    }


def _topic_json(g: GroupReport, t: TopicReport, queues: Any) -> dict[str, Any]:
    """One topic of ``g`` around its ``queues`` rows."""
    if g.broadcasting:  # its most behind client's
        lag, exact = t.worst_client_lag()
        lag = lag if exact else None
    else:
        lag = t.lag
    return {
        "topic": t.topic,
        "retry": t.retry,
        "lag": lag if g.complete else None,
        "queues": queues,
        "consumers": _consumer_rows_json(t.consumers, t.topic),
    }


def report_to_text(report: Report, fail_on: str = "error", indent: int | None = None) -> str:
    """The report document as JSON text: ``json.loads`` of it equals :func:`report_to_json`.

    Compact (``{"a":1}``) unless ``indent`` is given; non-ASCII characters are kept; the text
    :func:`rmqlb.jsontext.dumps` writes for the document. Compact text is written without the
    document: the queue rows (100,000 in a big topic) column by column, with the loops in C
    (:mod:`rmqlb.diagnose._rowtext`), everything around them by ``dumps``.
    """
    from rmqlb.jsontext import dumps  # noqa: PLC0415  (kept out of CLI start-up)

    # The collector stays off until the document is gone: re-enabled while ~100,000 row
    # objects (dicts, or texts) still live, its next young-generation pass would scan them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if indent is not None:
            return dumps(report_to_json(report, fail_on), indent=indent)
        from rmqlb.diagnose._rowtext import object_parts, write_queue_rows  # noqa: PLC0415

        # pieces joined once: a big document is not copied level by level
        parts: list[str] = []
        head, tail = object_parts(_document_json(report, fail_on, None), "groups")
        parts += (head, "[")
        for i, g in enumerate(report.groups):
            group_head, group_tail = object_parts(_group_json(g, None), "topics")
            parts += ("," if i else "", group_head, "[")
            for k, t in enumerate(g.topics):
                topic_head, topic_tail = object_parts(_topic_json(g, t, None), "queues")
                parts += ("," if k else "", topic_head)
                write_queue_rows(t.queues, parts)
                parts.append(topic_tail)
            parts += ("]", group_tail)
        parts += ("]", tail)
        return "".join(parts)
    finally:
        if was_enabled:
            gc.enable()
