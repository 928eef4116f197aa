"""Route rules: NO_ROUTE, WRITE_EXCEEDS_READ, QUEUE_NOT_READABLE, STATIC_TOPIC_OLD_CLIENT.

A topic's route is a list of QueueData, one per broker: ``readQueueNums`` queues are read,
``writeQueueNums`` are written, ``perm`` says whether the broker serves reads (4) and writes
(2). The client builds ``mqAll`` from readable QueueData only, ids ``0..readQueueNums-1``.
"""

from __future__ import annotations

from collections import Counter

from rmqlb.diagnose.balance import through_proxy_remoting
from rmqlb.diagnose.context import (
    ROUTE_REQUEST,
    Mode,
    TopicContext,
    broker_addr,
    broker_queue_readers,
    cluster_name,
    error_index,
    via_proxy_remoting,
)
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import id_text, queue_text
from rmqlb.diagnose.rules.waiting import unread_text, waiting_text
from rmqlb.humanize import plural
from rmqlb.model.queue import MERGED_BROKER, MessageQueue, queue_sort_key
from rmqlb.model.snapshot import PERM_READ, PERM_WRITE, RETRY_PREFIX, pop_retry_topic


def _perm_text(perm: int) -> str:
    readable, writeable = bool(perm & PERM_READ), bool(perm & PERM_WRITE)
    if readable and writeable:
        return "read-write"
    if writeable:
        return "write-only"
    if readable:
        return "read-only"
    return "no access"


def update_target(broker: str, addr: str) -> str:
    """Where an mqadmin update goes: ``-b ADDR`` (the broker's master), or the whole cluster
    (``-c <cluster>``) for :data:`MERGED_BROKER`, which stands for all its masters."""
    return "-c <cluster>" if broker == MERGED_BROKER else f"-b {addr}"


def not_readable_text(
    topic: str, broker: str, perm: int, count: int, addr: str, *, from_route: bool = True
) -> tuple[str, str]:
    """QUEUE_NOT_READABLE's message (without the waiting messages) and hint.

    A drain takes a broker's write permission and keeps its read (perm 4), so that consumers
    empty it; taking read leaves what is there, or still written there, to nobody. A broker
    whose ``brokerPermission`` is not 6 registers every topic with that perm instead of the
    topic's own (``BrokerController.registerBrokerAll``), hence the second fix, for a perm
    read from a route (``from_route``); a broker's own topic config holds the topic's.
    """
    writes = bool(perm & PERM_WRITE)
    one = count == 1
    still = ""
    if writes and count:
        still = f", while producers still write to {'it' if one else 'them'}"
    target = update_target(broker, addr)
    restore = f"mqadmin updateTopicPerm -t {topic} {target} -p"
    whole = (
        f" (if {broker}'s other topics have perm {perm} too, it is the broker's own "
        f"brokerPermission: mqadmin updateBrokerConfig {target} -k brokerPermission -v "
        f"{6 if writes else 4})"
        if from_route
        else ""
    )
    if writes:
        hint = (
            f"restore read permission: {restore} 6{whole}; to drain {broker}, take its "
            f"write permission instead (-p 4), not its read"
        )
    else:
        hint = (
            f"nothing new arrives there, but what waits is consumed only once {broker} is "
            f"readable again: {restore} 4 to drain it (read-only), or 6{whole}"
        )
    return (
        f"{topic} on {broker} has perm {perm} ({_perm_text(perm)}): its "
        f"{plural(count, 'queue')} {'is' if one else 'are'} left out of mqAll and consumed by "
        f"nobody{still}",
        hint,
    )


