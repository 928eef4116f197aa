"""5.x broker-side assignment: BROKER_REBALANCE / POP_MODE (who balances whom),
BROKER_STRATEGY_UNKNOWN, POP_SHARE_ALL, SERVER_LOAD_BALANCER_OFF, STATIC_TOPIC_BROKER_BALANCED,
BROKERS_DISAGREE and
MIXED_REBALANCE.

*Expected* for a client that lets the broker assign is what the brokers'
``QueryAssignmentProcessor`` gives it (:mod:`rmqlb.diagnose.brokerside`); these rules say
what goes wrong only there, each with its numbers and a fix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rmqlb.diagnose.context import (
    GroupContext,
    Mode,
    TopicContext,
    broker_addr,
    expected_allocation,
)
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import id_text, queue_text
from rmqlb.diagnose.rules.waiting import unread_text
from rmqlb.humanize import plural
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import Rebalance, RequestMode

if TYPE_CHECKING:
    from rmqlb.diagnose.brokerside import BrokerSide


def _who(g: GroupContext, ids: Sequence[str]) -> str:
    """``a, b (reported)`` / ``c (inferred: why)``, grouped by reason."""
    why = g.balance_why or {}
    groups: dict[str, list[str]] = {}
    for cid in ids:
        groups.setdefault(why.get(cid, "reported"), []).append(cid)
    limit = g.options.max_listed
    parts = [
        f"{id_text(members, limit)} "
        + ("(reported)" if reason == "reported" else f"(inferred: {reason})")
        for reason, members in groups.items()
    ]
    return "; ".join(parts)


def check_balance(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """Say which clients the brokers balance and which balance themselves, per mode."""
    if g.mode is not Mode.CLUSTERING:
        return []
    sides = [t.broker_side for t in topics if t.broker_side is not None]
    broker_ids = list(dict.fromkeys(cid for side in sides for cid in side.clients))
    if not broker_ids:
        return []  # (none, or only 4.x brokers: the clients balance themselves)
    own = [cid for cid, b in (g.balance or {}).items() if b is Rebalance.CLIENT]
    modes = []
    for side in sides:
        texts = sorted(
            {
                f"{b.mode.mode.value}"
                + (
                    f" popShareQueueNum={b.mode.pop_share_queue_num}"
                    if b.mode.mode is RequestMode.POP
                    else ""
                )
                + ("" if b.mode_read else " (assumed: the broker default)")
                for b in side.brokers
            }
        )
        modes.append(f"{side.topic} {'/'.join(texts)}")
    pop = any(s.pop for s in sides)
    message = (
        f"the brokers assign the queues of {plural(len(broker_ids), 'consumer')} of {g.name} "
        f"(QUERY_ASSIGNMENT): {_who(g, broker_ids)}"
        + (f"; balancing themselves: {_who(g, own)}" if own else "")
        + (f"; request modes: {', '.join(modes)}" if modes else "")
        + ". Expected is what each broker's QueryAssignmentProcessor gives them, from its "
        "own consumer list and route"
    )
    return [
        Finding(
            Code.POP_MODE if pop else Code.BROKER_REBALANCE,
            Severity.info,
            g.name,
            message,
            "nothing to fix here: this says who balances the group"
            + ("; under POP several clients popping one queue is normal" if pop else "")
            + ", and the brokers assign only by AVG or AVG_BY_CIRCLE",
            consumers=tuple(broker_ids),
        )
    ]


def check_broker_topic(ctx: TopicContext) -> list[Finding]:
    """The findings of one topic some clients let the brokers assign or a Proxy serves."""
    side = ctx.broker_side
    if ctx.g.mode is not Mode.CLUSTERING:
        return []
    if side is None:
        return _proxy_mixed(ctx)
    return [
        *_unknown_strategy(ctx, side),
        *_pop_share_all(ctx, side),
        *_balancer_off(ctx, side),
        *_static_topic(ctx, side),
        *_disagree(ctx, side),
        *_mixed(ctx, side),
        *_proxy_mixed(ctx),
    ]


def _unassigned_queues(ctx: TopicContext) -> list[MessageQueue]:
    """The queues of the topic nobody is expected to hold."""
    expected = ctx.expected or {}
    covered = {q for qs in expected.values() for q in qs}
    return [q for q in ctx.mq_all if q not in covered]


def _unknown_strategy(ctx: TopicContext, side: BrokerSide) -> list[Finding]:
    # (loaded with the broker side: a capture without one never gets here)
    from rmqlb.allocate.broker import BROKER_STRATEGY_NAMES  # noqa: PLC0415

    names = {cid: side.names.get(cid) for cid in side.clients}
    # (serverLoadBalancerEnable=false answers every queue whatever the name)
    bad = [
        cid
        for cid, name in names.items()
        if name not in BROKER_STRATEGY_NAMES and side.expected.get(cid) is None
    ]
    if not bad:
        return []
    used = sorted({names[cid] or "none reported" for cid in bad})
    known, either = " and ".join(BROKER_STRATEGY_NAMES), " or ".join(BROKER_STRATEGY_NAMES)
    nobody = _unassigned_queues(ctx)
    lag = ctx.total_lag(nobody)
    effect = (
        f"{plural(len(nobody), 'queue')} of {ctx.topic} ({queue_text(nobody, 4)}"
        + (f", {lag:,} messages waiting" if ctx.lag is not None else "")
        + ") consumed by nobody"
        if nobody
        else f"no queue of {ctx.topic} is lost, since other clients hold them"
    )
    return [
        Finding(
            Code.BROKER_STRATEGY_UNKNOWN,
            Severity.error if nobody and lag else Severity.warning,
            ctx.g.name,
            f"{id_text(bad, ctx.g.options.max_listed)} of {ctx.g.name} let the broker assign "
            f"their queues of {ctx.topic} but run {', '.join(used)}, which the broker's "
            f"QueryAssignmentProcessor does not know (only {known}): it answers without an "
            f"assignment, so they keep what they had, or nothing: {effect}",
            f"run {either} on those clients (setAllocateMessageQueueStrategy(new "
            "AllocateMessageQueueAveragely())), or let them balance themselves with their "
            "strategy (setClientRebalance(true))",
            topic=ctx.topic,
            consumers=tuple(bad),
            queues=tuple(nobody),
        )
    ]


def _pop_share_all(ctx: TopicContext, side: BrokerSide) -> list[Finding]:
    out: list[Finding] = []
    for b in side.brokers:
        mode = b.mode
        n = len(b.client_ids)
        if mode.mode is not RequestMode.POP or n < 2:  # one client pops all, whatever the share
            continue
        share = mode.pop_share_queue_num
        if not (share <= 0 or share >= n - 1):
            continue
        queues = [q for q in ctx.mq_all if q.broker_name == b.broker]
        why = "<= 0" if share <= 0 else f">= {n} clients - 1"
        source = "set for the group" if b.mode_read and share != -1 else "the broker default"
        shares = "of 1" if n == 3 else f"between 1 and {n - 2}"
        better = (
            f"set a share {shares} (mqadmin setConsumeMode -t {ctx.topic} "
            f"-g {ctx.g.name} -m POP -q 1) to give each client its own queues plus the shares "
            "of the next ones"
            if n >= 3
            else f"with {n} clients every share has each client pop every queue (each "
            "message still goes to one of them), POP's normal way: nothing to change unless a "
            f"queue's messages should stay with one client (order); then consume by PULL "
            f"(mqadmin setConsumeMode -t {ctx.topic} -g {ctx.g.name} -m PULL), or run 3 "
            "clients or more with a share of 1"
        )
        out.append(
            Finding(
                Code.POP_SHARE_ALL,
                Severity.info,
                ctx.g.name,
                f"on {b.broker}, {ctx.topic} is served to {ctx.g.name} by POP with "
                f"popShareQueueNum={share} ({source}; {why}): each of the "
                f"{plural(n, 'client')} the broker lists pops every one of its "
                f"{plural(len(queues), 'queue')} (queue id -1), so the {n * len(queues)} "
                "client-queue pairs all poll, messages of one queue go to any client in any "
                "order, and no client owns a queue",
                better,
                topic=ctx.topic,
                consumers=tuple(dict.fromkeys(b.client_ids)),
                queues=tuple(queues),
            )
        )
    return out


def _static_topic(ctx: TopicContext, side: BrokerSide) -> list[Finding]:
    """STATIC_TOPIC_BROKER_BALANCED: the brokers assign a static topic by PULL.

    A broker assigns from the topic's route without its logical mapping
    (``TopicRouteInfoManager.updateSubscribeInfoTable``, 5.0 and 5.1): it answers broker
    queues, and a 5.x client cannot compute an offset for a broker queue of a static topic
    (its log: "compute offset failed"), so it holds none of them and the logical queues go
    unread. (By POP the brokers serve what they pop: not seen here.)
    """
    route = ctx.route
    pulled = [b.broker for b in side.brokers if b.mode.mode is RequestMode.PULL]
    if route is None or not route.queue_mappings or not pulled or not side.clients:
        return []
    g = ctx.g
    clients = side.clients
    holdings = ctx.holdings()
    held = [cid for cid in clients if holdings.get(cid)]
    nobody = [q for i, q in enumerate(ctx.mq_all) if not ctx.holders(i)]
    answers = "; ".join(
        f"{cid} {queue_text(side.expected.get(cid) or (), 3) or 'nothing'}" for cid in clients[:3]
    )
    one = len(clients) == 1
    holding = (
        f"{'it holds' if one else 'they hold'} nothing of {ctx.topic}"
        if not held
        else f"{id_text(held, 3)} {'holds' if len(held) == 1 else 'hold'} queues of it still"
    )
    message = (
        f"{', '.join(pulled)}, balancing {plural(len(clients), 'client')} of {g.name}, "
        f"{'assigns' if len(pulled) == 1 else 'assign'} them the static topic {ctx.topic} by "
        f"its broker queues (QueryAssignmentProcessor reads the route without its "
        f"{plural(len(ctx.mq_all), 'logical queue')}: {answers}), and a 5.x client cannot "
        f"compute an offset for a broker queue of a static topic: {holding}"
    )
    if nobody:
        message += "; " + unread_text(ctx, nobody)
    return [
        Finding(
            Code.STATIC_TOPIC_BROKER_BALANCED,
            Severity.error if nobody else Severity.warning,
            g.name,
            message,
            f"let {id_text(clients, g.options.max_listed)} balance "
            f"{'itself' if one else 'themselves'} (setClientRebalance(true), the 5.x "
            "client's default): they then allocate the logical queues; the brokers cannot "
            "assign a static topic",
            topic=ctx.topic,
            consumers=clients,
            queues=tuple(nobody),
        )
    ]


def _balancer_off(ctx: TopicContext, side: BrokerSide) -> list[Finding]:
    """SERVER_LOAD_BALANCER_OFF: brokers whose config has ``serverLoadBalancerEnable=false``
    answer QUERY_ASSIGNMENT with every queue of the topic's route, whoever asks; where they
    serve the topic by PULL, each client the brokers balance that asks one of them pulls
    every queue, and each message of a queue goes to every client pulling it. (By POP,
    several clients popping one queue is POP's way: nothing doubles.)"""
    off = [b for b in side.brokers if b.balancer_off and b.mode.mode is RequestMode.PULL]
    if not off or not side.clients:
        return []
    g = ctx.g
    clients = side.clients
    holdings = ctx.holdings()
    held = [holdings.get(cid, side.expected.get(cid) or ()) for cid in clients]
    pulls: Counter[MessageQueue] = Counter(q for qs in held for q in set(qs))
    doubled = [q for q in ctx.mq_all if pulls[q] > 1]
    names = [b.broker for b in off]
    one = len(off) == 1
    others = [b.broker for b in side.brokers if b not in off]
    n = len(ctx.mq_all)
    message = (
        f"{', '.join(names)} {'runs' if one else 'run'} with serverLoadBalancerEnable=false: "
        f"{'its' if one else 'their'} QueryAssignmentProcessor answers every client that asks "
        f"with all {plural(n, 'queue')} of {ctx.topic}, which {g.name} consumes by PULL there, "
        f"so each of the {plural(len(clients), 'client')} the brokers balance pulls every "
        f"queue whenever it asks {'it' if one else 'one of them'}"
        + (
            f" ({', '.join(others)} {'gives' if len(others) == 1 else 'give'} each client its "
            "share; each rebalance asks a broker of the topic picked at random)"
            if others
            else ""
        )
    )
    if len(clients) < 2:
        effect = "; with one client nothing doubles yet, but every client added pulls them all too"
    elif doubled:
        lag = ctx.total_lag(doubled)
        effect = (
            f": {plural(len(doubled), 'queue')} held by several now ({queue_text(doubled, 4)}"
            + (f", {lag:,} messages waiting" if ctx.lag is not None and lag else "")
            + "), each message of them consumed by every holder"
        )
    else:
        effect = ": no queue is held twice at the moment"
    commands = "; ".join(
        f"mqadmin updateBrokerConfig -b {broker_addr(g.snapshot, b)} "
        "-k serverLoadBalancerEnable -v true"
        for b in names
    )
    return [
        Finding(
            Code.SERVER_LOAD_BALANCER_OFF,
            Severity.error if doubled else Severity.warning,
            g.name,
            message + effect,
            f"turn it on again: {commands} (it applies at once and is written to the broker's "
            "config file; each client gets its share at its next rebalance, within 20 s); or "
            "let the clients balance themselves (setClientRebalance(true), the 5.x client's "
            "default)",
            topic=ctx.topic,
            consumers=clients,
            queues=tuple(doubled),
        )
    ]


def _disagree(ctx: TopicContext, side: BrokerSide) -> list[Finding]:
    """Brokers whose consumer lists differ, or whose reported answers differ from what
    their list and the current route give (a stale cached route)."""
    details: list[str] = []
    clients: set[str] = set()
    moving: set[MessageQueue] = set()  # queues some answer gives and another does not
    lists = {b.broker: set(b.client_ids) for b in side.brokers if b.list_read}
    if len({frozenset(v) for v in lists.values()}) > 1:
        union = set().union(*lists.values())
        for broker, ids in lists.items():
            missing = sorted(union - ids)
            if missing:
                details.append(f"{broker} does not list {id_text(missing, 4)}")
                clients.update(missing)
    for b in side.brokers:
        for cid, got in b.reported.items():
            want = b.answers.get(cid)
            if cid in b.answers and (None if got is None else set(got)) != (
                None if want is None else set(want)
            ):
                details.append(
                    f"{b.broker} answered {cid} {_queues(got)} where its list and the current "
                    f"route give {_queues(want)} (its cached route is older: brokers refresh "
                    "it every loadBalancePollNameServerInterval, 30 s by default)"
                )
                clients.add(cid)
                moving.update(set(got or ()).symmetric_difference(want or ()))
    differing = [
        cid
        for cid in side.clients
        if len(
            {
                None if b.answers[cid] is None else frozenset(b.answers[cid] or ())
                for b in side.brokers
            }
        )
        > 1
    ]
    if differing and not details:
        details.append("their answers differ")
    if not details:
        return []
    clients.update(differing)
    for cid in differing:
        per = "; ".join(f"{b.broker}: {_queues(b.answers[cid])}" for b in side.brokers)
        details.append(f"{cid} gets {per}")
        answers = [frozenset(b.answers[cid] or ()) for b in side.brokers]
        moving.update(frozenset().union(*answers) - answers[0].intersection(*answers[1:]))
    return [
        Finding(
            Code.BROKERS_DISAGREE,
            Severity.warning,
            ctx.g.name,
            f"the brokers of {ctx.topic} assign {ctx.g.name} from different inputs: "
            + "; ".join(details[: ctx.g.options.max_listed])
            + ". Each rebalance asks a broker picked at random, so those clients' queues "
            "flap between the answers",
            "usually transient: the brokers converge within a heartbeat (consumer lists) or "
            "loadBalancePollNameServerInterval (routes); if it persists, check that every "
            "client reaches every broker of the topic",
            topic=ctx.topic,
            consumers=tuple(sorted(clients)),
            queues=tuple(sorted(moving, key=queue_sort_key)),
        )
    ]


def _queues(queues: Sequence[MessageQueue] | None) -> str:
    if queues is None:
        return "no assignment"
    if not queues:
        return "nothing"
    return queue_text(sorted(queues, key=queue_sort_key), 4)


#: What a queue pulled by one client and popped by others does, and what ends it.
PULLED_AND_POPPED = "pulled by a client and popped by others"


def _proxy_mixed(ctx: TopicContext) -> list[Finding]:
    """MIXED_REBALANCE of clients that pull their share of the topic (balancing themselves,
    or assigned it by a broker in PULL mode) and gRPC clients a Proxy serves, which pop any
    queue of it: each message of a pulled queue can reach both."""
    g = ctx.g
    subscribing = [cid for cid in dict.fromkeys(g.cid_all) if cid in ctx.subscribers]
    proxied = [cid for cid in subscribing if g.balanced_by(cid) is Rebalance.PROXY]
    pullers = [cid for cid in subscribing if ctx.pulls(cid)]
    if not proxied or not pullers:
        return []
    routed = set(ctx.mq_all)
    holdings, expected = ctx.holdings(), ctx.expected or {}
    pulled = {q for cid in pullers for q in holdings.get(cid, expected.get(cid, ())) if q in routed}
    queues = sorted(pulled, key=queue_sort_key)
    effect = (
        f"{plural(len(queues), 'queue')} {PULLED_AND_POPPED} ({queue_text(queues, 4)})"
        if queues
        else "no queue is pulled at the moment"
    )
    return [
        Finding(
            Code.MIXED_REBALANCE,
            Severity.warning if queues else Severity.info,
            g.name,
            f"{g.name} mixes clients that pull their share of {ctx.topic} "
            f"({id_text(pullers, 4)}) with gRPC clients a Proxy serves "
            f"({id_text(proxied, 4)}: they pop any queue of it): {effect}",
            "a queue one client pulls while others pop it reaches both: consume the group "
            "through one kind of client (all gRPC through the Proxy, or all remoting push "
            "consumers), or give the gRPC clients a group of their own",
            topic=ctx.topic,
            consumers=(*pullers, *proxied),
            queues=tuple(queues),
        )
    ]


def _mixed(ctx: TopicContext, side: BrokerSide) -> list[Finding]:
    g = ctx.g
    own = [  # a BROADCASTING client reads every queue: MESSAGE_MODEL_INCONSISTENT's
        cid
        for cid in dict.fromkeys(g.cid_all)
        if g.balanced_by(cid) is Rebalance.CLIENT
        and cid in ctx.subscribers
        and cid not in g.broadcasters
    ]
    if not own or ctx.expected is None:
        return []
    # each client-side client takes its own strategy's share of every client of the group;
    # the mix's doing is what differs from every client doing so (clients running different
    # strategies double and orphan queues without any mix: STRATEGY_INCONSISTENT's)
    cid_all = ctx.allocated_cid_all
    alone: dict[str, list[MessageQueue]] = {}
    for c in g.consumers:
        if (c.client_id in own or c.client_id in side.clients) and c.client_id not in alone:
            spec = g.effective(c.strategy) if c.strategy is not None else g.strategy
            got, _, _ = expected_allocation(spec, ctx.mq_all, cid_all)
            alone[c.client_id] = list((got or {}).get(c.client_id, ()))
    # what a client holds, where its running info says, is what it pulls now: its strategy's
    # share is only what it takes at its next rebalance (a list that names an id twice for a
    # moment gives it another share until then)
    holdings = ctx.holdings()
    mixed = {cid: list(holdings.get(cid, alone.get(cid, []))) for cid in own}
    mixed |= {cid: list(side.expected.get(cid) or ()) for cid in side.clients}
    counts: Counter[MessageQueue] = Counter(q for qs in mixed.values() for q in qs)
    apart: Counter[MessageQueue] = Counter(q for qs in alone.values() for q in qs)
    if side.pop:  # several clients pop a queue: doubled where one pulls what others pop
        popped = {q for cid in side.clients for q in mixed[cid]}
        pulled = {q for cid in own for q in mixed[cid]}
        doubled = [q for q in ctx.mq_all if q in popped and q in pulled and apart[q] <= 1]
    else:
        doubled = [q for q in ctx.mq_all if counts[q] > 1 >= apart[q]]
    orphaned = [q for q in ctx.mq_all if counts[q] == 0 < apart[q]]
    effects = []
    if doubled:
        given = PULLED_AND_POPPED if side.pop else "given twice"
        effects.append(f"{plural(len(doubled), 'queue')} {given} ({queue_text(doubled, 4)})")
    if orphaned:
        lag = ctx.total_lag(orphaned)
        effects.append(
            f"{plural(len(orphaned), 'queue')} given to nobody ({queue_text(orphaned, 4)}"
            + (f", {lag:,} messages" if ctx.lag is not None else "")
            + ")"
        )
    if not effects and ctx.retry:
        return []
    effect = "; ".join(effects) or "the mix itself doubles or loses no queue at the moment"
    return [
        Finding(
            Code.MIXED_REBALANCE,
            Severity.warning if effects else Severity.info,
            g.name,
            f"{g.name} mixes clients that balance themselves ({id_text(own, 4)}: their "
            f"strategy over every client of the group) with clients the broker balances "
            f"({id_text(side.clients, 4)}: QueryAssignmentProcessor) on {ctx.topic}: {effect}",
            (
                "a queue one client pulls while others pop it reaches both: let the brokers "
                "balance every client of the group (5.x clients with setClientRebalance(false); "
                "a client older than 5.0 cannot be), or consume the topic by PULL again "
                f"(mqadmin setConsumeMode -t {ctx.topic} -g {g.name} -m PULL)"
                if side.pop and doubled
                else "give every client of the group the same setClientRebalance setting (and "
                "the same strategy), then restart them one at a time"
            ),
            topic=ctx.topic,
            consumers=(*own, *side.clients),
            queues=tuple(sorted(doubled + orphaned, key=queue_sort_key)),
        )
    ]
