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

Each kind of data has one step module in :mod:`rmqlb.client.steps` (which groups, routes,
subscription-group configs, connections, running info, offsets, and the per-group assembly);
this module holds the plumbing they share (:class:`Collector`: the semaphore, the deadline,
the error list, the NameServer fail-over) and the order of the capture (:meth:`Collector.run`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol, TypeVar

from rmqlb import __version__
from rmqlb.client.admin import AdminClient, ClientOptions
from rmqlb.client.errors import CALL_ERRORS, Failed, RemotingError, failure_text
from rmqlb.client.steps.assignment import BrokerAssignment
from rmqlb.client.steps.configs import GroupConfigs
from rmqlb.client.steps.discovery import Discovery
from rmqlb.client.steps.offsets import Offsets
from rmqlb.client.steps.proxy import Proxies
from rmqlb.client.steps.routes import Routes
from rmqlb.errors import ClusterUnreachable, InputError
from rmqlb.humanize import duration
from rmqlb.model import BrokerInfo, CaptureError, Snapshot, Source
from rmqlb.model._fast import gc_paused
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import DLQ_PREFIX
from rmqlb.remoting.acl import credential_refusal
from rmqlb.remoting.errors import ResponseError

T = TypeVar("T")

#: Requests in flight at most, over all connections (``--max-in-flight``; the CLI's default,
#: :data:`rmqlb.cli.options.DEFAULT_MAX_IN_FLIGHT`, is this number). Brokers queue admin
#: requests for their own pool (16 threads by default; a 5.x broker's queue holds 10,000), so
#: a few hundred at once keep every thread busy. A status of 1,000 groups on two 4.9.8
#: brokers (4,300 requests) took 40-70 ms less CPU here at 512 than at 128 and the brokers
#: 100-140 ms less (fewer, fuller writes and reads); 1,024 and 4,096 gained nothing more.
DEFAULT_MAX_IN_FLIGHT = 512


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
    RocketMQ's built-in groups are discovered too. ``proxies``: remoting addresses of 5.1+
    Proxies asked for the gRPC clients of each group. ``offset_tables``: when discovering,
    read each master's offset table once and ask consume stats per topic
    (:mod:`~rmqlb.client.steps.offsets`): far less work for the brokers in a capture of many
    groups (the CLI's choice; off, each group's stats are asked without a topic).
    """

    namesrv: tuple[str, ...]
    groups: tuple[str, ...] = ()
    client: ClientOptions = field(default_factory=ClientOptions)
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    deadline: float | None = None
    patterns: tuple[str, ...] = ()
    topic: str | None = None
    system: bool = False
    proxies: tuple[str, ...] = ()
    offset_tables: bool = False

    @property
    def discovers(self) -> bool:
        """Whether groups are discovered: no name given, or glob patterns."""
        return not self.groups or bool(self.patterns)

    def overall_deadline(self) -> float:
        """Seconds for the whole capture: ``deadline``, else 6 request timeouts (min 30 s)."""
        if self.deadline is not None:
            return self.deadline
        return max(30.0, 6 * self.client.timeout)


class Slots:
    """At most ``limit`` holders at once, the others admitted in arrival order.

    What :class:`asyncio.Semaphore` does, at O(1) per release: 3.11's semaphore looks for the
    next waiter from the front of its queue on every release, over the waiters already woken
    and not yet run, and a burst of answers releases hundreds at a time (quadratic in a
    capture of 1,000 groups). ``async with`` holds one slot.
    """

    def __init__(self, limit: int) -> None:
        self._free = max(1, limit)
        self._waiters: deque[asyncio.Future[None]] = deque()

    def take(self) -> bool:
        """Hold a slot now if one is free and nobody waits (no coroutine to get it)."""
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return True
        return False

    async def __aenter__(self) -> None:
        if self.take():
            return
        await self.wait()

    async def wait(self) -> None:
        """Hold the next slot freed, after those who came before."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot was handed over already: pass it on
            raise

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        """Give the slot held back (to the next in line)."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot goes straight to the next in line
                return
        self._free += 1


def _refusal(exc: BaseException) -> str | None:
    """Why a broker refused the request's credentials (:func:`credential_refusal`)."""
    if isinstance(exc, ResponseError):
        return credential_refusal(exc.code, exc.remark)
    return None


def utc_now() -> str:
    """Now, as the snapshot's ``capturedAt`` (``2026-11-22T12:00:00Z``)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Collector:
    """One capture: the plumbing every step shares, and the steps' caches.

    Steps (:mod:`rmqlb.client.steps`) send every request through :meth:`request` or
    :meth:`try_request` (semaphore, deadline, progress, errors) and NameServer requests
    through :meth:`namesrv_call` (fail-over).
    """

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
        self.semaphore = Slots(options.max_in_flight)
        self.brokers: dict[str, BrokerInfo] = {}
        self.broker_names: dict[str, str] = {}  # addr -> broker name
        self.broker_attempts = 0
        self.broker_failures = 0  # no answer, or the credentials refused
        self.refusals: list[str] = []  # why brokers refused the credentials
        self.routes = Routes(self)
        self.configs = GroupConfigs(self)
        self.offsets = Offsets(self)
        self.assignment = BrokerAssignment(self)
        self.proxies = Proxies(self)
        self.discovery = Discovery(self)

    # --- plumbing ------------------------------------------------------------------------

    def timeout(self) -> float | None:
        """Seconds the next request may take (``None``: the overall deadline has passed)."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            return None
        return min(self.options.client.timeout, left)

    def label(self, addr: str) -> str:
        """``broker-a (host:port)`` for a known broker address, else the address."""
        name = self.broker_names.get(addr)
        return f"{name} ({addr})" if name else addr

    async def request(
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
        raising: bool = True,
        sent: Callable[[], object] | None = None,
    ) -> T | None:
        """Run one request under the semaphore and the deadline; failures become errors
        (naming the ``group`` or ``topic`` the request was about) and raise :class:`Failed`
        (``raising``) or return ``None``. ``sent`` is called once the request holds its
        slot and goes out (not while it waits behind others)."""
        if self.progress is not None:
            self.progress.scheduled()
        slots = self.semaphore
        try:
            if not slots.take():  # (``async with`` costs two coroutines per request)
                await slots.wait()
            try:
                timeout = self.timeout()
                if timeout is None:
                    if record:
                        message = f"not sent: overall deadline of {duration(self.budget)} exceeded"
                        self.error(target, request, message, group, topic)
                    return None
                if broker:
                    self.broker_attempts += 1
                if sent is not None:
                    sent()
                try:
                    return await call(timeout=timeout)
                except quiet:
                    return None
                except CALL_ERRORS as exc:
                    refusal = _refusal(exc) if broker else None
                    if refusal is not None:
                        self.refusals.append(refusal)
                    if broker and (isinstance(exc, RemotingError) or refusal is not None):
                        self.broker_failures += 1
                    if record:
                        self.failed(target, request, exc, group, topic)
                    if not raising:
                        return None
                    raise Failed(exc) from exc
            finally:
                slots.release()
        finally:
            if self.progress is not None:
                self.progress.finished()

    def try_request(
        self,
        target: str,
        request: str,
        call: Callable[..., Awaitable[T]],
        **kwargs: Any,
    ) -> Coroutine[Any, Any, T | None]:
        """:meth:`request`, with a failure (recorded) as ``None`` (no coroutine of its own
        around the request's: thousands per capture)."""
        return self.request(target, request, call, raising=False, **kwargs)

    def failed(
        self,
        target: str,
        request: str,
        exc: BaseException,
        group: str | None = None,
        topic: str | None = None,
    ) -> None:
        """Record ``exc`` as the capture error of ``request`` (its message without the peer
        that ``target`` names already)."""
        where = target.split(" ", maxsplit=1)[0]
        self.error(target, request, failure_text(exc, where), group, topic)

    def error(
        self,
        target: str,
        request: str,
        message: str,
        group: str | None = None,
        topic: str | None = None,
    ) -> None:
        """Record a capture error."""
        self.errors.append(CaptureError(target, request, message, group, topic))

    async def namesrv_call(self, request: str, call: Callable[..., Awaitable[T]]) -> T:
        """Ask the NameServers in order; a transport failure moves on to the next one."""
        failures: list[tuple[str, str]] = []
        for addr in list(self.namesrv):
            answer: BaseException | None = None
            try:
                result = await self.request(addr, request, partial(call, addr), record=False)
            except Failed as failed:
                if isinstance(failed.error, RemotingError):
                    failures.append((addr, failure_text(failed.error, addr)))
                    continue
                answer = failed.error
            if answer is not None:
                # An answer (e.g. code 17), not an outage. Raised outside the handler (else
                # its context is the Failed that holds it) and dropped after (its traceback
                # holds this frame): no reference cycle keeps the capture alive.
                try:
                    raise answer from None
                finally:
                    del answer
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
        """Cluster info, then every group (named, discovered) with its routes."""
        try:
            cluster = await self.namesrv_call("GET_BROKER_CLUSTER_INFO", self.admin.cluster_info)
        except ClusterUnreachable:
            raise
        except CALL_ERRORS as exc:
            raise ClusterUnreachable(f"NameServer refused cluster info: {exc}") from exc
        self.brokers = dict(cluster)
        masters = self.masters()
        for name in self.options.groups:
            self.discovery.want(name, masters)
        if self.options.discovers:
            if self.options.offset_tables:
                self.offsets.read_tables([addr for _, addr in masters])
            await self.discovery.discover(masters)
        results = await asyncio.gather(*self.discovery.tasks.values())
        await self.routes.settled()
        if self.broker_attempts and self.broker_failures == self.broker_attempts:
            if self.refusals:  # no report built from the NameServer alone
                raise ClusterUnreachable(
                    f"every broker refused the credentials: {self.refusals[0]}"
                )
            detail = "; ".join(f"{e.target}: {e.message}" for e in self.errors[:3])
            raise ClusterUnreachable(f"no broker answered: {detail}")
        await self.discovery.check_named(masters, results)
        if self.options.discovers:
            results.sort(key=lambda g: java_key(g.name))
        # a group's DLQ route is read for its dead letters (onBrokers deadLetters), not
        # kept as a topic unless someone subscribes the DLQ
        subscribed = {s.topic for g in results for c in g.consumers for s in c.subscriptions}
        topics = {
            topic: route
            for topic, route in self.routes.known().items()
            if not topic.startswith(DLQ_PREFIX) or topic in subscribed
        }
        return Snapshot(
            topics=topics,
            groups={g.name: g for g in results},
            brokers=self._with_versions(),
            captured_at=utc_now(),
            source=Source(
                namesrv=tuple(self.options.namesrv),
                rmqlb=__version__,
                proxies=self.options.proxies,
            ),
            errors=tuple(self.errors),
        )

    def _with_versions(self) -> dict[str, BrokerInfo]:
        """The brokers, each with the version its master answered with when not read from
        its config: every response header carries it, so this costs no request."""
        out: dict[str, BrokerInfo] = {}
        for name, info in sorted(self.brokers.items()):
            master = info.addrs.get(0)
            seen = self.admin.server_versions.get(master) if master is not None else None
            known = info.version is not None or seen is None
            out[name] = info if known else replace(info, version=seen)
        return out

    def release(self) -> None:
        """Drop the steps once the capture has ended: each refers back to this collector,
        and the cycle would keep the capture's tasks, event loop and errors alive until the
        garbage collector's next full pass (a long-running exporter's memory grows)."""
        del self.routes, self.configs, self.offsets, self.assignment, self.proxies
        del self.discovery

    def masters(self) -> list[tuple[str, str]]:
        """(broker name, address to ask) for every broker: the master, else a slave."""
        out = []
        for name in sorted(self.brokers):
            addr = self.brokers[name].master_addr()
            if addr:
                out.append((name, addr))
                self.broker_names[addr] = name
        return out


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
    collector = Collector(options, client, progress)
    # A capture allocates a few hundred thousand short-lived objects (frames, futures,
    # decoded bodies) while the objects it keeps pile up: the cyclic collector would run
    # hundreds of times and scan the snapshot being built (and everything imported) again
    # and again, for nothing to free (the few cycles asyncio makes wait till the end).
    try:
        with gc_paused():
            return await collector.run()
    finally:
        collector.release()
        if own:
            await client.close()
