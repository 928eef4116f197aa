"""Rules on the expected allocation: ALLOCATION_FAILED, IDLE_CONSUMER, IMBALANCE and
UNCONSUMED_QUEUE for queues the strategy hands to a non-subscriber or to nobody.

Every number a hint of these rules proposes is proven first (:mod:`..proposals`): the
allocator runs on the changed group and must show the problem gone without adding another.
That module is imported only when a finding needs a proposal: a group without findings does
not load the search.

Worked example of the IMBALANCE hint: 16 queues, 10 consumers, one broker. AVG gives six
consumers 2 queues and four consumers 1 (ratio 2.0). Allocated again, 20 queues give each
consumer 2 and 10 give each 1; 8 consumers get 2 each and 16 get 1 each; 11..15 consumers
or 17..19 queues would still leave some with 2 and some with 1. The hint states the four
that pass, each with what the allocation showed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Literal

from rmqlb.allocate import allocate_sorted
from rmqlb.allocate.consistent_hash import HashMemo, as_hashed
from rmqlb.allocate.machine_room import broker_room, in_rooms
from rmqlb.diagnose.context import (
    Mode,
    TopicContext,
    before_5_0,
    cluster_name,
    via_proxy_remoting,
)
from rmqlb.diagnose.report import Code, Finding, Proposal, Severity
from rmqlb.diagnose.rules._listed import (
    LIST_ONCE,
    idle_by_duplicates,
    imbalance_by_duplicates,
    loads,
)
from rmqlb.diagnose.rules._text import id_text, queue_text
from rmqlb.diagnose.rules.waiting import waiting_text
from rmqlb.errors import AllocationError
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    HashCharset,
    MachineRoom,
    MachineRoomNearby,
    describe,
)

if TYPE_CHECKING:
    from rmqlb.diagnose.proposals import Population, Subject

SEARCHED = (Avg, AvgByCircle, ConsistentHash)
"""Strategies whose fixes are searched: the others balance per room or per list."""


def _grown(cid_all: tuple[str, ...], count: int) -> Population:
    """The group at ``count`` consumers: the first ones of today's, or today's plus new ids
    (only used where every consumer subscribes and ids do not change the counts)."""
    from rmqlb.diagnose.proposals import Population  # noqa: PLC0415  (see the module doc)

    if count <= len(cid_all):
        ids = cid_all[:count]
    else:
        extra = (f"~rmqlb-new-{i:06d}" for i in range(count - len(cid_all)))
        ids = tuple(sorted((*cid_all, *extra), key=java_key))
    return Population(ids, frozenset(ids))


def subject_of(ctx: TopicContext) -> Subject | None:
    """The (group, topic) as :mod:`rmqlb.diagnose.proposals` varies it; ``None`` when no
    proposal is searched (turned off, a retry topic, or a strategy it does not vary)."""
    from rmqlb.diagnose.proposals import Population, Subject  # noqa: PLC0415

    g = ctx.g
    spec = g.strategy
    if not g.options.proposals or ctx.retry or not isinstance(spec, SEARCHED):
        return None
    cid_all = tuple(g.cid_all)
    m = len(cid_all)
    current = Population(cid_all, ctx.subscribers)
    ids_free = (
        isinstance(spec, Avg | AvgByCircle)
        and len(set(cid_all)) == m
        and all(c in ctx.subscribers for c in cid_all)
    )

    def populations(span: tuple[int, int], _: int) -> list[Population]:
        return [current if k == m else _grown(cid_all, k) for k in range(span[0], span[1] + 1)]

    return Subject(
        ctx.topic,
        tuple(ctx.base),
        tuple(count for _, count in ctx.base.values()),
        spec,
        (m, m),
        g.options.max_imbalance,
        populations,
        vary_replicas=ids_free,
        counts=lambda span, _: range(span[0], span[1] + 1),
        assumed=bool(g.assumption),
        shrink=not g.offsets_unknown,
        static=ctx.logical,
    )


class _Prover:
    """The proposal search of one (group, topic): the subject built once, and CONSISTENT_HASH's
    MD5s shared by the searches of its findings."""

    def __init__(self, ctx: TopicContext) -> None:
        self.ctx = ctx
        self.subject: Subject | None = None
        self.built = False
        self.hashes = HashMemo()

    def __call__(
        self, problem: Literal["idle", "imbalance", "nobody"]
    ) -> tuple[tuple[Proposal, ...], str]:
        """The proven proposals removing ``problem`` (a :class:`~..proposals.Problem`'s
        value) and the hint stating them ("" if none)."""
        from rmqlb.diagnose.proposals import (  # noqa: PLC0415
            Problem,
            Wording,
            find_proposals,
            proposals_hint,
        )

        target = Problem(problem)
        ctx = self.ctx
        if not self.built:
            self.subject, self.built = subject_of(ctx), True
        if self.subject is None:
            return (), ""
        found = find_proposals(self.subject, target, hashes=self.hashes)
        wording = Wording(
            ctx.topic,
            ctx.g.name,
            len(ctx.base),
            ctx.g.strategy,
            target=target,
            static=ctx.logical,
            cluster=cluster_name(ctx.g.snapshot),
        )
        return found, proposals_hint(found, wording)


def _blocked_hint(g_strategy: str) -> str:
    if g_strategy == "MACHINE_ROOM":
        return (
            "pass --strategy MACHINE_ROOM:idcs=ROOM,... with the clients' rooms, or capture "
            "again when every client reports its queues: rmqlb then infers the rooms from them"
        )
    return (
        "capture again when every client reports its queues: rmqlb then infers the "
        "parameters from what they hold"
    )


def _failed(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    label = g.strategy_label
    if g.blocked is not None:
        return [
            Finding(
                Code.ALLOCATION_FAILED,
                Severity.info,
                g.name,
                f"cannot compute the expected allocation of {ctx.topic} under {label}: "
                f"{g.blocked}; only what the clients actually hold is checked",
                _blocked_hint(g.strategy.name),
                topic=ctx.topic,
            )
        ]
    if ctx.allocation_throws:
        return [
            Finding(
                Code.ALLOCATION_FAILED,
                Severity.error,
                g.name,
                f"{label} throws for {ctx.topic} in every client of {g.name} "
                f"({ctx.allocation_error}): each client logs 'allocate message queue "
                "exception' and keeps its previous queues, so joining consumers get none",
                "fix the strategy's configuration so that it covers every broker and client "
                "(for MACHINE_ROOM_NEARBY: room resolvers that know every broker name and "
                "client id); the expected column stays empty until then",
                topic=ctx.topic,
                consumers=tuple(dict.fromkeys(g.cid_all)),
            )
        ]
    return [
        Finding(
            Code.ALLOCATION_FAILED,
            Severity.info,
            g.name,
            f"cannot compute the expected allocation of {ctx.topic}: {ctx.allocation_error}; "
            "only what the clients actually hold is checked",
            "pass --strategy with the built-in strategy the custom class behaves like "
            "(for example --strategy AVG) to check the expected side too",
            topic=ctx.topic,
        )
    ]


def _idle(ctx: TopicContext, prove: _Prover) -> list[Finding]:
    g = ctx.g
    cid_all = ctx.allocated_cid_all
    subscribers = [c for c in dict.fromkeys(cid_all) if c in ctx.subscribers]
    idle = [c for c in subscribers if ctx.expected_count(c) == 0]
    if not idle:
        return []
    n, m = len(ctx.mq_all), len(cid_all)
    label = g.strategy_label
    non_subs = m - sum(1 for c in cid_all if c in ctx.subscribers)
    counted = (
        f" ({plural(non_subs, 'of them does', 'of them do')} not subscribe {ctx.topic} but "
        "still counts in cidAll)"
        if non_subs
        else ""
    )
    by_duplicates = idle == idle_by_duplicates(ctx)
    proposals, proven = ((), "") if by_duplicates else prove("idle")
    if n == 0:
        readable_brokers = ctx.route is not None and any(
            qd.readable for qd in ctx.route.queue_datas
        )
        message = (
            f"topic {ctx.topic} has no readable queue for {plural(m, 'consumer')}: all "
            f"{plural(len(idle), 'subscribing consumer is', 'subscribing consumers are')} idle"
        )
        hint = proven or (
            f"give {ctx.topic} readable queues: raise readQueueNums and writeQueueNums "
            f"(mqadmin updateTopic -t {ctx.topic} -r <queues> -w <queues>)"
            if readable_brokers or ctx.route is None or not ctx.route.queue_datas
            else f"restore read permission (perm 6) on the brokers of {ctx.topic}"
        )
    elif by_duplicates:
        message = (
            f"{len(idle)} of {plural(len(subscribers), 'consumer')} subscribing {ctx.topic} "
            f"{'gets' if len(idle) == 1 else 'get'} no queue under {label} "
            f"({id_text(idle, g.options.max_listed)}): "
            f"{plural(n, 'queue')} for {plural(m, 'entry', 'entries')} of cidAll, but only "
            f"{plural(len(set(cid_all)), 'distinct client id')}; listed once each, the "
            f"strategy gives every one of them queues{g.assumption}"
        )
        hint = f"{LIST_ONCE}: then they get queues with no change to the topic or the consumers"
    elif n < m:
        message = (
            f"topic {ctx.topic} has {plural(n, 'readable queue')} for "
            f"{plural(m, 'consumer')}{counted}: {plural(len(idle), 'consumer')} idle "
            f"under {label} ({id_text(idle, g.options.max_listed)}){g.assumption}"
        )
        hint = proven or (
            f"a consumer without a queue of its own stays idle: give {ctx.topic} at least as "
            f"many readable queues as {g.name} has consumers, or run fewer consumers"
        )
    else:
        message = (
            f"{len(idle)} of {plural(len(subscribers), 'consumer')} subscribing {ctx.topic} "
            f"{'gets' if len(idle) == 1 else 'get'} no queue under {label} although there are "
            f"{plural(n, 'readable queue')} for "
            f"{plural(m, 'consumer')} ({id_text(idle, g.options.max_listed)}){g.assumption}"
        )
        spec = g.strategy
        charset = _charset_cause(ctx, spec, idle) if isinstance(spec, ConsistentHash) else None
        if charset is not None:
            message += charset[0]
            hint = charset[1]
        elif isinstance(spec, ConsistentHash):
            hint = proven or (
                f"with {spec.virtual_node_cnt} virtual nodes per consumer the hash ring leaves "
                "them no queue: raise virtualNodeCnt or use AVG"
            )
        elif isinstance(spec, MachineRoom):
            picked = sum(in_rooms(mq.broker_name, spec.consumeridcs) for mq in ctx.mq_all)
            hint = (
                _nobody_cause(ctx)[1]
                if picked == 0
                else f"consumeridcs selects {plural(picked, 'queue')} of {ctx.topic} for "
                f"{plural(m, 'consumer')}: add queues on the brokers of those rooms, or run "
                "fewer consumers"
            )
        elif isinstance(spec, MachineRoomNearby):
            hint = (
                "their machine room has fewer queues than consumers: add queues on that "
                "room's brokers, or move consumers to rooms that have queues"
            )
        elif isinstance(spec, Config):
            hint = "give each of them queues in its CONFIG list, or stop them"
        else:
            hint = proven or f"check the strategy {label}, or switch the group to AVG"
    return [
        Finding(
            Code.IDLE_CONSUMER,
            Severity.warning,
            g.name,
            message,
            hint,
            topic=ctx.topic,
            consumers=tuple(idle),
            proposals=proposals,
        )
    ]


def _charset_cause(
    ctx: TopicContext, spec: ConsistentHash, idle: list[str]
) -> tuple[str, str] | None:
    """Where the clients hash their ring in another charset than UTF-8 and a ring hashed in
    UTF-8 gives every one of ``idle`` queues: the cause (client ids alike in that charset
    take one position) and the fix, with what UTF-8 gives (allocated)."""
    if spec.charset is HashCharset.UTF_8:
        return None
    utf8 = dataclasses.replace(spec, charset=HashCharset.UTF_8)
    cid_all = ctx.allocated_cid_all
    try:
        fixed = allocate_sorted(utf8, ctx.mq_all, cid_all)
    except AllocationError:
        return None
    if not all(fixed.get(c) for c in idle):
        return None
    alike: dict[str, list[str]] = {}
    for cid in dict.fromkeys(cid_all):
        alike.setdefault(as_hashed(cid, spec.charset), []).append(cid)
    shared = [(form, ids) for form, ids in alike.items() if len(ids) > 1 and set(ids) & set(idle)]
    cause = f"; their JVMs hash the ring in {spec.charset} ('?' for each character it lacks)"
    for form, ids in shared[:2]:
        cause += (
            f": {id_text(ids, ctx.g.options.max_listed)} all hash as {form!r}, so the ring "
            f"keeps the virtual nodes of {ids[-1]} only"
        )
    sizes = [len(fixed.get(c, ())) for c in dict.fromkeys(cid_all) if c in ctx.subscribers]
    fix = (
        f"run the consumers of {ctx.g.name} with -Dfile.encoding=UTF-8 (the default from Java "
        f"18 on) or give them ASCII instance names: hashed in UTF-8, {describe(utf8)} gives "
        f"{plural(len(sizes), 'consumer')} {_range(sizes)}"
    )
    return cause, fix


def _range(sizes: list[int]) -> str:
    """``4 to 8 queues``, or ``1 queue`` when every size is one."""
    low, high = min(sizes), max(sizes)
    return plural(low, "queue") if low == high else f"{low} to {plural(high, 'queue')}"


def _imbalance(ctx: TopicContext, prove: _Prover) -> list[Finding]:
    g = ctx.g
    counts = loads(ctx, ctx.expected_count)
    if len(counts) < 2:
        return []
    hi, lo = max(counts.values()), min(counts.values())
    ratio = hi / lo
    if ratio <= g.options.max_imbalance:
        return []
    n, m = len(ctx.mq_all), len(ctx.allocated_cid_all)
    heavy = [c for c, k in counts.items() if k == hi]
    light = [c for c, k in counts.items() if k == lo]
    by_duplicates = bool(imbalance_by_duplicates(ctx))
    proposals, proven = ((), "") if by_duplicates else prove("imbalance")
    if by_duplicates:
        hint = (
            f"{LIST_ONCE}: listed once each, the strategy splits the queues evenly with no "
            "change to the topic or the consumers"
        )
    elif isinstance(g.strategy, MachineRoomNearby):
        hint = _rooms_hint(ctx, g.strategy)
    elif isinstance(g.strategy, ConsistentHash):
        hint = proven or (
            "CONSISTENT_HASH places queues by hash, so an even division does not balance it, "
            "and no virtual node, queue or consumer count within rmqlb's search does for "
            f"these client ids (virtualNodeCnt now {g.strategy.virtual_node_cnt}); AVG "
            "splits evenly"
        )
    else:
        hint = proven or (
            f"for an even split the queue count must divide evenly among the {m} consumers; "
            "no nearby queue or consumer count within rmqlb's search does without another "
            "problem"
        )
    return [
        Finding(
            Code.IMBALANCE,
            Severity.warning,
            g.name,
            f"{plural(n, 'queue')} of {ctx.topic} for {plural(m, 'consumer')} under "
            f"{g.strategy_label}: {len(heavy)} {'holds' if len(heavy) == 1 else 'hold'} "
            f"{plural(hi, 'queue')} and {len(light)} {'holds' if len(light) == 1 else 'hold'} "
            f"{plural(lo, 'queue')} (max/min {ratio:.2f} > {g.options.max_imbalance:g})"
            f"{g.assumption}",
            hint,
            topic=ctx.topic,
            consumers=tuple(heavy),
            proposals=proposals,
        )
    ]


def _rooms_hint(ctx: TopicContext, spec: MachineRoomNearby) -> str:
    """Per-room consumers and queues: MACHINE_ROOM_NEARBY balances inside each room."""
    queues: dict[str, int] = {}
    for mq in ctx.mq_all:
        room = spec.broker_rooms.resolve(mq.broker_name) or "?"
        queues[room] = queues.get(room, 0) + 1
    clients: dict[str, int] = {}
    for cid in ctx.g.cid_all:
        room = spec.consumer_rooms.resolve(cid) or "?"
        clients[room] = clients.get(room, 0) + 1
    rooms = sorted(set(queues) | set(clients), key=java_key)
    table = ", ".join(
        f"{room}: {plural(clients.get(room, 0), 'consumer')} / "
        f"{plural(queues.get(room, 0), 'queue')}"
        for room in rooms
    )
    empty = [room for room in rooms if queues.get(room) and not clients.get(room)]
    spread = (
        f"; the queues of {', '.join(empty)} (no consumer there) are shared by all consumers"
        if empty
        else ""
    )
    return (
        f"MACHINE_ROOM_NEARBY balances inside each room ({table}){spread}: make each room's "
        "queue count a multiple of its consumer count, or place consumers where the queues are"
    )


def _nobody_cause(ctx: TopicContext) -> tuple[str, str]:
    g = ctx.g
    spec = g.strategy
    if len(set(g.cid_all)) < len(g.cid_all):
        return (
            "a duplicated client id takes the slice of its first index twice and the slice "
            "of its second index goes to nobody",
            LIST_ONCE,
        )
    if isinstance(spec, MachineRoom) and all(
        broker_room(mq.broker_name) is None for mq in ctx.mq_all
    ):
        return (
            "MACHINE_ROOM takes only queues of brokers named <room>@<name>, and no broker of "
            f"{ctx.topic} is",
            "name the brokers <room>@<name> (brokerName), or switch the group to a strategy "
            "that needs no rooms, such as AVG",
        )
    if isinstance(spec, MachineRoom):
        rooms = ", ".join(sorted(spec.consumeridcs)) or "none"
        return (
            f"their brokers are not named <room>@<name> with a room in consumeridcs ({rooms})",
            "add the brokers' rooms to consumeridcs, or consume them from another group",
        )
    if isinstance(spec, ConsistentHash) and spec.virtual_node_cnt == 0:
        return (
            "the hash ring is empty (virtualNodeCnt 0)",
            "set virtualNodeCnt above 0 (Java's default is 10)",
        )
    if isinstance(spec, Config):
        return (
            "they are in no client's CONFIG list",
            "list every queue in exactly one client's configuration",
        )
    if ctx.route is not None and ctx.route.queue_mappings:
        why, fixes = [], []
        if before_5_0(g, ctx.topic):
            why.append("a client before 5.0 reaches only those whose ids its brokers host")
            fixes.append("upgrade the clients before 5.0 to 5.x")
        if via_proxy_remoting(g, ctx.topic):
            why.append(
                "a client connected through a Proxy's remoting port allocates the brokers' "
                "queues (the Proxy's routes carry no logical queue) and reaches only those "
                "whose ids its brokers host"
            )
            fixes.append("connect the clients to the NameServer, not to a Proxy")
        if ctx.broker_side is not None:
            why.append("the brokers assign broker queues, which a 5.x client cannot read")
            fixes.append("let every client balance itself")
        if why:
            return (
                "logical queues of a static topic that no client reads: " + "; ".join(why),
                ", and ".join(fixes),
            )
    return (
        f"{g.strategy_label} assigns them to no client",
        f"check the strategy {g.strategy_label}",
    )


def _unconsumed(ctx: TopicContext, prove: _Prover) -> list[Finding]:
    g = ctx.g
    out: list[Finding] = []
    total = len(ctx.mq_all)
    to_non_sub: dict[str, list[MessageQueue]] = {}
    nobody: list[MessageQueue] = []
    subscribers = ctx.subscribers
    if set(ctx.owner) <= subscribers:  # the common case, checked in C: every queue goes to
        return out  # a subscriber (None, for "nobody", is never one)
    unread: dict[str, set[MessageQueue]] = {}  # of a pull consumer's share: what it leaves
    for mq, cid in zip(ctx.mq_all, ctx.owner, strict=True):
        if cid in subscribers:
            continue
        if cid is None:
            nobody.append(mq)
            continue
        if cid in g.pullers:
            if cid not in unread:
                unread[cid] = set(ctx.unread_share(cid) or ())
            if mq not in unread[cid]:
                continue  # read by its own assign(), or unknown (QUEUES_UNREPORTED)
        to_non_sub.setdefault(cid, []).append(mq)
    limit = g.options.max_listed
    if to_non_sub:
        queues = [mq for qs in to_non_sub.values() for mq in qs]
        ids = list(to_non_sub)
        out.append(
            Finding(
                Code.UNCONSUMED_QUEUE,
                Severity.error,
                g.name,
                f"{len(queues)} of {plural(total, 'queue')} of {ctx.topic} "
                f"{'falls' if len(queues) == 1 else 'fall'} under "
                f"{g.strategy_label} to {plural(len(ids), 'consumer')} that "
                f"{'does' if len(ids) == 1 else 'do'} not subscribe {ctx.topic} "
                f"({id_text(ids, limit)}): {queue_text(queues, limit)} "
                f"{'is' if len(queues) == 1 else 'are'} never consumed"
                f"{waiting_text(ctx, queues)}{g.assumption}",
                f"every client in cidAll takes a share of every topic of the group: give all "
                f"consumers of {g.name} the same subscriptions, or move "
                f"{id_text(ids, limit)} to a consumer group of their own",
                topic=ctx.topic,
                consumers=tuple(ids),
                queues=tuple(queues),
            )
        )
    if nobody and g.cid_all:
        cause, hint = _nobody_cause(ctx)
        proposals: tuple[Proposal, ...] = ()
        if len(set(g.cid_all)) == len(g.cid_all):  # a duplicated id is not a count problem
            proposals, proven = prove("nobody")
            hint = proven or hint
        out.append(
            Finding(
                Code.UNCONSUMED_QUEUE,
                Severity.error,
                g.name,
                f"{len(nobody)} of {plural(total, 'queue')} of {ctx.topic} "
                f"{'is' if len(nobody) == 1 else 'are'} allocated to "
                f"no consumer under {g.strategy_label} ({cause}): "
                f"{queue_text(nobody, limit)}{waiting_text(ctx, nobody)}{g.assumption}",
                hint,
                topic=ctx.topic,
                queues=tuple(nobody),
                proposals=proposals,
            )
        )
    return out


def check_allocation(ctx: TopicContext) -> list[Finding]:
    """Findings of the expected allocation (CLUSTERING groups with a route)."""
    if ctx.g.mode is not Mode.CLUSTERING or ctx.route is None or not ctx.g.cid_all:
        return []
    if ctx.assigned:  # read where pull consumers assign() it: no strategy allocates it
        return []
    if ctx.expected is None:
        return _failed(ctx)
    side = ctx.broker_side
    if side is not None and (
        side.pop or side.unassigned or side.disagree or len(side.clients) < len(ctx.subscribers)
    ):
        return []  # what goes wrong there is said by the broker-side rules
    out: list[Finding] = []
    prove = _Prover(ctx)
    if not ctx.retry:  # one retry queue for many consumers is normal
        out.extend(_idle(ctx, prove))
        out.extend(_imbalance(ctx, prove))
    out.extend(_unconsumed(ctx, prove))
    return out