def write_exceeds_read_text(
    topic: str, broker: str, read: int, write: int, addr: str
) -> tuple[str, str, tuple[MessageQueue, ...]]:
    """WRITE_EXCEEDS_READ's message (without the waiting messages), hint and stranded
    queues (ids ``read .. write-1``). For :data:`MERGED_BROKER` the counts are sums over
    the cluster's masters: the fix is per master, and no queue can be named."""
    stranded = tuple(MessageQueue(topic, broker, i) for i in range(read, write))
    if broker == MERGED_BROKER:
        return (
            f"{topic} has writeQueueNums {write} > readQueueNums {read}, summed over the "
            f"cluster's masters: producers write to {plural(write - read, 'queue')} that no "
            "consumer reads",
            f"raise readQueueNums to writeQueueNums on every master of {topic} (this export "
            f"sums both over them): mqadmin updateTopic -c <cluster> -t {topic} -r W -w W, "
            "W being its writeQueueNums on one master; to shrink a topic, lower "
            "writeQueueNums first and readQueueNums only once the queues above it are drained",
            stranded,
        )
    return (
        f"{topic} on {broker} has writeQueueNums {write} > readQueueNums {read}: "
        f"producers write to {plural(write - read, 'queue')} ({queue_text(stranded)}) "
        "that no consumer reads",
        f"raise readQueueNums to {write}: mqadmin updateTopic -t {topic} "
        f"-b {addr} -r {write} -w {write}; to shrink a topic, lower "
        f"writeQueueNums first and readQueueNums only once "
        f"{queue_text(stranded)} are drained",
        stranded,
    )


def _no_route_text(ctx: TopicContext, subscribers: int) -> tuple[str, str]:
    """NO_ROUTE's message and hint. The brokers create retry topics themselves: a group's
    at a client's heartbeat (when the group has a subscription group config there), a POP
    retry topic at the first POP retry; nobody creates either by hand."""
    g, topic = ctx.g, ctx.topic
    who = (
        f"{plural(subscribers, 'consumer')} of {g.name} "
        f"{'subscribes' if subscribers == 1 else 'subscribe'} {topic}"
    )
    popped = [t for t in g.subscribed_topics() if pop_retry_topic(t, g.name) == topic]
    if popped:
        return (
            f"{who}, the POP retry topic of {popped[0]}: a 5.x client the brokers balance "
            f"subscribes it once it consumes {popped[0]} by PULL, for what was retried while "
            "the group popped; the brokers create it at the first POP retry, so until then it "
            "has no route and nothing of it is allocated",
            "nothing to fix: the brokers create it when a popped message is first retried "
            "(do not create it by hand)",
        )
    snapshot = g.snapshot
    failed = any(e.request == ROUTE_REQUEST for e in error_index(snapshot.errors).of_topic(topic))
    clients = [c for c in g.consumers if c.client_id in ctx.subscribers]
    if (
        topic == RETRY_PREFIX + g.name
        and not failed
        and clients
        and all(map(through_proxy_remoting, clients))
    ):
        return (
            f"{who}, its retry topic, which has no route yet: "
            f"{'it connects' if subscribers == 1 else 'they connect'} through a "
            "Proxy, so the brokers never see the heartbeats that create it for clients "
            "connected to them; a broker creates it when a client first sends back a message "
            "it failed to consume",
            "nothing to fix: the brokers create it with the first message sent back for a "
            "retry (do not create it by hand)",
        )
    if failed:  # the capture is partial: the route may well exist
        why, again = "its route could not be read (see the capture errors)", "capture again"
    elif snapshot.source is not None and snapshot.source.namesrv:  # TOPIC_NOT_EXIST
        if ctx.extra:  # its clients read a route before: held queues tell what it was
            return _route_gone(ctx, who)
        why, again = "the NameServer has no route for it: the topic does not exist", ""
    else:  # a snapshot written by hand or by another tool: nothing says why
        why = "the snapshot has no route for it: the topic does not exist or its route was not read"
        again = "if the topic exists, capture the snapshot again"
    cluster = cluster_name(snapshot)
    if topic == RETRY_PREFIX + g.name:
        fix = (
            f"the brokers create {topic} at a heartbeat of a client of {g.name} when the group "
            "has a subscription group config there: with autoCreateSubscriptionGroup=false, "
            f"create the group (mqadmin updateSubGroup -c {cluster} -g {g.name})"
        )
    else:
        fix = (
            f"create the topic (mqadmin updateTopic -t {topic} -c {cluster} -r 8 -w 8) "
            "or remove the subscription"
        )
    message = f"{who} but {why}, so nothing of it can be allocated"
    if failed:
        return message, f"{again}; if {topic} does not exist, {fix}"
    return message, f"{fix}; {again}" if again else fix


