"""Turn a live cluster into a :class:`~rmqlb.model.Snapshot`, concurrently and safely.

What is asked, and why (protocol §5, §8.6; the same sources mqadmin and Dashboard use):

1. NameServer: GET_BROKER_CLUSTER_INFO -> every broker and its master address. NameServers
   are tried in the order given; the first that answers is kept for every later call (Java
   sticks to one too). None answering -> :class:`~rmqlb.errors.ClusterUnreachable` (exit 3).
2. Groups: the ones asked for by name, and (with no name, or with glob patterns) every group
   the brokers know: each master's subscription group configs
   (GET_ALL_SUBSCRIPTIONGROUP_CONFIG) united with, for every topic of the NameServer's list
   (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), the groups each master says consume it
   (QUERY_TOPIC_CONSUME_BY_WHO: online subscribers and committed offsets). With ``topic``, only
   the groups that consume that topic. System groups only with ``system``. A group's capture
   starts as soon as its name is known. A named group that exists nowhere (no config, no
   connection, no offset, and every broker answered) is a
   :class:`~rmqlb.errors.GroupNotFound` naming the closest known group.
3. Per group, on every master at once: GET_CONSUMER_CONNECTION_LIST (clients, message model,
   consume type; each broker only knows the clients that heartbeat to it, so the answers are
   united) and GET_CONSUME_STATS (each broker reports only its own queues).
4. Per client: GET_CONSUMER_RUNNING_INFO relayed by a broker that listed it -> its actual
   queues (``mqTable``), POP queues, subscriptions, strategy, orderly flag, start time.
5. Routes of every subscribed topic and of ``%RETRY%<group>``. A topic the NameServer does
   not know (code 17) is simply absent: normal for a retry topic, a finding for a subscribed one.

Every request runs as soon as what it needs is known, with at most ``max_in_flight`` in flight
and none outliving the overall deadline. A failed request never aborts the capture: it becomes
a :class:`~rmqlb.model.CaptureError` (target, request, message, and the group or topic it
was about) in ``Snapshot.errors``, and the
affected data is left unknown (e.g. a silent client's ``assigned`` is ``None``). Only when
no broker at all can be reached is there nothing to report (``ClusterUnreachable`` again).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from functools import partial
from typing import Any, Protocol, TypeVar

from rmqlb import __version__
from rmqlb.client.admin import AdminClient, ClientOptions
from rmqlb.client.errors import CALL_ERRORS, RemotingError
from rmqlb.diagnose.lookup import not_found, topic_not_found
from rmqlb.errors import ClusterUnreachable, InputError
from rmqlb.humanize import duration
from rmqlb.model import (
    BrokerInfo,
    CaptureError,
    Consumer,
    Group,
    MessageModel,
    MessageQueue,
    QueueOffset,
    Snapshot,
    Source,
    Subscription,
    TopicRoute,
    queue_sort_key,
)
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import DLQ_PREFIX, NEVER_COMMITTED, RETRY_PREFIX
from rmqlb.model.system import SYSTEM_TOPICS, is_system_group
from rmqlb.remoting.bodies import (
    Connection,
    ConsumerConnection,
    QueueStats,
    RunningInfo,
    SubscriptionGroupConfig,
)
from rmqlb.remoting.errors import ConsumerNotOnline, QueryNotFound, TopicNotExist

T = TypeVar("T")

#: Requests in flight at most, over all connections. Brokers queue admin requests in their
#: own pools (16 threads by default), so more buys little and costs them memory.
DEFAULT_MAX_IN_FLIGHT = 128


class ProgressSink(Protocol):
    """Receives request counts while collecting (the CLI draws a progress bar)."""

    def scheduled(self, count: int = 1) -> None:
        """``count`` more requests will be sent."""

    def finished(self, count: int = 1) -> None:
        """``count`` requests have ended (successfully or not)."""


@dataclass(frozen=True, slots=True)
class CollectOptions:
    """What to capture and how.

    ``groups``: groups named by the user (each must exist somewhere). ``patterns``: glob
    patterns (``order-*``) selecting among the groups the brokers know. Neither: every group
    the brokers know. ``topic``: discover only the groups that consume it. ``system``:
    RocketMQ's built-in groups are discovered too.
    """

    namesrv: tuple[str, ...]
    groups: tuple[str, ...] = ()
    client: ClientOptions = field(default_factory=ClientOptions)
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    deadline: float | None = None
    patterns: tuple[str, ...] = ()
    topic: str | None = None
    system: bool = False

    @property
    def discovers(self) -> bool:
        """Whether groups are discovered: no name given, or glob patterns."""
        return not self.groups or bool(self.patterns)

    def overall_deadline(self) -> float:
        """Seconds for the whole capture: ``deadline``, else 6 request timeouts (min 30 s)."""
        if self.deadline is not None:
            return self.deadline
        return max(30.0, 6 * self.client.timeout)


def utc_now() -> str:
    """Now, as the snapshot's ``capturedAt`` (``2026-11-22T12:00:00Z``)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _message(exc: BaseException, target: str) -> str:
    text = str(exc) or type(exc).__name__
    prefix = f"{target}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


