"""STALE_ALLOCATION: a client holds exactly what its strategy gives for *other* inputs.

Every client allocates alone, from its own copy of the consumer list (``cidAll``, asked from
one broker), the topic's route and its strategy. A client whose holdings differ from the
expected allocation often holds, queue for queue, what the strategy yields for inputs that
were true a moment ago: the consumer list before another client joined or left, the list of
itself alone, a route with a broker that has left or without one that joined. This rule
searches those alternatives, cheaply, only for the clients whose holdings mismatch, the
most plausible first:

1. ``cidAll`` without the 1-3 newest clients (by start time), and without each of the few
   clients that hold exactly their share (a fresh joiner rebalances at once);
2. the client alone (it started first and never rebalanced since), or ``cidAll`` without the
   client itself when it holds nothing (the broker it asked did not list it yet); ``cidAll``
   without the clients that started after it;
3. the route without each broker, or with a broker the clients still hold queues of that is
   gone, not readable or has fewer read queues now;
4. the other parameter-free strategies;
5. ``cidAll`` with one more client (one that left) next to a mismatching client (strategies
   where only positions matter: AVG, AVG_BY_CIRCLE, MACHINE_ROOM);
6. ``cidAll`` without any one other client, newest first.

A client that runs another strategy than expected and holds that strategy's share of the
current inputs is left to STRATEGY_INCONSISTENT. Each alternative is one whole-group
allocation (bit-exact, :mod:`rmqlb.allocate`), and it explains every mismatching client whose
holdings equal its share. The alternatives that explain the most clients are kept (greedy
cover); at most ``DiagnoseOptions.stale_budget`` allocations and ``stale_work`` queues and
client ids per topic, so big groups try fewer.

Worked example (seen on a real cluster, notifyConsumerIdsChangedEnable=false): 8 queues,
``first`` started alone and holds all 8; ``second`` joined and holds ``4..7``, its AVG half.
Expected is ``0..3`` / ``4..7``: ``first`` mismatches, and AVG over ``[first]`` alone gives
exactly ``0..7``. So: STALE_ALLOCATION, "first as if the group were [first] alone", with the
4 doubled queues as its consequence.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from rmqlb.allocate import allocate_for, validate
from rmqlb.diagnose.context import GroupContext, Mode, TopicContext
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import duration_text, id_text, queue_text
from rmqlb.diagnose.rules.configs import update_sub_group
from rmqlb.diagnose.rules.health import awaiting_locks
from rmqlb.errors import AllocationError, InputError
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    MachineRoom,
    StrategySpec,
    Unknown,
    describe,
    same_algorithm,
)

#: Clients rebalance every 20 s (``rocketmq.client.rebalance.waitInterval``), and at once
#: when the broker notifies them; a change younger than this (plus a margin) is in progress.
REBALANCE_WINDOW_MS = 25_000
_LEFT = "\x00a client that left"  # placeholder id: only its position matters
#: Views of one client each (alone, before its joiners) are tried for this many clients.
ALONE_TRIED = 4


@dataclass(frozen=True, slots=True)
class View:
    """Inputs a client may have allocated from.

    ``kind``: ``alone``, ``without`` (``missing`` left out), ``with_left``
    (one more client, next to ``neighbour``), ``route_without`` / ``route_with``
    (``broker``), ``strategy``, or ``own`` (the client's own strategy, current inputs).
    """

    kind: str
    strategy: StrategySpec
    cid_all: tuple[str, ...]
    mq_all: tuple[MessageQueue, ...] | None = None  # None: the current route
    missing: tuple[str, ...] = ()
    broker: str | None = None
    broker_queues: int = 0
    neighbour: str | None = None
    before: bool = False

    def key(self) -> tuple[object, ...]:
        """Equal keys allocate identically (so only one of them is tried)."""
        queues = None if self.mq_all is None else (self.broker, len(self.mq_all), self.kind)
        return (self.cid_all, queues, describe(self.strategy))


@dataclass(slots=True)
class Stale:
    """The clients one view explains."""

    view: View
    clients: list[str] = field(default_factory=list)


def _reproducible(spec: StrategySpec) -> bool:
    if isinstance(spec, Unknown | Config):
        return False
    try:
        validate(spec)
    except InputError:
        return False
    return True


def _positional(spec: StrategySpec) -> bool:
    """Whether a client's share depends only on its position in ``cidAll`` (not on ids)."""
    return isinstance(spec, Avg | AvgByCircle | MachineRoom)


class _Search:
    """The alternatives of one topic, tried within a budget of allocations."""

    def __init__(self, ctx: TopicContext, held: dict[str, frozenset[MessageQueue]]) -> None:
        self.ctx = ctx
        self.held = held
        self.left = ctx.g.options.stale_budget
        self.work = ctx.g.options.stale_work
        self.tried: set[tuple[object, ...]] = set()
        self.found: list[Stale] = []

    def allocate(self, view: View, clients: Sequence[str]) -> dict[str, list[MessageQueue]] | None:
        """The shares ``view`` gives ``clients`` (``None``: Java throws, or no budget left).
        Counted against the budget as one allocation of the whole group, although AVG
        computes only the blocks asked for."""
        queues: Sequence[MessageQueue] = self.ctx.mq_all if view.mq_all is None else view.mq_all
        if self.left <= 0 or self.work <= 0:
            return None
        self.left -= 1
        self.work -= len(queues) + len(view.cid_all)
        try:
            return allocate_for(view.strategy, queues, view.cid_all, clients)
        except (AllocationError, InputError):
            return None

    def explained(self, view: View, clients: Sequence[str]) -> list[str]:
        """Which of ``clients`` hold exactly their share under ``view`` (one allocation)."""
        if view.key() in self.tried or self.left <= 0 or self.work <= 0:
            return []
        self.tried.add(view.key())
        shares = self.allocate(view, clients)
        if shares is None:
            return []
        out: list[str] = []
        listed = set(view.cid_all)
        for cid in clients:
            held = self.held[cid]
            if cid not in listed and not (cid in view.missing and not held):
                continue  # a client left out of the list gets nothing
            share = shares.get(cid, ())
            # most wrong views already differ in size or in the first queue: no set work
            if (
                len(share) == len(held)
                and (not share or share[0] in held)
                and held.issuperset(share)
            ):
                out.append(cid)
        return out

    def run(self, views: Iterator[View], clients: list[str]) -> None:
        """Try ``views`` in order; stop early when one explains every client left."""
        for view in views:
            if self.left <= 0 or self.work <= 0:
                break
            got = self.explained(view, clients)
            if got:
                self.found.append(Stale(view, got))
                if len(got) == len(clients):
                    break


def _own_strategy(ctx: TopicContext, cid: str) -> StrategySpec:
    for c in ctx.g.consumers:
        if c.client_id == cid and c.strategy is not None and _reproducible(c.strategy):
            return c.strategy
    return ctx.g.strategy


def _start_times(ctx: TopicContext) -> dict[str, int]:
    return {
        c.client_id: c.start_time
        for c in ctx.g.consumers
        if c.start_time is not None and c.start_time > 0
    }


def _views(
    ctx: TopicContext,
    spec: StrategySpec,
    clients: list[str],
    held: dict[str, frozenset[MessageQueue]],
) -> Iterator[View]:
    """The alternatives for ``clients`` (all running ``spec``), most plausible first."""
    cid_all = tuple(ctx.g.cid_all)
    distinct = list(dict.fromkeys(cid_all))
    started = _start_times(ctx)

    def without(missing: Sequence[str]) -> View:
        gone = set(missing)
        listed = tuple(c for c in cid_all if c not in gone)
        kind = "alone" if len(set(listed)) == 1 else "without"
        return View(kind, spec, listed, missing=tuple(sorted(gone, key=java_key)))

    # before the newest clients joined (one allocation checks every client at once)
    newest = sorted(started, key=lambda c: (-started[c], java_key(c)))
    for k in range(1, min(3, len(newest) - 1) + 1):
        yield without(newest[:k])
    # a few clients holding exactly what they should: a fresh joiner rebalances at once
    settled = [
        c.client_id
        for c, actual in zip(ctx.g.consumers, ctx.actual, strict=True)
        if actual is not None and c.client_id not in held and c.client_id in ctx.subscribers
    ]
    if len(distinct) > 1:
        for other in settled[:ALONE_TRIED]:
            yield without([other])
    for cid in clients[:ALONE_TRIED]:
        if held[cid]:
            yield View("alone", spec, (cid,), missing=tuple(c for c in distinct if c != cid))
        else:
            yield without([cid])  # the broker it asked did not list it (yet)
        if cid in started:
            later = [c for c in distinct if c in started and started[c] > started[cid]]
            if later and len(later) < len(distinct) - 1:
                yield without(later)
    yield from _route_views(ctx, spec, cid_all)
    alternatives: tuple[StrategySpec, ...] = (Avg(), AvgByCircle(), ConsistentHash())
    for alternative in alternatives:
        if not same_algorithm(alternative, spec):
            yield View("strategy", alternative, cid_all)
    # with one more client, a client that left: only where ids do not matter
    if _positional(spec):
        positions: list[tuple[int, str, bool]] = []
        for cid in clients[:ALONE_TRIED]:
            at = cid_all.index(cid)
            positions.append((at, cid, True))
            positions.append((at + 1, cid, False))
        for at, neighbour, before in dict.fromkeys(positions):
            listed = (*cid_all[:at], _LEFT, *cid_all[at:])
            yield View("with_left", spec, listed, neighbour=neighbour, before=before)
    # without any one other client: the newest first, then in Java order
    if len(distinct) > 1:
        for other in dict.fromkeys([*newest, *distinct]):
            yield without([other])


def _route_views(ctx: TopicContext, spec: StrategySpec, cid_all: tuple[str, ...]) -> Iterator[View]:
    """The current route without each broker, and with each broker seen in holdings but
    not readable in the route."""
    spans = [(b, first, n) for b, (first, n) in ctx.base.items() if n]
    if len(spans) > 1:
        for broker, first, n in spans:
            queues = (*ctx.mq_all[:first], *ctx.mq_all[first + n :])
            yield View("route_without", spec, cid_all, queues, broker=broker, broker_queues=n)
    wider: dict[str, int] = {}  # brokers held beyond the route: how many queues they had
    for mq in ctx.extra:
        if mq.topic == ctx.topic:
            wider[mq.broker_name] = max(wider.get(mq.broker_name, 0), mq.queue_id + 1)
    if ctx.route is not None:
        for qd in ctx.route.queue_datas:
            if not qd.readable and qd.broker_name in wider:
                wider[qd.broker_name] = max(wider[qd.broker_name], qd.read_queue_nums)
    for broker in sorted(wider, key=java_key):
        kept = [mq for mq in ctx.mq_all if mq.broker_name != broker]
        added = [MessageQueue(ctx.topic, broker, i) for i in range(wider[broker])]
        queues = tuple(sorted([*kept, *added], key=queue_sort_key))
        yield View("route_with", spec, cid_all, queues, broker=broker, broker_queues=wider[broker])


def mismatching(ctx: TopicContext) -> dict[str, frozenset[MessageQueue]]:
    """The subscribing clients whose known holdings differ from their expected share; not
    an orderly client holding part of its share only (it waits for locks: ORDERLY_LOCK_LOST
    says so, see :func:`~rmqlb.diagnose.rules.health.awaiting_locks`), nor a BROADCASTING
    client of a CLUSTERING group (it reads every queue: MESSAGE_MODEL_INCONSISTENT)."""
    expected = ctx.expected
    out: dict[str, frozenset[MessageQueue]] = {}
    if expected is None:
        return out
    # a client the broker balances does not allocate from its own inputs
    skipped = {*awaiting_locks(ctx), *(ctx.broker_side.clients if ctx.broker_side else ())}
    for c, held, exact in zip(ctx.g.consumers, ctx.actual, ctx.exact(), strict=True):
        cid = c.client_id
        if held is None or cid in out or cid not in ctx.subscribers or cid in skipped:
            continue
        if cid in ctx.g.broadcasters:
            continue
        want = expected.get(cid, ())
        if exact or set(held) == set(want):
            continue
        out[cid] = frozenset(held)
    return out


#: Views that carry over to the group's other topics: the consumer list and the strategy
#: are the same for every topic, a route is not.
CARRIED = frozenset({"alone", "without", "with_left", "strategy"})


def search(
    ctx: TopicContext, seeds: Sequence[View] = (), brokers: frozenset[str] = frozenset()
) -> list[Stale]:
    """The views that explain the mismatching clients of ``ctx`` (greedy cover).

    ``seeds`` (views found on the group's other topics) are tried first; on a retry topic
    only they are, and the route with or without one of ``brokers`` (the brokers a stale
    route of another topic had or lacked): its one or few queues fit too many alternatives
    to mean anything alone.
    """
    held = mismatching(ctx)
    if not held:
        return []
    by_spec: dict[str, tuple[StrategySpec, list[str]]] = {}
    finder = _Search(ctx, held)
    for cid in held:
        spec = _own_strategy(ctx, cid)
        by_spec.setdefault(describe(spec), (spec, []))[1].append(cid)
    for spec, running in by_spec.values():
        if not _reproducible(spec):
            continue
        clients = running
        if not same_algorithm(spec, ctx.g.strategy):
            # holding its own strategy's share of the current inputs: STRATEGY_INCONSISTENT
            own = finder.explained(View("own", spec, tuple(ctx.g.cid_all)), running)
            clients = [c for c in running if c not in own]
        if not clients:
            continue
        finder.run(iter(seeds), clients)
        if not ctx.retry:
            finder.run(_views(ctx, spec, clients, held), clients)
        elif brokers:
            routes = _route_views(ctx, spec, tuple(ctx.g.cid_all))
            finder.run((v for v in routes if v.broker in brokers), clients)
    chosen: list[Stale] = []
    left = set(held)
    candidates = list(finder.found)
    while candidates:
        best = max(candidates, key=lambda s: sum(1 for c in s.clients if c in left))
        got = [c for c in best.clients if c in left]
        if not got:
            break
        chosen.append(Stale(best.view, got))
        left -= set(got)
        candidates.remove(best)
    return chosen


# -- wording -------------------------------------------------------------------------------


def _list_text(ids: Sequence[str]) -> str:
    shown = [c for c in ids if c != _LEFT]
    if len(shown) <= 4:
        return "[" + ", ".join(shown) + "]"
    return f"[{', '.join(shown[:2])}, ... {len(shown) - 2} more]"


def _age(ctx: TopicContext, cids: Sequence[str]) -> int | None:
    """How long before the capture the newest of ``cids`` started (``None``: unknown)."""
    now = ctx.g.now_ms
    started = _start_times(ctx)
    known = [started[c] for c in cids if c in started]
    if now is None or not known or now < max(known):
        return None
    return now - max(known)


def _joined_text(cids: Sequence[str], age: int | None, *, named: bool = False) -> str:
    """``, as before X joined (12 s before the capture)``; ``""`` when the age is unknown.
    ``named``: the ids were just named, so say ``it`` / ``they``."""
    if age is None or not cids:
        return ""
    one = len(cids) == 1
    who = ("it" if one else "they") if named else id_text(cids, 3)
    when = f"{duration_text(age)} before the capture"
    return f", as before {who} joined ({when if one else 'the last ' + when})"


def _view_text(ctx: TopicContext, stale: Stale) -> tuple[str, int | None]:
    """How the clients allocate, in words, and the age of the membership change (if known)."""
    v = stale.view
    who = id_text(stale.clients, 3)
    holds = "holds" if len(stale.clients) == 1 else "hold"
    label = describe(v.strategy)
    age: int | None = None
    if v.kind == "alone":
        started = _start_times(ctx)
        mine = started.get(v.cid_all[0])
        later = sorted((c for c in started if mine is not None and started[c] > mine), key=java_key)
        age = _age(ctx, later)
        text = (
            f"{who} {holds} what {label} gives {'it' if len(stale.clients) == 1 else 'them'} "
            f"as if the group were [{v.cid_all[0]}] alone{_joined_text(later, age)}"
        )
    elif v.kind == "without":
        age = _age(ctx, v.missing)
        listed = "" if list(v.cid_all) == stale.clients else f" {_list_text(v.cid_all)}"
        text = (
            f"{who} {holds} what {label} gives for the consumer list{listed} without "
            f"{id_text(v.missing, 3)}{_joined_text(v.missing, age, named=True)}"
        )
    elif v.kind == "with_left":
        side = "before" if v.before else "after"
        text = (
            f"{who} {holds} what {label} gives for a consumer list with one more client, "
            f"sorting just {side} {v.neighbour}: a client that has left"
        )
    elif v.kind == "route_without":
        text = (
            f"{who} {holds} what {label} gives for a route of {ctx.topic} without {v.broker} "
            f"(its {plural(v.broker_queues, 'queue')})"
        )
    elif v.kind == "route_with":
        now = ctx.base.get(v.broker or "", (0, 0))[1]
        current = f"now {now}" if now else "now none readable"
        text = (
            f"{who} {holds} what {label} gives for a route of {ctx.topic} in which "
            f"{v.broker} had {plural(v.broker_queues, 'readable queue')} ({current})"
        )
    else:
        text = (
            f"{who} {holds} what {label} gives, not {ctx.g.strategy_label} "
            f"(the strategy of expected, {_source(ctx)})"
        )
    return text, age


def _source(ctx: TopicContext) -> str:
    return {
        "given": "from --strategy",
        "group": "the group's in the snapshot",
        "consumers": "what the clients report",
        "default": "the default, as no client reports one",
    }.get(ctx.g.strategy_source, ctx.g.strategy_source)


def _cause(ctx: TopicContext, stale: Stale, age: int | None) -> tuple[str, str]:
    """The likely cause of one view, and its fix."""
    g = ctx.g
    v = stale.view
    ids = id_text(stale.clients, 3)
    if v.kind in ("route_without", "route_with"):
        change = (
            "joined the route or became readable"
            if v.kind == "route_without"
            else "left the route, lost read permission or got fewer read queues"
        )
        return (
            f"a route not refreshed: clients poll the name server every 30 s, so a client "
            f"allocates from its old route of {ctx.topic} for up to 30 s after {v.broker} "
            f"{change}, and for as long as it cannot reach the name server",
            f"check that {ids} reach the name server ('updateTopicRouteInfoFromNameServer' "
            "errors in the client log); restart a client whose route stays old",
        )
    if v.kind == "strategy":
        label = describe(v.strategy)
        return (
            f"another strategy: the clients run {label}, not {g.strategy_label}",
            f"explain with --strategy {label} if {label} is what the group should run; "
            f"otherwise set allocateMessageQueueStrategy to {g.strategy_label} in {ids}",
        )
    absent = [c for c in v.missing if c in stale.clients]
    if absent:
        who = id_text(absent, 3)
        return (
            f"the heartbeat of {who} has not reached the broker asked for the consumer list "
            "(it cannot reach that broker, or it started a moment ago)",
            f"check that {who} reach{'es' if len(absent) == 1 else ''} every broker of "
            f"{ctx.topic} ('sendHeartbeatToAllBroker' errors in the client log)",
        )
    silenced = sorted(
        (b for b, cfg in g.group.configs.items() if not cfg.notify_consumer_ids_changed_enable),
        key=java_key,
    )
    if silenced:
        cmd = "; ".join(update_sub_group(g, b, "-a true") for b in silenced)
        return (
            f"notifyConsumerIdsChangedEnable=false on {', '.join(silenced)}: the broker does "
            "not tell the clients when consumers join or leave, so each one notices only at "
            "its next periodic rebalance (every 20 s by default, later when that interval "
            "was raised, never while its rebalance is stuck)",
            f"enable the notification again: {cmd}; the stale clients rebalance at once "
            "when notified (or restart them)",
        )
    if age is not None and age < REBALANCE_WINDOW_MS:
        return (
            f"a rebalance in progress: the consumer list changed {duration_text(age)} before "
            "the capture and every client rebalances within 20 s",
            "nothing to fix if this clears within 20 s; if it lasts, the clients that keep "
            "the old view have a stuck rebalance (jstack their RebalanceService thread)",
        )
    stuck = (
        "a blocked or failing rebalance thread, or a broker they ask for the consumer list "
        "that sees other members, such as one they cannot reach or one the others' heartbeats "
        "do not reach"
    )
    fix = (
        f"look for 'doRebalance' or 'findConsumerIdList' errors in the log of {ids} and jstack "
        f"their RebalanceService thread; check they reach every broker of {ctx.topic}; "
        "restarting a client makes it rebalance"
    )
    if age is None:
        return (
            "the consumer list changed and these clients have not rebalanced since: a "
            f"rebalance in progress for up to 20 s after the change, later a stuck one ({stuck})",
            f"if it lasts beyond 20 s: {fix}",
        )
    return (f"a stuck rebalance: the consumer list changed and they did not follow ({stuck})", fix)


def _effects(
    ctx: TopicContext, clients: set[str], queues: set[MessageQueue]
) -> tuple[list[MessageQueue], list[MessageQueue]]:
    """The doubled queues a stale client holds, and the queues nobody holds that a stale
    client should (only when every client's holdings are known)."""
    doubled = [
        ctx.mq_all[i]
        for i in sorted(ctx.more_holders)
        if clients.intersection(ctx.holders(i)) and ctx.mq_all[i] in queues
    ]
    doubled += [mq for mq, who in ctx.extra.items() if len(who) > 1 and clients.intersection(who)]
    holes: list[MessageQueue] = []
    if ctx.actual_known:
        holes = [
            ctx.mq_all[i]
            for i, (first, owner) in enumerate(zip(ctx.holder, ctx.owner, strict=True))
            if first is None and owner in clients
        ]
    return doubled, holes


def check_stale(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """STALE_ALLOCATION, per topic, for the mismatching clients whose holdings some other
    inputs explain exactly; ordinary topics first, their views then tried on the others."""
    if g.mode is not Mode.CLUSTERING:
        return []
    out: list[Finding] = []
    seeds: list[View] = []
    brokers: set[str] = set()  # a route missing or still having these: so may the others'
    for ctx in sorted(topics, key=lambda t: t.retry):
        if ctx.route is None or ctx.expected is None:
            continue
        found = search(ctx, seeds, frozenset(brokers))
        if found:
            out.append(_finding(ctx, found))
            seeds.extend(s.view for s in found if s.view.kind in CARRIED)
            brokers.update(s.view.broker for s in found if s.view.broker is not None)
    return out


def _finding(ctx: TopicContext, found: list[Stale]) -> Finding:
    g = ctx.g
    expected = ctx.expected or {}
    clients = [c for s in found for c in s.clients]
    stale = set(clients)
    queues: set[MessageQueue] = set()
    for c, held in zip(g.consumers, ctx.actual, strict=True):
        if c.client_id in stale and held is not None:
            queues |= set(held) ^ set(expected.get(c.client_id, ()))
    texts: list[str] = []
    causes: dict[str, str] = {}
    for s in found:
        text, age = _view_text(ctx, s)
        texts.append(text)
        cause, fix = _cause(ctx, s, age)
        causes.setdefault(cause, fix)
    doubled, holes = _effects(ctx, stale, queues)
    effects = []
    if doubled:
        effects.append(f"{plural(len(doubled), 'queue')} held twice ({queue_text(doubled, 4)})")
    if holes:
        effects.append(f"{plural(len(holes), 'queue')} held by nobody ({queue_text(holes, 4)})")
    effect = f"; so {' and '.join(effects)}" if effects else ""
    return Finding(
        Code.STALE_ALLOCATION,
        Severity.error if effects else Severity.warning,
        g.name,
        f"{len(stale)} of {plural(len(ctx.subscribers), 'consumer')} of {ctx.topic} "
        f"{'allocates' if len(stale) == 1 else 'allocate'} from other inputs than the "
        f"group's: {'; '.join(texts)}{effect}; likely cause: {'; '.join(causes)}",
        "; ".join(dict.fromkeys(causes.values())),
        topic=ctx.topic,
        consumers=tuple(sorted(stale, key=java_key)),
        queues=tuple(sorted(queues, key=queue_sort_key)),
    )
