"""Who is in the group and how they agree: NO_CONSUMERS, DUPLICATE_CLIENT_ID,
CLIENT_UNREACHABLE, SUBSCRIPTION_INCONSISTENT, STRATEGY_INCONSISTENT, MESSAGE_MODEL_INCONSISTENT,
and BROKERS_DISAGREE for clients that balance themselves.

Two broker facts drive the wording:

- the broker keeps **one** subscription table per group, rewritten by every heartbeat: an
  expression for a topic is replaced only by one with a greater ``subVersion`` (latest wins),
  and topics missing from the heartbeat are removed (``ConsumerGroupInfo.updateSubscription``);
- ``cidAll`` lists every connection's client id, so an id shared by two processes appears
  twice and ``indexOf`` gives both the first position; so does an id whose closed connection
  a late heartbeat registered again (until the broker's expiry scan drops it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from rmqlb.allocate import allocate_sorted, validate
from rmqlb.diagnose.balance import five_x, proxy_evidence
from rmqlb.diagnose.context import (
    GroupContext,
    Mode,
    TopicContext,
    broker_counts,
    broker_lists,
    cluster_name,
    errors_about,
    is_proxy_client,
    topic_allocation,
)
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._listed import idle_by_duplicates, imbalance_by_duplicates
from rmqlb.diagnose.rules._text import id_text, queue_text
from rmqlb.diagnose.rules.waiting import waiting_text
from rmqlb.errors import InputError
from rmqlb.humanize import plural
from rmqlb.model.javaorder import SUB_ALL, filter_tags, java_key
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import (
    CHANNEL_EXPIRED_TIMEOUT_MS,
    RETRY_PREFIX,
    FilterKey,
    Group,
    MessageModel,
    Subscription,
    Tags,
    pop_retry_topic,
)
from rmqlb.model.strategy import (
    DEFAULT_VIRTUAL_NODES,
    ConsistentHash,
    HashCharset,
    Params,
    StrategySpec,
    describe,
    params_of,
    same_algorithm,
)
from rmqlb.model.system import is_system_group


def _per_topic(lags: dict[str, int], limit: int) -> str:
    """``OrderTopic (1,200), %RETRY%G (34)``, largest first."""
    ordered = sorted(lags.items(), key=lambda item: (-item[1], java_key(item[0])))
    parts = [f"{topic} ({lag:,})" for topic, lag in ordered[:limit]]
    more = f" and {len(ordered) - limit} more" if len(ordered) > limit else ""
    return ", ".join(parts) + more


def _unread(g: GroupContext) -> str:
    """``GET_CONSUME_STATS on broker-b``: where the group's offsets could not be read."""
    seen: dict[str, list[str]] = {}
    for e in g.offsets_unknown:  # the broker's name: its address is in the failure list
        requests = seen.setdefault(e.target.split(" (")[0], [])
        if e.request not in requests:
            requests.append(e.request)
    parts = [f"{', '.join(r)} on {t}" for t, r in seen.items()]
    return "; ".join(parts[:3]) + (f" and {len(parts) - 3} more" if len(parts) > 3 else "")


def _consumed_through_proxy(g: GroupContext) -> Finding:
    """PROXY_CONSUMED: no broker lists a consumer, yet the group is being consumed."""
    evidence = proxy_evidence(g.snapshot, g.group, g.now_ms)
    lag = sum(o.lag for o in g.group.offsets)
    topics = sorted({o.queue.topic for o in g.group.offsets}, key=java_key)
    source = g.snapshot.source
    asked = bool(source is not None and source.proxies)
    return Finding(
        Code.PROXY_CONSUMED,
        Severity.info,
        g.name,
        f"no broker lists a consumer of {g.name}, yet it is being consumed: "
        + "; ".join(evidence)
        + f". Its lag is {lag:,} on {plural(len(topics), 'topic')} ({', '.join(topics[:4])}). "
        "Clients connected through a 5.x Proxy (gRPC clients, which pop; on 5.1+ also "
        "remoting clients, through its remoting port) are not listed by the brokers (they "
        "answer the group is not online): their ids, addresses and queues are invisible to "
        "rmqlb" + ("" if asked else ", and no Proxy was asked"),
        "nothing to delete: the group is in use. To see its clients, ask a 5.1+ Proxy: "
        "--proxy HOST:PORT (its remoting port); follow its lag in the queue table",
    )


def _group_without_consumers(g: GroupContext) -> Finding:
    """NO_CONSUMERS for the whole group: what it leaves unconsumed, and a hint that never
    advises deleting it without saying what it still holds, nor at all when the capture is
    partial or the group shows signs of being consumed."""
    if g.offsets_unknown:
        return _partial_without_consumers(g)
    return _without_consumers(g, g.consumption_evidence())


def _without_consumers(g: GroupContext, evidence: str | None) -> Finding:
    """NO_CONSUMERS of a group the capture saw whole: what it leaves and what it holds, and
    no advice to delete it when ``evidence`` says it is being consumed."""
    lag_by_topic: dict[str, int] = {}
    waiting: list[MessageQueue] = []
    for o in g.group.offsets:
        lag = o.lag
        topic = o.queue.topic
        lag_by_topic[topic] = lag_by_topic.get(topic, 0) + lag
        if lag > 0:
            waiting.append(o.queue)
    total = sum(lag_by_topic.values())
    limit = g.options.max_listed
    delete = f"mqadmin deleteSubGroup -c {cluster_name(g.snapshot)} -g {g.name}"
    if total:
        behind = {t: n for t, n in lag_by_topic.items() if n}
        message = (
            f"group {g.name} has no online consumer: it leaves {total:,} "
            f"{'message' if total == 1 else 'messages'} unconsumed on "
            f"{plural(len(behind), 'topic')}: {_per_topic(behind, limit)}"
        )
        hint = (
            f"start the consumers of {g.name}: nobody else reads those messages. Delete the "
            f"group only if it is retired and they are not needed ({delete} removes its "
            "subscription config and its retry and DLQ topics; its committed offsets stay "
            "unless -r true)"
        )
    elif lag_by_topic:
        topics = sorted(lag_by_topic, key=java_key)
        listed = ", ".join(topics[:limit]) + (
            f" and {len(topics) - limit} more" if len(topics) > limit else ""
        )
        message = (
            f"group {g.name} has no online consumer; its committed offsets on "
            f"{plural(len(topics), 'topic')} ({listed}) are all caught up"
        )
        hint = (
            f"start the consumers of {g.name}, or, if it is retired, delete it: {delete} "
            f"(it still has committed offsets on {listed}: add -r true to remove them too)"
        )
    else:
        message = f"group {g.name} has no online consumer and no committed offsets"
        hint = (
            f"start the consumers of {g.name}, or, if it is retired, delete its subscription "
            f"config: {delete}"
        )
    source = g.snapshot.source
    if five_x(g.snapshot) and not (source is not None and source.proxies):
        # 5.0 brokers do not list a Proxy's gRPC clients: "no consumer" is not known
        message += (
            " (as far as the brokers know: clients connected through a 5.x Proxy, gRPC or "
            "remoting, are not listed by them)"
        )
        hint = (
            f"start the consumers of {g.name}, or check the 5.x Proxy for clients of it (ask "
            "a 5.1+ Proxy's remoting address); do not delete the group before that"
        )
    if evidence is not None:
        message += (
            f"; but {evidence}: its consumers just stopped, or they are clients the brokers "
            "do not list (clients connected through a 5.x Proxy)"
        )
        hint = (
            f"start the consumers of {g.name}, or look at the proxy for its clients; "
            "nothing to delete or reset: the group was in use moments ago"
        )
    return Finding(
        Code.NO_CONSUMERS,
        Severity.warning,
        g.name,
        message,
        hint,
        queues=tuple(sorted(waiting, key=queue_sort_key)),
    )


