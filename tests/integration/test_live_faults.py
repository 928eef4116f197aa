"""The fault matrix over real TCP: every failure ends in a typed result, never a hang."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

import pytest
from livehelpers import ROOT

from rmqlb.cli import run
from rmqlb.client.admin import ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.client.steps.running import RELAY_HEDGE
from rmqlb.errors import ClusterUnreachable, ExitCode
from rmqlb.fake import FakeCluster, FakeClusterThread, free_port
from rmqlb.model import Snapshot
from rmqlb.remoting.codes import RequestCode
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(60)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
SILENT = "10.0.1.12@2187#1900214977104"


@pytest.fixture(scope="module")
def demo() -> Snapshot:
    return load_snapshot(DEMO)


async def _collect(
    snapshot: Snapshot, faults: list[str], *, timeout: float = 2.0, deadline: float | None = None
) -> Snapshot:
    async with FakeCluster(snapshot, faults=faults) as cluster:
        return await collect(
            CollectOptions(
                namesrv=(cluster.namesrv_addr,),
                client=ClientOptions(timeout=timeout),
                deadline=deadline,
            )
        )


def test_namesrv_down_is_cluster_unreachable_within_the_deadline(demo: Snapshot) -> None:
    start = time.monotonic()
    with pytest.raises(ClusterUnreachable, match="no NameServer answered"):
        asyncio.run(_collect(demo, ["namesrv-down"], deadline=5.0))
    assert time.monotonic() - start < 5.0


def test_namesrv_down_exits_3_for_dump_and_explain(
    demo: Snapshot, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeClusterThread(demo, faults=["namesrv-down"]) as fake:
        assert run(["dump", "-n", fake.namesrv_addr, "--deadline", "5"]) == ExitCode.UNREACHABLE
        assert run(["explain", "-n", fake.namesrv_addr]) == ExitCode.UNREACHABLE
    err = capsys.readouterr().err
    assert "no NameServer answered" in err
    assert "Traceback" not in err


def test_namesrv_fail_over_to_the_next_address(demo: Snapshot) -> None:
    dead = f"127.0.0.1:{free_port()}"

    async def run_it() -> Snapshot:
        async with FakeCluster(demo) as cluster:
            return await collect(CollectOptions(namesrv=(dead, cluster.namesrv_addr)))

    got = asyncio.run(run_it())
    assert set(got.groups) == set(demo.groups)
    assert got.errors == ()


def test_one_broker_down_gives_a_partial_snapshot_naming_it(demo: Snapshot) -> None:
    got = asyncio.run(_collect(demo, ["broker-down=broker-b"]))
    assert got.errors, "a down broker must be reported"
    assert all("broker-b" in e.target for e in got.errors)
    assert {e.request for e in got.errors} >= {"GET_CONSUME_STATS", "GET_CONSUMER_CONNECTION_LIST"}
    assert all("refused" in e.message for e in got.errors)
    # broker-a still answered: consumers and broker-a's offsets are there
    order = got.groups["OrderGroup"]
    assert len(order.consumers) == 3
    assert {o.queue.broker_name for o in order.offsets} == {"broker-a"}


def test_one_broker_down_exits_4_and_names_the_broker(
    demo: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "partial.json"
    with FakeClusterThread(demo, faults=["broker-down=broker-b"]) as fake:
        assert run(["dump", "-n", fake.namesrv_addr, "--out", str(out)]) == ExitCode.PARTIAL
        code = run(["explain", "-n", fake.namesrv_addr, "--fail-on", "never", "-o", "json"])
    assert code == ExitCode.PARTIAL
    captured = capsys.readouterr()
    assert "broker-b" in captured.err
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert any("broker-b" in e["target"] for e in saved["errors"])
    assert "broker-b" in captured.out  # the JSON report lists what is missing


@pytest.mark.parametrize("command", ["dump", "explain"])
def test_failed_requests_are_listed_once_on_stderr(
    demo: Snapshot, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """A down broker fails every request to it: stderr says so on one line, counting the
    requests, with its address once; the text report only says how many failed."""
    with FakeClusterThread(demo, faults=["broker-down=broker-b"]) as fake:
        options = ["--fail-on", "never", "-o", "plain"] if command == "explain" else []
        code = run([command, "-n", fake.namesrv_addr, *options])
        addr = fake.broker_addrs["broker-b"]
    assert code == ExitCode.PARTIAL
    out, err = capsys.readouterr()
    failed = [line for line in err.splitlines() if line.startswith("  ")]
    assert len(failed) == 1, err
    (line,) = failed
    assert line.startswith(f"  broker-b ({addr}): ") and line.count(addr) == 1
    assert "GET_CONSUME_STATS" in line and "GET_CONSUMER_CONNECTION_LIST" in line
    assert "requests failed while capturing:" in err
    if command == "explain":
        assert "failed while capturing (listed on stderr)" in out
        assert addr not in out


def test_silent_client_is_unknown_and_recorded(demo: Snapshot) -> None:
    start = time.monotonic()
    got = asyncio.run(_collect(demo, [f"silent-client={SILENT}", "relay-delay=100"]))
    took = time.monotonic() - start
    consumers = {c.client_id: c for c in got.groups["OrderGroup"].consumers}
    assert consumers[SILENT].assigned is None
    assert all(c.assigned is not None for cid, c in consumers.items() if cid != SILENT)
    [error] = got.errors
    assert error.target == SILENT
    assert error.request == "GET_CONSUMER_RUNNING_INFO"
    assert "207" in error.message
    # the first broker's refusal hands over to the other at once, without the hedge's wait
    assert error.message.count("via ") == 2, error.message
    assert took < RELAY_HEDGE * 2.0 + 0.2 + 1.0, f"{took:.2f} s"


def test_a_client_that_answers_is_asked_through_one_broker(demo: Snapshot) -> None:
    """Each ask makes a client build its running info: one that answers is asked once,
    however many brokers list it."""

    async def asked() -> tuple[Snapshot, Counter[str]]:
        async with FakeCluster(demo, faults=["relay-delay=0"]) as cluster:
            got = await collect(CollectOptions(namesrv=(cluster.namesrv_addr,)))
            return got, Counter(
                r.ext_fields["clientId"]
                for r in cluster.requests
                if r.code == RequestCode.GET_CONSUMER_RUNNING_INFO
            )

    got, counts = asyncio.run(asked())
    listed = {c.client_id for g in got.groups.values() for c in g.consumers if c.proxy is None}
    assert not got.errors
    assert set(counts) == listed
    assert set(counts.values()) == {1}, counts


def test_silent_client_slower_than_the_timeout(demo: Snapshot) -> None:
    got = asyncio.run(_collect(demo, [f"silent-client={SILENT}", "relay-delay=5000"], timeout=0.3))
    [error] = got.errors
    assert error.target == SILENT
    assert "timed out" in error.message


def test_silent_client_costs_one_timeout_however_many_brokers_list_it(demo: Snapshot) -> None:
    """The other brokers that list the client are asked once the first has been out for
    RELAY_HEDGE of the timeout: a frozen client costs about one timeout, not one per broker.

    (On a real cluster the sequential version took 2 x --timeout with two brokers.)
    """
    start = time.monotonic()
    got = asyncio.run(_collect(demo, [f"silent-client={SILENT}", "relay-delay=5000"], timeout=1.0))
    took = time.monotonic() - start
    [error] = got.errors
    assert error.message.count("timed out after 1 s") == 2, error.message  # both brokers asked
    assert took < 1.9, f"the capture took {took:.2f} s: the relays ran one after the other"


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("garbage=broker-a", "bad frame"),
        ("oversized=broker-a", "exceeds the maximum frame size"),
        ("reset=broker-a", "connection"),
    ],
)
def test_broken_frames_give_a_clear_error_and_no_hang(
    demo: Snapshot, fault: str, words: str
) -> None:
    start = time.monotonic()
    got = asyncio.run(_collect(demo, [fault], timeout=3.0))
    assert time.monotonic() - start < 3.0  # failures are immediate, not timeouts
    failed = [e for e in got.errors if "broker-a" in e.target or "via broker-a" in e.message]
    assert failed, got.errors
    assert all(words in e.message for e in failed), failed
    # broker-b still answered
    assert any(o.queue.broker_name == "broker-b" for o in got.groups["InventoryGroup"].offsets)


def test_overall_deadline_bounds_a_slow_cluster(demo: Snapshot) -> None:
    start = time.monotonic()
    got = asyncio.run(_collect(demo, ["latency=400"], timeout=5.0, deadline=1.0))
    assert time.monotonic() - start < 3.0
    assert any("deadline" in e.message or "timed out" in e.message for e in got.errors)


def test_a_proxy_address_that_drops_remoting_requests_is_told_which_port_to_give(
    demo: Snapshot,
) -> None:
    """``--proxy`` given a gRPC port: the TLS server answers a remoting frame with a TLS
    alert and closes. The capture error says which port ``--proxy`` takes."""

    async def grpc_port(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(64)
        writer.write(b"\x15\x03\x03\x00\x02\x02\x50")  # a TLS alert: no remoting frame
        await writer.drain()
        writer.close()

    async def run_it() -> Snapshot:
        server = await asyncio.start_server(grpc_port, "127.0.0.1", 0)
        addr = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            async with FakeCluster(demo) as cluster:
                options = CollectOptions(namesrv=(cluster.namesrv_addr,), proxies=(addr,))
                return await collect(options)
        finally:
            server.close()

    got = asyncio.run(run_it())
    messages = {e.message for e in got.errors if e.request == "GET_CONSUMER_CONNECTION_LIST"}
    assert messages and all(
        m.endswith("if this is the Proxy's gRPC port, give its remoting port "
                   "(remotingListenPort, 8080 by default; gRPC is grpcServerPort, 8081): a "
                   "5.0 Proxy has none")
        for m in messages
    ), messages  # fmt: skip
