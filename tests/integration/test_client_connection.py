"""The connection and admin client against scripted servers over real TCP.

Each test runs a tiny asyncio server speaking the real frame codec, scripted to do one
thing (answer out of order, push a request, go silent, hang up ...), and checks the
client's behaviour: multiplexing by opaque, deadlines, typed errors, the read-only
allowlist, ACL signatures, SYSTEM_BUSY retries.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from livehelpers import ROOT

from rmqlb.client import admin as admin_module
from rmqlb.client.admin import AdminClient, ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.client.connection import Connection, TlsConfig
from rmqlb.client.errors import (
    BadFrame,
    ConnectFailed,
    ConnectionLost,
    ForbiddenRequest,
    RequestTimeout,
)
from rmqlb.errors import ClusterUnreachable
from rmqlb.fake import FakeCluster, free_port
from rmqlb.model import Snapshot
from rmqlb.remoting.acl import Credentials
from rmqlb.remoting.codes import READ_ONLY_CODES, RequestCode
from rmqlb.remoting.errors import TopicNotExist
from rmqlb.remoting.frame import (
    FrameDecoder,
    RemotingCommand,
    SerializeType,
    encode_frame,
    response_to,
)
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(30)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"

Script = Callable[[RemotingCommand, asyncio.StreamWriter], Awaitable[None]]


class ScriptedServer:
    """Decodes requests, records every byte, and runs ``script`` per request."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.received = bytearray()
        self.commands: list[RemotingCommand] = []
        self.server: asyncio.Server | None = None
        self.addr = ""

    async def __aenter__(self) -> ScriptedServer:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.addr = f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        tasks = []
        try:
            while data := await reader.read(65536):
                self.received += data
                for cmd in decoder.feed(data):
                    self.commands.append(cmd)
                    tasks.append(asyncio.create_task(self.script(cmd, writer)))
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            for t in tasks:
                t.cancel()
            writer.close()


def ok(cmd: RemotingCommand, body: bytes = b"") -> bytes:
    return encode_frame(response_to(cmd, 0, body=body, language="JAVA", version=409))


