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
  groups (the snapshot's plus the built-in system groups), who consumes a topic (groups
  whose clients subscribe it, and groups with offsets for it on this broker); other
  codes -> 3.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any

from rmqlb.errors import ProtocolError
from rmqlb.fake.faults import Faults, FaultSpec
from rmqlb.model import BrokerInfo, Consumer, Group, MessageQueue, Snapshot
from rmqlb.remoting import bodies
from rmqlb.remoting.acl import signature as acl_signature
from rmqlb.remoting.codes import LanguageCode, RequestCode, ResponseCode, request_code_name
from rmqlb.remoting.frame import (
    FrameDecoder,
    RemotingCommand,
    SerializeType,
    encode_frame,
    response_to,
)

DEFAULT_CLUSTER = "DefaultCluster"
#: Built-in groups every broker lists in its subscription-group table (MixAll).
SYSTEM_GROUPS: tuple[str, ...] = (
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",
    "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",
    "CID_ONSAPI_PULL",
    "CID_RMQ_SYS_TRANS",
)
_FAQ = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
_SERVER_VERSION = {4: 409, 5: 479}  # V4_9_8, V5_3_3
NAMESRV = "ns"


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
    ) -> None:
        if dialect not in _SERVER_VERSION:
            raise ValueError(f"dialect must be 4 or 5, not {dialect}")
        self.snapshot = snapshot
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
        self._who: dict[str, dict[str, set[str]]] = {}
        self._stats: dict[MessageQueue, bodies.QueueStats] | None = None
        self._ssl = ssl_context
        self._namesrv_port = namesrv_port
        self._log_path = log_path
        self._log: IO[str] | None = None
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._handlers: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.namesrv_addr = ""
        self.broker_addrs: dict[str, str] = {}
        self.brokers: dict[str, BrokerInfo] = {}

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
        if self.faults.has("namesrv-down"):
            port = self._namesrv_port or free_port(self.host)
        else:
            server = await self._listen(NAMESRV, self._namesrv_port)
            port = int(server.sockets[0].getsockname()[1])
        self.namesrv_addr = f"{self.host}:{port}"

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

    def request_log(self) -> str:
        """Every request received so far, one ``code NAME target`` line each."""
        return "".join(r.line() + "\n" for r in self.requests)

    def write_request_log(self, path: str) -> None:
        """Write :meth:`request_log` to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.request_log())

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
                    if cmd.flag & 1:
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
            else:
                reply = self._acl_check(cmd) or await self._broker(target, cmd)
            if cmd.flag & 2:
                return  # oneway: no response
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

    def _namesrv(self, cmd: RemotingCommand) -> RemotingCommand:
        if cmd.code == RequestCode.GET_ROUTEINFO_BY_TOPIC:
            topic = cmd.ext("topic") or ""
            route = self.snapshot.topics.get(topic)
            if route is None:
                return self._reply(
                    cmd,
                    ResponseCode.TOPIC_NOT_EXIST,
                    remark=f"No topic route info in name server for the topic: {topic}{_FAQ}",
                )
            standard = bodies.route_wants_standard_json(cmd.version, cmd.ext_fields)
            names = []
            for qd in route.queue_datas:
                if qd.broker_name not in names:
                    names.append(qd.broker_name)
            brokers = {n: self.brokers[n] for n in names if n in self.brokers}
            body = bodies.encode_topic_route(
                route, brokers, standard=standard, dialect=self.dialect
            )
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_BROKER_CLUSTER_INFO:
            body = bodies.encode_cluster_info(self.brokers, dialect=self.dialect)
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER:
            body = bodies.encode_topic_list(list(self.snapshot.topics))
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        return self._unsupported(cmd)

    # --- Broker --------------------------------------------------------------------------

    def _online_group(self, name: str) -> Group | None:
        group = self.snapshot.groups.get(name)
        return group if group is not None and group.consumers else None

    async def _broker(self, broker: str, cmd: RemotingCommand) -> RemotingCommand:
        group_name = cmd.ext("consumerGroup") or ""
        if cmd.code == RequestCode.GET_CONSUMER_LIST_BY_GROUP:
            group = self._online_group(group_name)
            if group is None:
                return self._reply(
                    cmd,
                    ResponseCode.SYSTEM_ERROR,
                    remark=f"no consumer for this group, {group_name}",
                )
            body = bodies.encode_consumer_id_list([c.client_id for c in group.consumers])
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_CONSUMER_CONNECTION_LIST:
            group = self._online_group(group_name)
            if group is None:
                return self._reply(
                    cmd,
                    ResponseCode.CONSUMER_NOT_ONLINE,
                    remark=f"the consumer group[{group_name}] not online",
                )
            online = group
            body = self._cached(
                ("203", group_name),
                lambda: bodies.encode_consumer_connection(online, dialect=self.dialect),
            )
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_CONSUMER_RUNNING_INFO:
            return await self._running_info(cmd, group_name, cmd.ext("clientId") or "")
        if cmd.code == RequestCode.GET_CONSUME_STATS:
            topic = cmd.ext("topic") or ""
            body = self._cached(
                ("208", group_name, broker, topic),
                lambda: self._consume_stats(group_name, broker, topic),
            )
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG:
            body = self._cached(("201", broker), lambda: self._subscription_groups(broker))
            return self._reply(cmd, ResponseCode.SUCCESS, body=body)
        if cmd.code == RequestCode.QUERY_TOPIC_CONSUME_BY_WHO:
            names = sorted(self._consumed_by(broker).get(cmd.ext("topic") or "", ()))
            return self._reply(cmd, ResponseCode.SUCCESS, body=bodies.encode_group_list(names))
        if cmd.code == RequestCode.GET_TOPIC_STATS_INFO:
            return self._topic_stats(cmd, broker, cmd.ext("topic") or "")
        if cmd.code == RequestCode.QUERY_CONSUMER_OFFSET:
            return self._committed_offset(cmd, broker, group_name)
        return self._unsupported(cmd)

    def _topic_stats(self, cmd: RemotingCommand, broker: str, topic: str) -> RemotingCommand:
        """Min/max offsets of ids ``0 .. writeQueueNums-1`` as a 4.x broker lists them; the
        offsets come from the snapshot's groups (the largest max, the smallest min)."""
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
        return self._reply(cmd, ResponseCode.SUCCESS, body=bodies.encode_topic_stats(stats))

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
                    known[o.queue] = bodies.QueueStats(low, high, o.last_timestamp)
            self._stats = known
        return self._stats

    def _committed_offset(
        self, cmd: RemotingCommand, broker: str, group_name: str
    ) -> RemotingCommand:
        """QUERY_CONSUMER_OFFSET: the snapshot's committed offset, else code 22."""
        group = self.snapshot.groups.get(group_name)
        topic, qid = cmd.ext("topic") or "", cmd.ext("queueId") or ""
        for o in group.offsets if group is not None else ():
            q = o.queue
            if (q.topic, q.broker_name, str(q.queue_id)) == (topic, broker, qid) and o.committed:
                return self._reply(
                    cmd, ResponseCode.SUCCESS, ext_fields={"offset": str(o.consumer_offset)}
                )
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

    def _consume_stats(self, group_name: str, broker: str, topic: str) -> bytes:
        group = self.snapshot.groups.get(group_name)
        offsets = [] if group is None else group.offsets
        # A real broker answers a never-committed queue with consumerOffset 0.
        mine = [
            o if o.committed else replace(o, consumer_offset=0)
            for o in offsets
            if o.queue.broker_name == broker and (not topic or o.queue.topic == topic)
        ]
        return bodies.encode_consume_stats(mine, dialect=self.dialect)

    def _subscription_groups(self, broker: str) -> bytes:
        hidden = self.faults.targets("no-config")
        names = [*(n for n in self.snapshot.groups if n not in hidden), *SYSTEM_GROUPS]
        configs = {
            name: group.configs[broker]
            for name, group in self.snapshot.groups.items()
            if broker in group.configs
        }
        return bodies.encode_subscription_groups(names, self.dialect, configs)

    def _consumed_by(self, broker: str) -> dict[str, set[str]]:
        """topic -> groups, as ``broker`` answers QUERY_TOPIC_CONSUME_BY_WHO: groups whose
        online clients subscribe the topic (every broker hears every client's heartbeat),
        and groups with committed offsets on this broker's queues of it."""
        index = self._who.get(broker)
        if index is None:
            index = {}
            for name, group in self.snapshot.groups.items():
                for c in group.consumers:
                    for sub in c.subscriptions:
                        index.setdefault(sub.topic, set()).add(name)
                for off in group.offsets:
                    if off.queue.broker_name == broker and off.committed:
                        index.setdefault(off.queue.topic, set()).add(name)
            self._who[broker] = index
        return index

    def _consumer(self, group_name: str, client_id: str) -> tuple[Group, Consumer] | None:
        group = self.snapshot.groups.get(group_name)
        if group is None:
            return None
        for consumer in group.consumers:
            if consumer.client_id == client_id:
                return group, consumer
        return None

    async def _running_info(
        self, cmd: RemotingCommand, group_name: str, client_id: str
    ) -> RemotingCommand:
        found = self._consumer(group_name, client_id)
        if found is None:
            return self._reply(
                cmd,
                ResponseCode.SYSTEM_ERROR,
                remark=f"The Consumer {group_name} {client_id} not online",
            )
        group, consumer = found
        if consumer.assigned is None or self.faults.has("silent-client", client_id):
            await asyncio.sleep(self.relay_delay)
            return self._reply(
                cmd,
                ResponseCode.CONSUME_MSG_TIMEOUT,
                remark=(
                    f"consumer {group_name} {client_id} Timeout: "
                    "org.apache.rocketmq.remoting.exception.RemotingTimeoutException: "
                    f"wait response on the channel <{consumer.client_addr}> timeout, 10000(ms)"
                ),
            )
        key = ("307", group_name, client_id)
        body = self._bodies.get(key) or bodies.encode_consumer_running_info(
            consumer, group, dialect=self.dialect
        )
        self._bodies[key] = body
        language = consumer.language if consumer.language in LanguageCode.__members__ else "JAVA"
        # The broker passes the consumer's own language and version through (protocol §5.7).
        return self._reply(
            cmd,
            ResponseCode.SUCCESS,
            body=body,
            language=language or "JAVA",
            version=consumer.version if consumer.version is not None else self.version,
        )
