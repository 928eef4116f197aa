"""Causes before consequences: which finding of a group explains which other.

Several findings often share one cause: a client allocating from a stale consumer list
explains the queues held twice, its mismatch and the queue nobody holds; a rolling deploy
(STRATEGY_INCONSISTENT) explains the doubled and orphaned queues; a stalled client explains
its lag. The report keeps every finding (codes stay stable API) and links each consequence
to its cause (``Finding.caused_by`` = the cause's ``id``); renderers show consequences
indented under their cause, and a consequence's fix is its cause's fix.

A link needs a known pair (cause code -> consequence code), the same group, the same topic
(or a group-wide side), and evidence in the findings' own fields: the consequence's queues
are among the cause's, or its consumers are. When several causes fit, the most basic one
wins (:data:`PRIORITY`); pairs only point down that order, so links never form a cycle.

Worked example (the real stale client): STALE_ALLOCATION on T names ``first`` and queues
``0..3``; DUPLICATE_ASSIGNMENT on T holds ``0..3`` (inside), ASSIGNMENT_MISMATCH on T names
``first`` (inside): both become consequences of the STALE_ALLOCATION finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from rmqlb.diagnose.context import GroupContext
from rmqlb.diagnose.report import Code, Finding, tree_order
from rmqlb.diagnose.rules._listed import LIST_ONCE
from rmqlb.diagnose.rules._text import id_text, queue_text
from rmqlb.diagnose.rules.configs import disabled_brokers
from rmqlb.diagnose.rules.membership import RINGS_IN_CHARSETS
from rmqlb.model.queue import MessageQueue

Evidence = Callable[[GroupContext, Finding, Finding], bool]

#: How basic a cause is: the most basic fitting cause is chosen.
PRIORITY: dict[Code, int] = {
    Code.CONSUME_DISABLED: 10,
    Code.DUPLICATE_CLIENT_ID: 10,
    Code.MESSAGE_MODEL_INCONSISTENT: 10,
    Code.STRATEGY_INCONSISTENT: 9,
    Code.SUBSCRIPTION_INCONSISTENT: 9,
    Code.SERVER_LOAD_BALANCER_OFF: 9,
    Code.STATIC_TOPIC_OLD_CLIENT: 9,
    Code.PROXY_LIST_SPLIT: 9,
    Code.STATIC_TOPIC_BROKER_BALANCED: 9,
    Code.STALE_ALLOCATION: 8,
    Code.MIXED_REBALANCE: 8,
    Code.BROKERS_DISAGREE: 8,
    Code.CONSUMER_STALLED: 7,
    Code.DUPLICATE_ASSIGNMENT: 5,
    Code.ORDERLY_LOCK_LOST: 4,
    Code.FLOW_CONTROLLED: 3,
}


def same_topic(g: GroupContext, cause: Finding, effect: Finding) -> bool:
    """Both are about one topic (the cause shapes its whole allocation)."""
    return cause.topic is not None and cause.topic == effect.topic


def queues_within(g: GroupContext, cause: Finding, effect: Finding) -> bool:
    """Every queue of the consequence is one of the cause's."""
    return bool(effect.queues) and set(effect.queues) <= set(cause.queues)


def consumers_within(g: GroupContext, cause: Finding, effect: Finding) -> bool:
    """Every consumer of the consequence is one of the cause's."""
    return bool(effect.consumers) and set(effect.consumers) <= set(cause.consumers)


def on_disabled_brokers(g: GroupContext, cause: Finding, effect: Finding) -> bool:
    """Every queue of the consequence sits on a broker where the group may not consume."""
    disabled = set(disabled_brokers(g))
    return bool(effect.queues) and {q.broker_name for q in effect.queues} <= disabled


def cleared_by_listing_once(g: GroupContext, cause: Finding, effect: Finding) -> bool:
    """An idle consumer or an imbalance that its rule proved gone with every client id listed
    once (its hint says so), about consumers the duplicated id's finding names."""
    return effect.hint.startswith(LIST_ONCE) and consumers_within(g, cause, effect)


