"""Helpers for the live-cluster tests: what a snapshot looks like after a trip through the
wire, so "served then collected" can be compared with "what was served".

What legitimately changes on the way (each rule below says why):

* capture metadata (``capturedAt``, ``source``, ``errors``) is the capture's own;
* broker addresses are the fake's real ports; names, clusters and ids survive;
* only subscribed topics and existing ``%RETRY%<group>`` routes are fetched;
* a group's assumed ``strategy`` is the user's assumption, never on the wire;
* a client reports its strategy only as a Java class name (parameters are lost);
* a consumer whose ``assigned`` is unknown is served as a silent client: only its connection
  data survives; an offline group has no connection list (model and type unknown);
* two processes sharing a client id get one running-info answer (the broker relays to one);
* when some broker lists a client id more than once, every broker's own list comes back
  (``onBrokers`` ``clientIds``): the served list (its ids the group has), else the group's
  clients, a Proxy's gRPC clients left out;
* a Proxy's gRPC clients come back only from that Proxy, which is not asked here;
* the 4.x dialect has no ``mqPopTable``;
* a route's queue data come back in the NameServer's order (hash order of broker names), so
  both views list them by broker name;
* sets are compared in Java order (the wire carries TreeMaps/TreeSets);
* offsets are completed as the collector completes them: every queue id ``0 ..
  writeQueueNums-1`` of every broker of every topic the group's clients subscribe (of a
  group nobody consumes: every topic of its consume stats that some broker has no row of
  and whose route holds queues they leave out; of a CLUSTERING group with pull consumers:
  the topics they hold and those of its consume stats; the routes of those topics
  fetched), with the
  broker's min/max offsets (the fake derives them from all groups' offsets) and committed
  offsets as served; a queue never committed comes back as the broker answers QUERY_CONSUMER_OFFSET:
  0 while its min offset is 0 (4.9: always then, 5.x: only when it holds a message), else
  "never committed"; an empty queue consume stats list at 0 is not asked about; topics the
  collector does not complete keep the consume-stats rows, which a broker writes for every
  queue id below readQueueNums of each topic the group committed there (none for a
  BROADCASTING group, whose queues all come back never committed: nothing is asked);
* each broker answers the group's subscription config (served, or the broker's defaults);
* a running client reports a process-queue state for every held queue (when not served:
  commit offset from the group's offsets, and locked, as a 4.9/5.x client creates it) and
  a status entry for every subscribed topic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from rmqlb.fake import broker_names
from rmqlb.model import (
    Consumer,
    ConsumeStatus,
    Group,
    GroupConfig,
    GroupOnBroker,
    MessageModel,
    MessageQueue,
    ProcessQueueState,
    QueueOffset,
    Snapshot,
    Subscription,
    TopicRoute,
    queue_sort_key,
    sort_queues,
)
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import NEVER_COMMITTED, RETRY_PREFIX
from rmqlb.model.strategy import strategy_from_class_name
from rmqlb.remoting.bodies import (
    merged_subscriptions,
    public_properties,
    running_info_properties,
    strategy_class_name,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CLUSTER = "DefaultCluster"
PASSIVE = "CONSUME_PASSIVELY"


def snapshot_files() -> list[Path]:
    """Every example snapshot shipped in ``examples/``, the test snapshots, and the demo's."""
    found = sorted((ROOT / "examples").glob("**/*.json"))
    examples = [p for p in found if _is_snapshot(p)]
    own = sorted((ROOT / "tests" / "data" / "live").glob("*.json"))
    return [*examples, *own, ROOT / "rmqlb" / "data" / "demo-snapshot.json"]