def _partial_without_consumers(g: GroupContext) -> Finding:
    """NO_CONSUMERS when some offsets of the group could not be read: what is known, what is
    not, and no advice to delete or reset anything on that data."""
    known = sum(o.lag for o in g.group.offsets)
    waiting = tuple(sorted((o.queue for o in g.group.offsets if o.lag > 0), key=queue_sort_key))
    seen = f"at least {known:,} messages wait" if known else "its lag is unknown"
    return Finding(
        Code.NO_CONSUMERS,
        Severity.warning,
        g.name,
        f"group {g.name} has no online consumer in what could be read; its offsets and lag "
        f"are unknown where the capture failed ({_unread(g)}): {seen}",
        f"capture again once every broker answers before deciding anything about "
        f"{g.name}; do not delete or reset it on this data: messages may wait where its "
        "offsets could not be read",
        queues=waiting,
    )


def check_no_consumers(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """A group without consumers (with what it leaves unconsumed); topics the group has
    offsets for (or was asked about) that nobody subscribes."""
    if not g.consumers:
        if is_system_group(g.name):  # the brokers' own (SYSTEM_GROUP): never to start or delete
            return []
        if g.mode is Mode.PROXY:
            return [_consumed_through_proxy(g)]
        return [_group_without_consumers(g)]
    subscribed = {t.topic for t in topics if not t.assigned}
    subscribed |= {s.topic for c in g.consumers for s in c.subscriptions}
    # a POP request of a topic pops the group's POP retry topic of it as well
    consumed = subscribed | {pop_retry_topic(t, g.name) for t in subscribed if g.pops(t)}
    lag_by_topic: dict[str, int] = {}
    for o in g.group.offsets:
        if o.queue.topic not in consumed:
            lag_by_topic[o.queue.topic] = lag_by_topic.get(o.queue.topic, 0) + o.lag
    out: list[Finding] = []
    candidates = sorted(lag_by_topic, key=java_key)
    if topic_filter is not None:
        candidates = [t for t in candidates if t == topic_filter]
    for topic in candidates:
        detail = f" although the group has offsets for it ({lag_by_topic[topic]:,} messages of lag)"
        if g.pullers:
            out.append(_assigned_topic(g, topic, detail))
            continue
        out.append(
            Finding(
                Code.NO_CONSUMERS,
                Severity.warning,
                g.name,
                f"nobody among the {plural(len(g.consumers), 'consumer')} of {g.name} "
                f"subscribes {topic}{detail}",
                f"if {topic} still carries messages for {g.name}, subscribe it in the group's "
                "consumers"
                + (
                    "; decide about its offsets once every broker answers (the capture is partial)"
                    if g.offsets_unknown
                    else "; otherwise remove the stale offsets or the topic"
                ),
                topic=topic,
            )
        )
    return out


def _assigned_topic(g: GroupContext, topic: str, detail: str) -> Finding:
    """NO_CONSUMERS of a topic nobody subscribes in a group of pull consumers: they may read
    it by assign(); what they hold of it where they report it, and the messages waiting in
    the queues none holds (a warning), else an info, never advice to remove its offsets."""
    limit = g.options.max_listed
    pullers = sorted(g.pullers, key=java_key)
    one = len(pullers) == 1
    held: dict[str, list[MessageQueue]] = {}
    for c in g.consumers:
        if c.client_id in g.pullers and c.assigned:
            mine = [mq for mq in c.assigned if mq.topic == topic]
            if mine:
                held.setdefault(c.client_id, []).extend(mine)
    unknown = [cid for cid in pullers if cid in g.unreported]
    holding = {mq for queues in held.values() for mq in queues}
    waiting = sorted(
        (
            o.queue
            for o in g.group.offsets
            if o.queue.topic == topic and o.queue not in holding and o.lag > 0
        ),
        key=queue_sort_key,
    )
    parts = [
        f"{'it' if one else id_text([cid], limit)} holds "
        f"{queue_text(sorted(queues, key=queue_sort_key), limit)}"
        for cid, queues in held.items()
    ]
    if unknown:
        who = "it" if one else id_text(unknown, limit)
        parts.append(f"what {who} {'holds' if len(unknown) == 1 else 'hold'} is unreported")
    lost = not unknown and waiting
    if lost:
        lag = sum(o.lag for mq in waiting if (o := g.offset(mq)) is not None)
        parts.append(
            f"nobody holds {queue_text(waiting, limit)}, where {lag:,} "
            f"{'message waits' if lag == 1 else 'messages wait'}"
        )
    kind = (
        f"{id_text(pullers, limit)} is a pull consumer, which reads the queues its application "
        "assign()s"
        if one
        else f"{len(pullers)} of them are pull consumers, which read the queues their "
        "application assign()s"
    )
    return Finding(
        Code.NO_CONSUMERS,
        Severity.warning if lost else Severity.info,
        g.name,
        f"no consumer of {g.name} subscribes {topic}{detail}, but {kind}: "
        + ("; ".join(parts) if parts else "none holds any of it"),
        f"nothing to remove: {topic}'s queues are read where the application assign()s them"
        + (
            f"; have the application assign() {queue_text(waiting, limit)} too: nobody reads the "
            "messages waiting there"
            if lost
            else ""
        ),
        topic=topic,
        consumers=tuple(pullers),
        queues=tuple(waiting) if lost else (),
    )


#: How often (s) a broker's expiry scan drops the connections whose last heartbeat is older
#: than its ``channelExpiredTimeout`` (``ClientHousekeepingService``, 4.x and 5.x).
EXPIRY_SCAN_S = 10


def expiry_s(g: GroupContext, brokers: Iterable[str]) -> float:
    """How long (s) the slowest of ``brokers`` (every broker, when none is named) keeps a
    connection without heartbeat in its consumer lists: its ``channelExpiredTimeout`` where
    its config was read (5.1+), else 120 (fixed before 5.1, the default since)."""
    infos = g.snapshot.brokers
    known = []
    for broker in list(brokers) or list(infos):
        info = infos.get(broker)
        value = info.config.channel_expired_timeout if info and info.config else None
        known.append(CHANNEL_EXPIRED_TIMEOUT_MS if value is None else value)
    return max(known, default=CHANNEL_EXPIRED_TIMEOUT_MS) / 1000


def check_duplicate_client_ids(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """A client id on several connections of a CLUSTERING group.

    The broker lists every connection, so the id takes several slots of ``cidAll``. From one
    host that is either several processes sharing the id, or connections one client closed
    that the broker still lists: a heartbeat handled after its connection closed registers
    it again, until the expiry scan drops it (:func:`expiry_s`); from several
    hosts it can only be several processes. ``consumers`` = the id, then the consumers idle or
    heaviest only because of it (:mod:`._listed`).
    """
    if g.mode is not Mode.CLUSTERING:
        return []
    counts = Counter(g.cid_all)
    if all(n < 2 for n in counts.values()):
        return []
    effect, queues, involved = _effects(g, topics)
    out: list[Finding] = []
    for cid, n in counts.items():
        if n < 2:
            continue
        first = g.cid_all.index(cid)
        later = ", ".join(str(first + k) for k in range(1, n))
        addrs = [c.client_addr for c in g.consumers if c.client_id == cid and c.client_addr]
        hosts = {addr.rpartition(":")[0] or addr for addr in addrs}
        where = f" ({', '.join(addrs)})" if addrs else ""
        per_broker = broker_counts(g.group, cid)
        who, fix, processes = _shared_or_closed(g, cid, n, len(hosts), per_broker)
        if flipping := _flipping(topics, {b for b, k in per_broker.items() if k < n}):
            who += (
                f"; a client takes cidAll from a broker of the topic at random, so on "
                f"{', '.join(flipping)} the allocations change with the broker it asks"
            )
        if effect:
            tail = effect
        elif processes is None:
            tail = (
                "; no queue is lost at the moment; if they are separate processes, each "
                "consumes the same queues"
            )
        else:
            tail = "; no queue is lost at the moment" + (
                ", but each process consumes the same queues" if processes else ""
            )
        out.append(
            Finding(
                Code.DUPLICATE_CLIENT_ID,
                Severity.error,
                g.name,
                f"client id {cid} is used by {n} connections of {g.name}{where}: {who}; where "
                f"cidAll lists it {n} times, indexOf gives it the slice of index {first} and "
                f"the slice of index {later} goes to nobody{tail}",
                fix,
                consumers=tuple(dict.fromkeys((cid, *involved))),
                queues=tuple(queues),
            )
        )
    return out


def _effects(
    g: GroupContext, topics: Sequence[TopicContext]
) -> tuple[str, list[MessageQueue], list[str]]:
    """What the repeated ids do to the group's topics: the text ("" when nothing), the queues
    going to nobody, and the consumers idle or heaviest only because of them."""
    lost: list[str] = []
    queues: list[MessageQueue] = []
    idle: list[str] = []
    uneven: list[str] = []
    involved: list[str] = []
    for ctx in topics:
        if ctx.expected is None or not ctx.mq_all:
            continue
        nobody = [mq for mq, cid in zip(ctx.mq_all, ctx.owner, strict=True) if cid is None]
        if nobody:
            lost.append(f"{ctx.topic}: {queue_text(nobody, 4)}")
            queues.extend(nobody)
        if ids := idle_by_duplicates(ctx):
            idle.append(f"{ctx.topic}: {id_text(ids, g.options.max_listed)}")
            involved.extend(ids)
        if heavy := imbalance_by_duplicates(ctx):
            uneven.append(ctx.topic)
            involved.extend(heavy)
    text = "".join(
        f"; {label}: {'; '.join(parts)}"
        for label, parts in (
            ("going to nobody", lost),
            ("idle because of it", idle),
            ("split unevenly because of it", uneven),
        )
        if parts
    )
    return (text + g.assumption if text else ""), queues, involved


def _flipping(topics: Sequence[TopicContext], fewer: set[str]) -> list[str]:
    """The topics with brokers in ``fewer`` (listing the id less often) and brokers not in it:
    their clients' cidAll depends on the broker each asks."""
    out = []
    for ctx in topics:
        brokers = {qd.broker_name for qd in ctx.route.queue_datas} if ctx.route else set()
        if brokers & fewer and brokers - fewer:
            out.append(ctx.topic)
    return out


RENAME = (
    "give every process a unique instanceName (clients >= 4.9.0 default to PID#nanoTime): an "
    "explicit setInstanceName / -Drocketmq.client.name, or PID 1 in containers sharing one IP, "
    "produces this clash; use the pod or host name"
)


def _shared_or_closed(
    g: GroupContext, cid: str, n: int, hosts: int, per_broker: dict[str, int]
) -> tuple[str, str, bool | None]:
    """Why ``cid`` is on ``n`` connections, its fix, and whether several processes share it
    (``None``: cannot tell).

    ``per_broker``: how often each broker that lists ``cid`` does. A client heartbeats to
    every broker of its topics, so processes sharing an id are listed alike by each of those
    brokers: a broker listing it more often than another keeps connections its client closed.
    Connections from several hosts are several processes.
    """
    fewest = min(per_broker.values(), default=n)
    listing = [b for b, k in per_broker.items() if k > fewest] if len(per_broker) > 1 else []
    expiry = expiry_s(g, listing or per_broker)
    closed_for = f"for {expiry:g} s after that heartbeat"
    late = f"a heartbeat handled after its connection closed registers it again, {closed_for}"
    if listing and fewest < n:
        names = ", ".join(listing)
        verb = "lists" if len(listing) == 1 else "list"
        counts = ", ".join(f"{b} {plural(k, 'time')}" for b, k in per_broker.items())
        shared = "it is one client" if fewest == 1 else f"{fewest} processes share it"
        who = (
            f"the brokers list it unequally ({counts}) and a client heartbeats to every broker "
            f"of its topics, so {shared} and {names} still {verb} connections it closed "
            f"({late})"
        )
        drop = (
            f"{names} {'drops' if len(listing) == 1 else 'drop'} the closed connections within "
            f"{expiry + EXPIRY_SCAN_S:g} s of their last heartbeat; the client closes a "
            "connection whenever a call on it times out (its log says 'close socket because of "
            f"timeout'): look at the load of {names} and the network"
        )
        fix = f"nothing to rename: {drop}" if fewest == 1 else f"{RENAME}; besides, {drop}"
        return who, fix, fewest > 1
    if hosts > 1:
        return f"{n} processes on {hosts} hosts share it", RENAME, True
    who = (
        f"either {n} processes share it, or the broker still lists connections its client "
        f"closed ({late})"
    )
    fix = (
        f"capture again in {expiry + EXPIRY_SCAN_S:g} s: if {cid} is listed once by then, "
        "those were closed connections of one client, which closes a connection whenever a "
        "call on it times out (its log says 'close socket because of timeout': look at the "
        f"broker's load and the network); if it stays, {RENAME}"
    )
    return who, fix, None


def check_unreachable(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """Consumers whose running info (actual queues) could not be read.

    Silent for hand-written or synthetic snapshots where nobody's assignment is given: the
    finding needs a live capture, or at least one consumer whose assignment is known.
    """
    if g.mode in (Mode.POP, Mode.PROXY):
        return []
    unknown = [
        c
        for c in g.consumers
        if c.assigned is None
        and c.pop_assigned is None
        and c.proxy is None  # a Proxy relays no running-info request (PROXY_CLIENTS)
        and not c.queues_unreported  # a pull consumer that never lists them (QUEUES_UNREPORTED)
        and not is_proxy_client(c)
    ]
    if not unknown:
        return []
    if not g.live and len(unknown) == len(g.consumers):
        return []
    ids = list(dict.fromkeys(c.client_id for c in unknown))
    named = {id(e) for c in unknown for e in errors_about(g.snapshot, c)}
    reasons = [f"{e.request}: {e.message}" for e in g.snapshot.errors if id(e) in named]
    why = f" ({'; '.join(dict.fromkeys(reasons))})" if reasons else ""
    return [
        Finding(
            Code.CLIENT_UNREACHABLE,
            Severity.warning,
            g.name,
            f"{len(unknown)} of {plural(len(g.consumers), 'consumer')} of {g.name} did not "
            f"report the queues {'it holds' if len(unknown) == 1 else 'they hold'}, so "
            f"{'its' if len(unknown) == 1 else 'their'} actual assignment is unknown: "
            f"{id_text(ids, g.options.max_listed)}{why}",
            "capture again with a longer --timeout (busy clients answer running-info requests "
            "slowly); check the broker can reach the client; 5.x gRPC clients never answer",
            consumers=tuple(ids),
        )
    ]


def _expression(sub: Subscription) -> str:
    return (
        sub.sub_string
        if sub.expression_type == "TAG"
        else f"{sub.expression_type} {sub.sub_string}"
    )


def _merged_tags(subs: Sequence[Subscription]) -> str | None:
    """One TAG expression letting through every tag one of ``subs`` does (``None``: one of
    them is of another type)."""
    tags: list[str] = []
    for sub in subs:
        if sub.expression_type != "TAG":
            return None
        own = filter_tags(sub.sub_string)
        if own is None:
            return SUB_ALL
        tags.extend(own)
    return " || ".join(dict.fromkeys(tags))


def _subscription_inconsistent(
    ctx: TopicContext, subs: list[tuple[str, Subscription]]
) -> Finding | None:
    """SUBSCRIPTION_INCONSISTENT for clients filtering one topic differently.

    A pull is filtered by the broker with the group's one expression for the topic, the one
    of the greatest ``subVersion`` (a push client renews it whenever a rebalance changes its
    queues); the client then drops what its own expression rejects
    (``PullAPIWrapper.processPullResult``). A POP request carries its client's own
    expression, and the broker moves the group's offset past what it skips.
    """
    g = ctx.g
    by_filter: dict[FilterKey, list[tuple[str, Subscription]]] = {}
    for cid, sub in subs:
        by_filter.setdefault(sub.filter_key(), []).append((cid, sub))
    if len(by_filter) < 2:
        return None
    kept_cid, kept, lagging = _kept_expression(g.group, ctx.topic, subs)
    kept_key = kept.filter_key()
    differ = list(dict.fromkeys(cid for cid, sub in subs if sub.filter_key() != kept_key))
    groups = "; ".join(
        f"{_expression(members[0][1])!r} ({id_text([cid for cid, _ in members], 3)})"
        for members in by_filter.values()
    )
    if any(ctx.pulls(cid) for cid, _ in subs):
        effect = (
            f"the broker keeps the latest subVersion, {_expression(kept)!r} from "
            f"{kept_cid or 'no client listed now'} "
            f"(subVersion {kept.sub_version}; a client renews its subVersion whenever its queues "
            "change, so the kept expression can change with a rebalance), and filters every pull "
            "by it: " + _pull_effect(ctx, subs, kept) + lagging
        )
    else:
        effect = (
            "a POP request carries its client's own expression, and the broker moves the "
            "group's offset past the messages it skips: a message is lost whenever a client "
            "whose expression rejects it pops its queue"
        )
    merged = _merged_tags([sub for _, sub in subs])
    suggestion = f" (for example {merged!r})" if merged else ""
    return Finding(
        Code.SUBSCRIPTION_INCONSISTENT,
        Severity.error,
        g.name,
        f"consumers of {g.name} subscribe {ctx.topic} with {len(by_filter)} different "
        f"expressions: {groups}; {effect}",
        f"use one expression for {ctx.topic} in every consumer of {g.name}{suggestion}, "
        "or put consumers that need different tags in separate groups",
        topic=ctx.topic,
        consumers=tuple(differ),
    )


def _kept_expression(
    group: Group, topic: str, subs: list[tuple[str, Subscription]]
) -> tuple[str | None, Subscription, str]:
    """The subscription the brokers keep for ``topic`` and the client it came from, with a
    note naming brokers that still keep another one.

    Read from the brokers' own tables where the capture has them (``onBrokers``
    ``subscriptions``): a client's renewed subVersion reaches a broker with its next
    heartbeat, and the one sent after a rebalance is skipped while another is in flight.
    Otherwise the greatest subVersion the clients report, which the brokers keep once it
    reached them.
    """
    tables = {
        broker: sub
        for broker, view in sorted(group.on_brokers.items())
        for sub in view.subscriptions or ()
        if sub.topic == topic
    }
    if not tables:
        latest_cid, latest = max(subs, key=lambda item: item[1].sub_version)
        return latest_cid, latest, ""
    kept = max(tables.values(), key=lambda sub: sub.sub_version)
    key = kept.filter_key()
    same = [(cid, sub) for cid, sub in subs if sub.filter_key() == key]
    exact = [cid for cid, sub in same if sub.sub_version == kept.sub_version]
    kept_cid: str | None = None
    if exact:
        kept_cid = exact[0]
    elif same:
        kept_cid = max(same, key=lambda item: item[1].sub_version)[0]
    note = "".join(
        f"; {broker} still keeps {_expression(sub)!r} (subVersion {sub.sub_version}) and "
        "filters the pulls of its queues by it until a heartbeat brings it the newer one"
        for broker, sub in tables.items()
        if sub.filter_key() != key
    )
    return kept_cid, kept, note


def _pull_effect(
    ctx: TopicContext, subs: list[tuple[str, Subscription]], kept: Subscription
) -> str:
    """What the kept expression costs the clients that pull: the messages it filters out
    although some of them subscribe them, and the clients that drop part of what it lets
    through."""
    pulling = [(cid, sub) for cid, sub in subs if ctx.pulls(cid)]
    if kept.expression_type != "TAG" or any(s.expression_type != "TAG" for _, s in pulling):
        return (
            "messages it rejects reach no consumer, and a client whose own expression rejects "
            "some of what the broker sends drops those messages"
        )
    kept_tags = kept.tags()
    tags_of = {cid: sub.tags() for cid, sub in pulling}
    parts: list[str] = []
    if kept_tags is not None:
        wanting = {c: t for c, t in tags_of.items() if t is None or t - kept_tags}
        finite = [t for t in wanting.values() if t is not None]
        if wanting:
            what = (
                "messages tagged "
                + " or ".join(map(repr, sorted(set().union(*finite) - kept_tags)))
                if len(finite) == len(wanting)
                else f"messages without a tag of {_expression(kept)!r}"
            )
            they = "subscribes" if len(wanting) == 1 else "subscribe"
            parts.append(
                f"{what} reach no consumer, not even {id_text(wanting, 3)}, which {they} them"
            )
    dropped = {
        c: _dropped_text(kept_tags, t)
        for c, t in tags_of.items()
        if t is not None and (kept_tags is None or kept_tags - t)
    }
    if dropped:
        one = len(dropped) == 1
        texts = set(dropped.values())
        sends = f"that the broker sends {'it' if one else 'them'}"
        if len(texts) == 1:
            what = f"{texts.pop()} {sends}, as {'its' if one else 'their'} own expression"
            what += " rejects them" if one else "s reject them"
        else:
            what = f"the messages their own expressions reject {sends}"
        parts.append(f"{id_text(dropped, 3)} {'drops' if one else 'drop'} {what}")
    return "; ".join(parts)


def _dropped_text(kept_tags: Tags, own: frozenset[str]) -> str:
    """The messages a client of tags ``own`` drops of those the kept expression lets through."""
    if kept_tags is None:
        return f"the messages without a tag of {' || '.join(sorted(own))!r}"
    return "the messages tagged " + " or ".join(map(repr, sorted(kept_tags - own)))


def check_subscriptions(ctx: TopicContext) -> list[Finding]:
    """Consumers that do not subscribe the topic, or subscribe it with another expression."""
    g = ctx.g
    if not g.consumers or ctx.assigned:  # nobody subscribes it: no expression to compare
        return []
    out: list[Finding] = []
    limit = g.options.max_listed
    ids = list(dict.fromkeys(g.cid_all))
    non_subs = [c for c in ids if c not in ctx.subscribers]
    if non_subs and not ctx.retry:
        given = [mq for cid in non_subs for mq in (ctx.expected or {}).get(cid, [])]
        shares = {cid: ctx.unread_share(cid) for cid in non_subs}
        lost = [mq for share in shares.values() for mq in share or ()]
        if given:
            they = "it still counts" if len(non_subs) == 1 else "they still count"
            effect = (
                f": {they} in cidAll, so the {plural(len(given), 'queue')} of "
                f"{ctx.topic} that {g.strategy_label} gives "
                f"{'it' if len(non_subs) == 1 else 'them'} ({queue_text(given, limit)})"
            )
            if len(lost) == len(given):
                effect += f" {'is' if len(lost) == 1 else 'are'} never consumed{g.assumption}"
            else:
                effect += _read_by_assign(ctx, shares, lost, limit)
        elif ctx.expected is not None:
            effect = (
                f": no queue of {ctx.topic} falls to "
                f"{'it' if len(non_subs) == 1 else 'them'} now, but cidAll counts "
                f"{'it' if len(non_subs) == 1 else 'them'}, so any change of membership can"
            )
        else:
            effect = ""
        out.append(
            Finding(
                Code.SUBSCRIPTION_INCONSISTENT,
                Severity.error,
                g.name,
                f"{len(ids) - len(non_subs)} of {plural(len(ids), 'consumer')} of {g.name} "
                f"{'subscribes' if len(ids) - len(non_subs) == 1 else 'subscribe'} "
                f"{ctx.topic} and {len(non_subs)} "
                f"{'does' if len(non_subs) == 1 else 'do'} not ({id_text(non_subs, limit)})"
                f"{effect}{_flapping(ctx)}",
                _split_fix(g.name, ctx.topic, [c for c in non_subs if c in g.pullers], limit),
                topic=ctx.topic,
                consumers=tuple(non_subs),
                queues=tuple(sorted(lost, key=queue_sort_key)),
            )
        )
    subs: list[tuple[str, Subscription]] = []
    for c in g.consumers:
        sub = c.subscription(ctx.topic)
        if sub is not None:
            subs.append((c.client_id, sub))
    finding = _subscription_inconsistent(ctx, subs)
    if finding is not None:
        out.append(finding)
    return out


def _flapping(ctx: TopicContext) -> str:
    """What the group's one subscription table, rewritten by each heartbeat, costs the push
    consumers of the topic (a pull consumer sends its subscription with each pull)."""
    if all(cid in ctx.g.pullers for cid in ctx.subscribers):
        return ""
    return (
        "; the broker keeps one subscription table per group, rewritten by each heartbeat, "
        f"so pulls of {ctx.topic} also fail on and off with 'subscription not exist'"
    )


def _read_by_assign(
    ctx: TopicContext,
    shares: Mapping[str, list[MessageQueue] | None],
    lost: list[MessageQueue],
    limit: int,
) -> str:
    """What becomes of the share of pull consumers that do not subscribe the topic: read
    where they hold it themselves (their application's assign()), unknown where their
    running info lists no queue, never consumed otherwise."""
    expected = ctx.expected or {}
    unknown = [cid for cid, share in shares.items() if share is None]
    own = {
        cid: [mq for mq in expected.get(cid, []) if mq not in share]
        for cid, share in shares.items()
        if share is not None
    }
    readers = [cid for cid, queues in own.items() if queues]
    read = [mq for queues in own.values() for mq in queues]
    parts: list[tuple[list[MessageQueue], str]] = []
    if lost:
        parts.append((lost, "never consumed"))
    if read:
        one = len(readers) == 1
        parts.append(
            (
                read,
                f"read by {id_text(readers, limit)} {'itself' if one else 'themselves'}, as "
                f"{'its' if one else 'their'} application assign()s "
                f"{'it' if len(read) == 1 else 'them'}",
            )
        )
    if unknown:
        queues = [mq for cid in unknown for mq in expected.get(cid, [])]
        parts.append(
            (
                queues,
                f"read only where {id_text(unknown, limit)} "
                f"assign(){'s' if len(unknown) == 1 else ''} {'it' if len(queues) == 1 else 'them'}"
                f", which {'its' if len(unknown) == 1 else 'their'} running info does not say",
            )
        )
    if len(parts) == 1:  # the whole share: said of the queues just listed
        queues, what = parts[0]
        return f" {'is' if len(queues) == 1 else 'are'} {what}{ctx.g.assumption}"
    texts = [
        f"{queue_text(queues, limit)} {'is' if len(queues) == 1 else 'are'} {what}"
        for queues, what in parts
    ]
    return ": " + "; ".join(texts) + ctx.g.assumption


def _split_fix(group: str, topic: str, pullers: list[str], limit: int) -> str:
    """The fix of a split subscription: one subscription for all, or a group of their own
    (for pull consumers that assign() their queues, the only fix)."""
    if pullers:
        one = len(pullers) == 1
        return (
            f"move {id_text(pullers, limit)} into a group of {'its' if one else 'their'} own: "
            f"{'it is a pull consumer' if one else 'they are pull consumers'} that "
            f"assign{'s' if one else ''} {'its' if one else 'their'} own queues, and still "
            f"{'counts' if one else 'count'} in the cidAll the subscribers of {topic} "
            f"allocate over (and {'its' if one else 'their'} heartbeats clear {group}'s "
            "subscriptions on the brokers)"
        )
    return (
        f"give every consumer of {group} the same subscriptions, or move the "
        f"consumers of {topic} into a group of their own"
    )


def _own_share(
    ctx: TopicContext, specs: list[StrategySpec]
) -> dict[str, list[MessageQueue]] | None:
    """What each subscribing client takes when it runs its own strategy (``None`` when one
    cannot be simulated: a custom class, or parameters unknown with no default to assume)."""
    g = ctx.g
    per_spec: list[dict[str, list[MessageQueue]]] = []
    for spec in specs:
        if params_of(spec) is Params.UNKNOWN and not isinstance(spec, ConsistentHash):
            return None
        try:
            validate(spec)
            per_spec.append(allocate_sorted(spec, ctx.mq_all, g.cid_all))
        except InputError:
            return None
    own: dict[str, list[MessageQueue]] = {}
    for c in g.consumers:
        if c.client_id not in ctx.subscribers or c.client_id in own:
            continue
        spec = g.strategy_of(c) or g.strategy
        index = next(i for i, s in enumerate(specs) if same_algorithm(s, spec))
        own[c.client_id] = per_spec[index].get(c.client_id, [])
    return own


def check_strategies(ctx: TopicContext) -> list[Finding]:
    """Consumers reporting different strategies (rolling deploy): simulate each client's own
    strategy and list the queues that end up doubled or orphaned."""
    g = ctx.g
    if g.mode is not Mode.CLUSTERING or ctx.route is None:
        return []
    specs: list[StrategySpec] = []
    members: list[list[str]] = []
    for c in g.consumers:
        runs = g.strategy_of(c)
        if runs is None:
            continue
        for i, spec in enumerate(specs):
            if same_algorithm(spec, runs):
                members[i].append(c.client_id)
                break
        else:
            specs.append(runs)
            members.append([c.client_id])
    if len(specs) < 2:
        return []
    if not any(same_algorithm(s, g.strategy) for s in specs):
        specs.append(g.strategy)
        members.append([])
    limit = g.options.max_listed
    used = [(spec, ids) for spec, ids in zip(specs, members, strict=True) if ids]
    listing = "; ".join(
        f"{describe(spec)} ({id_text(dict.fromkeys(ids), 3)})" for spec, ids in used
    )
    differ = [
        c.client_id
        for c in g.consumers
        if (runs := g.strategy_of(c)) is not None and not same_algorithm(runs, g.strategy)
    ]
    own = _own_share(ctx, specs) if ctx.mq_all and g.cid_all else {}
    assumed = g.assumption
    if not assumed and any(
        isinstance(s, ConsistentHash) and s.params is Params.UNKNOWN for s in specs
    ):
        assumed = (
            f" (assuming the Java default of {DEFAULT_VIRTUAL_NODES} virtual nodes for "
            "CONSISTENT_HASH: the clients do not report virtualNodeCnt)"
        )
    queues: list[MessageQueue] = []
    if own is None:
        effect = "one of them cannot be simulated, so the damage cannot be computed"
    else:
        count: dict[MessageQueue, int] = {}
        for qs in own.values():
            for mq in qs:
                count[mq] = count.get(mq, 0) + 1
        doubled = [mq for mq in ctx.mq_all if count.get(mq, 0) > 1]
        orphaned = [mq for mq in ctx.mq_all if mq not in count]
        queues = doubled + orphaned
        if queues:
            parts = []
            if doubled:
                parts.append(
                    f"{plural(len(doubled), 'queue')} doubled ({queue_text(doubled, limit)})"
                )
            if orphaned:
                parts.append(
                    f"{plural(len(orphaned), 'queue')} orphaned ({queue_text(orphaned, limit)})"
                )
            effect = f"each client taking its own share of {ctx.topic} leaves " + " and ".join(
                parts
            )
        else:
            effect = (
                f"no queue of {ctx.topic} is doubled or orphaned at the moment, but any change "
                "of membership or queue count can do it"
            )
    rings = [(spec, ids) for spec, ids in used if isinstance(spec, ConsistentHash)]
    if len(rings) == len(used) and g.client_strategies:
        message, hint = _rings_text(g, rings, effect)
    else:
        message = (
            f"consumers of {g.name} run {len(used)} strategies: {listing}; "
            f"{effect}{assumed if own else ''}"
        )
        hint = (
            f"finish the rolling deploy so every consumer of {g.name} runs the same "
            f"allocateMessageQueueStrategy ({g.strategy_label}); until then doubled queues "
            "are consumed twice and orphaned ones by nobody"
        )
    return [
        Finding(
            Code.STRATEGY_INCONSISTENT,
            Severity.error,
            g.name,
            message,
            hint,
            topic=ctx.topic,
            consumers=tuple(dict.fromkeys(differ)),
            queues=tuple(sorted(queues, key=queue_sort_key)),
        )
    ]


def check_proxy_lists(ctx: TopicContext) -> list[Finding]:
    """PROXY_LIST_SPLIT: the clients of the group that balance themselves allocate
    ``ctx.topic`` over different consumer lists (:func:`~rmqlb.diagnose.context.consumer_lists`:
    a 5.1+ Proxy answers its remoting clients with its own clients, the brokers list the
    others), so each list shares out every queue: what two lists give is read twice."""
    g = ctx.g
    if not ctx.lists or ctx.expected is None or not ctx.mq_all:
        return []
    subscribers = ctx.subscribers
    sides = [
        (
            each,
            [
                cid
                for cid in dict.fromkeys(each.cid_all)
                if cid in each.takers and cid in subscribers
            ],
        )
        for each in ctx.lists
    ]
    sides = [(each, ids) for each, ids in sides if ids]
    if len(sides) < 2:
        return []
    taken = Counter(mq for cid, qs in ctx.expected.items() if cid in subscribers for mq in set(qs))
    doubled = [mq for mq in ctx.mq_all if taken[mq] > 1]
    orphaned = [mq for mq in ctx.mq_all if not taken[mq]]
    if not doubled and not orphaned:
        return []
    limit = g.options.max_listed
    n = len(ctx.mq_all)
    parts = []
    for each, ids in sides:
        source = "the brokers' list" if each.proxy is None else f"the Proxy {each.proxy}'s"
        parts.append(f"{id_text(ids, limit)} over {source} ({plural(len(each.cid_all), 'client')})")
    effect = []
    if doubled:
        effect.append(
            f"{len(doubled)} of {n} queues {'is' if len(doubled) == 1 else 'are'} allocated "
            f"twice ({queue_text(doubled, limit)}): their messages are consumed twice"
        )
    if orphaned:
        effect.append(f"{len(orphaned)} of {n} by nobody ({queue_text(orphaned, limit)})")
    proxied = [cid for each, ids in sides if each.proxy is not None for cid in ids]
    others = sides[0][1] if sides[0][0].proxy is None else []
    proxies = list(dict.fromkeys(each.proxy for each, _ in sides if each.proxy))
    why = (
        "A 5.1+ Proxy answers the clients connected to its remoting port with its own clients "
        "only, and the brokers list only the clients connected to them"
        if others
        else "Each 5.1+ Proxy answers the clients connected to its remoting port with its own "
        "clients only"
    )
    if others:
        fix = (
            f"connect every consumer of {g.name} the same way: either "
            f"{id_text(proxied, limit)} to the NameServer, like the "
            f"{plural(len(others), 'other')}, or {'that one' if len(others) == 1 else 'those'} "
            f"({id_text(others, limit)}) through the Proxy {', '.join(proxies)}; or move the "
            "Proxy's clients into a group of their own"
        )
    else:
        fix = (
            f"connect every consumer of {g.name} to one Proxy (now {', '.join(proxies)}), or "
            "all of them to the NameServer; or give each Proxy's clients a group of their own"
        )
    return [
        Finding(
            Code.PROXY_LIST_SPLIT,
            Severity.error,
            g.name,
            f"the consumers of {g.name} that balance themselves allocate {ctx.topic} over "
            f"{len(sides)} consumer lists: {'; '.join(parts)}. {why}, so each list shares out "
            f"every queue of {ctx.topic}: {'; '.join(effect)}",
            f"{fix}. Until then each queue {'both' if len(sides) == 2 else 'two of the'} "
            "lists give is consumed twice",
            topic=ctx.topic,
            consumers=tuple(proxied),
            queues=tuple(doubled + orphaned),
        )
    ]


RINGS_IN_CHARSETS = "hashing their rings in"
"""What STRATEGY_INCONSISTENT says of clients whose JVMs hash in different charsets."""


def _rings_text(
    g: GroupContext, rings: Sequence[tuple[ConsistentHash, list[str]]], effect: str
) -> tuple[str, str]:
    """STRATEGY_INCONSISTENT's message and fix for CONSISTENT_HASH clients inferred to build
    different rings: other virtual node counts, or JVMs hashing in other charsets."""
    charsets = list(dict.fromkeys(spec.charset for spec, _ in rings))
    counts = len({spec.virtual_node_cnt for spec, _ in rings})
    caught = "(a rebalance caught half way can look alike, but clears within 20 s)"
    if len(charsets) == 1:
        listing = "; ".join(
            f"{spec.virtual_node_cnt} ({id_text(dict.fromkeys(ids), 3)})" for spec, ids in rings
        )
        message = (
            f"consumers of {g.name} run CONSISTENT_HASH with {counts} virtual node counts, "
            f"inferred from what each holds {caught}: {listing}; {effect}"
        )
        hint = (
            f"give every consumer of {g.name} the same virtual node count (the virtualNodeCnt "
            f"of AllocateMessageQueueConsistentHash; expected uses {g.strategy_label}); until "
            "then doubled queues are consumed twice and orphaned ones by nobody"
        )
        return message, hint
    listing = "; ".join(
        f"{f'{spec.virtual_node_cnt} in ' if counts > 1 else ''}{spec.charset} "
        f"({id_text(dict.fromkeys(ids), 3)})"
        for spec, ids in rings
    )
    with_counts = f" with {counts} virtual node counts" if counts > 1 else ""
    message = (
        f"consumers of {g.name} run CONSISTENT_HASH{with_counts}, {RINGS_IN_CHARSETS} "
        f"{len(charsets)} charsets (each JVM's default: Java 17 and older take the locale's), "
        f"inferred from what each holds {caught}: {listing}; {effect}"
    )
    main = g.strategy.charset if isinstance(g.strategy, ConsistentHash) else charsets[0]
    others = [cid for spec, ids in rings if spec.charset is not main for cid in ids]
    default = " (the default from Java 18 on)" if main is HashCharset.UTF_8 else ""
    hint = (
        f"start the consumers of {g.name} that hash in another charset than {main} with "
        f"-Dfile.encoding={main}{default} ({id_text(dict.fromkeys(others), 3)})"
    )
    if main is not HashCharset.UTF_8:
        not_utf8 = [
            cid for spec, ids in rings if spec.charset is not HashCharset.UTF_8 for cid in ids
        ]
        hint += (
            f", or every one that does not hash in UTF-8 (Java 18 and later's default) with "
            f"-Dfile.encoding=UTF-8 ({id_text(dict.fromkeys(not_utf8), 3)})"
        )
    if counts > 1:
        hint += ", and give every consumer the same virtual node count"
    hint += (
        f"; expected uses {g.strategy_label}; until then doubled queues are consumed twice "
        "and orphaned ones by nobody"
    )
    return message, hint


def check_message_models(ctx: TopicContext) -> list[Finding]:
    """Clients of one group reporting both message models. The brokers list every client in
    the group's consumer list, so the CLUSTERING clients share the queues with the
    BROADCASTING ones: what the strategy gives a BROADCASTING client is read only by such
    clients, which keep their offsets on their own disks (the group's offsets there never
    move), or by nobody on a topic they do not subscribe; every queue a CLUSTERING client
    takes is read by each subscribing BROADCASTING client too. And a BROADCASTING push client
    does not subscribe the group's retry topic: its heartbeats remove it from the group's
    subscription table on the brokers, which then refuse the others' pulls of it. Where the
    group's config says consumeBroadcastEnable=false, a broker refuses every pull of the
    group while the latest heartbeat it had was a BROADCASTING client's."""
    g = ctx.g
    if not g.broadcasters or not ctx.mq_all or ctx.expected is None:
        return []
    broadcasters = [cid for cid in dict.fromkeys(g.cid_all) if cid in g.broadcasters]
    clustering = list(
        dict.fromkeys(
            c.client_id for c in g.consumers if c.message_model is MessageModel.CLUSTERING
        )
    )
    limit = g.options.max_listed
    lone = broadcasters[0] if len(broadcasters) == 1 else None
    given = sorted(
        (mq for cid in broadcasters for mq in ctx.expected.get(cid, ())), key=queue_sort_key
    )
    taken = sorted(
        (mq for cid in clustering if cid in ctx.subscribers for mq in ctx.expected.get(cid, ())),
        key=queue_sort_key,
    )
    readers = len(set(broadcasters) & ctx.subscribers)
    parts: list[str] = []
    if given:
        if not readers:
            read = f"by nobody (a BROADCASTING client does not subscribe {ctx.topic})"
        elif lone:
            read = "only by it, which keeps its offsets on its own disk"
        else:
            read = "only by BROADCASTING clients, which keep their offsets on their own disks"
        if readers:
            read += ", never on the brokers: the group never consumes them"
        parts.append(
            f"every client is in the consumer list the brokers give, so the CLUSTERING "
            f"clients share {ctx.topic}'s {plural(len(ctx.mq_all), 'queue')} with the "
            f"BROADCASTING ones: the {plural(len(given), 'queue')} {describe(g.strategy)} "
            f"gives {lone or 'the BROADCASTING clients'} ({queue_text(given, limit)}) "
            f"{'are' if len(given) > 1 else 'is'} read {read}{waiting_text(ctx, given)}"
        )
    if taken and readers:
        parts.append(
            f"each message of the {plural(len(taken), 'queue')} the CLUSTERING clients take "
            f"({queue_text(taken, limit)}) is processed {readers + 1} times, by its holder "
            "and by every BROADCASTING client"
        )
    if ctx.topic == RETRY_PREFIX + g.name and not readers:
        parts.append(
            f"each heartbeat of a BROADCASTING client, which does not subscribe {ctx.topic}, "
            "removes it from the subscription table the brokers keep for the group, and they "
            "refuse the CLUSTERING clients' pulls of it until one of those heartbeats again "
            "(broker.log: 'the consumer's subscription not exist'): retried messages wait "
            "meanwhile"
        )
    refusing = sorted(
        (b for b, cfg in g.group.configs.items() if not cfg.consume_broadcast_enable), key=java_key
    )
    if refusing:  # (there are CLUSTERING clients: the group is consumed so)
        parts.append(
            f"consumeBroadcastEnable=false in the group's config on {', '.join(refusing)} "
            "(what mqadmin updateSubGroup writes unless given -d true): while a broker lists "
            "the group as BROADCASTING it refuses every pull of the group, the CLUSTERING "
            f"clients' too ('the consumer group[{g.name}] can not consume by broadcast way'), "
            "so each heartbeat of a BROADCASTING client stops the group's consumption there "
            "until a CLUSTERING client's heartbeat comes next"
        )
    if not parts:
        return []
    listing = (
        f"CLUSTERING ({id_text(dict.fromkeys(clustering), 3)}); "
        f"BROADCASTING ({id_text(dict.fromkeys(broadcasters), 3)})"
    )
    message = (
        f"consumers of {g.name} use 2 message models: {listing}; the brokers list the group "
        f"as {g.group.message_model} (the model of its latest heartbeat); " + "; and ".join(parts)
    )
    if lone:
        fix = (
            f"if {lone} must receive every message, give it a consumer group of its own; "
            "else set MessageModel.CLUSTERING in it and restart it"
        )
    else:
        fix = (
            "give the clients that must receive every message a consumer group of their "
            "own; set MessageModel.CLUSTERING in the others and restart them"
        )
    return [
        Finding(
            Code.MESSAGE_MODEL_INCONSISTENT,
            Severity.error,
            g.name,
            message,
            f"use one message model in every consumer of {g.name}: {fix}",
            topic=ctx.topic,
            consumers=tuple(broadcasters),
            queues=tuple(sorted({*given, *(taken if readers else ())}, key=queue_sort_key)),
        )
    ]


def check_broker_lists(ctx: TopicContext) -> list[Finding]:
    """BROKERS_DISAGREE for clients that balance themselves: the brokers of the topic list
    different consumers.

    A client rebalancing a topic takes cidAll from one broker of the topic's route, picked at
    random at each rebalance (``MQClientInstance.findConsumerIdList``), and a broker lists the
    clients whose heartbeats reach it. When the lists differ, what a client computes depends
    on the broker it asked: each list is run through the allocator, and the clients whose
    queues differ between the lists are named. (Ids listed more often by one broker than by
    another: DUPLICATE_CLIENT_ID. Groups the brokers balance: :mod:`.brokerside`.)
    """
    g = ctx.g
    if g.mode is not Mode.CLUSTERING or ctx.route is None or not ctx.mq_all:
        return []
    lists = broker_lists(g.group, ctx.route)
    if len({frozenset(ids) for ids in lists.values()}) < 2:
        return _unlisted_subscribers(ctx, lists)
    if ctx.broker_side is not None or ctx.expected is None:
        return []
    union = {cid for ids in lists.values() for cid in ids}
    missing: list[str] = []
    unlisted: set[str] = set()
    for broker, ids in lists.items():
        if left_out := sorted(union.difference(ids), key=java_key):
            missing.append(f"{broker} does not list {id_text(left_out, g.options.max_listed)}")
            unlisted.update(left_out)
    shares: dict[tuple[str, ...], dict[str, list[MessageQueue]]] = {}
    asked: dict[tuple[str, ...], list[str]] = {}  # a list -> the brokers that keep it
    for broker, ids in lists.items():
        key = tuple(sorted(ids, key=java_key))  # as a client sorts cidAll
        asked.setdefault(key, []).append(broker)
        if key not in shares:
            share, _, _ = topic_allocation(g.strategy, ctx.topic, ctx.mq_all, key)
            if share is None:
                return []  # the strategy cannot run: ALLOCATION_FAILED says why
            shares[key] = share
    owners: dict[MessageQueue, set[str | None]] = {}
    for share in shares.values():
        held = {mq: cid for cid, queues in share.items() for mq in queues}
        for mq in ctx.mq_all:
            owners.setdefault(mq, set()).add(held.get(mq))
    moving = [mq for mq in ctx.mq_all if len(owners[mq]) > 1]
    flapping = [
        cid
        for cid in sorted(union, key=java_key)
        if len({frozenset(share.get(cid, ())) for share in shares.values()}) > 1
    ]
    limit = g.options.max_listed
    whose = {
        key: f"{brokers[0]}'s list" if len(brokers) == 1 else f"the list of {', '.join(brokers)}"
        for key, brokers in asked.items()
    }
    gets = [
        f"{cid} holds "
        + ", ".join(
            f"{_held_text(share.get(cid))} by {whose[key]}" for key, share in shares.items()
        )
        for cid in flapping[:limit]
    ]
    more = f"; and {len(flapping) - limit} more" if len(flapping) > limit else ""
    effect = (
        f", so {plural(len(moving), 'queue')} ({queue_text(moving, 4)}) change hands with the "
        f"broker each client asks: {'; '.join(gets)}{more}"
        if moving
        else "; the allocation is the same from every list for now"
    )
    return [
        Finding(
            Code.BROKERS_DISAGREE,
            Severity.warning,
            g.name,
            f"the brokers of {ctx.topic} list different consumers of {g.name}: "
            f"{'; '.join(missing)}. A client rebalancing {ctx.topic} takes the consumer list "
            "from one broker of the topic, picked at random at each rebalance (every 20 s)"
            + effect,
            _reach_hint(
                sorted(unlisted, key=java_key),
                "every broker of the topic",
                "started or stopped is listed alike by every broker",
                limit,
            ),
            topic=ctx.topic,
            consumers=tuple(dict.fromkeys([*sorted(unlisted, key=java_key), *flapping])),
            queues=tuple(moving),
        )
    ]


def _unlisted_subscribers(ctx: TopicContext, lists: dict[str, tuple[str, ...]]) -> list[Finding]:
    """Subscribers of the topic its cidAll leaves out: where every broker of the topic keeps
    the same list, that list is the cidAll every client rebalances the topic from
    (:func:`~rmqlb.diagnose.context.topic_cid_all`), and another broker of the group may list
    them."""
    g = ctx.g
    listed = set(g.cid_all)  # the topic's (this context's) cidAll
    ids = sorted(
        {
            c.client_id
            for c in g.consumers
            if c.client_id in ctx.subscribers
            and c.client_id not in listed
            and not is_proxy_client(c)
        },
        key=java_key,
    )
    if not ids:
        return []
    elsewhere: dict[str, list[str]] = {}
    for broker, view in sorted(g.group.on_brokers.items(), key=lambda kv: java_key(kv[0])):
        for cid in dict.fromkeys(view.client_ids or ()):
            if cid in ids:
                elsewhere.setdefault(cid, []).append(broker)
    limit = g.options.max_listed
    one = len(ids) == 1
    where = "; ".join(
        f"{cid}: {', '.join(elsewhere[cid])}" for cid in ids[:limit] if cid in elsewhere
    )
    brokers = ", ".join(lists)
    return [
        Finding(
            Code.BROKERS_DISAGREE,
            Severity.warning,
            g.name,
            f"no broker of {ctx.topic} ({brokers}) lists {id_text(ids, limit)}, which "
            f"{'subscribes' if one else 'subscribe'} it"
            + (f", while other brokers of {g.name} do ({where})" if where else "")
            + f". A client rebalancing {ctx.topic} takes the consumer list from a broker "
            f"of the topic, so every client leaves {'it' if one else 'them'} out and "
            f"{'it takes' if one else 'they take'} no queue of {ctx.topic}",
            _reach_hint(ids, brokers, "started is listed by every broker of its topics", limit),
            topic=ctx.topic,
            consumers=tuple(ids),
        )
    ]


def _reach_hint(ids: Sequence[str], brokers: str, newcomer: str, limit: int) -> str:
    """BROKERS_DISAGREE's fix: check that the clients ``ids`` reach ``brokers``; a client
    that just ``newcomer`` within a heartbeat."""
    return (
        "a broker lists the clients whose heartbeats reach it (every 30 s, to every broker of "
        f"their topics): check that {id_text(ids, limit)} "
        f"{'reaches' if len(ids) == 1 else 'reach'} {brokers} (network, firewall, ACL: the "
        f"client's log shows the failed heartbeats); a client that just {newcomer} within a "
        "heartbeat"
    )


def _held_text(queues: Sequence[MessageQueue] | None) -> str:
    return queue_text(sorted(queues, key=queue_sort_key), 4) if queues else "nothing"