def idle_from_split(g: GroupContext, cause: Finding, effect: Finding) -> bool:
    """Consumers idle on a topic because non-subscribers take slots of ``cidAll``: the split
    (with queues it leaves unconsumed) names at least as many non-subscribers as are idle."""
    return (
        cause.topic is not None
        and cause.topic == effect.topic
        and bool(cause.queues)
        and 0 < len(effect.consumers) <= len(cause.consumers)
    )


#: (cause, consequence) -> the evidence that links them.
PAIRS: dict[tuple[Code, Code], Evidence] = {
    (Code.DUPLICATE_CLIENT_ID, Code.DUPLICATE_ASSIGNMENT): consumers_within,
    (Code.DUPLICATE_CLIENT_ID, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.DUPLICATE_CLIENT_ID, Code.IDLE_CONSUMER): cleared_by_listing_once,
    (Code.DUPLICATE_CLIENT_ID, Code.IMBALANCE): cleared_by_listing_once,
    (Code.SUBSCRIPTION_INCONSISTENT, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.SUBSCRIPTION_INCONSISTENT, Code.IDLE_CONSUMER): idle_from_split,
    (Code.MESSAGE_MODEL_INCONSISTENT, Code.DUPLICATE_ASSIGNMENT): queues_within,
    (Code.MESSAGE_MODEL_INCONSISTENT, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.MESSAGE_MODEL_INCONSISTENT, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.MESSAGE_MODEL_INCONSISTENT, Code.SUBSCRIPTION_INCONSISTENT): consumers_within,
    (Code.STRATEGY_INCONSISTENT, Code.DUPLICATE_ASSIGNMENT): queues_within,
    (Code.STRATEGY_INCONSISTENT, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.STRATEGY_INCONSISTENT, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.STALE_ALLOCATION, Code.DUPLICATE_ASSIGNMENT): queues_within,
    (Code.STALE_ALLOCATION, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.STALE_ALLOCATION, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.MIXED_REBALANCE, Code.DUPLICATE_ASSIGNMENT): queues_within,
    (Code.MIXED_REBALANCE, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.MIXED_REBALANCE, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.SERVER_LOAD_BALANCER_OFF, Code.DUPLICATE_ASSIGNMENT): queues_within,
    (Code.SERVER_LOAD_BALANCER_OFF, Code.BROKERS_DISAGREE): consumers_within,
    (Code.SERVER_LOAD_BALANCER_OFF, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.STATIC_TOPIC_OLD_CLIENT, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.STATIC_TOPIC_OLD_CLIENT, Code.DUPLICATE_ASSIGNMENT): queues_within,
    (Code.STATIC_TOPIC_OLD_CLIENT, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.STATIC_TOPIC_OLD_CLIENT, Code.IMBALANCE): same_topic,
    (Code.STATIC_TOPIC_OLD_CLIENT, Code.IDLE_CONSUMER): same_topic,
    (Code.PROXY_LIST_SPLIT, Code.DUPLICATE_ASSIGNMENT): queues_within,
    (Code.PROXY_LIST_SPLIT, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.PROXY_LIST_SPLIT, Code.ASSIGNMENT_MISMATCH): same_topic,
    (Code.PROXY_LIST_SPLIT, Code.STALE_ALLOCATION): same_topic,
    (Code.PROXY_LIST_SPLIT, Code.IMBALANCE): same_topic,
    (Code.PROXY_LIST_SPLIT, Code.IDLE_CONSUMER): same_topic,
    (Code.PROXY_LIST_SPLIT, Code.STATIC_TOPIC_OLD_CLIENT): same_topic,
    (Code.STATIC_TOPIC_BROKER_BALANCED, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.STATIC_TOPIC_BROKER_BALANCED, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.STATIC_TOPIC_BROKER_BALANCED, Code.BROKERS_DISAGREE): consumers_within,
    (Code.STATIC_TOPIC_BROKER_BALANCED, Code.IMBALANCE): same_topic,
    (Code.STATIC_TOPIC_BROKER_BALANCED, Code.IDLE_CONSUMER): same_topic,
    (Code.BROKERS_DISAGREE, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.BROKERS_DISAGREE, Code.DUPLICATE_ASSIGNMENT): consumers_within,
    (Code.BROKERS_DISAGREE, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.CONSUMER_STALLED, Code.LAG_SKEW): consumers_within,
    (Code.CONSUMER_STALLED, Code.FLOW_CONTROLLED): consumers_within,
    (Code.CONSUMER_STALLED, Code.CLIENT_UNREACHABLE): consumers_within,
    (Code.CONSUMER_STALLED, Code.QUEUE_STALLED): queues_within,
    (Code.CONSUME_DISABLED, Code.QUEUE_STALLED): on_disabled_brokers,
    (Code.SUBSCRIPTION_INCONSISTENT, Code.QUEUE_STALLED): queues_within,
    (Code.BROKERS_DISAGREE, Code.QUEUE_STALLED): queues_within,
    (Code.CONSUME_DISABLED, Code.LAG_SKEW): on_disabled_brokers,
    (Code.DUPLICATE_ASSIGNMENT, Code.ORDERLY_LOCK_LOST): queues_within,
    (Code.ORDERLY_LOCK_LOST, Code.UNCONSUMED_QUEUE): queues_within,
    (Code.ORDERLY_LOCK_LOST, Code.ASSIGNMENT_MISMATCH): consumers_within,
    (Code.ORDERLY_LOCK_LOST, Code.LAG_SKEW): consumers_within,
    (Code.FLOW_CONTROLLED, Code.LAG_SKEW): consumers_within,
}


