"""A NameServer address that is really a broker or a web server: a hint at once, exit 3."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from livehelpers import ROOT

from rmqlb.cli import run
from rmqlb.errors import ExitCode
from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(60)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"


@pytest.fixture
def web_server() -> Iterator[str]:
    """Answers whatever arrives like nginx does to bytes that are not HTTP: 400 at once."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(64)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nServer: nginx\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _explain(capsys: pytest.CaptureFixture[str], namesrv: str) -> tuple[int, str, float]:
    start = time.monotonic()
    code = run(["explain", "-n", namesrv, "--timeout", "5"])
    return code, capsys.readouterr().err, time.monotonic() - start


def test_a_web_port_is_named_at_once(web_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err, took = _explain(capsys, web_server)
    assert code == ExitCode.UNREACHABLE
    assert took < 3  # the answer, not the 5 s timeout
    assert "answered in HTTP ('HTTP/1.1 400 Bad Request')" in err
    assert "a NameServer listens on 9876" in err
    assert err.count("\n") == 1


def test_a_broker_is_named_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        code, err, took = _explain(capsys, fake.broker_addrs["broker-a"])
        assert code == ExitCode.UNREACHABLE
        assert took < 3
        assert "answered like a RocketMQ broker, not a NameServer" in err
        # and a real NameServer later in the list is still used
        assert run(["explain", "-n", f"{fake.broker_addrs['broker-a']};{fake.namesrv_addr}"]) == 1
