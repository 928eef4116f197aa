"""A protocol-faithful fake RocketMQ cluster serving a :class:`~rmqlb.model.Snapshot`.

One asyncio server plays the NameServer; one more per broker plays that broker. They speak
the real remoting codec (:mod:`rmqlb.remoting.frame`) and answer with bodies written by the
real fastjson-dialect encoders (:mod:`rmqlb.remoting.bodies`), so a client tested against
the fake meets the quirks of real servers (bare integer keys, MessageQueue objects as keys,
hash-ordered maps). Answers follow protocol §11.2:

* NameServer: routes (17 for unknown topics; standard JSON when the request version is
  >= 401 or ``acceptStandardJsonOnly``), cluster info, topic list; other codes -> 3;
* broker: consumer ids (1 for unknown groups), connection list (206), running info relayed
  to the "client" (canned body from the snapshot, code 1 when the client is not online, 207
  after the relay delay for a silent client or one whose ``assigned`` is unknown), consume
  stats (this broker's queues only; an empty table for unknown groups), all subscription
  groups (the snapshot's plus the built-in system groups), the groups consuming a topic;
  other codes -> 3.

Headers, remarks and bodies follow what a real 4.9.8 cluster answers (recorded in
``tests/data/real-4.9.8``), maps and sets in Java's hash order; docs/protocol.md lists
where the fake knowingly differs.

With ``acl`` (access key -> secret) brokers verify every request's signature as an ACL 1.0
broker does and answer code 1 ("Check signature failed ...") otherwise.

Every request received is recorded (:attr:`FakeCluster.requests`) and, with ``log_path``,
appended to a file as ``105 GET_ROUTEINFO_BY_TOPIC ns``. Faults: see :mod:`rmqlb.fake.faults`.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import IO, Any

from rmqlb.errors import ProtocolError
from rmqlb.fake.clock import capture_delta_ms, shifted
from rmqlb.fake.faults import Faults, FaultSpec
from rmqlb.model import (
    BrokerInfo,
    Consumer,
    DeadLetters,
    Group,
    MessageModel,
    MessageQueue,
    QueueData,
    QueueOffset,
    Snapshot,
    TopicRoute,
)
from rmqlb.model.snapshot import (
    BROKER_DEFAULTS,
    DLQ_PREFIX,
    logical_offsets,
    physical_offsets,
)
from rmqlb.remoting import assignment, bodies
from rmqlb.remoting.acl import signature as acl_signature
from rmqlb.remoting.codes import (
    LANGUAGE_BYTES,
    RequestCode,
    ResponseCode,
    request_code_name,
    version_name,
)
from rmqlb.remoting.frame import (
    FrameDecoder,
    RemotingCommand,
    SerializeType,
    encode_frame,
    response_to,
)
from rmqlb.remoting.javahash import HashTable, concurrent_map, hash_map, java_string_hash

DEFAULT_CLUSTER = "DefaultCluster"
#: Built-in groups every broker lists in its subscription-group table (MixAll), in the
#: order SubscriptionGroupManager puts them; 5.x adds CID_RMQ_SYS_TRANS.
_SYSTEM_GROUPS_V4 = (
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",
    "CID_ONSAPI_PULL",
    "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",
)
SYSTEM_GROUPS: Mapping[int, tuple[str, ...]] = MappingProxyType(
    {4: _SYSTEM_GROUPS_V4, 5: (*_SYSTEM_GROUPS_V4, "CID_RMQ_SYS_TRANS")}
)
#: FAQUrl.suggestTodo's suffix on error remarks: 4.9.x and 5.x link different pages.
_FAQ = {
    4: "\nSee http://rocketmq.apache.org/docs/faq/ for further details.",
    5: "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.",
}
#: Where a broker's relay times out: the first stack frame its remark names (4.9.8, 5.3.3).
_RELAY_TIMEOUT_FRAME = {
    4: "org.apache.rocketmq.remoting.netty.NettyRemotingAbstract.invokeSyncImpl"
    "(NettyRemotingAbstract.java:439)",
    5: "org.apache.rocketmq.remoting.netty.NettyRemotingAbstract.invokeSyncImpl"
    "(NettyRemotingAbstract.java:507)",
}
#: The remark a Java client leaves on its successful running-info answer (it never clears
#: RemotingCommand.createResponseCommand's default); the broker relays it verbatim.
CLIENT_DEFAULT_REMARK = "not set any response code"
_SERVER_VERSION = {4: 409, 5: 479}  # V4_9_8, V5_3_3
NAMESRV = "ns"
PROXY_PREFIX = "proxy:"  # listener target of a Proxy: "proxy:<its address in the snapshot>"


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One request as the fake received it."""

    code: int
    target: str
    ext_fields: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    version: int = 0

    @property
    def name(self) -> str:
        """The request code's Java name (the number when unknown)."""
        return request_code_name(self.code)

    def line(self) -> str:
        """The request-log line: ``105 GET_ROUTEINFO_BY_TOPIC ns``."""
        return f"{self.code} {self.name} {self.target}"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (bind to 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def on_physical_queues(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` with the offsets of static topics' logical queues on the broker queues
    hosting them (what brokers keep and answer; rmqlb's capture maps them back with
    :func:`~rmqlb.model.snapshot.logical_offsets`)."""
    static = [route for route in snapshot.topics.values() if route.queue_mappings]
    if not static:
        return snapshot
    groups = {}
    for name, group in snapshot.groups.items():
        offsets: Sequence[QueueOffset] = group.offsets
        for route in static:
            offsets = physical_offsets(route, offsets)
        groups[name] = replace(group, offsets=tuple(offsets))
    return replace(snapshot, groups=groups)


def broker_names(snapshot: Snapshot) -> list[str]:
    """Brokers of the snapshot: its ``brokers``, then any other broker its routes name."""
    names = list(snapshot.brokers)
    for route in snapshot.topics.values():
        for qd in route.queue_datas:
            if qd.broker_name not in names:
                names.append(qd.broker_name)
    for group in snapshot.groups.values():
        for off in group.offsets:
            if off.queue.broker_name not in names:
                names.append(off.queue.broker_name)
    return names


class FakeCluster:
    """NameServer + brokers on ``host``; use ``async with`` or :meth:`start` / :meth:`stop`."""

    def __init__(
        self,
        snapshot: Snapshot,
        *,
        host: str = "127.0.0.1",
        namesrv_port: int = 0,
        dialect: int = 4,
        latency_ms: float = 0.0,
        faults: Iterable[str | FaultSpec] = (),
        ssl_context: ssl.SSLContext | None = None,
        binary_headers: bool = False,
        log_path: str | None = None,
        acl: Mapping[str, str] | None = None,
        as_of_now: bool = False,
    ) -> None:
        if dialect not in _SERVER_VERSION:
            raise ValueError(f"dialect must be 4 or 5, not {dialect}")
        self._captured = on_physical_queues(snapshot)
        self._as_of_now = as_of_now
        self._aged: tuple[int, Snapshot] | None = None  # (whole seconds moved, the snapshot)
        self.host = host
        self.dialect = dialect
        self.faults = Faults.parse(faults)
        self.latency = self.faults.number("latency", latency_ms) / 1000.0
        self.relay_delay = self.faults.number("relay-delay", 200.0) / 1000.0
        self.version = _SERVER_VERSION[dialect]
        self.binary_headers = binary_headers
        #: access key -> secret key: brokers check signatures like an ACL 1.0 broker
        self.acl = dict(acl) if acl is not None else None
        self.requests: list[LoggedRequest] = []
        # The snapshot never changes: encode each large body once (a real broker's work is
        # not what the fake should spend the tests' and benchmarks' CPU on).
        self._bodies: dict[tuple[str, ...], bytes] = {}
        self._who: dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]] = {}
        self._stats: dict[MessageQueue, bodies.QueueStats] | None = None
        self._dlq: dict[str, dict[str, DeadLetters]] | None = None
        # per group: each client id's consumer (the first that is not a Proxy's), and the
        # committed offsets its running info lists (a scan of each per answer was quadratic)
        self._clients: dict[str, dict[str, Consumer]] = {}
        self._commits: dict[str, dict[MessageQueue, int]] = {}
        self._ssl = ssl_context
        self._namesrv_port = namesrv_port
        self._log_path = log_path
        self._log: IO[str] | None = None
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._handlers: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.namesrv_addr = ""
        #: the snapshot's Proxy address -> the fake Proxy's (5.x dialect)
        self.proxy_addrs: dict[str, str] = {}
        self.broker_addrs: dict[str, str] = {}
        self.brokers: dict[str, BrokerInfo] = {}

    @property
    def snapshot(self) -> Snapshot:
        """What the cluster answers from: the snapshot as captured, or, ``as_of_now``, moved
        to this second (:mod:`rmqlb.fake.clock`), so every request sees the ages a
        ``--dump`` of the file shows, however long the fake has run. A new second drops
        the encoded bodies, whose timestamps it changes."""
        if not self._as_of_now:
            return self._captured
        moved = capture_delta_ms(self._captured) // 1000
        if self._aged is None or self._aged[0] != moved:
            self._aged = (moved, shifted(self._captured, moved * 1000))
            self._bodies.clear()
            self._who.clear()
            self._stats = None
            self._dlq = None
            self._clients.clear()
            self._commits.clear()
        return self._aged[1]

    async def __aenter__(self) -> FakeCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Open the listeners; afterwards :attr:`namesrv_addr` and :attr:`broker_addrs` are set."""
        if self._log_path:
            self._log = open(self._log_path, "w", encoding="utf-8")  # noqa: SIM115
        for name in broker_names(self.snapshot):
            if self.faults.has("broker-down", name):
                port = free_port(self.host)
            else:
                server = await self._listen(name, 0)
                port = int(server.sockets[0].getsockname()[1])
            self.broker_addrs[name] = f"{self.host}:{port}"
        self.brokers = self._broker_table()
        for proxy in self._proxies():
            server = await self._listen(PROXY_PREFIX + proxy, 0)
            self.proxy_addrs[proxy] = f"{self.host}:{server.sockets[0].getsockname()[1]}"
        if self.faults.has("namesrv-down"):
            port = self._namesrv_port or free_port(self.host)
        else:
            server = await self._listen(NAMESRV, self._namesrv_port)
            port = int(server.sockets[0].getsockname()[1])
        self.namesrv_addr = f"{self.host}:{port}"

    def _proxies(self) -> list[str]:
        """The 5.1+ Proxies of the snapshot (asked, or listing a client): 5.x dialect only."""
        if self.dialect < 5:
            return []
        source = self.snapshot.source
        named = [*source.proxies] if source is not None else []
        named += [c.proxy for g in self.snapshot.groups.values() for c in g.consumers if c.proxy]
        return list(dict.fromkeys(named))

    async def _listen(self, target: str, port: int) -> asyncio.Server:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if task is not None:
                self._handlers.add(task)
            try:
                await self._serve_connection(target, reader, writer)
            except asyncio.CancelledError:
                return  # shutting down: nobody awaits a connection handler
            finally:
                if task is not None:
                    self._handlers.discard(task)

        server = await asyncio.start_server(handle, self.host, port, ssl=self._ssl)
        self._servers.append(server)
        return server

    def _broker_table(self) -> dict[str, BrokerInfo]:
        """Brokers as the fake announces them: same names, ids and clusters, real ports."""
        table: dict[str, BrokerInfo] = {}
        for name, addr in self.broker_addrs.items():
            known = self.snapshot.brokers.get(name)
            ids = sorted(known.addrs) if known is not None and known.addrs else [0]
            cluster = known.cluster if known is not None and known.cluster else DEFAULT_CLUSTER
            table[name] = BrokerInfo(name, cluster, dict.fromkeys(ids, addr))
        return table

    async def stop(self) -> None:
        """Close every listener and connection; cancel requests still being answered."""
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for writer in list(self._writers):
            writer.close()
        if self._handlers:
            _, late = await asyncio.wait(list(self._handlers), timeout=2.0)
            for task in late:
                task.cancel()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._servers.clear()
        if self._log is not None:
            self._log.close()
            self._log = None

    # --- connection handling -------------------------------------------------------------

    async def _serve_connection(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self._writers.add(writer)
        decoder = FrameDecoder()
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                try:
                    commands = decoder.feed(data)
                except ProtocolError:
                    break  # Java closes the channel on an undecodable frame
                for cmd in commands:
                    if cmd.is_response:
                        continue  # a response to nothing we asked
                    task = asyncio.get_running_loop().create_task(self._answer(target, cmd, writer))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(
        self, target: str, cmd: RemotingCommand, writer: asyncio.StreamWriter
    ) -> None:
        fields = {k: v or "" for k, v in (cmd.ext_fields or {}).items()}
        logged = LoggedRequest(cmd.code, target, fields, cmd.body, cmd.version)
        self.requests.append(logged)
        if self._log is not None:
            self._log.write(logged.line() + "\n")
            self._log.flush()
        if self.latency:
            await asyncio.sleep(self.latency)
        try:
            if target != NAMESRV and await self._broker_fault(target, cmd, writer):
                return
            if target == NAMESRV:
                reply = self._namesrv(cmd)
            elif target.startswith(PROXY_PREFIX):
                reply = self._proxy(target.removeprefix(PROXY_PREFIX), cmd)
            else:
                reply = self._acl_check(cmd) or await self._broker(target, cmd)
            if cmd.is_oneway:
                return  # no response
            writer.write(encode_frame(reply))
            await writer.drain()
        except (ConnectionError, OSError):
            pass

    async def _broker_fault(
        self, target: str, cmd: RemotingCommand, writer: asyncio.StreamWriter
    ) -> bool:
        if self.faults.has("garbage", target):
            # A length-prefixed "frame" whose header is not JSON: a codec error, not a hang.
            writer.write(b"\x00\x00\x00\x10\x00\x00\x00\x0c<html>oops</")
            await writer.drain()
            return True
        if self.faults.has("blackhole", target):
            return True  # read, never answered
        if self.faults.has("oversized", target):
            writer.write(b"\x7f\xff\xff\xf0\x00\x00\x00\x10" + b"{" * 64)
            await writer.drain()
            return True
        if self.faults.has("reset", target):
            frame = encode_frame(self._reply(cmd, ResponseCode.SUCCESS, body=b"x" * 64))
            writer.write(frame[: len(frame) // 2])
            await writer.drain()
            transport = writer.transport
            transport.abort()
            return True
        return False

    def _reply(
        self,
        cmd: RemotingCommand,
        code: int,
        *,
        remark: str | None = None,
        body: bytes = b"",
        language: str = "JAVA",
        version: int | None = None,
        ext_fields: Mapping[str, str | None] | None = None,
    ) -> RemotingCommand:
        # Servers reply in their own header encoding, whatever the request used (§3.7).
        return response_to(
            cmd,
            code,
            body=body,
            remark=remark,
            ext_fields=ext_fields,
            language=language,
            version=self.version if version is None else version,
            serialize_type=SerializeType.ROCKETMQ if self.binary_headers else SerializeType.JSON,
        )

    def _acl_check(self, cmd: RemotingCommand) -> RemotingCommand | None:
        """ACL 1.0 as a 4.x broker checks it (NameServers do not): code 1 when it fails."""
        if self.acl is None:
            return None
        fields = dict(cmd.ext_fields or {})
        access_key = fields.get("AccessKey")
        denied = "org.apache.rocketmq.acl.common.AclException: "
        if not access_key:
            return self._reply(
                cmd, ResponseCode.SYSTEM_ERROR, remark=denied + "No accessKey is configured"
            )
        secret = self.acl.get(access_key)
        if secret is None:
            return self._reply(
                cmd,
                ResponseCode.SYSTEM_ERROR,
                remark=denied + f"No acl config for {access_key}",
            )
        if fields.get("Signature") != acl_signature(fields, cmd.body, secret):
            return self._reply(
                cmd,
                ResponseCode.SYSTEM_ERROR,
                remark=denied + f"Check signature failed for accessKey={access_key}",
            )
        return None

    def _unsupported(self, cmd: RemotingCommand) -> RemotingCommand:
        return self._reply(
            cmd,
            ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
            remark=f" request type {cmd.code} not supported",
        )

    # --- NameServer ----------------------------------------------------------------------

    def _dead_letters(self) -> dict[str, dict[str, DeadLetters]]:
        """Each group's DLQ topic the snapshot has dead letters of -> broker -> them."""
        snapshot = self.snapshot  # first: a new second of an "as of now" snapshot resets
        if self._dlq is None:
            out: dict[str, dict[str, DeadLetters]] = {}
            for name, group in snapshot.groups.items():
                for broker, view in group.on_brokers.items():
                    if view.dead_letters is not None:
                        out.setdefault(DLQ_PREFIX + name, {})[broker] = view.dead_letters
            self._dlq = out
        return self._dlq

    def _route(self, topic: str) -> TopicRoute | None:
        """The route of ``topic``: the snapshot's, or a DLQ's as a broker creates it (one
        queue on each broker a message of the group was given up on)."""
        route = self.snapshot.topics.get(topic)
        if route is not None:
            return route
        brokers = self._dead_letters().get(topic)
        if not brokers:
            return None
        return TopicRoute(topic, tuple(QueueData(b, 1, 1) for b in sorted(brokers)))

    def _namesrv(self, cmd: RemotingCommand) -> RemotingCommand:
        if cmd.code == RequestCode.GET_ROUTEINFO_BY_TOPIC:
            topic = cmd.ext("topic") or ""
            route = self._route(topic)
            if route is None:
                return self._reply(
                    cmd,
                    ResponseCode.TOPIC_NOT_EXIST,
                    remark=(
                        f"No topic route info in name server for the topic: {topic}"
                        + _FAQ[self.dialect]
                    ),
                )
            standard = bodies.route_wants_standard_json(cmd.version, cmd.ext_fields)
            # RouteInfoManager keeps a topic's queue data in a HashMap by broker name and
            # lists its brokers from a HashSet of those names: both lists in hash order.
            names = HashTable().order(
                [qd.broker_name for qd in route.queue_datas], java_string_hash
            )
            rank = {n: i for i, n in enumerate(names)}
            ordered = TopicRoute(
                route.topic,
                tuple(sorted(route.queue_datas, key=lambda q: rank[q.broker_name])),
                route.queue_mappings,
            )
            brokers = {n: self.brokers[n] for n in names if n in self.brokers}
            body = bodies.encode_topic_route(
                ordered, brokers, standard=standard, dialect=self.dialect
            )
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_BROKER_CLUSTER_INFO:
            body = bodies.encode_cluster_info(self.brokers, dialect=self.dialect)
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER:
            # copied from the route table: a HashMap(1024) in 4.9.x, a ConcurrentHashMap in 5.x
            table = hash_map(1024) if self.dialect == 4 else concurrent_map(1024)
            dlqs = [t for t in self._dead_letters() if t not in self.snapshot.topics]
            names = [*self._system_topics(), *self.snapshot.topics, *dlqs]
            topics = table.order(names, java_string_hash)
            body = bodies.encode_topic_list(topics, dialect=self.dialect)
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        return self._unsupported(cmd)

    def _system_topics(self) -> list[str]:
        """The topics every 4.9.8 broker registers with default settings (TopicConfigManager,
        and the transaction half topic), as its NameServer lists them; none for 5.x."""
        if self.dialect != 4:
            return []
        clusters = dict.fromkeys(info.cluster or DEFAULT_CLUSTER for info in self.brokers.values())
        return [
            "SELF_TEST_TOPIC",
            "TBW102",
            "BenchmarkTest",
            *clusters,
            *self.brokers,
            "OFFSET_MOVED_EVENT",
            "SCHEDULE_TOPIC_XXXX",
            *(f"{c}_REPLY_TOPIC" for c in clusters),
            "RMQ_SYS_TRANS_HALF_TOPIC",
        ]

    # --- Proxy (5.1+ remoting port) ---------------------------------------------------------

    def _proxy(self, proxy: str, cmd: RemotingCommand) -> RemotingCommand:
        """A 5.1 Proxy's remoting port: the connection list of a group's clients connected
        to it, gRPC or remoting (206 when it has none); other codes -> 3."""
        if cmd.code != RequestCode.GET_CONSUMER_CONNECTION_LIST:
            return self._unsupported(cmd)
        name = cmd.ext("consumerGroup") or ""
        group = self.snapshot.groups.get(name)
        mine = tuple(c for c in group.consumers if c.proxy == proxy) if group else ()
        if group is None or not mine:
            return self._reply(
                cmd,
                ResponseCode.CONSUMER_NOT_ONLINE,
                remark=f"the consumer group[{name}] not online",
            )
        listed = replace(group, consumers=mine)
        body = bodies.encode_consumer_connection(
            listed, dialect=self.dialect, consume_from_where=_consume_from_where(listed)
        )
        return self._reply(cmd, ResponseCode.SUCCESS, body=body)

    # --- Broker --------------------------------------------------------------------------

    def _online_group(self, name: str, broker: str) -> Group | None:
        """The group with the clients ``broker`` lists: not a Proxy's gRPC clients (they
        heartbeat to the Proxy only), and as often as the snapshot's list of that broker has
        each id (``onBrokers``; the group's own list when it has none); ``None`` when it
        lists nobody."""
        group = self.snapshot.groups.get(name)
        if group is None:
            return None
        listed = tuple(c for c in group.consumers if c.proxy is None)
        on = group.on_brokers.get(broker)
        if on is not None and on.client_ids is not None:
            by_id: dict[str, list[Consumer]] = {}
            for c in listed:
                by_id.setdefault(c.client_id, []).append(c)
            seen: dict[str, int] = {}
            picked = []
            for cid in on.client_ids:
                same = by_id.get(cid)
                if same:  # the k-th connection of the id, the last one again past the end
                    k = seen[cid] = seen.get(cid, -1) + 1
                    picked.append(same[min(k, len(same) - 1)])
            listed = tuple(picked)
        if not listed:
            return None
        return group if listed == group.consumers else replace(group, consumers=listed)

    async def _broker(self, broker: str, cmd: RemotingCommand) -> RemotingCommand:
        group_name = cmd.ext("consumerGroup") or ""
        if cmd.code == RequestCode.GET_CONSUMER_LIST_BY_GROUP:
            # The response has an (empty) custom header, so Java writes "extFields":{}.
            group = self._online_group(group_name, broker)
            if group is None:
                return self._reply(
                    cmd,
                    ResponseCode.SYSTEM_ERROR,
                    remark=f"no consumer for this group, {group_name}",
                    ext_fields={},
                )
            body = bodies.encode_consumer_id_list([c.client_id for c in group.consumers])
            return self._reply(cmd, ResponseCode.SUCCESS, body=body, ext_fields={})
        if cmd.code == RequestCode.GET_CONSUMER_CONNECTION_LIST:
            group = self._online_group(group_name, broker)
            if group is None:
                return self._reply(
                    cmd,
                    ResponseCode.CONSUMER_NOT_ONLINE,
                    remark=f"the consumer group[{group_name}] not online",
                )
            online = group
            listed = self.snapshot.groups.get(group_name)
            view = listed.on_brokers.get(broker) if listed is not None else None
            kept = view.subscriptions if view is not None else None
            # as every broker lists it, unless this broker keeps subscriptions of its own
            whole = group is listed and kept is None
            body = self._cached(
                ("203", group_name) if whole else ("203", group_name, broker),
                lambda: bodies.encode_consumer_connection(
                    online,
                    dialect=self.dialect,
                    consume_from_where=_consume_from_where(online),
                    kept=kept,
                ),
            )
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_CONSUMER_RUNNING_INFO:
            return await self._running_info(cmd, group_name, cmd.ext("clientId") or "")
        if cmd.code == RequestCode.GET_CONSUME_STATS:
            topic = cmd.ext("topic")
            body = self._cached(
                ("208", group_name, broker, topic or ""),
                lambda: bodies.encode_consume_stats(
                    self._consume_stats(broker, group_name, topic),
                    dialect=self.dialect,
                    consume_tps=self._consume_tps(broker, group_name, topic),
                    group=group_name,
                ),
            )
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_ALL_CONSUMER_OFFSET:
            body = self._cached(
                ("43", broker),
                lambda: bodies.encode_consumer_offsets(self._offset_table(broker), self.dialect),
            )
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG:
            body = self._cached(("201", broker), lambda: self._subscription_groups(broker))
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_TOPIC_STATS_INFO:
            return self._topic_stats(cmd, broker, cmd.ext("topic") or "")
        if cmd.code == RequestCode.QUERY_CONSUMER_OFFSET:
            return self._committed_offset(cmd, broker, group_name)
        if cmd.code in (RequestCode.GET_MAX_OFFSET, RequestCode.GET_MIN_OFFSET):
            mq = MessageQueue(cmd.ext("topic") or "", broker, _int(cmd.ext("queueId")))
            low, high = self._store_range(mq)
            offset = high if cmd.code == RequestCode.GET_MAX_OFFSET else low
            return self._reply(cmd, ResponseCode.SUCCESS, ext_fields={"offset": str(offset)})
        if cmd.code == RequestCode.GET_BROKER_RUNTIME_INFO:
            # Only what the fake knows: its version. A real broker adds ~60 statistics.
            table = {
                "brokerVersionDesc": version_name(self.version),
                "brokerVersion": str(self.version),
            }
            return self._reply(cmd, ResponseCode.SUCCESS, body=bodies.encode_kv_table(table))
        if cmd.code == RequestCode.QUERY_TOPIC_CONSUME_BY_WHO:
            body = bodies.encode_group_list(self._consumed_by(broker, cmd.ext("topic") or ""))
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_BROKER_CONFIG:
            # Only the keys rmqlb reads (a real broker writes its ~200 settings); the
            # response header carries the config's data version.
            body = bodies.encode_broker_config(self._broker_config(broker))
            version = bodies.encode_data_version_field(0)
            return self._reply(
                cmd, ResponseCode.SUCCESS, body=body, ext_fields={"version": version}
            )
        if self.dialect >= 5 and cmd.code == RequestCode.GET_ALL_MESSAGE_REQUEST_MODE:
            body = assignment.encode_request_modes(self._request_modes(broker))
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if self.dialect >= 5 and cmd.code == RequestCode.QUERY_ASSIGNMENT:
            return self._query_assignment(cmd, broker)
        return self._unsupported(cmd)

    def _broker_config(self, broker: str) -> dict[str, str]:
        """The broker-side-assignment settings: the snapshot's, else 5.x's defaults (a 4.x
        broker has none of these keys); ``channelExpiredTimeout`` only where the snapshot
        gives it (a 5.0 broker has no such key)."""
        if self.dialect < 5:
            return {}
        info = self.snapshot.brokers.get(broker)
        given = info.config if info is not None and info.config is not None else None
        out = {}
        for key, attr in bodies.BROKER_CONFIG_ATTRS.items():
            value = getattr(given, attr, None) if given is not None else None
            if value is None and attr != "channel_expired_timeout":
                value = getattr(BROKER_DEFAULTS, attr)
            if value is not None:
                out[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return out

    def _request_modes(self, broker: str) -> list[assignment.RequestModeEntry]:
        """Every (topic, group) mode the snapshot says this broker has set."""
        out = []
        for name, group in self.snapshot.groups.items():
            on = group.on_brokers.get(broker)
            for topic, mode in (on.request_modes or {}).items() if on is not None else ():
                out.append(
                    assignment.RequestModeEntry(
                        topic, name, mode.mode.value, mode.pop_share_queue_num
                    )
                )
        return out

    def _query_assignment(self, cmd: RemotingCommand, broker: str) -> RemotingCommand:
        """QUERY_ASSIGNMENT: the answer the snapshot recorded for this broker, client and
        topic; none recorded: no assignment (``{}``, what a broker answers for a strategy
        it does not know). Asked in BROADCASTING mode, every readable queue of the topic's
        route, as ``QueryAssignmentProcessor`` answers."""
        try:
            ask = assignment.decode_query_assignment_request(cmd.body)
        except ProtocolError:
            return self._reply(cmd, ResponseCode.SYSTEM_ERROR, remark="bad request body")
        route = self.snapshot.topics.get(ask["topic"])
        if ask["messageModel"] == MessageModel.BROADCASTING.value and route is not None:
            every = [assignment.QueueAssignment(q, None) for q in route.readable_queues()]
            return self._reply(
                cmd, ResponseCode.SUCCESS, body=assignment.encode_query_assignment(every)
            )
        group = self.snapshot.groups.get(ask["consumerGroup"])
        on = group.on_brokers.get(broker) if group is not None else None
        found = None
        for a in on.assignments if on is not None else ():
            if (a.client_id, a.topic) == (ask["clientId"], ask["topic"]):
                found = a
        answer = (
            None
            if found is None or found.queues is None
            else [
                assignment.QueueAssignment(q, found.mode.value if found.mode else None)
                for q in found.queues
            ]
        )
        return self._reply(
            cmd, ResponseCode.SUCCESS, body=assignment.encode_query_assignment(answer)
        )

    def _topic_stats(self, cmd: RemotingCommand, broker: str, topic: str) -> RemotingCommand:
        """Min/max offsets of ids ``0 .. writeQueueNums-1`` as a 4.x broker lists them; the
        offsets come from the snapshot's groups (the largest max, the smallest min), a
        DLQ's from the group's dead letters."""
        letters = self._dead_letters().get(topic, {}).get(broker)
        if letters is not None and topic not in self.snapshot.topics:
            low = letters.max_offset - letters.messages
            stats = {
                MessageQueue(topic, broker, 0): bodies.QueueStats(
                    low, letters.max_offset, letters.last_timestamp
                )
            }
            return self._reply(
                cmd, ResponseCode.SUCCESS, body=bodies.encode_topic_stats(stats, self.dialect)
            )
        route = self.snapshot.topics.get(topic)
        datas = [qd for qd in route.queue_datas if qd.broker_name == broker] if route else []
        if not datas:
            return self._reply(
                cmd, ResponseCode.TOPIC_NOT_EXIST, remark=f"topic[{topic}] not exist"
            )
        known = self._queue_stats()
        count = max(qd.write_queue_nums for qd in datas)
        stats = {
            mq: known.get(mq, bodies.QueueStats(0, 0))
            for mq in (MessageQueue(topic, broker, qid) for qid in range(count))
        }
        body = bodies.encode_topic_stats(stats, self.dialect)
        return self._reply(cmd, ResponseCode.SUCCESS, body=body)

    def _consume_tps(self, broker: str, group_name: str, topic: str | None) -> float:
        """The group's fetch rate on ``broker`` as the snapshot has it (0 when it has none).
        The snapshot keeps one rate over all the group's topics: a one-topic request gets
        all of it for the first topic the group has offsets of there and 0 for the others,
        so the answers per topic add up to the answer without one."""
        group = self.snapshot.groups.get(group_name)
        on = group.on_brokers.get(broker) if group is not None else None
        if group is None or on is None or on.consume_tps is None:
            return 0.0
        if topic is not None and self._offset_topics(broker, group)[:1] != [topic]:
            return 0.0
        return on.consume_tps

    def _offset_topics(self, broker: str, group: Group) -> list[str]:
        """The topics ``group`` committed offsets of on ``broker``, as its offset table holds
        them (a BROADCASTING group keeps its offsets in its clients: none; one whose clients
        mix both models has those its CLUSTERING clients committed)."""
        if group.consumed_model is MessageModel.BROADCASTING:
            return []
        return list(
            dict.fromkeys(
                o.queue.topic
                for o in group.offsets
                if o.queue.broker_name == broker and o.committed
            )
        )

    def _offset_table(self, broker: str) -> dict[str, dict[int, int]]:
        """GET_ALL_CONSUMER_OFFSET: ``topic@group`` -> queue id -> committed offset, of
        every group's committed offsets on ``broker``."""
        table: dict[str, dict[int, int]] = {}
        for group in self.snapshot.groups.values():
            for topic in self._offset_topics(broker, group):
                table[f"{topic}@{group.name}"] = {
                    o.queue.queue_id: o.consumer_offset
                    for o in group.offsets
                    if o.queue.broker_name == broker and o.queue.topic == topic and o.committed
                }
        return table

    def _consume_stats(self, broker: str, group_name: str, topic: str | None) -> list[QueueOffset]:
        """GET_CONSUME_STATS rows as a broker builds them (AdminBrokerProcessor).

        Topics: the one asked for, else those the group committed offsets of here (a
        BROADCASTING group keeps its offsets in its clients: none); a topic missing from the
        group's subscriptions is skipped while the group has any. Rows: queue ids
        ``0 .. readQueueNums-1`` of this broker, the consumer offset 0 when never committed.
        """
        group = self.snapshot.groups.get(group_name)
        if group is None:
            return []
        mine = {o.queue: o for o in group.offsets if o.queue.broker_name == broker}
        topics = [topic] if topic else self._offset_topics(broker, group)
        subscribed = bodies.merged_subscriptions(group.consumers)
        rows = []
        for name in topics:
            if subscribed and name not in subscribed:
                continue
            route = self.snapshot.topics.get(name)
            reads = (
                [qd.read_queue_nums for qd in route.queue_datas if qd.broker_name == broker]
                if route
                else []
            )
            if route is not None and not reads:
                continue  # no such topic on this broker
            ids = (
                range(max(reads)) if reads else sorted(q.queue_id for q in mine if q.topic == name)
            )
            for qid in ids:
                mq = MessageQueue(name, broker, qid)
                o = mine.get(mq) or QueueOffset(mq, self._store_range(mq)[1], 0)
                rows.append(o if o.committed else replace(o, consumer_offset=0))
        return rows

    def _store_range(self, mq: MessageQueue) -> tuple[int, int]:
        """The (min, max) offset of ``mq`` in this broker's store, from every group's offsets
        (0 when the snapshot has none, as for a queue nothing was ever written to)."""
        found = [o for g in self.snapshot.groups.values() for o in g.offsets if o.queue == mq]
        if not found:
            return 0, 0
        lows = [o.min_offset for o in found if o.min_offset is not None]
        return (min(lows) if lows else 0), max(o.broker_offset for o in found)

    def _queue_stats(self) -> dict[MessageQueue, bodies.QueueStats]:
        """Every queue's offsets over the snapshot's groups (the largest max, the smallest
        min), indexed once: a 1,000-group cluster asks for 1,000 topics."""
        if self._stats is None:
            known: dict[MessageQueue, bodies.QueueStats] = {}
            for group in self.snapshot.groups.values():
                for o in group.offsets:
                    low = o.min_offset or 0
                    seen = known.get(o.queue)
                    if seen is not None:
                        low = min(low, seen.min_offset)
                    high = max(o.broker_offset, seen.max_offset if seen else 0)
                    # The store time of the queue's last message: what a group that consumed
                    # the queue to its end saw last (else unknown: 0).
                    last = seen.last_update_timestamp if seen else 0
                    if o.consumer_offset == o.broker_offset == high and o.last_timestamp:
                        last = o.last_timestamp
                    known[o.queue] = bodies.QueueStats(low, high, last)
            self._stats = known
        return self._stats

    def _committed_offset(
        self, cmd: RemotingCommand, broker: str, group_name: str
    ) -> RemotingCommand:
        """QUERY_CONSUMER_OFFSET: the snapshot's committed offset; for a queue never committed,
        0 while its min offset is 0 and its first message in memory (4.9.x: also when it is
        empty; 5.x: only when a message is there), else code 22 (ConsumerManageProcessor)."""
        group = self.snapshot.groups.get(group_name)
        topic, qid = cmd.ext("topic") or "", cmd.ext("queueId") or ""
        for o in group.offsets if group is not None else ():
            q = o.queue
            if (q.topic, q.broker_name, str(q.queue_id)) == (topic, broker, qid) and o.committed:
                return self._reply(
                    cmd, ResponseCode.SUCCESS, ext_fields={"offset": str(o.consumer_offset)}
                )
        low, high = self._store_range(MessageQueue(topic, broker, _int(qid)))
        if low <= 0 and (self.dialect == 4 or high > 0):
            return self._reply(cmd, ResponseCode.SUCCESS, ext_fields={"offset": "0"})
        return self._reply(
            cmd,
            ResponseCode.QUERY_NOT_FOUND,
            remark="Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first",
        )

    def _cached(self, key: tuple[str, ...], make: Callable[[], bytes]) -> bytes:
        body = self._bodies.get(key)
        if body is None:
            body = self._bodies[key] = make()
        return body

    def _subscription_groups(self, broker: str) -> bytes:
        """GET_ALL_SUBSCRIPTIONGROUP_CONFIG: the broker creates its built-in groups first, then
        each group on first use; a ``no-config`` fault leaves a group out."""
        hidden = self.faults.targets("no-config")
        names = [
            *SYSTEM_GROUPS[self.dialect],
            *(n for n in self.snapshot.groups if n not in hidden),
        ]
        configs = {
            name: group.configs[broker]
            for name, group in self.snapshot.groups.items()
            if broker in group.configs
        }
        return bodies.encode_subscription_groups(names, self.dialect, configs)

    def _consumed_by(self, broker: str, topic: str) -> list[str]:
        """QUERY_TOPIC_CONSUME_BY_WHO: groups with an online client subscribing ``topic``
        (the broker's consumer table, a ConcurrentHashMap(1024)), then groups with offsets
        of ``topic`` on this broker (its offset table, keyed ``topic@group``). Indexed once
        per broker: a 1,000-group cluster asks for every topic."""
        index = self._who.get(broker)
        if index is None:
            online: dict[str, list[str]] = {}
            stored: dict[str, list[str]] = {}
            for g in self.snapshot.groups.values():
                for t in dict.fromkeys(s.topic for c in g.consumers for s in c.subscriptions):
                    online.setdefault(t, []).append(g.name)
                for t in dict.fromkeys(
                    o.queue.topic for o in g.offsets if o.queue.broker_name == broker
                ):
                    stored.setdefault(t, []).append(f"{t}@{g.name}")
            index = self._who[broker] = (online, stored)
        online, stored = index
        by_offsets = [
            k.split("@", 1)[1]
            for k in concurrent_map(512).order(stored.get(topic, []), java_string_hash)
        ]
        return [
            *concurrent_map(1024).order(online.get(topic, []), java_string_hash),
            *by_offsets,
        ]

    def _consumer(self, group_name: str, client_id: str) -> tuple[Group, Consumer] | None:
        group = self.snapshot.groups.get(group_name)
        if group is None:
            return None
        clients = self._clients.get(group_name)
        if clients is None:
            clients = self._clients[group_name] = {}
            for consumer in group.consumers:
                if consumer.proxy is None:
                    clients.setdefault(consumer.client_id, consumer)
        found = clients.get(client_id)
        return (group, found) if found is not None else None

    async def _running_info(
        self, cmd: RemotingCommand, group_name: str, client_id: str
    ) -> RemotingCommand:
        found = self._consumer(group_name, client_id)
        if found is None:
            return self._reply(
                cmd,
                ResponseCode.SYSTEM_ERROR,
                remark=f"The Consumer <{group_name}> <{client_id}> not online",
            )
        group, consumer = found
        silent = consumer.assigned is None and not consumer.queues_unreported
        if silent or self.faults.has("silent-client", client_id):
            await asyncio.sleep(self.relay_delay)
            # 4.9.x names the channel by "ip:port", 5.x by InetSocketAddress ("/ip:port").
            channel = consumer.client_addr or ""
            if self.dialect >= 5:
                channel = "/" + channel
            return self._reply(
                cmd,
                ResponseCode.CONSUME_MSG_TIMEOUT,
                remark=(
                    f"consumer <{group_name}> <{client_id}> Timeout: "
                    "org.apache.rocketmq.remoting.exception.RemotingTimeoutException: "
                    f"wait response on the channel <{channel}> timeout, 10000(ms), "
                    + _RELAY_TIMEOUT_FRAME[self.dialect]
                ),
            )
        key = ("307", group_name, client_id)
        body = self._bodies.get(key)
        if body is None:
            commits = self._commits.get(group_name)
            if commits is None:
                # (the offsets of a static topic's logical queues, as its 5.x clients hold them)
                logical = logical_offsets(group.offsets, self.snapshot.topics)
                commits = self._commits[group_name] = bodies.committed_offsets(logical)
            body = bodies.encode_consumer_running_info(
                consumer, group, dialect=self.dialect, commits=commits
            )
        self._bodies[key] = body
        language = consumer.language if consumer.language in LANGUAGE_BYTES else "JAVA"
        # The broker passes the consumer's own language and version through (protocol §5.7).
        return self._reply(
            cmd,
            ResponseCode.SUCCESS,
            remark=CLIENT_DEFAULT_REMARK,
            body=body,
            language=language or "JAVA",
            version=consumer.version if consumer.version is not None else self.version,
        )


def _int(text: str | None) -> int:
    """A numeric extField (0 when it is not a number, where a broker would refuse)."""
    try:
        return int(text or "")
    except ValueError:
        return 0


def _consume_from_where(group: Group) -> str:
    """The group's ``consumeFromWhere`` as its clients report it (the broker keeps the one of
    the latest heartbeat); RocketMQ's default when none says."""
    reported = [c.properties.get("consumeFromWhere") for c in group.consumers]
    known = [r for r in reported if r]
    return known[-1] if known else "CONSUME_FROM_LAST_OFFSET"
