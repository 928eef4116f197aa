"""``rmqlb exporter`` as a process against the fake cluster over TCP: it serves what
``status`` computes, only read-only requests, no secret, and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from livehelpers import ROOT

from rmqlb.cli.exporter import capture_live
from rmqlb.cli.live import LiveOptions
from rmqlb.fake import FakeClusterThread
from rmqlb.remoting.codes import READ_ONLY_CODES
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(90)

SPLIT = ROOT / "examples" / "split-subscriptions.json"
SECRET = "s3cr3t-never-shown"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def scrape_until(url: str, needle: str, deadline: float = 30.0) -> str:
    end = time.monotonic() + deadline
    while True:
        try:
            code, body = get(url)
            if code == 200 and needle in body:
                return body
        except OSError:
            pass
        if time.monotonic() > end:
            raise AssertionError(f"{needle!r} never served at {url}")
        time.sleep(0.1)


def start(namesrv: str, port: int, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "ROCKETMQ_ACCESS_KEY": "rocketmq2", "ROCKETMQ_SECRET_KEY": SECRET}
    args = ["exporter", "-n", namesrv, "--listen", f"127.0.0.1:{port}", "--interval", "1"]
    return subprocess.Popen(
        [sys.executable, "-m", "rmqlb", *args, *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


def test_serves_the_stranded_messages_read_only_and_stops_on_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "requests.log"
    port = free_port()
    with FakeClusterThread(load_snapshot(SPLIT), log_path=str(log)) as fake:
        proc = start(fake.namesrv_addr, port)
        try:
            body = scrape_until(f"http://127.0.0.1:{port}/metrics", "rmqlb_group_stranded")
            assert get(f"http://127.0.0.1:{port}/-/healthy")[0] == 200
            assert get(f"http://127.0.0.1:{port}/nothing")[0] == 404
            scrape_until(f"http://127.0.0.1:{port}/metrics", 'rmqlb_captures_total{result="ok"} 2')
        finally:
            code, out, err = stop(proc)
    assert code == 0, err
    assert out.splitlines()[-1] == "rmqlb exporter: stopped"
    assert 'rmqlb_group_stranded_messages{group="GroupA"} 20800.0' in body
    assert "rmqlb_up 1.0" in body
    for text in (body, out, err):
        assert SECRET not in text
    codes = {int(line.split(" ")[0]) for line in log.read_text(encoding="utf-8").splitlines()}
    assert codes and codes <= READ_ONLY_CODES


def test_a_broker_down_is_broker_up_0_and_its_lag_left_out() -> None:
    port = free_port()
    faults = ["broker-down=broker-a"]
    with FakeClusterThread(
        load_snapshot(ROOT / "rmqlb" / "data" / "demo-snapshot.json"), faults=faults
    ) as fake:
        proc = start(fake.namesrv_addr, port, "--timeout", "1")
        try:
            body = scrape_until(f"http://127.0.0.1:{port}/metrics", "rmqlb_broker_up")
        finally:
            code, _, err = stop(proc)
    assert code == 0, err
    assert 'rmqlb_broker_up{broker="broker-a"} 0.0' in body
    assert 'rmqlb_broker_up{broker="broker-b"} 1.0' in body
    assert 'rmqlb_capture_failed_requests{broker="broker-a"' in body
    assert "rmqlb_group_lag_messages{" not in body  # every group has queues on broker-a
    assert "rmqlb_group_partial{" in body


def test_an_unreachable_cluster_is_up_0_and_said_once_on_stderr() -> None:
    port, dead = free_port(), free_port()
    proc = start(f"127.0.0.1:{dead}", port, "--timeout", "0.5")
    try:
        body = scrape_until(f"http://127.0.0.1:{port}/metrics", "rmqlb_up 0.0")
    finally:
        code, _, err = stop(proc)
    assert code == 0
    assert "rmqlb_group_" not in body
    assert "rmqlb: exporter: capture failed: no NameServer answered" in err
    assert "Traceback" not in err


def test_bad_listen_address_is_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rmqlb", "exporter", "-n", "127.0.0.1:1", "--listen", "nope"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "rmqlb: error: --listen 'nope': expected HOST:PORT, e.g. 127.0.0.1:9877"
    ]


def _of_the_capture(obj: object) -> bool:
    """Whether a garbage object is the live capture's: a task (not the fake cluster's), an
    event loop, or an object of the client, the protocol or the snapshot model."""
    if isinstance(obj, asyncio.Task):
        code = getattr(obj.get_coro(), "cr_code", None)
        return code is None or "fake" not in code.co_filename
    module = type(obj).__module__
    return isinstance(obj, asyncio.AbstractEventLoop) or module.startswith(
        ("rmqlb.client", "rmqlb.remoting", "rmqlb.model")
    )


def test_a_capture_leaves_nothing_to_the_garbage_collector() -> None:
    """The exporter captures every interval for weeks: what a capture made (its tasks, event
    loop, collector, errors and their tracebacks) must be freed when it ends, not left in
    reference cycles until a full collection (memory would grow in between, and asyncio's
    task set would keep its high-water mark). CPython's own cycle of a closed transport and
    its read callback is not the capture's."""
    with FakeClusterThread(load_snapshot(SPLIT)) as fake:
        options = LiveOptions(namesrv=fake.namesrv_addr, progress=False)
        capture_live(options, [], None)  # first use: imports and their caches
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            got = capture_live(options, [], None)
            gc.collect()
            left = [o for o in gc.garbage if _of_the_capture(o)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert got.report is not None
    assert not left, Counter(type(o).__qualname__ for o in left)
