"""Typed, read-only admin calls over pooled :class:`~rmqlb.client.connection.Connection`\\ s.

Each method sends one request (protocol §5) and returns model objects decoded by
:mod:`rmqlb.remoting.bodies`; a non-zero response code raises the matching
:mod:`rmqlb.remoting.errors` class (``TopicNotExist``, ``ConsumerNotOnline`` ...), transport
failures raise :mod:`rmqlb.client.errors` classes. SYSTEM_BUSY (code 2) is retried with
exponential back-off inside the call's deadline. Only codes in ``READ_ONLY_CODES`` can be
sent at all (the connection refuses the rest before writing).

With :class:`~rmqlb.remoting.acl.Credentials` every request is signed as ACL 1.0/2.0
expect (protocol §9): the
secret key is used for the HMAC and for nothing else; it is never logged, printed or
stored, and ``repr`` hides it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rmqlb.client.connection import Connection, Signer, TlsConfig
from rmqlb.client.errors import ConnectFailed, NotANameServer, RequestTimeout, TimedOutEarlier
from rmqlb.humanize import duration
from rmqlb.model import BrokerInfo, MessageQueue, TopicRoute
from rmqlb.remoting import bodies, fastjson
from rmqlb.remoting.acl import Credentials
from rmqlb.remoting.codes import RequestCode, ResponseCode, request_code_name
from rmqlb.remoting.errors import (
    BodyError,
    RequestCodeNotSupported,
    SystemBusy,
    response_error,
)
from rmqlb.remoting.frame import MAX_FRAME_SIZE, RemotingCommand

if TYPE_CHECKING:
    from rmqlb.remoting import assignment

#: The answer to GET_CONSUMER_CONNECTION_LIST for a group with no client: not a failure.
_NOT_ONLINE = frozenset({ResponseCode.CONSUMER_NOT_ONLINE})
#: GET_CONSUMER_LIST_BY_GROUP's code when the broker has no consumer of the group (with
#: :data:`NO_CONSUMER_REMARK`; any other remark is a failure).
_NO_CONSUMER = frozenset({ResponseCode.SYSTEM_ERROR})

#: What a request to a peer that already let one time out says instead of waiting.
SKIPPED = "skipped: broker timed out earlier"

#: Requests a broker relays to a client: their timeout says nothing of the broker itself.
RELAYED = frozenset({RequestCode.GET_CONSUMER_RUNNING_INFO})

#: How a broker's answer to GET_CONSUMER_LIST_BY_GROUP starts when it has no consumer of the
#: group (4.9.8 and 5.x ``ConsumerManageProcessor``).
NO_CONSUMER_REMARK = "no consumer for this group"


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """How the admin client connects: per-request timeout, TLS, ACL, limits."""

    timeout: float = 5.0
    tls: TlsConfig | None = None
    credentials: Credentials | None = None
    max_frame_size: int = MAX_FRAME_SIZE
    busy_retries: int = 3
    busy_backoff: float = 0.1
    reconnect_after: float = 2.0


#: Sees every answer :meth:`AdminClient.call` receives: (address, request code, request
#: extFields, request body, response), before the response is checked. Must not raise.
ResponseTap = Callable[[str, int, Mapping[str, str], bytes, RemotingCommand], None]


class AdminClient:
    """Read-only admin calls; one pooled connection per address. ``async with`` closes all.

    ``tap`` (optional) is shown every answer received, successful or not (the test suite's
    recorder keeps a real cluster's answers with it).
    """

    def __init__(
        self, options: ClientOptions | None = None, *, tap: ResponseTap | None = None
    ) -> None:
        self.options = options or ClientOptions()
        self._tap = tap
        self._connections: dict[str, Connection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._failed: dict[str, tuple[float, ConnectFailed]] = {}
        # addresses that let a request of this run time out: never waited on again
        self._timed_out: set[str] = set()
        #: The RocketMQ version each address answered with (its responses' header).
        self.server_versions: dict[str, int] = {}
        creds = self.options.credentials
        self._signer: Signer | None = creds.sign if creds is not None else None

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every pooled connection (at once: each close is bounded)."""
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(conn.close() for conn in connections), return_exceptions=True)

    def _timed_out_now(self, addr: str) -> None:
        """``addr`` let a request time out: requests still waiting on it fail now, later
        ones are not sent (one deadline per run, not one per request to a dead peer)."""
        self._timed_out.add(addr)
        conn = self._connections.get(addr)
        if conn is not None:
            conn.give_up(SKIPPED)

    async def _connection(self, addr: str, timeout: float) -> Connection:
        """The pooled connection to ``addr``, opened once however many callers ask.

        A failed connect is remembered for ``reconnect_after`` seconds: callers queued behind
        it fail at once with the same error instead of each waiting out its own connect
        timeout against a dead address.
        """
        conn = self._connections.get(addr)
        if conn is not None and not conn.closed:
            return conn
        lock = self._locks.setdefault(addr, asyncio.Lock())
        try:
            async with asyncio.timeout(timeout), lock:
                conn = self._connections.get(addr)
                if conn is not None and not conn.closed:
                    return conn
                failed = self._failed.get(addr)
                if (
                    failed is not None
                    and time.monotonic() - failed[0] < self.options.reconnect_after
                ):
                    raise ConnectFailed(failed[1].message, addr)
                try:
                    conn = await Connection.open(
                        addr,
                        timeout=timeout,
                        tls=self.options.tls,
                        signer=self._signer,
                        max_frame_size=self.options.max_frame_size,
                    )
                except ConnectFailed as exc:
                    self._failed[addr] = (time.monotonic(), exc)
                    raise
                self._failed.pop(addr, None)
                self._connections[addr] = conn
                return conn
        except TimeoutError as exc:
            message = f"{addr}: connect timed out after {duration(timeout)}"
            raise ConnectFailed(message, addr) from exc

    async def call(
        self,
        addr: str,
        code: int,
        ext_fields: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        body: bytes = b"",
        expected: Collection[int] = (),
    ) -> RemotingCommand:
        """Send ``code`` to ``addr``; return the successful response or raise.

        The deadline ``timeout`` (default: the options') covers connecting, retries after
        SYSTEM_BUSY and waiting. A response code in ``expected`` is an answer the caller
        handles: returned, not raised (no exception for the most common answer of all,
        "not online", in a capture of a cluster with many idle groups).
        """
        budget = self.options.timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        attempt = 0
        while True:
            if addr in self._timed_out:
                raise TimedOutEarlier(f"{addr}: {request_code_name(code)} {SKIPPED}", addr)
            left = deadline - time.monotonic()
            if left <= 0:
                raise RequestTimeout(
                    f"{addr}: {request_code_name(code)} timed out after {duration(budget)}", addr
                )
            conn = self._connections.get(addr)
            if conn is None or conn.closed:  # the pooled one, without a coroutine per request
                try:
                    conn = await self._connection(addr, left)
                except ConnectFailed as exc:
                    if isinstance(exc.__cause__, TimeoutError):
                        self._timed_out_now(addr)
                    raise
            left = max(deadline - time.monotonic(), 0.001)
            try:
                response = await conn.request(code, ext_fields, body, timeout=left)
            except TimedOutEarlier:
                raise
            except RequestTimeout as exc:
                if code not in RELAYED:  # a relay's slowness is the client's, not the peer's
                    self._timed_out_now(addr)
                # the deadline the caller gave, not the microseconds it had left by now
                raise RequestTimeout(
                    f"{addr}: {request_code_name(code)} timed out after {duration(budget)}", addr
                ) from exc
            if code not in RELAYED:  # a relayed answer may carry the client's version
                self.server_versions[addr] = response.version
            if self._tap is not None:
                self._tap(addr, code, dict(ext_fields or {}), body, response)
            if response.code == ResponseCode.SUCCESS or response.code in expected:
                return response
            error = response_error(response.code, response.remark, code)
            pause = self.options.busy_backoff * 2**attempt
            if (
                not isinstance(error, SystemBusy)
                or attempt >= self.options.busy_retries
                or time.monotonic() + pause >= deadline
            ):
                try:
                    raise error
                finally:
                    del error  # its traceback holds this frame: no cycle through the local
            attempt += 1
            await asyncio.sleep(pause)

    # --- NameServer ----------------------------------------------------------------------

    async def route(
        self, namesrv: str, topic: str, *, timeout: float | None = None
    ) -> tuple[TopicRoute, dict[str, BrokerInfo]]:
        """GET_ROUTEINFO_BY_TOPIC (105): the topic's queue data and its brokers."""
        resp = await self.call(
            namesrv, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}, timeout=timeout
        )
        return bodies.decode_topic_route(resp.body, topic)

    async def cluster_info(
        self, namesrv: str, *, timeout: float | None = None
    ) -> dict[str, BrokerInfo]:
        """GET_BROKER_CLUSTER_INFO (106): every broker with its cluster and addresses.

        Every NameServer serves 106; a broker answers it with REQUEST_CODE_NOT_SUPPORTED (3),
        which is turned into :class:`NotANameServer` with a hint, at once.
        """
        try:
            resp = await self.call(namesrv, RequestCode.GET_BROKER_CLUSTER_INFO, timeout=timeout)
        except RequestCodeNotSupported as exc:
            raise NotANameServer(
                f"{namesrv}: answered like a RocketMQ broker, not a NameServer (it does not "
                "serve GET_BROKER_CLUSTER_INFO): give the NameServer's address (port 9876 by "
                "default; brokers listen on 10911)",
                namesrv,
            ) from exc
        return dict(bodies.decode_cluster_info(resp.body).brokers)

    async def topic_list(self, namesrv: str, *, timeout: float | None = None) -> list[str]:
        """GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206): every topic the NameServer knows."""
        resp = await self.call(
            namesrv, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, timeout=timeout
        )
        return bodies.decode_topic_list(resp.body)

    # --- Broker --------------------------------------------------------------------------

    async def consumer_connection(
        self, broker: str, group: str, *, timeout: float | None = None
    ) -> bodies.ConsumerConnection | None:
        """GET_CONSUMER_CONNECTION_LIST (203): clients, model, consume type, subscriptions;
        ``None`` when the broker says the group is not online (206: no client of it)."""
        resp = await self.call(
            broker,
            RequestCode.GET_CONSUMER_CONNECTION_LIST,
            {"consumerGroup": group},
            timeout=timeout,
            expected=_NOT_ONLINE,
        )
        if resp.code == ResponseCode.CONSUMER_NOT_ONLINE:
            return None
        return bodies.decode_consumer_connection(resp.body)

    async def running_info(
        self, broker: str, group: str, client_id: str, *, timeout: float | None = None
    ) -> bodies.RunningInfo:
        """GET_CONSUMER_RUNNING_INFO (307), relayed by ``broker`` to the client, no jstack."""
        resp = await self.call(
            broker,
            RequestCode.GET_CONSUMER_RUNNING_INFO,
            {"consumerGroup": group, "clientId": client_id, "jstackEnable": "false"},
            timeout=timeout,
        )
        return bodies.decode_consumer_running_info(resp.body)

    async def consume_stats(
        self, broker: str, group: str, *, topic: str | None = None, timeout: float | None = None
    ) -> bodies.ConsumeStats:
        """GET_CONSUME_STATS (208): offsets of ``group`` on this broker's queues and the
        rate the group fetches from it; of ``topic`` only when given (else of every topic
        the broker holds offsets of for the group, which it finds by scanning its whole
        offset table)."""
        fields = (
            {"consumerGroup": group} if topic is None else {"consumerGroup": group, "topic": topic}
        )
        resp = await self.call(broker, RequestCode.GET_CONSUME_STATS, fields, timeout=timeout)
        return bodies.decode_consume_stats(resp.body)

    async def consumer_offsets(
        self, broker: str, *, timeout: float | None = None
    ) -> bodies.ConsumerOffsets:
        """GET_ALL_CONSUMER_OFFSET (43): every group's committed offsets on this broker."""
        resp = await self.call(broker, RequestCode.GET_ALL_CONSUMER_OFFSET, timeout=timeout)
        return bodies.decode_consumer_offsets(resp.body)

    async def subscription_group_configs(
        self, broker: str, *, timeout: float | None = None
    ) -> bodies.ConfigTable:
        """GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): every group's config on this broker."""
        text = await self.subscription_group_text(broker, timeout=timeout)
        return bodies.decode_subscription_group_table(text)

    async def subscription_group_text(self, broker: str, *, timeout: float | None = None) -> str:
        """GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) as text, decoded where it is read (one
        group's capture reads one entry: :func:`~rmqlb.remoting.bodies.find_group_config`)."""
        resp = await self.call(
            broker, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, timeout=timeout
        )
        return fastjson.text_of(resp.body)

    async def topic_stats(
        self, broker: str, topic: str, *, timeout: float | None = None
    ) -> dict[MessageQueue, bodies.QueueStats]:
        """GET_TOPIC_STATS_INFO (202): min/max offset of each of the topic's queues here."""
        resp = await self.call(
            broker, RequestCode.GET_TOPIC_STATS_INFO, {"topic": topic}, timeout=timeout
        )
        return bodies.decode_topic_stats(resp.body)

    async def committed_offset(
        self, broker: str, group: str, queue: MessageQueue, *, timeout: float | None = None
    ) -> int:
        """QUERY_CONSUMER_OFFSET (14): the group's committed offset of ``queue``.

        Raises :class:`~rmqlb.remoting.errors.QueryNotFound` when none was ever committed
        (a 4.9 broker answers 0 instead while the queue still starts at offset 0 in memory:
        what the client would then start from, too).

        ``lo=false``: the id is the broker's own queue. A 5.x broker takes the id of a
        request without it for a logical queue's of a static topic (and answers another
        queue's offset, or NOT_LEADER_FOR_QUEUE); 4.x brokers ignore the field.
        """
        fields = {
            "consumerGroup": group,
            "topic": queue.topic,
            "queueId": str(queue.queue_id),
            "lo": "false",
        }
        return await self._offset_field(broker, RequestCode.QUERY_CONSUMER_OFFSET, fields, timeout)

    async def _offset_field(
        self, broker: str, code: int, fields: dict[str, str], timeout: float | None
    ) -> int:
        """The ``offset`` extField of a successful answer to ``code``, as an integer."""
        resp = await self.call(broker, code, fields, timeout=timeout)
        raw = (resp.ext_fields or {}).get("offset")
        try:
            return int(raw or "")
        except ValueError as exc:
            name = request_code_name(code)
            raise BodyError(f"{name}: offset {raw!r} is not a number") from exc

    async def topic_consumers(
        self, broker: str, topic: str, *, timeout: float | None = None
    ) -> list[str]:
        """QUERY_TOPIC_CONSUME_BY_WHO (300): groups this broker knows consume ``topic``.

        The broker answers with the groups whose online clients subscribe the topic united
        with the groups that have committed offsets for it (``ConsumerManager`` +
        ``ConsumerOffsetManager``).
        """
        resp = await self.call(
            broker, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": topic}, timeout=timeout
        )
        return bodies.decode_group_list(resp.body)

    # --- 5.x broker: broker-side assignment ------------------------------------------------

    async def broker_config(
        self, broker: str, *, timeout: float | None = None
    ) -> tuple[dict[str, str], int]:
        """GET_BROKER_CONFIG (26): the broker-side-assignment keys of its config
        (:data:`~rmqlb.remoting.bodies.BROKER_CONFIG_KEYS` only) and the version it reports
        in its answer's header."""
        resp = await self.call(broker, RequestCode.GET_BROKER_CONFIG, timeout=timeout)
        return bodies.decode_broker_config(resp.body), resp.version

    async def request_modes(
        self, broker: str, *, timeout: float | None = None
    ) -> list[assignment.RequestModeEntry]:
        """GET_ALL_MESSAGE_REQUEST_MODE (402): every (topic, group) mode set on this broker.

        A 4.x broker answers REQUEST_CODE_NOT_SUPPORTED
        (:class:`~rmqlb.remoting.errors.RequestCodeNotSupported`).
        """
        from rmqlb.remoting import assignment  # noqa: PLC0415 (5.x broker-side only)

        resp = await self.call(broker, RequestCode.GET_ALL_MESSAGE_REQUEST_MODE, timeout=timeout)
        return assignment.decode_request_modes(resp.body)

    async def consumer_ids(
        self, broker: str, group: str, *, timeout: float | None = None
    ) -> list[str]:
        """GET_CONSUMER_LIST_BY_GROUP (38): the group's client ids as this broker knows them
        (what it allocates from when it assigns queues); none when it answers that it has no
        consumer of the group (code 1, :data:`NO_CONSUMER_REMARK`: a broker just restarted,
        before the clients' next heartbeat, or one they cannot reach)."""
        code = RequestCode.GET_CONSUMER_LIST_BY_GROUP
        resp = await self.call(
            broker,
            code,
            {"consumerGroup": group},
            timeout=timeout,
            expected=_NO_CONSUMER,
        )
        if resp.code == ResponseCode.SUCCESS:
            return bodies.decode_consumer_id_list(resp.body)
        if (resp.remark or "").startswith(NO_CONSUMER_REMARK):
            return []
        raise response_error(resp.code, resp.remark, code)

    async def query_assignment(
        self,
        broker: str,
        *,
        topic: str,
        group: str,
        client_id: str,
        strategy_name: str,
        message_model: str = "CLUSTERING",
        timeout: float | None = None,
    ) -> tuple[assignment.QueueAssignment, ...] | None:
        """QUERY_ASSIGNMENT (400): what this broker would assign ``client_id`` of ``group``
        for ``topic`` with ``strategy_name`` (``None``: no assignment; see the allowlist)."""
        from rmqlb.remoting import assignment  # noqa: PLC0415 (5.x broker-side only)

        body = assignment.encode_query_assignment_request(
            topic, group, client_id, message_model, strategy_name
        )
        resp = await self.call(broker, RequestCode.QUERY_ASSIGNMENT, {}, timeout=timeout, body=body)
        return assignment.decode_query_assignment(resp.body)