def _route_gone(ctx: TopicContext, who: str) -> tuple[str, str]:
    """NO_ROUTE of a topic whose clients still hold queues of it: they read its route
    before. Brokers of those queues the NameServer lists (registered) no longer have the
    topic: it was deleted, and a client keeps the route it read while its pulls fail
    (``topic[T] not exist``); a deleted topic's consume queues are gone, so what was not
    consumed does not come back if it is created again. Brokers it does not list are down
    or cut off from it, and the topic may be intact there."""
    g, topic = ctx.g, ctx.topic
    held = list(ctx.extra)
    holders = dict.fromkeys(cid for ids in ctx.extra.values() for cid in ids)
    brokers = dict.fromkeys(mq.broker_name for mq in held)
    registered = g.snapshot.brokers
    missing = [b for b in brokers if b not in registered or registered[b].master_addr() is None]
    holding = (
        f"{id_text(holders, 3)} still {'holds' if len(holders) == 1 else 'hold'} "
        f"{plural(len(held), 'queue')} of it ({queue_text(held)}) from a route read before"
    )
    if missing:
        names = ", ".join(missing)
        return (
            f"{who} but the NameServer has no route for it, while {holding}: "
            f"{'its broker' if len(missing) == 1 else 'its brokers'} {names} "
            f"{'is' if len(missing) == 1 else 'are'} not registered with the NameServer "
            "(down, or cut off from it), so nothing of it can be allocated",
            f"bring {names} back (or let it reach the NameServer): the route comes back "
            "with it; if the topic was deleted on purpose, remove the subscription",
        )
    shape = max(mq.queue_id for mq in held) + 1  # ids 0..n-1 on each broker
    cluster = cluster_name(g.snapshot)
    return (
        f"{who} but the NameServer has no route for it, while {holding}: {topic} was "
        f"deleted from {', '.join(brokers)}, {'which is' if len(brokers) == 1 else 'which are'} "
        "registered, so nothing of it can be "
        "allocated; the clients keep the route they read and their pulls fail ('topic["
        f"{topic}] not exist' in their log), and the messages they had not consumed are not "
        "reachable even if the topic is created again (a broker deletes its consume queues "
        "with the topic)",
        f"if {topic} was deleted on purpose, remove the subscription from the consumers of "
        f"{g.name}; else create it again as its clients knew it (mqadmin updateTopic -t "
        f"{topic} -c {cluster} -r {shape} -w {shape})",
    )


def check_route(ctx: TopicContext) -> list[Finding]:
    """Problems of the route itself, whatever the consumers do."""
    g = ctx.g
    if ctx.route is None:
        subs = tuple(dict.fromkeys(c for c in g.cid_all if c in ctx.subscribers))
        message, hint = _no_route_text(ctx, len(subs))
        return [
            Finding(
                Code.NO_ROUTE,
                Severity.info if ctx.retry else Severity.warning,
                g.name,
                message,
                hint,
                topic=ctx.topic,
                consumers=subs,
            )
        ]
    out: list[Finding] = []
    topic = ctx.topic
    for qd in ctx.route.queue_datas:
        broker = qd.broker_name
        if not qd.readable:
            count = max(qd.read_queue_nums, qd.write_queue_nums)
            queues = tuple(MessageQueue(topic, broker, i) for i in range(count))
            message, hint = not_readable_text(
                topic, broker, qd.perm, count, broker_addr(ctx.g.snapshot, broker)
            )
            out.append(
                Finding(
                    Code.QUEUE_NOT_READABLE,
                    Severity.warning,
                    g.name,
                    message + waiting_text(ctx, queues, "read permission is restored"),
                    hint,
                    topic=topic,
                    queues=queues,
                )
            )
        elif qd.writeable and qd.write_queue_nums > qd.read_queue_nums:
            r, w = qd.read_queue_nums, qd.write_queue_nums
            message, hint, stranded = write_exceeds_read_text(
                topic, broker, r, w, broker_addr(ctx.g.snapshot, broker)
            )
            out.append(
                Finding(
                    Code.WRITE_EXCEEDS_READ,
                    Severity.error,
                    g.name,
                    message + waiting_text(ctx, stranded, f"readQueueNums is raised to {w}"),
                    hint,
                    topic=topic,
                    queues=stranded,
                )
            )
    return out


