"""Rules on what clients actually hold: DUPLICATE_ASSIGNMENT, ASSIGNMENT_MISMATCH and
UNCONSUMED_QUEUE for queues nobody holds although a subscriber should.

Only CLUSTERING groups; a consumer whose assignment is unknown (``assigned`` absent) is
never compared, and "held by nobody" needs every consumer's assignment.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import is_

from rmqlb.diagnose.context import Mode, TopicContext
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._listed import LIST_ONCE
from rmqlb.diagnose.rules._text import id_text, queue_text
from rmqlb.diagnose.rules.waiting import waiting_text
from rmqlb.humanize import plural
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.strategy import Config

REBALANCE_HINT = (
    "clients rebalance every 20 s and on every membership change: re-run in a minute; if it "
    "persists, the clients disagree on the strategy, the route or the consumer list"
)


def _holder_text(who: tuple[str, ...]) -> str:
    """``a and b``; an id on several connections as ``a (2 connections)``."""
    counts: dict[str, int] = {}
    for cid in who:
        counts[cid] = counts.get(cid, 0) + 1
    names = [f"{cid} ({n} connections)" if n > 1 else cid for cid, n in counts.items()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _duplicates(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    doubled_at: dict[MessageQueue, list[str]] = {
        ctx.mq_all[i]: ctx.holders(i) for i in sorted(ctx.more_holders)
    }
    doubled_at.update((mq, who) for mq, who in ctx.extra.items() if len(who) > 1)
    if ctx.shared:  # several clients popping a queue is POP's way: only pulling and popping
        doubled_at = {mq: who for mq, who in doubled_at.items() if ctx.doubled(who)}
    doubled = sorted(doubled_at, key=queue_sort_key)
    if not doubled:
        return []
    by_holders: dict[tuple[str, ...], list[MessageQueue]] = {}
    for mq in doubled:
        by_holders.setdefault(tuple(doubled_at[mq]), []).append(mq)
    parts = [
        f"{queue_text(queues, 4)} by {_holder_text(who)}"
        for who, queues in list(by_holders.items())[:3]
    ]
    if len(by_holders) > 3:
        parts.append(f"and {len(by_holders) - 3} more sets")
    shown = "; ".join(parts)
    involved = list(dict.fromkeys(c for mq in doubled for c in doubled_at[mq]))
    same_id = any(len(set(doubled_at[mq])) < len(doubled_at[mq]) for mq in doubled)
    # pull consumers that assign() what they hold of the topic: no rebalance moves that
    assigners = [cid for cid in involved if cid in g.pullers and cid not in ctx.subscribers]
    orderly = any(c.consume_orderly for c in g.consumers)
    if same_id:
        hint = f"one client id is on several connections: {LIST_ONCE}"
    elif assigners:
        mixed = any(cid in ctx.subscribers for cid in involved)
        hint = _assigned_twice_hint(assigners, ctx.topic, doubled, mixed=mixed)
    elif isinstance(g.strategy, Config) and _lists_overlap(ctx, doubled_at):
        hint = (
            f"the holders' CONFIG lists overlap on {queue_text(doubled, 4)}, so this lasts: "
            "keep each queue in exactly one client's list"
        )
    else:
        hint = (
            "duplicates after a membership or route change clear at the next rebalance "
            "(20 s); lasting ones mean the holders run different strategies or see a "
            "different route or consumer list (see STRATEGY_INCONSISTENT and "
            "SUBSCRIPTION_INCONSISTENT)"
        )
    effect = (
        "orderly consumers lock queues on the broker, so only one of them makes progress"
        if orderly
        else "their messages are consumed more than once" + ("" if assigners else " meanwhile")
    )
    if all(len(set(doubled_at[mq])) == 1 for mq in doubled):  # only ids on several connections
        effect = f"if those connections are separate processes, {effect}"
    return [
        Finding(
            Code.DUPLICATE_ASSIGNMENT,
            Severity.error,
            g.name,
            f"{plural(len(doubled), 'queue')} of {ctx.topic} "
            f"{'is' if len(doubled) == 1 else 'are'} held by more than one consumer "
            f"({shown}): {effect}",
            hint,
            topic=ctx.topic,
            consumers=tuple(involved),
            queues=tuple(doubled),
        )
    ]


def _assigned_twice_hint(
    assigners: list[str], topic: str, doubled: list[MessageQueue], *, mixed: bool
) -> str:
    """The fix of queues held twice because pull consumers assign() them, which no
    rebalance ends; ``mixed``: a subscriber of ``topic`` holds them too."""
    one = len(assigners) == 1
    who = id_text(assigners, 4)
    queues = queue_text(doubled, 4)
    if mixed:
        return (
            f"{who} {'assign()s' if one else 'assign()'} {queues} while the subscribers of "
            f"{topic} allocate {'it' if len(doubled) == 1 else 'them'} among themselves, so "
            f"this lasts: have the application assign() only queues no subscriber reads, or "
            f"move {who} into a group of {'its' if one else 'their'} own"
        )
    return (
        f"{who} assign() {queues} each, so this lasts (no rebalance moves a queue a pull "
        "consumer assign()s): have the applications assign() each queue to one consumer of "
        "the group only"
    )


def _lists_overlap(ctx: TopicContext, doubled_at: dict[MessageQueue, list[str]]) -> bool:
    """Whether each doubled queue is in the CONFIG list of every one of its holders."""
    lists = {cid: set(qs) for cid, qs in (ctx.expected or {}).items()}
    return all(mq in lists.get(cid, ()) for mq, who in doubled_at.items() for cid in who)


def _mismatches(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    expected = ctx.expected
    if expected is None:
        return []
    differing: list[str] = []
    details: list[str] = []
    queues: set[MessageQueue] = set()
    compared = 0
    for c, held, exact in zip(g.consumers, ctx.actual, ctx.exact(), strict=True):
        cid = c.client_id
        if held is None or (cid in g.pullers and cid not in ctx.subscribers):
            continue  # unknown, or a pull consumer's own choice (assign())
        compared += 1
        want = expected.get(cid, []) if cid in ctx.subscribers else []
        if cid in ctx.subscribers and exact:
            continue
        have_set, want_set = set(held), set(want)
        extra, missing = have_set - want_set, want_set - have_set
        if not extra and not missing:
            continue
        differing.append(cid)
        queues |= extra | missing
        if len(details) < 3:
            parts = [f"holds {len(held)}, expected {len(want)}"]
            if extra:
                parts.append(f"+{queue_text(extra, 3)}")
            if missing:
                parts.append(f"-{queue_text(missing, 3)}")
            details.append(f"{cid} {' '.join(parts)}")
    if not differing:
        return []
    more = f"; and {len(differing) - len(details)} more" if len(differing) > len(details) else ""
    return [
        Finding(
            Code.ASSIGNMENT_MISMATCH,
            Severity.warning,
            g.name,
            f"{len(differing)} of {plural(compared, 'consumer')} of {ctx.topic} "
            f"{'holds' if len(differing) == 1 else 'hold'} other queues than "
            f"{g.strategy_label} predicts ({'; '.join(details)}{more})"
            f"{g.assumption}",
            REBALANCE_HINT,
            topic=ctx.topic,
            consumers=tuple(dict.fromkeys(differing)),
            queues=tuple(sorted(queues, key=queue_sort_key)),
        )
    ]


def _held_by_nobody(ctx: TopicContext) -> list[Finding]:
    g = ctx.g
    if not ctx.actual or not ctx.actual_known:
        return []
    expected_known = ctx.expected is not None
    subscribers = ctx.subscribers
    orphans: list[MessageQueue] = []
    owners: list[str] = []
    mq_all, owner, holder = ctx.mq_all, ctx.owner, ctx.holder
    # only the positions nobody holds, found in C
    for i in compress(range(len(holder)), map(is_, holder, repeat(None))):
        cid = owner[i]
        # queues the strategy gives to a non-subscriber or to nobody are reported by the
        # allocation rules already
        if not expected_known or cid in subscribers:
            orphans.append(mq_all[i])
            if cid is not None:
                owners.append(cid)
    if not orphans:
        return []
    owners = list(dict.fromkeys(owners))
    who = f" (expected: {id_text(owners, g.options.max_listed)})" if owners else ""
    return [
        Finding(
            Code.UNCONSUMED_QUEUE,
            Severity.error,
            g.name,
            f"{len(orphans)} of {plural(len(ctx.mq_all), 'queue')} of {ctx.topic} "
            f"{'is' if len(orphans) == 1 else 'are'} held by no consumer right now{who}: "
            f"{queue_text(orphans, g.options.max_listed)}"
            f"{waiting_text(ctx, orphans)}",
            "if a consumer just joined or left, wait one rebalance (20 s) and look again; if "
            "it persists, the consumers that should hold them see another route or consumer "
            "list: check their logs for rebalance errors and their connections to every broker",
            topic=ctx.topic,
            consumers=tuple(owners),
            queues=tuple(orphans),
        )
    ]


def check_actual(ctx: TopicContext) -> list[Finding]:
    """Compare what the clients hold with each other and with the expected allocation."""
    if ctx.g.mode is not Mode.CLUSTERING or ctx.route is None:
        return []
    side = ctx.broker_side
    # queues nobody assign()s of a topic read only so: NO_CONSUMERS says who holds what
    skip = ctx.assigned or (side is not None and side.unassigned)
    nobody = [] if skip else _held_by_nobody(ctx)
    return [*nobody, *_duplicates(ctx), *_mismatches(ctx)]