# --- the read-only allowlist --------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        RequestCode.UPDATE_AND_CREATE_TOPIC,
        RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
        RequestCode.RESET_CONSUMER_OFFSET_IN_BROKER,
        RequestCode.DELETE_SUBSCRIPTIONGROUP,
        RequestCode.SEND_MESSAGE,
        99999,
    ],
)
def test_mutating_code_is_refused_before_reaching_the_socket(code: int) -> None:
    async def never(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        raise AssertionError("no request may arrive")

    async def run() -> bytes:
        async with ScriptedServer(never) as server:
            conn = await Connection.open(server.addr, timeout=2)
            with pytest.raises(ForbiddenRequest, match="not a read-only request"):
                await conn.request(code, {"topic": "T"}, timeout=2)
            # the connection still works for allowed codes, and nothing else was sent
            admin = AdminClient()
            with pytest.raises(ForbiddenRequest):
                await admin.call(server.addr, code)
            await admin.close()
            await conn.close()
            await asyncio.sleep(0.05)
            return bytes(server.received)

    assert asyncio.run(run()) == b""
    assert code not in READ_ONLY_CODES


# --- multiplexing, server pushes, deadlines, hang-ups --------------------------------------


def test_many_requests_in_flight_answered_out_of_order() -> None:
    async def reverse(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        # later requests are answered first
        await asyncio.sleep(0.2 - 0.002 * cmd.opaque)
        writer.write(ok(cmd, body=(cmd.ext("topic") or "").encode()))

    async def run() -> list[bytes]:
        async with ScriptedServer(reverse) as server:
            conn = await Connection.open(server.addr, timeout=2)
            replies = await asyncio.gather(
                *(
                    conn.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": f"T{i}"}, timeout=5)
                    for i in range(50)
                )
            )
            await conn.close()
            assert len({c.opaque for c in server.commands}) == 50
            return [r.body for r in replies]

    assert asyncio.run(run()) == [f"T{i}".encode() for i in range(50)]


def test_server_initiated_request_gets_code_3_and_is_not_a_response() -> None:
    seen: list[RemotingCommand] = []

    async def push_first(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        if cmd.is_response:
            seen.append(cmd)
            return
        # a broker-to-client request with the SAME opaque as the pending request
        writer.write(encode_frame(RemotingCommand(code=307, opaque=cmd.opaque, flag=0)))
        await asyncio.sleep(0.1)
        writer.write(ok(cmd, body=b"real answer"))

    async def run() -> RemotingCommand:
        async with ScriptedServer(push_first) as server:
            conn = await Connection.open(server.addr, timeout=2)
            reply = await conn.request(RequestCode.GET_BROKER_CLUSTER_INFO, timeout=5)
            await conn.close()
            return reply

    reply = asyncio.run(run())
    assert reply.body == b"real answer"
    [answer] = seen
    assert answer.code == 3 and answer.is_response
    assert answer.remark == " request type 307 not supported"


def test_timeout_then_late_response_is_dropped_and_connection_reused() -> None:
    async def slow_first(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        if cmd.ext("topic") == "slow":
            await asyncio.sleep(0.5)
        writer.write(ok(cmd, body=(cmd.ext("topic") or "").encode()))

    async def run() -> bytes:
        async with ScriptedServer(slow_first) as server:
            conn = await Connection.open(server.addr, timeout=2)
            with pytest.raises(RequestTimeout, match=r"timed out after 100 ms"):
                await conn.request(
                    RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "slow"}, timeout=0.1
                )
            await asyncio.sleep(0.6)  # the late answer arrives and is dropped
            reply = await conn.request(
                RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "fast"}, timeout=2
            )
            assert conn.in_flight == 0
            await conn.close()
            return reply.body

    assert asyncio.run(run()) == b"fast"


def test_requests_on_one_connection_each_end_at_their_own_deadline() -> None:
    """One timer serves a connection's pending requests: a later request with an earlier
    deadline fails first, a request answered in time is never failed by another's deadline,
    and each silent one fails with its own timeout (order, not seconds, is checked)."""

    async def answer_only_ok(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        if cmd.ext("topic") == "ok":
            await asyncio.sleep(0.3)  # after the 0.1 s deadline of another request
            writer.write(ok(cmd, body=b"ok"))

    async def run() -> tuple[list[str], bytes]:
        async with ScriptedServer(answer_only_ok) as server:
            conn = await Connection.open(server.addr, timeout=2)
            ended: list[str] = []

            async def ask(topic: str, timeout: float) -> bytes:
                try:
                    reply = await conn.request(
                        RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}, timeout=timeout
                    )
                except RequestTimeout as exc:
                    ended.append(f"{topic}: {str(exc).rsplit(' after ', 1)[1]}")
                    raise
                ended.append(f"{topic}: answered")
                return reply.body

            # written in this order: the first sets the timer, later ones must move it earlier
            late = asyncio.create_task(ask("late", 0.8))
            await asyncio.sleep(0)
            answered = asyncio.create_task(ask("ok", 2.0))
            await asyncio.sleep(0)
            early = asyncio.create_task(ask("early", 0.1))
            await asyncio.sleep(0)
            middle = asyncio.create_task(ask("middle", 0.5))
            results = await asyncio.gather(late, answered, early, middle, return_exceptions=True)
            assert [type(r) for r in results] == [
                RequestTimeout,
                bytes,
                RequestTimeout,
                RequestTimeout,
            ]
            assert conn.in_flight == 0
            await conn.close()
            body = results[1]
            assert isinstance(body, bytes)
            return ended, body

    ended, body = asyncio.run(run())
    assert body == b"ok"
    assert ended == ["early: 100 ms", "ok: answered", "middle: 500 ms", "late: 800 ms"]


def test_an_admin_call_that_times_out_names_the_deadline_it_was_given() -> None:
    """Not the microseconds left once connected: ``--timeout 0.2`` reads "after 0.2 s"."""

    async def never(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async def run() -> str:
        async with ScriptedServer(never) as server, AdminClient() as admin:
            await admin._connection(server.addr, 2.0)  # connected before the call starts
            with pytest.raises(RequestTimeout) as caught:
                await admin.call(server.addr, RequestCode.GET_BROKER_CLUSTER_INFO, timeout=0.2)
            return str(caught.value)

    assert asyncio.run(run()).endswith("GET_BROKER_CLUSTER_INFO timed out after 200 ms")


def test_peer_hang_up_fails_every_pending_request() -> None:
    async def hang_up(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        if cmd.opaque == 4:
            writer.write(ok(cmd)[:10])  # half a frame, then EOF
            writer.close()

    async def run() -> list[BaseException | RemotingCommand]:
        async with ScriptedServer(hang_up) as server:
            conn = await Connection.open(server.addr, timeout=2)
            results = await asyncio.gather(
                *(conn.request(RequestCode.GET_BROKER_CLUSTER_INFO, timeout=10) for _ in range(5)),
                return_exceptions=True,
            )
            assert conn.closed
            with pytest.raises(ConnectionLost):
                await conn.request(RequestCode.GET_BROKER_CLUSTER_INFO, timeout=1)
            await conn.close()
            return results

    results = asyncio.run(run())
    assert all(isinstance(r, ConnectionLost) for r in results)
    assert "in the middle of a frame" in str(results[0])


def test_connection_refused_is_typed() -> None:
    async def run() -> None:
        await Connection.open(f"127.0.0.1:{free_port()}", timeout=2)

    with pytest.raises(ConnectFailed, match="connection refused"):
        asyncio.run(run())


def test_binary_header_responses_are_decoded() -> None:
    async def binary(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        resp = response_to(
            cmd, 0, body=b"{}", language="JAVA", version=373, serialize_type=SerializeType.ROCKETMQ
        )
        writer.write(encode_frame(resp))

    async def run() -> RemotingCommand:
        async with ScriptedServer(binary) as server:
            conn = await Connection.open(server.addr, timeout=2)
            reply = await conn.request(RequestCode.GET_BROKER_CLUSTER_INFO, timeout=2)
            await conn.close()
            return reply

    reply = asyncio.run(run())
    assert (reply.version, reply.serialize_type, reply.body) == (373, SerializeType.ROCKETMQ, b"{}")


# --- admin: SYSTEM_BUSY retries, typed response errors --------------------------------------


def test_system_busy_is_retried_with_back_off() -> None:
    attempts: list[int] = []

    async def busy_twice(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        attempts.append(cmd.opaque)
        if len(attempts) <= 2:
            writer.write(encode_frame(response_to(cmd, 2, remark="[OVERLOAD]system busy")))
        else:
            writer.write(ok(cmd, body=b'{"topicList":["A","B"]}'))

    async def run() -> list[str]:
        options = ClientOptions(timeout=5, busy_backoff=0.01)
        async with ScriptedServer(busy_twice) as server, AdminClient(options) as admin:
            return await admin.topic_list(server.addr)

    assert asyncio.run(run()) == ["A", "B"]
    assert len(attempts) == 3


def test_unknown_topic_raises_topic_not_exist() -> None:
    snapshot = Snapshot(topics={}, groups={})

    async def run() -> None:
        async with FakeCluster(snapshot) as fake, AdminClient() as admin:
            await admin.route(fake.namesrv_addr, "NoSuchTopic")

    with pytest.raises(TopicNotExist, match="No topic route info"):
        asyncio.run(run())


def test_a_group_not_online_is_an_answer_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    """206 (not online) is what most groups of a big cluster answer: ``None``, with no
    exception made for it; any other failure still raises."""
    snapshot = load_snapshot(DEMO)
    group = next(g for g in snapshot.groups.values() if g.consumers)
    made: list[int] = []
    real = admin_module.response_error

    def counting(code: int, remark: str | None, request_code: int | None = None) -> Exception:
        made.append(code)
        return real(code, remark, request_code)

    monkeypatch.setattr(admin_module, "response_error", counting)

    async def run() -> tuple[object, object]:
        async with FakeCluster(snapshot) as fake, AdminClient() as admin:
            broker = next(iter(fake.broker_addrs.values()))
            idle = await admin.consumer_connection(broker, "NobodyHere")
            live = await admin.consumer_connection(broker, group.name)
            return idle, live

    idle, live = asyncio.run(run())
    assert idle is None
    assert live is not None and {c.client_id for c in live.connections} <= {
        c.client_id for c in group.consumers
    }
    assert made == []


# --- ACL -------------------------------------------------------------------------------------


def _by_hand(fields: dict[str, str], secret: str) -> str:
    """The §9.1 algorithm written out independently: values sorted by key, HMAC-SHA1, b64."""
    content = "".join(fields[k] for k in sorted(fields) if k != "Signature")
    digest = hmac.new(secret.encode(), content.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def test_hand_computation_reproduces_the_protocol_test_vector() -> None:
    fields = {
        "topic": "topicA",
        "batch": "false",
        "unitMode": "false",
        "AccessKey": "RocketMQ",
        "SecurityToken": "87654321",
    }
    assert _by_hand(fields, "12345678") == "FQ2fq7p3PuzMwBD7QkNW7AU32/c="


def test_acl_signature_as_received_equals_the_hand_computed_one() -> None:
    snapshot = load_snapshot(DEMO)
    secret = "s3cr3t-do-not-leak"
    creds = Credentials("rmqlb-reader", secret)

    async def run() -> list[dict[str, str]]:
        async with FakeCluster(snapshot) as fake:
            options = CollectOptions(
                namesrv=(fake.namesrv_addr,), client=ClientOptions(credentials=creds)
            )
            await collect(options)
            return [dict(r.ext_fields) for r in fake.requests]

    received = asyncio.run(run())
    assert len(received) > 10
    assert any("clientId" in f and "jstackEnable" in f for f in received)
    for fields in received:
        assert fields["AccessKey"] == "rmqlb-reader"
        assert fields["Signature"] == _by_hand(fields, secret)
        assert secret not in "".join(fields.values())
    assert secret not in repr(creds)
    assert secret not in repr(ClientOptions(credentials=creds))


@pytest.mark.parametrize(
    ("creds", "problem"),
    [
        (Credentials("reader", "right-secret"), None),
        (Credentials("reader", "wrong-secret"), "Check signature failed for accessKey=reader"),
        (Credentials("stranger", "whatever"), "No acl config for stranger"),
        (None, "No accessKey is configured"),
    ],
    ids=["signed", "wrong-secret", "unknown-key", "unsigned"],
)
def test_acl_checking_broker(creds: Credentials | None, problem: str | None) -> None:
    snapshot = load_snapshot(DEMO)

    async def run() -> Snapshot:
        async with FakeCluster(snapshot, acl={"reader": "right-secret"}) as fake:
            options = CollectOptions(
                namesrv=(fake.namesrv_addr,), client=ClientOptions(credentials=creds)
            )
            return await collect(options)

    if problem is None:
        got = asyncio.run(run())
        assert got.errors == ()
        assert set(got.groups) == set(snapshot.groups)
    else:  # every broker refuses: no snapshot built from the NameServer alone
        with pytest.raises(ClusterUnreachable, match="every broker refused the credentials") as e:
            asyncio.run(run())
        assert problem in str(e.value)


def test_many_callers_to_a_silent_address_each_keep_their_deadline() -> None:
    """A peer that accepts TCP but never completes the TLS handshake (a black hole)."""

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read()  # never answers; returns when the client gives up
        finally:
            writer.close()

    async def run() -> tuple[list[BaseException | list[str]], float]:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        addr = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
        options = ClientOptions(timeout=0.3, tls=TlsConfig(insecure=True))
        loop = asyncio.get_running_loop()
        start = loop.time()
        async with AdminClient(options) as admin:
            results = await asyncio.gather(
                *(admin.topic_list(addr) for _ in range(20)), return_exceptions=True
            )
        elapsed = loop.time() - start
        server.close()
        await asyncio.sleep(0.2)  # let the handlers see EOF and close their side
        return results, elapsed

    results, elapsed = asyncio.run(run())
    assert all(isinstance(r, ConnectFailed) for r in results), results
    assert elapsed < 3.0  # not 20 x 0.3 s one after the other


def test_refused_connect_is_remembered_briefly() -> None:
    addr = f"127.0.0.1:{free_port()}"

    async def run() -> list[BaseException | list[str]]:
        async with AdminClient(ClientOptions(timeout=2)) as admin:
            return await asyncio.gather(
                *(admin.topic_list(addr) for _ in range(50)), return_exceptions=True
            )

    results = asyncio.run(run())
    assert all(isinstance(r, ConnectFailed) and "refused" in str(r) for r in results)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(junk=st.binary(max_size=300), close=st.booleans())
def test_any_bytes_from_the_peer_end_in_a_typed_error_or_an_answer(
    junk: bytes, close: bool
) -> None:
    """Whatever a peer sends, a request ends with a response or a client error, in time."""

    async def spew(cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        writer.write(junk)
        if close:
            writer.close()

    async def run() -> object:
        async with ScriptedServer(spew) as server:
            conn = await Connection.open(server.addr, timeout=2)
            try:
                return await conn.request(RequestCode.GET_BROKER_CLUSTER_INFO, timeout=0.3)
            except (BadFrame, ConnectionLost, RequestTimeout) as exc:
                return exc
            finally:
                await conn.close()

    outcome = asyncio.run(run())
    assert isinstance(outcome, (RemotingCommand, BadFrame, ConnectionLost, RequestTimeout))
