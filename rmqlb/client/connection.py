"""One asyncio connection to one NameServer or broker address, multiplexed by opaque.

Why it looks like this: RocketMQ connections are long-lived and fully multiplexed (protocol
§1, §3.4). One reader task owns the socket's read side; it cuts frames with the remoting
codec and completes the future registered under the response's ``opaque``. Any number of
requests may be in flight; each has its own deadline. When the connection ends (EOF, reset,
garbage), every pending future fails with one typed error, so no caller can hang.

Frames the server sends *as requests* (``flag & 1 == 0``, e.g. a broker asking a consumer for
its running info) are never matched against pending requests; unless they are oneway they
get code 3 (REQUEST_CODE_NOT_SUPPORTED) with the same opaque, as protocol §3.4 allows.

The read-only allowlist is enforced in :meth:`Connection.request`, immediately before the
socket write, so no code path above can send a mutating request.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rmqlb.client.errors import (
    BadFrame,
    ConnectFailed,
    ConnectionLost,
    ForbiddenRequest,
    RemotingError,
    RequestTimeout,
    TimedOutEarlier,
)
from rmqlb.errors import FrameError, ProtocolError
from rmqlb.humanize import duration
from rmqlb.remoting.codes import READ_ONLY_CODES, ResponseCode, request_code_name
from rmqlb.remoting.frame import (
    MAX_FRAME_SIZE,
    FrameDecoder,
    RemotingCommand,
    encode_frame,
    response_to,
)
from rmqlb.remoting.frame import request as new_request

_INT32_MAX = 2**31 - 1

#: Bytes of unsent replies to the peer's own requests past which no more are written.
REPLY_BUFFER_LIMIT = 256 * 1024

#: Bytes waiting in the socket's send buffer past which a request waits for them to drain.
DRAIN_ABOVE = 64 * 1024

#: Seconds :meth:`Connection.close` waits for the socket to close before aborting it.
CLOSE_TIMEOUT = 0.5

#: Adds authentication fields to a request's extFields right before it is written
#: (ACL signing, protocol §9); receives the final extFields and body, returns new extFields.
Signer = Callable[[Mapping[str, str | None], bytes], dict[str, str | None]]


def split_addr(addr: str) -> tuple[str, int]:
    """``"10.0.0.1:10911"`` -> ``("10.0.0.1", 10911)``; splits on the last colon (IPv6).

    >>> split_addr("::1:9876")
    ('::1', 9876)
    """
    host, sep, port = addr.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConnectFailed(f"{addr}: not a host:port address", addr)
    return host, int(port)


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """TLS settings (protocol §10). ``insecure`` skips certificate checks as Java clients do
    by default; otherwise the server certificate must chain to ``ca_file`` (or the system
    store). Host names are never checked: RocketMQ servers are addressed by IP."""

    insecure: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def context(self) -> ssl.SSLContext:
        """Build the client-side :class:`ssl.SSLContext`."""
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.ca_file)
        ctx.check_hostname = False
        if self.insecure:
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        return ctx


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[RemotingCommand]
    code: int = field(default=0)  # the request's (its name only when a message needs it)
    deadline: float = field(default=0.0)  # event-loop time


class Connection:
    """A connection to ``addr``; create with :meth:`open`, close with :meth:`close`."""

    def __init__(
        self,
        addr: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        signer: Signer | None = None,
        max_frame_size: int = MAX_FRAME_SIZE,
    ) -> None:
        self.addr = addr
        self._reader = reader
        self._writer = writer
        self._signer = signer
        self._pending: dict[int, _Pending] = {}
        self._next_opaque = 0
        self._closed: RemotingError | None = None
        self._decoder = FrameDecoder(max_frame_size)
        self._outbox: list[bytes] = []  # frames queued this event-loop turn, not yet written
        # One timer for every pending request, at the earliest deadline among them (a timer
        # per request costs a handle and two heap operations, and almost none ever fires).
        self._timer: asyncio.TimerHandle | None = None
        self._read_task = asyncio.get_running_loop().create_task(
            self._read_loop(), name=f"rmqlb-read-{addr}"
        )

    @classmethod
    async def open(
        cls,
        addr: str,
        *,
        timeout: float,
        tls: TlsConfig | None = None,
        signer: Signer | None = None,
        max_frame_size: int = MAX_FRAME_SIZE,
    ) -> Connection:
        """Connect to ``addr`` (``host:port``) within ``timeout`` seconds."""
        host, port = split_addr(addr)
        try:
            ctx = tls.context() if tls is not None else None
        except (OSError, ssl.SSLError, ValueError) as exc:
            raise ConnectFailed(f"{addr}: TLS set-up failed: {exc}", addr) from exc
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=ctx, server_hostname=host if ctx is not None else None
                )
        except TimeoutError as exc:
            message = f"{addr}: connect timed out after {duration(timeout)}"
            raise ConnectFailed(message, addr) from exc
        except ssl.SSLError as exc:
            raise ConnectFailed(f"{addr}: TLS handshake failed: {exc.reason}", addr) from exc
        except ConnectionRefusedError as exc:
            raise ConnectFailed(f"{addr}: connection refused", addr) from exc
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ConnectFailed(f"{addr}: cannot connect: {reason}", addr) from exc
        return cls(addr, reader, writer, signer=signer, max_frame_size=max_frame_size)

    @property
    def closed(self) -> bool:
        """Whether the connection has ended (no further request can succeed)."""
        return self._closed is not None

    @property
    def in_flight(self) -> int:
        """Requests written and not yet answered."""
        return len(self._pending)

    def _opaque(self) -> int:
        opaque = self._next_opaque
        self._next_opaque = 0 if opaque >= _INT32_MAX else opaque + 1
        while opaque in self._pending:  # only after 2**31 requests on one connection
            opaque = self._opaque()
        return opaque

    async def request(
        self,
        code: int,
        ext_fields: Mapping[str, str] | None = None,
        body: bytes = b"",
        *,
        timeout: float,
    ) -> RemotingCommand:
        """Send one request and wait at most ``timeout`` seconds for its response.

        Raises :class:`ForbiddenRequest` (nothing written) for a code outside
        ``READ_ONLY_CODES``, :class:`RequestTimeout`, :class:`ConnectionLost` or
        :class:`BadFrame`. A non-zero response code is *returned*, not raised: the caller
        knows what it means for its request.
        """
        if code not in READ_ONLY_CODES:
            raise ForbiddenRequest(code, request_code_name(code))
        if self._closed is not None:
            raise type(self._closed)(self._closed.message, self.addr)
        fields: dict[str, str | None] = dict(ext_fields or {})
        if self._signer is not None:
            fields = self._signer(fields, body)
        opaque = self._opaque()
        # Headers as Java writes them, language PYTHON, version V4_9_4 (protocol §3.6).
        cmd = new_request(code, fields, opaque=opaque, body=body)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[RemotingCommand] = loop.create_future()
        # The deadline fails the answer's future with TimeoutError (see _expire_due), not
        # an asyncio.timeout scope: cheaper per request, the same TimeoutError.
        deadline = loop.time() + timeout
        self._pending[opaque] = _Pending(future, code, deadline)
        timer = self._timer
        if timer is None or deadline < timer.when():
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._expire_due)
        try:
            # Last line of defence: the check is repeated right at the write.
            if cmd.code not in READ_ONLY_CODES:
                raise ForbiddenRequest(cmd.code, request_code_name(cmd.code))
            self._write(encode_frame(cmd))
            if self._writer.transport.get_write_buffer_size() > DRAIN_ABOVE:
                async with asyncio.timeout_at(deadline):  # the peer reads slowly: wait
                    await self._writer.drain()
            return await future
        except TimeoutError as exc:
            raise RequestTimeout(
                f"{self.addr}: {request_code_name(code)} timed out after {duration(timeout)}",
                self.addr,
            ) from exc
        except (ConnectionError, OSError) as exc:
            raise ConnectionLost(f"{self.addr}: connection lost: {exc}", self.addr) from exc
        finally:
            self._pending.pop(opaque, None)

    def _expire_due(self) -> None:
        """The timer fired: every request whose deadline has come gets :class:`TimeoutError`;
        the timer is set again for the earliest deadline still ahead."""
        assert self._timer is not None
        now = max(self._timer.when(), asyncio.get_running_loop().time())
        self._timer = None
        earliest: float | None = None
        for waiter in self._pending.values():
            if waiter.future.done():
                continue
            if waiter.deadline <= now:
                waiter.future.set_exception(TimeoutError())
            elif earliest is None or waiter.deadline < earliest:
                earliest = waiter.deadline
        if earliest is not None:
            self._timer = asyncio.get_running_loop().call_at(earliest, self._expire_due)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _write(self, frame: bytes) -> None:
        """Queue ``frame``; every frame queued in this event-loop turn is written at once at
        the start of the next (one send for many requests, and one wake-up of the peer)."""
        if not self._outbox:
            asyncio.get_running_loop().call_soon(self._flush)
        self._outbox.append(frame)

    def _flush(self) -> None:
        frames, self._outbox = self._outbox, []
        if self._closed is None and not self._writer.is_closing():
            self._writer.write(b"".join(frames))

    async def _read_loop(self) -> None:
        error: RemotingError
        try:
            while True:
                data = await self._reader.read(65536)
                if not data:
                    what = "in the middle of a frame" if self._decoder_has_data() else ""
                    error = ConnectionLost(
                        f"{self.addr}: connection closed by peer {what}".rstrip(), self.addr
                    )
                    break
                for cmd in self._decoder.feed(data):
                    self._dispatch(cmd)
        except (FrameError, ProtocolError) as exc:
            error = BadFrame(f"{self.addr}: bad frame from peer: {exc}", self.addr)
        except (ConnectionError, OSError) as exc:
            error = ConnectionLost(f"{self.addr}: connection lost: {exc}", self.addr)
        except asyncio.CancelledError:
            self._fail_all(ConnectionLost(f"{self.addr}: connection closed", self.addr))
            raise
        self._fail_all(error)
        self._writer.close()

    def _decoder_has_data(self) -> bool:
        return self._decoder.buffered > 0

    def _dispatch(self, cmd: RemotingCommand) -> None:
        if cmd.is_response:
            waiter = self._pending.get(cmd.opaque)
            if waiter is not None and not waiter.future.done():
                waiter.future.set_result(cmd)
            return  # a late response after a timeout is dropped, as Java does
        if not cmd.is_oneway:
            if self._writer.transport.get_write_buffer_size() > REPLY_BUFFER_LIMIT:
                return  # the peer floods requests and does not read: stop answering
            reply = response_to(
                cmd,
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                remark=f" request type {cmd.code} not supported",
            )
            with contextlib.suppress(ConnectionError, OSError, RuntimeError):
                self._writer.write(encode_frame(reply))

    def give_up(self, reason: str) -> None:
        """Fail every pending request at once with :class:`TimedOutEarlier` (``reason``
        after the request's name) and drop the socket: the peer is not waited on again."""
        if self._closed is None:
            self._closed = TimedOutEarlier(f"{self.addr}: {reason}", self.addr)
        for waiter in self._pending.values():
            if not waiter.future.done():
                message = f"{self.addr}: {request_code_name(waiter.code)} {reason}"
                waiter.future.set_exception(TimedOutEarlier(message, self.addr))
        self._pending.clear()
        self._stop_timer()
        self._read_task.cancel()
        self._writer.transport.abort()

    def _fail_all(self, error: RemotingError) -> None:
        if self._closed is None:
            self._closed = error
        for waiter in self._pending.values():
            if not waiter.future.done():
                waiter.future.set_exception(type(error)(error.message, self.addr))
        self._pending.clear()
        self._stop_timer()

    async def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Close the socket and fail whatever is still pending; safe to call twice.

        Bounded: a peer that stopped reading (so buffered writes cannot flush) or a TLS
        close that is never answered gets ``timeout`` seconds, then the socket is aborted.
        """
        if self._closed is None:
            self._fail_all(ConnectionLost(f"{self.addr}: connection closed", self.addr))
        self._read_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._read_task
        transport = self._writer.transport
        if transport.get_write_buffer_size() > 0:
            transport.abort()  # what is left to write is at most our own NOT_SUPPORTED replies
        else:
            self._writer.close()
        try:
            async with asyncio.timeout(timeout):
                await self._writer.wait_closed()
        except TimeoutError:
            transport.abort()
        except Exception:
            pass