@dataclass(slots=True)
class _GroupView:
    """The union of every broker's connection list for one group."""

    message_model: MessageModel = MessageModel.CLUSTERING
    consume_type: str | None = None
    subscriptions: dict[str, Subscription] = field(default_factory=dict)
    connections: list[Connection] = field(default_factory=list)
    relays: dict[str, list[str]] = field(default_factory=dict)  # clientId -> broker addrs
    answered: bool = False


class _Collector:
    def __init__(
        self, options: CollectOptions, admin: AdminClient, progress: ProgressSink | None
    ) -> None:
        if not options.namesrv:
            raise InputError("no NameServer address (use -n/--namesrv or set NAMESRV_ADDR)")
        self.options = options
        self.admin = admin
        self.progress = progress
        self.errors: list[CaptureError] = []
        self.namesrv = list(options.namesrv)
        self.budget = options.overall_deadline()
        self.deadline = time.monotonic() + self.budget
        self.semaphore = asyncio.Semaphore(max(1, options.max_in_flight))
        self.routes: dict[str, asyncio.Task[TopicRoute | None]] = {}
        self.topic_stats: dict[tuple[str, str], asyncio.Task[dict[MessageQueue, QueueStats]]] = {}
        self.group_configs: dict[str, asyncio.Task[dict[str, SubscriptionGroupConfig] | None]] = {}
        self.brokers: dict[str, BrokerInfo] = {}
        self.broker_names: dict[str, str] = {}  # addr -> broker name
        self.broker_attempts = 0
        self.broker_failures = 0
        self.group_tasks: dict[str, asyncio.Task[Group]] = {}

    # --- plumbing ------------------------------------------------------------------------

    def _timeout(self) -> float | None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            return None
        return min(self.options.client.timeout, left)

    def _label(self, addr: str) -> str:
        name = self.broker_names.get(addr)
        return f"{name} ({addr})" if name else addr

    async def _request(
        self,
        target: str,
        request: str,
        call: Callable[..., Awaitable[T]],
        *,
        quiet: tuple[type[BaseException], ...] = (),
        record: bool = True,
        broker: bool = False,
        group: str | None = None,
        topic: str | None = None,
    ) -> T | None:
        """Run one request under the semaphore and the deadline; failures become errors
        (naming the ``group`` or ``topic`` the request was about)."""
        if self.progress is not None:
            self.progress.scheduled()
        try:
            async with self.semaphore:
                timeout = self._timeout()
                if timeout is None:
                    if record:
                        message = f"not sent: overall deadline of {duration(self.budget)} exceeded"
                        self._error(target, request, message, group, topic)
                    return None
                if broker:
                    self.broker_attempts += 1
                try:
                    return await call(timeout=timeout)
                except quiet:
                    return None
                except CALL_ERRORS as exc:
                    if broker and isinstance(exc, RemotingError):
                        self.broker_failures += 1
                    if record:
                        where = target.split(" ", maxsplit=1)[0]
                        self._error(target, request, _message(exc, where), group, topic)
                    raise _Failed(exc) from exc
        finally:
            if self.progress is not None:
                self.progress.finished()

    async def _try(
        self,
        target: str,
        request: str,
        call: Callable[..., Awaitable[T]],
        **kwargs: Any,
    ) -> T | None:
        try:
            return await self._request(target, request, call, **kwargs)
        except _Failed:
            return None

    def _error(
        self,
        target: str,
        request: str,
        message: str,
        group: str | None = None,
        topic: str | None = None,
    ) -> None:
        self.errors.append(CaptureError(target, request, message, group, topic))

    async def _namesrv_call(self, request: str, call: Callable[..., Awaitable[T]]) -> T:
        """Ask the NameServers in order; a transport failure moves on to the next one."""
        failures: list[tuple[str, str]] = []
        for addr in list(self.namesrv):
            try:
                result = await self._request(addr, request, partial(call, addr), record=False)
            except _Failed as failed:
                if not isinstance(failed.error, RemotingError):
                    raise failed.error from None  # an answer (e.g. code 17), not an outage
                failures.append((addr, _message(failed.error, addr)))
                continue
            if result is None:
                failures.append((addr, "overall deadline exceeded"))
                continue
            if addr != self.namesrv[0]:  # stick to the NameServer that answered
                self.namesrv.remove(addr)
                self.namesrv.insert(0, addr)
            return result
        detail = "; ".join(f"{a}: {m}" for a, m in failures)
        raise ClusterUnreachable(f"no NameServer answered ({detail})")

    # --- the capture ---------------------------------------------------------------------

    async def run(self) -> Snapshot:
        try:
            cluster = await self._namesrv_call("GET_BROKER_CLUSTER_INFO", self.admin.cluster_info)
        except ClusterUnreachable:
            raise
        except CALL_ERRORS as exc:
            raise ClusterUnreachable(f"NameServer refused cluster info: {exc}") from exc
        self.brokers = dict(cluster)
        masters = self._masters()
        for name in self.options.groups:
            self._want(name, masters)
        if self.options.discovers:
            await self._discover(masters)
        results = await asyncio.gather(*self.group_tasks.values())
        await asyncio.gather(*self.routes.values())
        if self.broker_attempts and self.broker_failures == self.broker_attempts:
            detail = "; ".join(f"{e.target}: {e.message}" for e in self.errors[:3])
            raise ClusterUnreachable(f"no broker answered: {detail}")
        await self._check_named(masters, results)
        if self.options.discovers:
            results.sort(key=lambda g: java_key(g.name))
        topics = {
            topic: route
            for topic in sorted(self.routes)
            if (route := self.routes[topic].result()) is not None
        }
        return Snapshot(
            topics=topics,
            groups={g.name: g for g in results},
            brokers=dict(sorted(self.brokers.items())),
            captured_at=utc_now(),
            source=Source(namesrv=tuple(self.options.namesrv), rmqlb=__version__),
            errors=tuple(self.errors),
        )

    def _masters(self) -> list[tuple[str, str]]:
        """(broker name, address to ask) for every broker: the master, else a slave."""
        out = []
        for name in sorted(self.brokers):
            addr = self.brokers[name].master_addr()
            if addr:
                out.append((name, addr))
                self.broker_names[addr] = name
        return out

    # --- which groups ------------------------------------------------------------------

    def _want(self, name: str, masters: Sequence[tuple[str, str]]) -> None:
        """Start capturing ``name`` (once)."""
        if name not in self.group_tasks:
            task = asyncio.get_running_loop().create_task(self._group(name, masters))
            self.group_tasks[name] = task

    def _found(self, name: str, masters: Sequence[tuple[str, str]]) -> None:
        """A discovered group: captured when the options select it."""
        opts = self.options
        if not name or (not opts.system and is_system_group(name)):
            return
        if opts.patterns and not any(fnmatchcase(name, p) for p in opts.patterns):
            return
        self._want(name, masters)

    async def _discover(self, masters: Sequence[tuple[str, str]]) -> None:
        """Every group the brokers know (or, with ``topic``, every group consuming it)."""
        topic = self.options.topic
        if topic is not None:
            await asyncio.gather(self._check_topic(topic), self._consumers_of(masters, [topic]))
            return

        async def configured(addr: str) -> None:
            for name in await self._configs(addr) or ():
                self._found(name, masters)

        await asyncio.gather(*(configured(addr) for _, addr in masters), self._sweep(masters))

    async def _check_topic(self, topic: str) -> None:
        """A ``topic`` the NameServer does not list exists nowhere: an
        :class:`~rmqlb.errors.InputError` (exit 2) naming the closest listed topic. When the
        list cannot be read, the capture goes on."""
        try:
            listed = await self._namesrv_call(
                "GET_ALL_TOPIC_LIST_FROM_NAMESERVER", self.admin.topic_list
            )
        except ClusterUnreachable:
            return
        except CALL_ERRORS:
            return
        if topic not in listed:
            raise topic_not_found(topic, listed, where="on this cluster")

    async def _sweep(self, masters: Sequence[tuple[str, str]]) -> None:
        """Groups with online subscribers or committed offsets but no subscription config
        (deleted, or never created with ``autoCreateSubscriptionGroup=false``): ask every
        master who consumes each topic of the NameServer's list."""
        request = "GET_ALL_TOPIC_LIST_FROM_NAMESERVER"
        try:
            listed = await self._namesrv_call(request, self.admin.topic_list)
        except ClusterUnreachable as exc:
            self._error(",".join(self.namesrv), request, str(exc))
            return
        except CALL_ERRORS as exc:
            self._error(self.namesrv[0], request, str(exc))
            return
        clusters = {b.cluster for b in self.brokers.values() if b.cluster}
        # broker and cluster names are topics too, and so is each cluster's reply topic
        skip = set(self.brokers) | clusters | {f"{c}_REPLY_TOPIC" for c in clusters}
        topics = [
            t
            for t in dict.fromkeys(listed)
            if t not in skip
            and t not in SYSTEM_TOPICS
            and not t.startswith((RETRY_PREFIX, DLQ_PREFIX, "rmq_sys_"))
        ]
        await self._consumers_of(masters, topics)

    async def _consumers_of(
        self, masters: Sequence[tuple[str, str]], topics: Sequence[str]
    ) -> None:
        """QUERY_TOPIC_CONSUME_BY_WHO for each topic on each master; groups found are
        captured as they arrive."""

        async def one(addr: str, topic: str) -> None:
            found = await self._try(
                self._label(addr),
                "QUERY_TOPIC_CONSUME_BY_WHO",
                partial(self.admin.topic_consumers, addr, topic=topic),
                broker=True,
                topic=topic,
            )
            for name in found or ():
                self._found(name, masters)

        await asyncio.gather(*(one(addr, t) for t in topics for _, addr in masters))

    async def _check_named(
        self, masters: Sequence[tuple[str, str]], captured: Sequence[Group]
    ) -> None:
        """A named group with no config, no connection and no offset, while every broker
        answered, exists nowhere: :class:`GroupNotFound` (exit 2) with the closest name."""
        if not self.options.groups:
            return
        tables = await asyncio.gather(*(self._configs(addr) for _, addr in masters))
        if any(table is None for table in tables):
            return  # a broker did not answer: the group may live there
        configured = {name for table in tables for name in table or ()}
        doubtful = {
            e.group
            for e in self.errors
            if e.request in ("GET_CONSUMER_CONNECTION_LIST", "GET_CONSUME_STATS")
        }
        known = configured | {g.name for g in captured if g.consumers or g.offsets}
        for name in self.options.groups:
            if name in known or name in doubtful:
                continue
            raise not_found(name, known - set(self.options.groups))

    def _configs(self, addr: str) -> asyncio.Task[dict[str, SubscriptionGroupConfig] | None]:
        """Every subscription-group config of one broker, asked once per capture."""
        task = self.group_configs.get(addr)
        if task is None:
            task = asyncio.ensure_future(
                self._try(
                    self._label(addr),
                    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
                    partial(self.admin.subscription_group_configs, addr),
                    broker=True,
                )
            )
            self.group_configs[addr] = task
        return task

    def _route(self, topic: str) -> asyncio.Task[TopicRoute | None]:
        task = self.routes.get(topic)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._fetch_route(topic))
            self.routes[topic] = task
        return task

    async def _fetch_route(self, topic: str) -> TopicRoute | None:
        try:
            found = await self._namesrv_call(
                "GET_ROUTEINFO_BY_TOPIC", partial(self.admin.route, topic=topic)
            )
        except TopicNotExist:
            # Not a capture failure: the NameServer says the topic does not exist (normal for
            # a retry topic not created yet; a finding for a subscribed topic).
            return None
        except ClusterUnreachable as exc:
            where = ",".join(self.namesrv)
            self._error(where, "GET_ROUTEINFO_BY_TOPIC", f"{topic}: {exc}", topic=topic)
            return None
        except CALL_ERRORS as exc:
            where = self.namesrv[0]
            self._error(where, "GET_ROUTEINFO_BY_TOPIC", f"{topic}: {exc}", topic=topic)
            return None
        route, brokers = found
        for name, info in brokers.items():
            self.brokers.setdefault(name, info)
        return route

    async def _group(self, name: str, masters: Sequence[tuple[str, str]]) -> Group:
        self._route(RETRY_PREFIX + name)
        stats_task = asyncio.gather(*(self._stats(addr, name) for _, addr in masters))
        connection_lists = await asyncio.gather(
            *(
                self._try(
                    self._label(addr),
                    "GET_CONSUMER_CONNECTION_LIST",
                    partial(self.admin.consumer_connection, addr, name),
                    quiet=(ConsumerNotOnline,),
                    broker=True,
                    group=name,
                )
                for _, addr in masters
            )
        )
        view = _GroupView()
        for (_, addr), conn in zip(masters, connection_lists, strict=True):
            if conn is not None:
                self._merge(view, addr, conn)
        for topic in view.subscriptions:
            self._route(topic)
        # One relayed request per client id: for two processes sharing an id the broker
        # relays to one channel anyway, and both get its answer.
        ids = list(dict.fromkeys(c.client_id for c in view.connections))
        answers = await asyncio.gather(*(self._running(name, view, i) for i in ids))
        infos = dict(zip(ids, answers, strict=True))
        consumers = [self._consumer(view, c, infos[c.client_id]) for c in view.connections]
        for consumer in consumers:
            for sub in consumer.subscriptions:
                self._route(sub.topic)
        # Every topic the group's clients subscribe (CLUSTERING push clients include their
        # %RETRY% topic); offsets of other topics stay what consume stats say (committed).
        # A BROADCASTING group keeps its offsets in its clients: the broker has none to add.
        topics = set(view.subscriptions)
        topics.update(sub.topic for c in consumers for sub in c.subscriptions)
        if view.message_model is MessageModel.BROADCASTING:
            topics.clear()
        stats = [o for per_broker in await stats_task for o in per_broker]
        offsets = await self._complete_offsets(name, sorted(topics), stats)
        configs = {}
        for broker, addr in masters:
            table = await self._configs(addr)
            if table and name in table:
                configs[broker] = table[name].to_model()
        return Group(
            name=name,
            message_model=view.message_model,
            consume_type=view.consume_type,
            consumers=tuple(consumers),
            offsets=tuple(sorted(offsets, key=lambda o: queue_sort_key(o.queue))),
            configs=configs,
        )

    async def _complete_offsets(
        self, group: str, topics: Sequence[str], stats: Sequence[QueueOffset]
    ) -> list[QueueOffset]:
        """Offsets of every queue of the group's topics, not only those consume stats list.

        GET_CONSUME_STATS leaves out whole topics (one absent from the broker's current
        subscription table for the group, e.g. with split subscriptions) and maps "never
        committed" to 0. So each topic's min/max offsets come from GET_TOPIC_STATS_INFO (ids
        ``0 .. writeQueueNums-1``: queues written but never read too), and a queue missing
        from consume stats, or listed there at 0 while it holds messages, is asked with
        QUERY_CONSUMER_OFFSET: code 22 means never committed.
        """
        known = {o.queue: o for o in stats}
        routes = await asyncio.gather(*(self._route(t) for t in topics))
        wanted: list[tuple[str, str]] = []  # (broker address, topic)
        for route in routes:
            if route is None:
                continue
            for broker in dict.fromkeys(qd.broker_name for qd in route.queue_datas):
                info = self.brokers.get(broker)
                addr = info.master_addr() if info is not None else None
                if addr:
                    wanted.append((addr, route.topic))
        tables = await asyncio.gather(*(self._topic_stats(a, t) for a, t in wanted))
        ranges: dict[MessageQueue, tuple[str, QueueStats]] = {}
        for (addr, _), table in zip(wanted, tables, strict=True):
            for mq, queue_stats in table.items():
                ranges[mq] = (addr, queue_stats)
        ask = [
            (addr, mq)
            for mq, (addr, qs) in ranges.items()
            if mq not in known or (known[mq].consumer_offset == 0 and qs.max_offset > qs.min_offset)
        ]
        answers = await asyncio.gather(*(self._committed(addr, group, mq) for addr, mq in ask))
        committed = {mq: c for (_, mq), c in zip(ask, answers, strict=True) if c is not None}
        out = [o for o in stats if o.queue not in ranges]
        for mq, (_, qs) in ranges.items():
            old = known.get(mq)
            out.append(
                QueueOffset(
                    mq,
                    broker_offset=qs.max_offset,
                    consumer_offset=committed.get(
                        mq, old.consumer_offset if old is not None else NEVER_COMMITTED
                    ),
                    last_timestamp=old.last_timestamp if old is not None else 0,
                    min_offset=qs.min_offset,
                )
            )
        return out

    def _topic_stats(self, addr: str, topic: str) -> asyncio.Task[dict[MessageQueue, QueueStats]]:
        """One broker's min/max offsets of ``topic``, asked once per capture."""
        key = (addr, topic)
        task = self.topic_stats.get(key)
        if task is None:

            async def ask() -> dict[MessageQueue, QueueStats]:
                found = await self._try(
                    self._label(addr),
                    "GET_TOPIC_STATS_INFO",
                    partial(self.admin.topic_stats, addr, topic),
                    quiet=(TopicNotExist,),
                    broker=True,
                    topic=topic,
                )
                return found or {}

            task = self.topic_stats[key] = asyncio.ensure_future(ask())
        return task

    async def _committed(self, addr: str, group: str, mq: MessageQueue) -> int | None:
        """The committed offset, :data:`NEVER_COMMITTED`, or ``None`` when the ask failed."""
        label = self._label(addr)
        try:
            return await self._request(
                label,
                "QUERY_CONSUMER_OFFSET",
                partial(self.admin.committed_offset, addr, group, mq),
                record=False,
                broker=True,
            )
        except _Failed as failed:
            if isinstance(failed.error, QueryNotFound):
                return NEVER_COMMITTED  # the answer, not a failure
            self._error(
                label, "QUERY_CONSUMER_OFFSET", f"{mq.label()}: {failed.error}", group, mq.topic
            )
            return None

    def _merge(self, view: _GroupView, addr: str, conn: ConsumerConnection) -> None:
        """Unite one broker's connection list into ``view``.

        A client connects to every broker separately, so its ``clientAddr`` differs per
        broker; clients are matched by id. One id listed *n* times by one broker is *n*
        processes sharing an id, so the largest count any broker reports is kept.
        """
        if not view.answered:
            view.answered = True
            view.message_model = conn.message_model or MessageModel.CLUSTERING
            view.consume_type = conn.consume_type
        for topic, sub in conn.subscriptions.items():
            known = view.subscriptions.get(topic)
            if known is None or sub.sub_version > known.sub_version:
                view.subscriptions[topic] = sub
        here: dict[str, list[Connection]] = {}
        for c in conn.connections:
            here.setdefault(c.client_id, []).append(c)
            view.relays.setdefault(c.client_id, [])
            if addr not in view.relays[c.client_id]:
                view.relays[c.client_id].append(addr)
        for cid, entries in here.items():
            have = [c for c in view.connections if c.client_id == cid]
            view.connections.extend(entries[len(have) :])

    async def _stats(self, addr: str, group: str) -> list[QueueOffset]:
        stats = await self._try(
            self._label(addr),
            "GET_CONSUME_STATS",
            partial(self.admin.consume_stats, addr, group),
            broker=True,
            group=group,
        )
        return list(stats) if stats is not None else []

    async def _running(self, group: str, view: _GroupView, client_id: str) -> RunningInfo | None:
        """The client's running info, relayed by a broker that lists it; ``None`` on failure.

        Every broker that lists the client is asked at once and the first answer wins, so a
        silent client (frozen, or behind a broker that cannot reach it) costs one
        ``--timeout``, not one per broker; the other requests are cancelled.
        """
        relays = view.relays.get(client_id, [])
        tasks = [asyncio.ensure_future(self._relay(addr, group, client_id)) for addr in relays]
        info = None
        try:
            for next_done in asyncio.as_completed(tasks):
                answer = await next_done
                if not isinstance(answer, str):
                    info = answer
                    break
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if info is None:
            # In relay order, not in the order the failures arrived: the message is stable.
            failures = [r for t in tasks if isinstance(r := t.result(), str)]
            message = "; ".join(failures) or "no broker left to relay the request"
            self._error(client_id, "GET_CONSUMER_RUNNING_INFO", message, group)
        return info

    async def _relay(self, addr: str, group: str, client_id: str) -> RunningInfo | str:
        """One broker's relay of a running-info request: the answer, or why there is none."""
        try:
            info = await self._request(
                self._label(addr),
                "GET_CONSUMER_RUNNING_INFO",
                partial(self.admin.running_info, addr, group, client_id),
                record=False,
            )
        except _Failed as failed:
            return f"via {self._label(addr)}: {_message(failed.error, addr)}"
        return info if info is not None else f"via {self._label(addr)}: not sent (deadline)"

    @staticmethod
    def _consumer(view: _GroupView, conn: Connection, info: RunningInfo | None) -> Consumer:
        """The model consumer; without running info its actual queues stay unknown and its
        subscriptions are the group's as the broker keeps them."""
        if info is None:
            return Consumer(
                client_id=conn.client_id,
                subscriptions=tuple(view.subscriptions.values()),
                client_addr=conn.client_addr,
                language=conn.language,
                version=conn.version,
            )
        return info.to_consumer(conn.client_id, conn)


class _Failed(Exception):
    """Internal: a request failed (already recorded unless asked not to)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


async def collect(
    options: CollectOptions,
    *,
    progress: ProgressSink | None = None,
    admin: AdminClient | None = None,
) -> Snapshot:
    """Capture a snapshot of the cluster behind ``options.namesrv`` (see module docstring).

    Raises :class:`ClusterUnreachable` when no NameServer (or no broker) answers; every
    other failure is recorded in ``Snapshot.errors``.
    """
    own = admin is None
    client = admin or AdminClient(options.client)
    try:
        return await _Collector(options, client, progress).run()
    finally:
        if own:
            await client.close()