def check_static_topic(ctx: TopicContext) -> list[Finding]:
    """STATIC_TOPIC_OLD_CLIENT: clients before 5.0 consuming a static topic, or remoting
    clients connected through a 5.1+ Proxy (whose routes carry no logical queue).

    Such a client knows no logical queue (``topicQueueMappingByBroker`` came with 5.0): it
    allocates the brokers' own queues with its strategy, and a 5.x broker reads the id of
    each pull as a logical queue's, served only where it hosts that logical queue now. So
    it reads some logical queues, maybe ones a 5.x client is given too (read twice), and
    the logical queues nobody is given go unread (the context's expected allocation says
    what each client reads: :func:`~rmqlb.diagnose.context.topic_context`).
    """
    route = ctx.route
    if route is None or not route.queue_mappings or ctx.g.mode is not Mode.CLUSTERING:
        return []
    if not ctx.logical:
        return []  # popped: the brokers serve their own queues to every client
    old = broker_queue_readers(ctx.g, ctx.topic)
    proxied = via_proxy_remoting(ctx.g, ctx.topic)
    before = [cid for cid in old if cid not in proxied]
    if not old or ctx.expected is None:
        return []
    from rmqlb.remoting.codes import version_name  # noqa: PLC0415  (only when it fires)

    versions = {c.client_id: c.version for c in ctx.g.consumers if c.version is not None}
    proxies = {c.client_id: c.proxy for c in ctx.g.consumers if c.proxy is not None}
    one = len(old) == 1
    readers: Counter[MessageQueue] = Counter(q for qs in ctx.expected.values() for q in set(qs))
    mine = {q for cid in old for q in ctx.expected.get(cid, ())}
    twice = [q for q in ctx.mq_all if readers[q] > 1 and q in mine]
    nobody = [q for q in ctx.mq_all if not readers[q]]
    refused = sorted(
        {q for q, holders in ctx.extra.items() if set(holders) & set(old)}, key=queue_sort_key
    )
    who = ", ".join(
        f"{cid} (through the Proxy {proxies[cid]})"
        if cid in proxied
        else f"{cid} ({version_name(versions[cid])})"
        for cid in old
    )
    logical = f"{plural(len(ctx.mq_all), 'logical queue')} ({queue_text(ctx.mq_all, 2)})"
    unaware = []
    if before:
        unaware.append(f"a client before 5.0 knows nothing of its {logical}")
    if proxied:
        routes = "the routes a Proxy's remoting port answers carry none of "
        unaware.append(routes + ("them" if before else f"its {logical}"))
    if one:
        reads = f"it reads {queue_text(ctx.expected.get(old[0], ()), 3) or 'nothing'}"
    else:
        reads = "they read: " + "; ".join(
            f"{cid} {queue_text(ctx.expected.get(cid, ()), 3) or 'nothing'}" for cid in old[:3]
        )
    message = (
        f"{who} {'consumes' if one else 'consume'} the static topic {ctx.topic} by the "
        f"brokers' own queues: {', and '.join(unaware)}, and a "
        "5.x broker serves such a pull the logical queue of the same id, where it hosts "
        f"that one, so {reads}"
    )
    if twice:
        message += (
            f"; {plural(len(twice), 'logical queue')} read twice, by a 5.x client too "
            f"({queue_text(twice, 4)})"
        )
    if nobody:
        message += "; " + unread_text(ctx, nobody)
    if refused:
        message += (
            f"; the brokers refuse {plural(len(refused), 'queue')} "
            f"{'it holds' if one else 'they hold'} ({queue_text(refused, 4)}: no logical "
            "queue of that id is hosted there)"
        )
    fixes = []
    if before:
        fixes.append(
            f"upgrade {id_text(before, ctx.g.options.max_listed)} to a 5.x client "
            "(rocketmq-client 5.0 or later consumes static topics by their logical queues)"
        )
    if proxied:
        fixes.append(
            f"connect {id_text(proxied, ctx.g.options.max_listed)} to the NameServer instead "
            f"of the Proxy (its routes carry the logical queues), or read {ctx.topic} with "
            "gRPC clients through the Proxy (it pops a static topic's queues)"
        )
    hint = (
        "; ".join(fixes) + f": until every client of {ctx.g.name} reads the logical queues, "
        "some are read twice or by nobody"
    )
    return [
        Finding(
            Code.STATIC_TOPIC_OLD_CLIENT,
            Severity.error if twice or nobody or refused else Severity.warning,
            ctx.g.name,
            message,
            hint,
            topic=ctx.topic,
            consumers=tuple(old),
            queues=tuple(sorted({*twice, *nobody, *refused}, key=queue_sort_key)),
        )
    ]