def _same_scope(cause: Finding, effect: Finding) -> bool:
    return cause.topic is None or effect.topic is None or cause.topic == effect.topic


def link_causes(g: GroupContext, findings: Sequence[Finding]) -> list[int | None]:
    """For each finding of group ``g``, the position of the finding that causes it."""
    parents: list[int | None] = [None] * len(findings)
    causes = [i for i, f in enumerate(findings) if f.code in PRIORITY]
    if not causes:
        return parents
    for i, effect in enumerate(findings):
        best: int | None = None
        for j in causes:
            cause = findings[j]
            evidence = PAIRS.get((cause.code, effect.code))
            if j == i or evidence is None or not _same_scope(cause, effect):
                continue
            if not evidence(g, cause, effect):
                continue
            if best is None or PRIORITY[cause.code] > PRIORITY[findings[best].code]:
                best = j
        parents[i] = best
    return parents


def _summary(cause: Finding) -> str:
    """What the cause is, in a few words."""
    ids = id_text(cause.consumers, 3)
    one = len(cause.consumers) == 1
    match cause.code:
        case Code.STALE_ALLOCATION:
            return f"{ids} {'allocates' if one else 'allocate'} from outdated inputs"
        case Code.STRATEGY_INCONSISTENT:
            if RINGS_IN_CHARSETS in cause.message:
                return "the consumers' JVMs hash their rings in different charsets"
            return "the consumers run different strategies (a rolling deploy)"
        case Code.DUPLICATE_CLIENT_ID:
            return f"the client id {cause.consumers[0]} is on several connections"
        case Code.PROXY_LIST_SPLIT:
            return "the clients through the Proxy and the others allocate over different lists"
        case Code.MESSAGE_MODEL_INCONSISTENT:
            verb = "consumes" if one else "consume"
            return f"{ids} {verb} in BROADCASTING mode in a CLUSTERING group"
        case Code.SUBSCRIPTION_INCONSISTENT:
            return "the consumers of the group subscribe differently"
        case Code.CONSUMER_STALLED:
            return f"{ids} {'is' if one else 'are'} stalled"
        case Code.CONSUME_DISABLED:
            return "the group may not consume on some brokers (consumeEnable=false)"
        case Code.DUPLICATE_ASSIGNMENT:
            return (
                f"{queue_text(cause.queues, 4)} {'is' if len(cause.queues) == 1 else 'are'} "
                "held by two consumers and only one can lock an orderly queue"
            )
        case Code.ORDERLY_LOCK_LOST:
            return f"{ids} {'has' if one else 'have'} no live lock on {queue_text(cause.queues, 4)}"
        case Code.FLOW_CONTROLLED:
            return f"{ids} {'consumes' if one else 'consume'} slower than the producers"
        case Code.MIXED_REBALANCE:
            return "some clients balance themselves and the brokers balance the others"
        case Code.BROKERS_DISAGREE:
            return "the brokers list different consumers, or assign from different routes"
        case Code.SERVER_LOAD_BALANCER_OFF:
            return "brokers with serverLoadBalancerEnable=false give every client every queue"
        case Code.STATIC_TOPIC_OLD_CLIENT:
            return f"{ids} cannot consume the logical queues of static topic {cause.topic}"
        case Code.STATIC_TOPIC_BROKER_BALANCED:
            return f"the brokers assign {ids} broker queues of static topic {cause.topic}"
        case _:
            return cause.message