def _is_snapshot(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8")[:400]
    except (OSError, UnicodeDecodeError):
        return False
    return '"rmqlb.snapshot/1"' in head


def _sorted_subs(subs: Iterable[Subscription]) -> tuple[Subscription, ...]:
    return tuple(sorted(subs, key=lambda s: java_key(f"{s.topic}@{s.sub_string}")))


def _routes(topics: Mapping[str, TopicRoute]) -> dict[str, TopicRoute]:
    return {
        t: replace(r, queue_datas=tuple(sorted(r.queue_datas, key=lambda q: q.broker_name)))
        for t, r in sorted(topics.items())
    }


def _offsets(offsets: Iterable[QueueOffset]) -> tuple[QueueOffset, ...]:
    return tuple(sorted(offsets, key=lambda o: queue_sort_key(o.queue)))


def _states(c: Consumer, group: Group) -> tuple[ProcessQueueState, ...]:
    commits = {o.queue: max(o.consumer_offset, 0) for o in group.offsets}
    served = {pq.queue: pq for pq in c.process_queues or ()}
    held = set(c.assigned or ())
    queues = [*held, *(mq for mq, pq in served.items() if pq.dropped and mq not in held)]
    return tuple(
        served.get(mq) or ProcessQueueState(mq, commit_offset=commits.get(mq, 0), locked=True)
        for mq in sort_queues(queues)
    )


def _consumer(c: Consumer, group: Group, dialect: int) -> Consumer:
    if c.assigned is None and not c.queues_unreported:  # served silent
        merged = merged_subscriptions(group.consumers).values()
        return Consumer(
            client_id=c.client_id,
            subscriptions=_sorted_subs(merged),
            client_addr=c.client_addr,
            language=c.language,
            version=c.version,
        )
    subs = {(s.topic, s.sub_string): s for s in c.subscriptions}  # a TreeSet on the wire
    return replace(
        c,
        subscriptions=_sorted_subs(subs.values()),
        strategy=(
            strategy_from_class_name(strategy_class_name(c.strategy))
            if c.strategy is not None
            else None
        ),
        # a pull consumer that never lists its queues answers an empty table: unknown again
        assigned=None if c.assigned is None else tuple(sort_queues(c.assigned)),
        pop_assigned=(None if dialect < 5 else tuple(sort_queues(c.pop_assigned or ()))),
        properties=public_properties(running_info_properties(c)),
        process_queues=None if c.assigned is None else _states(c, group),
        status={  # a push consumer has one per subscribed topic, a pull consumer none
            t: c.status.get(t, ConsumeStatus())
            for t in sorted(
                (set() if c.pulls_actively else {s.topic for s in c.subscriptions}) | set(c.status),
                key=java_key,
            )
        },
    )


def _consume_stats(
    snapshot: Snapshot, g: Group, ranges: Mapping[MessageQueue, tuple[int, int]]
) -> dict[MessageQueue, QueueOffset]:
    """The rows the fake's GET_CONSUME_STATS lists, over all brokers (the broker's rule:
    topics the group committed on that broker and subscribes, queue ids below
    readQueueNums, 0 where never committed; a BROADCASTING group's offsets stay in its
    clients)."""
    if g.consumed_model is MessageModel.BROADCASTING:
        return {}
    subscribed = merged_subscriptions(g.consumers)
    served = {o.queue: o for o in g.offsets}
    rows: dict[MessageQueue, QueueOffset] = {}
    for broker in broker_names(snapshot):
        here = [o for o in g.offsets if o.queue.broker_name == broker]
        for topic in dict.fromkeys(o.queue.topic for o in here if o.committed):
            if subscribed and topic not in subscribed:
                continue
            route = snapshot.topics.get(topic)
            queue_datas = route.queue_datas if route is not None else ()
            reads = [q.read_queue_nums for q in queue_datas if q.broker_name == broker]
            ids = range(max(reads)) if reads else ()
            for qid in ids:
                mq = MessageQueue(topic, broker, qid)
                o = served.get(mq) or QueueOffset(mq, ranges.get(mq, (0, 0))[1], 0)
                o = replace(o, min_offset=None)  # consume stats carry no min offset
                rows[mq] = o if o.committed else replace(o, consumer_offset=0)
    return rows


def _ranges(snapshot: Snapshot) -> dict[MessageQueue, tuple[int, int]]:
    """The fake's min/max offset of each queue: over all groups' offsets."""
    ranges: dict[MessageQueue, tuple[int, int]] = {}
    for other in snapshot.groups.values():
        for o in other.offsets:
            low, high = ranges.get(o.queue, (o.min_offset or 0, o.broker_offset))
            ranges[o.queue] = (min(low, o.min_offset or 0), max(high, o.broker_offset))
    return ranges


def _partial(snapshot: Snapshot, stats: Iterable[MessageQueue]) -> set[str]:
    """The topics of consume-stats rows that some broker of the cluster has no row of: the
    collector reads their routes for a group nobody consumes."""
    on: dict[str, set[str]] = {}
    for mq in stats:
        on.setdefault(mq.topic, set()).add(mq.broker_name)
    brokers = set(broker_names(snapshot))
    return {topic for topic, where in on.items() if not brokers <= where}


def _uncovered(snapshot: Snapshot, stats: Iterable[MessageQueue]) -> set[str]:
    """The topics of consume-stats rows whose routes hold queues the rows leave out, among
    those some broker has no row of (the collector completes them for a group nobody
    consumes)."""
    stats = list(stats)
    rows: dict[tuple[str, str], int] = {}
    for mq in stats:
        rows[mq.topic, mq.broker_name] = rows.get((mq.topic, mq.broker_name), 0) + 1
    out = set()
    for topic in _partial(snapshot, stats):
        route = snapshot.topics.get(topic)
        for qd in route.queue_datas if route is not None else ():
            if rows.get((topic, qd.broker_name), 0) < max(qd.read_queue_nums, qd.write_queue_nums):
                out.add(topic)
    return out


def _assigned_topics(g: Group, stats: Iterable[MessageQueue]) -> set[str]:
    """The topics the collector reads as a CLUSTERING group's pull consumers may assign()
    them: those they hold and those of its consume stats (no %RETRY% topic)."""
    pullers = [c for c in g.consumers if c.pulls_actively]
    if not pullers or g.consumed_model is MessageModel.BROADCASTING:
        return set()
    topics = {mq.topic for c in pullers for mq in c.assigned or ()} | {mq.topic for mq in stats}
    return {t for t in topics if not t.startswith(RETRY_PREFIX)}


def _completed_offsets(snapshot: Snapshot, g: Group, dialect: int) -> tuple[QueueOffset, ...]:
    topics = {s.topic for c in g.consumers for s in c.subscriptions}
    # a BROADCASTING group's offsets live in its clients: only the max/min offsets are read
    broadcasting = g.consumed_model is MessageModel.BROADCASTING
    ranges = _ranges(snapshot)
    served = {o.queue: o for o in g.offsets}
    stats = _consume_stats(snapshot, g, ranges)
    topics |= _assigned_topics(g, stats)
    if not g.consumers:
        topics |= _uncovered(snapshot, stats)
    out = []
    for topic in topics:
        route = snapshot.topics.get(topic)
        for qd in route.queue_datas if route is not None else ():
            for qid in range(qd.write_queue_nums):
                mq = MessageQueue(topic, qd.broker_name, qid)
                low, high = ranges.get(mq, (0, 0))
                o = served.get(mq)
                listed = stats.get(mq)
                if broadcasting:
                    committed = NEVER_COMMITTED
                elif o is not None and o.committed:
                    committed = o.consumer_offset
                elif listed is not None and high <= low:
                    committed = 0  # consume stats say 0, and nothing prompts the question
                elif low <= 0 and (dialect == 4 or high > 0):
                    committed = 0  # the broker's QUERY_CONSUMER_OFFSET answer (see above)
                else:
                    committed = NEVER_COMMITTED
                last = listed.last_timestamp if listed is not None else 0
                out.append(QueueOffset(mq, high, committed, last, low))
    inside = {o.queue for o in out}
    out += [o for mq, o in stats.items() if mq not in inside]
    return _offsets(out)


def _group(g: Group, dialect: int, snapshot: Snapshot) -> Group:
    # a Proxy's gRPC clients come back only when that Proxy is asked (these captures do not)
    g = replace(g, consumers=tuple(c for c in g.consumers if c.proxy is None))
    consumers = [_consumer(c, g, dialect) for c in g.consumers]
    first: dict[str, Consumer] = {}
    for i, c in enumerate(consumers):
        seen = first.setdefault(c.client_id, c)
        if seen is not c:  # same id twice: both get the first one's running info
            consumers[i] = replace(
                seen, client_addr=c.client_addr, language=c.language, version=c.version
            )
    online = bool(g.consumers)
    on_brokers = (
        g.on_brokers
        if dialect >= 5
        else {  # a 4.x broker answers neither GET_ALL_MESSAGE_REQUEST_MODE nor QUERY_ASSIGNMENT
            b: replace(v, request_modes=None, assignments=()) for b, v in g.on_brokers.items()
        }
    )
    return replace(
        g,
        strategy=None,
        message_model=g.message_model if online else type(g.message_model).CLUSTERING,
        consume_type=(
            (
                g.consume_type
                or next((c.consume_type for c in g.consumers if c.consume_type), None)
                or PASSIVE
            )
            if online
            else None
        ),
        consumers=tuple(consumers),
        offsets=_completed_offsets(snapshot, g, dialect),
        configs={b: g.configs.get(b, GroupConfig()) for b in broker_names(snapshot)},
        on_brokers=_kept_tables(
            g,
            _broker_lists(
                g, _read_rates(on_brokers, broker_names(snapshot)), broker_names(snapshot)
            ),
            broker_names(snapshot),
        ),
    )


def _kept_tables(
    g: Group, on_brokers: Mapping[str, GroupOnBroker], brokers: Iterable[str]
) -> dict[str, GroupOnBroker]:
    """``on_brokers`` with each listing broker's subscription table (by topic) where clients
    subscribe a topic with different expressions: the served one, else the clients' latest."""
    expressions = {(s.topic, s.expression_type, s.sub_string) for c in g.consumers
                   for s in c.subscriptions}  # fmt: skip
    if len(expressions) == len({topic for topic, _, _ in expressions}):
        return dict(on_brokers)
    listed = [c for c in g.consumers if c.proxy is None]
    out = dict(on_brokers)
    for b in brokers:
        known = out.get(b, GroupOnBroker())
        mine = [c for c in listed if known.client_ids is None or c.client_id in known.client_ids]
        if not mine:
            continue
        table = merged_subscriptions(mine)
        for sub in known.subscriptions or ():
            table[sub.topic] = sub
        out[b] = replace(known, subscriptions=_sorted_subs(table.values()))
    return out


def _read_rates(
    on_brokers: Mapping[str, GroupOnBroker], brokers: Iterable[str]
) -> dict[str, GroupOnBroker]:
    """Every broker answers GET_CONSUME_STATS with a rate: 0 where the snapshot has none."""
    out = dict(on_brokers)
    for b in brokers:
        known = out.get(b, GroupOnBroker())
        if known.consume_tps is None:
            out[b] = replace(known, consume_tps=0.0)
    return out


def _broker_lists(
    g: Group, on_brokers: Mapping[str, GroupOnBroker], brokers: Iterable[str]
) -> dict[str, GroupOnBroker]:
    """``on_brokers`` with every broker's own client list when one repeats an id."""
    ids = [c.client_id for c in g.consumers if c.proxy is None]
    if not ids:
        return dict(on_brokers)
    lists = {}
    for b in brokers:
        served = on_brokers.get(b, GroupOnBroker()).client_ids
        lists[b] = ids if served is None else [cid for cid in served if cid in ids]
    if all(len(set(listed)) == len(listed) for listed in lists.values()):
        return dict(on_brokers)
    out = dict(on_brokers)
    for b, listed in lists.items():
        known = out.get(b, GroupOnBroker())
        if known.client_ids is None and listed:
            out[b] = replace(known, client_ids=tuple(listed))
    return out


def wire_view(snapshot: Snapshot, dialect: int = 4) -> Snapshot:
    """``snapshot`` as the collector can see it through the fake (rules in the docstring)."""
    wanted: set[str] = set()
    for name, group in snapshot.groups.items():
        wanted.add(RETRY_PREFIX + name)
        for c in group.consumers:
            wanted.update(s.topic for s in c.subscriptions)
        if not group.consumers and RETRY_PREFIX + name not in snapshot.topics:
            # no consumer and no retry topic (a POP-only group): the topics of its offsets
            wanted.update(o.queue.topic for o in group.offsets if o.committed)
        if not group.consumers:  # routes of its consume stats' topics some broker lacks
            wanted.update(_partial(snapshot, _consume_stats(snapshot, group, {})))
        wanted.update(_assigned_topics(group, _consume_stats(snapshot, group, {})))
    topics = _routes({t: r for t, r in snapshot.topics.items() if t in wanted})
    return Snapshot(
        topics=topics,
        groups={n: _group(g, dialect, snapshot) for n, g in sorted(snapshot.groups.items())},
        brokers={},
    )


def received_view(snapshot: Snapshot) -> Snapshot:
    """A collected snapshot without capture metadata, in the same canonical order."""
    return Snapshot(
        topics=_routes(snapshot.topics),
        groups={
            n: replace(
                g,
                consumers=tuple(
                    replace(c, subscriptions=_sorted_subs(c.subscriptions)) for c in g.consumers
                ),
                offsets=_offsets(g.offsets),
                on_brokers={
                    b: v
                    if v.subscriptions is None
                    else replace(v, subscriptions=_sorted_subs(v.subscriptions))
                    for b, v in g.on_brokers.items()
                },
            )
            for n, g in sorted(snapshot.groups.items())
        },
        brokers={},
    )


def broker_shape(snapshot: Snapshot, fallback: list[str]) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Broker name -> (cluster, ids): what survives of ``brokers`` (addresses do not)."""
    if not snapshot.brokers:
        return dict.fromkeys(fallback, (DEFAULT_CLUSTER, (0,)))
    return {
        name: (info.cluster or DEFAULT_CLUSTER, tuple(sorted(info.addrs)) or (0,))
        for name, info in snapshot.brokers.items()
    }
