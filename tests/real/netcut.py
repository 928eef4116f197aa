"""A network cut between real clients and one broker, for the real suite.

:class:`NetCut` puts a NameServer in front of the kit's: it forwards every request and
answer as they are, except that in each topic route it answers, the address of one broker
becomes that of a relay this process holds. A client started with :attr:`NetCut.port` as
its NameServer therefore reaches that broker through the relay only, and every other broker
directly. :meth:`NetCut.cut` closes the relay and every connection through it and refuses
new ones: to the broker, those clients' channels close (it stops listing them at once), and
to the clients, the broker no longer answers, as when a network partition falls between
them. Nothing else changes: the brokers, the NameServer and the clients are the kit's.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import suppress
from types import TracebackType

from rmqlb.remoting.codes import RequestCode
from rmqlb.remoting.frame import decode_frame

_LENGTH = struct.Struct(">I")
_HEADER_LENGTH_MASK = 0xFFFFFF


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return bytes(data)


def _frames(sock: socket.socket) -> Iterator[bytes]:
    """The frames read from ``sock`` (each without its 4-byte length) until it closes."""
    with suppress(OSError):
        while True:
            (length,) = _LENGTH.unpack(_exactly(sock, 4))
            yield _exactly(sock, length)


def _listener() -> socket.socket:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(None)
    return server


class NetCut:
    """A NameServer (at :attr:`port`) in front of ``namesrv`` whose routes send clients to
    ``broker_addr`` through a relay that :meth:`cut` takes down."""

    def __init__(self, namesrv: str, broker_addr: str) -> None:
        self._namesrv = namesrv
        self._broker = broker_addr
        self._front = _listener()
        self._relay = _listener()
        self.port: int = self._front.getsockname()[1]
        relay_addr = f"127.0.0.1:{self._relay.getsockname()[1]}"
        self._route_from, self._route_to = broker_addr.encode(), relay_addr.encode()
        self._lock = threading.Lock()
        self._relayed: list[socket.socket] = []  # both ends of every relayed connection
        self._all: list[socket.socket] = [self._front, self._relay]
        self.cut_done = False
        self._spawn(self._accept, self._front, self._serve_namesrv)
        self._spawn(self._accept, self._relay, self._serve_relay)

    # --- the NameServer in front --------------------------------------------------------

    def _serve_namesrv(self, client: socket.socket) -> None:
        upstream = self._connect(self._namesrv)
        if upstream is None:
            client.close()
            return
        routes: set[int] = set()  # opaques of route requests not answered yet
        self._spawn(self._requests, client, upstream, routes)
        self._spawn(self._answers, upstream, client, routes)

    def _requests(self, client: socket.socket, upstream: socket.socket, routes: set[int]) -> None:
        for frame in _frames(client):
            ask = decode_frame(frame)
            if ask.code == RequestCode.GET_ROUTEINFO_BY_TOPIC and not ask.is_response:
                routes.add(ask.opaque)
            if not self._send(upstream, frame):
                break
        self._close(client, upstream)

    def _answers(self, upstream: socket.socket, client: socket.socket, routes: set[int]) -> None:
        for frame in _frames(upstream):
            answer = decode_frame(frame)
            rerouted = answer.is_response and answer.opaque in routes
            if rerouted:
                routes.discard(answer.opaque)
            if not self._send(client, self._rerouted(frame) if rerouted else frame):
                break
        self._close(client, upstream)

    def _rerouted(self, frame: bytes) -> bytes:
        """The route answer ``frame`` with the broker's address replaced by the relay's (the
        header as it came, the body changed)."""
        header_length = _LENGTH.unpack_from(frame, 0)[0] & _HEADER_LENGTH_MASK
        head, body = frame[: 4 + header_length], frame[4 + header_length :]
        return head + body.replace(self._route_from, self._route_to)

    # --- the relay ------------------------------------------------------------------------

    def _serve_relay(self, client: socket.socket) -> None:
        upstream = self._connect(self._broker)
        with self._lock:
            if upstream is None or self.cut_done:
                client.close()
                if upstream is not None:
                    upstream.close()
                return
            self._relayed += [client, upstream]
        self._spawn(self._pump, client, upstream)
        self._spawn(self._pump, upstream, client)

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        self._close(source, target)

    def cut(self) -> None:
        """Take the relay down: its listening socket and every connection through it."""
        with self._lock:
            self.cut_done = True
            doomed, self._relayed = self._relayed, []
        self._close(self._relay, *doomed)

    # --- plumbing -------------------------------------------------------------------------

    def _accept(self, server: socket.socket, serve: Callable[[socket.socket], None]) -> None:
        with suppress(OSError):
            while True:
                conn, _ = server.accept()
                with self._lock:
                    self._all.append(conn)
                serve(conn)

    def _connect(self, addr: str) -> socket.socket | None:
        host, _, port = addr.rpartition(":")
        try:
            conn = socket.create_connection((host, int(port)), timeout=10)
        except OSError:
            return None
        conn.settimeout(None)
        with self._lock:
            self._all.append(conn)
        return conn

    @staticmethod
    def _send(sock: socket.socket, frame: bytes) -> bool:
        try:
            sock.sendall(_LENGTH.pack(len(frame)) + frame)
        except OSError:
            return False
        return True

    @staticmethod
    def _close(*socks: socket.socket) -> None:
        for sock in socks:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    @staticmethod
    def _spawn(target: Callable[..., None], *args: object) -> None:
        threading.Thread(target=target, args=args, daemon=True).start()

    def close(self) -> None:
        """Close every socket this NameServer and relay opened."""
        with self._lock:
            everything, self._all = self._all, []
        self._close(*everything)

    def __enter__(self) -> NetCut:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
