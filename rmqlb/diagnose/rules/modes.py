"""BROADCASTING / PROXY_CLIENTS / QUEUES_UNREPORTED / SYSTEM_GROUP: say explicitly when
there is nothing to allocate, or when what clients hold cannot be seen (POP is diagnosed by
:mod:`.brokerside`)."""

from __future__ import annotations

from collections.abc import Sequence

from rmqlb.diagnose.balance import through_proxy_remoting
from rmqlb.diagnose.context import GroupContext, Mode, TopicContext
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.diagnose.rules._text import id_text
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import PULL_CONSUMER, Consumer, Rebalance, pull_consumer_kind
from rmqlb.model.system import is_system_group, system_group_role


def check_modes(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """One info finding per group whose queues are not allocated by the clients."""
    out: list[Finding] = []
    n = len(g.consumers)
    limit = g.options.max_listed
    if is_system_group(g.name):  # said once, whatever its mode
        return [_system_group(g)]
    if g.mode is Mode.BROADCASTING:
        names = [t.topic for t in topics]
        out.append(
            Finding(
                Code.BROADCASTING,
                Severity.info,
                g.name,
                f"group {g.name} consumes in BROADCASTING mode: "
                + (f"each of its {n:,} consumers reads" if n != 1 else "its one consumer reads")
                + " every queue of "
                f"{plural(len(names), 'subscribed topic')}, so there is no allocation to check",
                "nothing to fix: offsets live on each client, not on the broker; if every "
                "message should be processed once per group, switch the consumers to "
                "MessageModel.CLUSTERING",
                consumers=tuple(dict.fromkeys(g.cid_all)),
            )
        )
        out += _unreported(g, topics)
        return out
    proxy = [c.client_id for c in g.consumers if g.balanced_by(c.client_id) is Rebalance.PROXY]
    if proxy:
        they = ("are 5.x gRPC clients", "their", "they consume")
        if len(proxy) == 1:
            they = ("is a 5.x gRPC client", "its", "it consumes")
        out.append(
            Finding(
                Code.PROXY_CLIENTS,
                Severity.info,
                g.name,
                f"{len(proxy)} of {plural(n, 'consumer')} of {g.name} {they[0]} behind a proxy "
                f"({id_text(proxy, limit)}): the broker cannot fetch {they[1]} running info and "
                f"{they[2]} by POP, so there is no client-side allocation to check",
                f"nothing to fix here: follow {they[1]} progress by the group's lag (rmqlb "
                f"offsets {g.name} lists it per queue)",
                consumers=tuple(dict.fromkeys(proxy)),
            )
        )
    remoting = [c for c in g.consumers if through_proxy_remoting(c)]
    if remoting:
        out.append(_through_proxy(g, remoting))
    out += _unreported(g, topics)
    return out


def _unreported(g: GroupContext, topics: Sequence[TopicContext]) -> list[Finding]:
    """QUEUES_UNREPORTED: pull consumers whose running info never lists their queues."""
    clients = [c for c in g.consumers if c.client_id in g.unreported]
    if not clients:
        return []
    from rmqlb.remoting.codes import version_name  # noqa: PLC0415  (only when it fires)

    ids = list(dict.fromkeys(c.client_id for c in clients))
    one = len(ids) == 1
    kinds: dict[str, list[str]] = {}
    for c in clients:
        kind = pull_consumer_kind(c.properties) or "pull consumer"
        label = (
            kind
            if kind == PULL_CONSUMER or c.version is None
            else kind + " " + version_name(c.version)
        )
        kinds.setdefault(label, []).append(c.client_id)
    what = "; ".join(
        f"{label}: {id_text(list(dict.fromkeys(cids)), g.options.max_listed)}"
        for label, cids in kinds.items()
    )
    subscribed = [t.topic for t in topics if not t.retry]
    balancing = sum(1 for c in clients if any(c.subscribes(t) for t in subscribed))
    by = f"by {g.strategy_label}"
    broadcasting = g.mode is Mode.BROADCASTING
    if broadcasting:
        how = f"{'it reads' if one else 'each reads'} every queue of what "
        how += f"{'it subscribes' if one else 'they subscribe'} (BROADCASTING)"
    elif balancing == len(clients):
        how = f"{'it balances itself' if one else 'they balance themselves'} {by} over the "
        how += f"topics {'it' if one else 'they'} subscribe()"
    elif balancing == 0:
        how = f"{'it pulls' if one else 'they pull'} the queues {'its' if one else 'their'} "
        how += "application assign()s"
    else:
        how = f"those that subscribe() balance themselves {by}, the others pull the queues "
        how += "their application assign()s"
    legacy_of = [pull_consumer_kind(c.properties) == PULL_CONSUMER for c in clients]
    lite, legacy = not all(legacy_of), any(legacy_of)
    silent = " or ".join(
        text
        for text, present in (
            ("a DefaultLitePullConsumer before 5.1.1", lite),
            ("a DefaultMQPullConsumer (any version)", legacy),
        )
        if present
    )
    fix = f"nothing to fix here: follow each queue's lag (rmqlb offsets {g.name} lists it)"
    if broadcasting:  # each client's progress is its own, in its own offsets
        fix = (
            "nothing to fix here: in BROADCASTING each client keeps its own offsets, which "
            f"{'its' if one else 'their'} running info does not give either"
        )
    elif balancing:
        fix += (
            " against its expected holder; explain --watch 30 names a queue whose offset "
            "stands still while messages wait (QUEUE_STALLED)"
        )
    fix += "; a DefaultLitePullConsumer of 5.1.1 or later lists its queues"
    if legacy:
        fix += " (DefaultMQPullConsumer is deprecated in its favour)"
    return [
        Finding(
            Code.QUEUES_UNREPORTED,
            Severity.info,
            g.name,
            f"{len(ids)} of {plural(len(g.consumers), 'consumer')} of {g.name} "
            f"{'is a pull consumer' if one else 'are pull consumers'} ({what}): {how}, but the "
            f"running info of {silent} lists no queue, so what "
            f"{'it holds' if one else 'each holds'} is unknown",
            fix,
            consumers=tuple(ids),
        )
    ]


def _through_proxy(g: GroupContext, remoting: Sequence[Consumer]) -> Finding:
    """PROXY_CLIENTS of remoting clients connected through a 5.1+ Proxy's remoting port."""
    ids = list(dict.fromkeys(c.client_id for c in remoting))
    proxies = ", ".join(dict.fromkeys(c.proxy for c in remoting if c.proxy is not None))
    one = len(ids) == 1
    by = f"rmqlb's expected queues: {g.strategy_label}"
    if g.strategy_source == "default":
        by = f"rmqlb's expected queues assume {g.strategy_label}: no client reported its strategy"
    return Finding(
        Code.PROXY_CLIENTS,
        Severity.info,
        g.name,
        f"{len(ids)} of {plural(len(g.consumers), 'consumer')} of {g.name} "
        f"{'is a remoting client' if one else 'are remoting clients'} connected through the "
        f"Proxy {proxies} ({id_text(ids, g.options.max_listed)}): "
        f"{'it balances itself' if one else 'they balance themselves'} over the route and "
        f"the consumer list the Proxy answers ({by}), but "
        "a Proxy relays no request for a client's running info, so what "
        f"{'it holds' if one else 'each holds'} is unknown",
        "nothing to fix here: compare each queue's lag with its expected holder in the "
        f"queue table; to see what {'it holds' if one else 'they hold'}, read "
        f"{'its' if one else 'their'} client log, or connect {'it' if one else 'them'} to "
        "the brokers' NameServer",
        consumers=tuple(ids),
    )


def _system_group(g: GroupContext) -> Finding:
    """SYSTEM_GROUP: one of RocketMQ's own groups, with what uses it (never NO_CONSUMERS,
    nor PROXY_CONSUMED: the brokers consume with some of them themselves)."""
    committed = [o for o in g.group.offsets if o.committed]  # a BROADCASTING group's are not
    lag = sum(o.lag for o in committed)
    topics = sorted({o.queue.topic for o in committed}, key=java_key)
    held = (
        f" It has committed offsets on {plural(len(topics), 'topic')} ({', '.join(topics[:4])}), "
        f"{lag:,} messages of lag."
        if topics
        else ""
    )
    return Finding(
        Code.SYSTEM_GROUP,
        Severity.info,
        g.name,
        f"{g.name} is one of RocketMQ's own consumer groups: {system_group_role(g.name)}.{held}",
        f"nothing to do: it belongs to RocketMQ (rmqlb status lists it only with --system); "
        f"do not delete {g.name}",
    )
