"""A TCP server that answers rmqlb's first request the way a hostile or broken peer would.

It stands in for the NameServer (the first address rmqlb talks to). Modes:

==============  =========================================================================
``close``       accepts, closes at once
``garbage``     answers with bytes that are no frame
``huge-length`` announces a 2 GiB frame
``slow-bytes``  sends a valid answer one byte every 0.2 s
``flood``       sends 100,000 requests of its own, then never reads again
``wrong-opaque`` answers with an opaque nobody asked for
``huge-remark`` answers SYSTEM_ERROR with a 15 MB remark
``blackhole``   accepts and reads, never answers
==============  =========================================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Iterator

from rmqlb.remoting.frame import FLAG_RESPONSE, FrameDecoder, RemotingCommand, encode_frame

MODES = (
    "close",
    "garbage",
    "huge-length",
    "slow-bytes",
    "flood",
    "wrong-opaque",
    "huge-remark",
    "blackhole",
)
FLOOD_REQUESTS = 100_000


async def _first_request(reader: asyncio.StreamReader) -> RemotingCommand | None:
    decoder = FrameDecoder()
    while True:
        data = await reader.read(65536)
        if not data:
            return None
        commands = decoder.feed(data)
        if commands:
            return commands[0]


@functools.cache
def _flood() -> bytes:
    """:data:`FLOOD_REQUESTS` requests (GET_CONSUMER_RUNNING_INFO, as a broker relays)."""
    return b"".join(
        encode_frame(RemotingCommand(code=307, opaque=i)) for i in range(FLOOD_REQUESTS)
    )


def _answer(request: RemotingCommand, **kwargs: object) -> bytes:
    reply = RemotingCommand(
        code=int(kwargs.pop("code", 0)),  # type: ignore[call-overload]
        opaque=int(kwargs.pop("opaque", request.opaque)),  # type: ignore[call-overload]
        flag=FLAG_RESPONSE,
        remark=kwargs.pop("remark", None),  # type: ignore[arg-type]
        body=b'{"brokerAddrTable":{},"clusterAddrTable":{}}',
    )
    return encode_frame(reply)


async def _serve(mode: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    if mode == "close":
        writer.close()
        return
    request = await _first_request(reader)
    if request is None:
        return
    if mode == "garbage":
        writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\n" + bytes(range(256)) * 16)
    elif mode == "huge-length":
        writer.write(b"\x7f\xff\xff\xff\x00\x00\x00\x10" + b"{" * 64)
    elif mode == "slow-bytes":
        for byte in _answer(request):
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.2)
    elif mode == "flood":
        writer.write(_flood())
        await writer.drain()  # then never read again: the client's replies pile up
    elif mode == "wrong-opaque":
        writer.write(_answer(request, opaque=request.opaque + 12345))
    elif mode == "huge-remark":
        writer.write(_answer(request, code=1, remark="R" * 15_000_000))
    elif mode != "blackhole":
        raise ValueError(mode)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    await asyncio.sleep(3600)  # hold the connection; the client must give up by itself


class HostileServer:
    """The server in a thread: ``with HostileServer("flood") as addr: ...``."""

    def __init__(self, mode: str) -> None:
        assert mode in MODES, mode
        self.mode = mode
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def _start(self) -> str:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            self._tasks.add(task)
            try:
                await _serve(self.mode, reader, writer)
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                writer.transport.abort()

        self._server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.sleep(0)

    def __enter__(self) -> str:
        if self.mode == "flood":
            _flood()  # built before serving: the loop must stay free while it is written
        self._thread.start()
        return asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@contextlib.contextmanager
def hostile(mode: str) -> Iterator[str]:
    """The address of a :class:`HostileServer` in ``mode`` while the block runs."""
    with HostileServer(mode) as addr:
        yield addr