def consequence_hint(cause: Finding) -> str:
    """The fix of a consequence: its cause's, named."""
    ref = f" ({cause.id})" if cause.id else ""
    return f"caused by {cause.code.value}{ref}: {_summary(cause)}; fixing that clears this too"


def finding_id(group: str, n: int) -> str:
    """``G/F3``: the third finding of group ``G`` in report order. Group-qualified (a group
    name cannot hold ``/``), so an id means one finding in every command over one capture."""
    return f"{group}/F{n}"


SAME_FIX = "the same fix as "


def same_fix_hint(first: Finding) -> str:
    """The fix of a finding whose fix repeats an earlier one of its group: a reference."""
    return f"{SAME_FIX}{first.code.value} ({first.id})"


def same_fix_of(f: Finding) -> str | None:
    """The id whose fix ``f``'s hint refers to (:func:`same_fix_hint`), else ``None``."""
    if not f.hint.startswith(SAME_FIX) or not f.hint.endswith(")"):
        return None
    return f.hint.rpartition(" (")[2][:-1]


def arrange(
    findings: Sequence[Finding],
    parents: Sequence[int | None],
    lag: Mapping[tuple[str, MessageQueue], int] | None = None,
) -> list[Finding]:
    """``findings`` in report order (causes first, :func:`~rmqlb.diagnose.report.tree_order`,
    by severity then impact), numbered per group (:func:`finding_id`), each consequence
    naming its cause and taking its fix; a fix a finding of the same code already gave in the
    group is not repeated but referred to (one fix per cause)."""
    order = tree_order(findings, parents, lag)
    counters: dict[str, int] = {}
    ids: dict[int, str] = {}
    for i in order:
        group = findings[i].group
        counters[group] = counters.get(group, 0) + 1
        ids[i] = finding_id(group, counters[group])
    placed: dict[int, Finding] = {}
    fixes: dict[tuple[str, Code, str], Finding] = {}
    for i in order:
        parent = parents[i]
        f = replace(findings[i], id=ids[i])
        if parent is not None and parent in placed:
            cause = placed[parent]
            # the fix is the cause's: no proposal of its own (a hint states every proposal)
            f = replace(f, caused_by=cause.id, hint=consequence_hint(cause), proposals=())
        elif (f.group, f.code, f.hint) in fixes:
            f = replace(f, hint=same_fix_hint(fixes[f.group, f.code, f.hint]), proposals=())
        else:
            fixes[f.group, f.code, f.hint] = f
        placed[i] = f
    return [placed[i] for i in order]
