"""``rmqlb client``: one client up close, like ``mqadmin consumerStatus -i``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rmqlb.cli import run

ROOT = Path(__file__).resolve().parents[3]
STUCK = ROOT / "examples" / "slow-and-stuck-consumers.json"
CLIENT = "10.0.5.11@7101#5120003391200"


def test_process_queue_state_per_held_queue(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["client", CLIENT, "-d", str(STUCK), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "rmqlb.client/1"
    (client,) = doc["clients"]
    assert client["group"] == "payment-event-consumer" and client["version"] == "V5_0_0"
    first = client["queues"][0]
    assert (first["queueId"], first["cachedMessages"], first["commitOffset"]) == (0, 4, 9080)
    assert first["lastConsume"] == "2026-11-22T11:59:59Z"
    assert set(first) >= {"locked", "dropped", "cachedMiB", "lastPull"}


def test_plain_lists_the_facts_and_the_queues(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["client", CLIENT, "-d", str(STUCK), "-o", "plain"]) == 0
    out = capsys.readouterr().out
    assert "address: 10.0.5.11:51001" in out and "strategy: AVG" in out
    assert "PaymentEventTopic broker-a:0" in out and "9,080" in out


def test_an_unknown_client_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["client", "nobody", "-d", str(STUCK)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_pop_client_shows_what_a_broker_lets_it_pop(capsys: pytest.CaptureFixture[str]) -> None:
    pop = ROOT / "examples" / "pop-share-1.json"
    cid = "10.0.0.6@9133#3011000000002"
    assert run(["client", cid, "-d", str(pop), "-o", "plain"]) == 0
    assert "pops: PopTopic broker-a:2, PopTopic broker-a:3" in capsys.readouterr().out
    assert run(["client", cid, "-d", str(pop), "-o", "json"]) == 0
    (client,) = json.loads(capsys.readouterr().out)["clients"]
    assert [q["queueId"] for q in client["popQueues"]] == [2, 3]


def test_it_says_who_balances_the_client(capsys: pytest.CaptureFixture[str]) -> None:
    """Reported (the POP client's broker), or inferred with the reason (a 4.x client)."""
    pop = ROOT / "examples" / "pop-share-1.json"
    assert run(["client", "10.0.0.6@9133#3011000000002", "-d", str(pop), "-o", "json"]) == 0
    (client,) = json.loads(capsys.readouterr().out)["clients"]
    assert client["balancedBy"] == "broker"
    mixed = ROOT / "examples" / "mixed-rebalance.json"
    assert run(["client", "10.0.0.5@5101#5200000000001", "-d", str(mixed), "-o", "plain"]) == 0
    out = capsys.readouterr().out
    assert "balanced by: client (inferred: a client older than 5.0 cannot ask the broker)" in out


@pytest.mark.parametrize("output", ["plain", "table"])
def test_a_grpc_clients_held_queues_are_unknown_for_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    """A gRPC client: balanced by its Proxy (named), held queues unknown because nobody can
    ask a gRPC client, not because a capture failed."""
    consumer = {"clientId": "10.0.0.7@1", "subscriptions": ["T"], "proxy": "10.0.0.9:8081"}
    doc = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 2}},
        "groups": {"G": {"consumers": [consumer]}},
    }
    path = tmp_path / "grpc.json"
    path.write_text(json.dumps(doc))
    assert run(["client", "10.0.0.7@1", "-d", str(path), "-o", output]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert re.search(r"balanced by:? proxy 10\.0\.0\.9:8081 ", out)
    assert "pops through its Proxy" in out
    assert "running info was not captured" not in out


@pytest.mark.parametrize("fmt", ["plain", "table"])
def test_each_held_queue_shows_the_max_offset_and_the_clients_own_lag(
    capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """A real 4.9.8 capture of a slow BROADCASTING client: the brokers' max offset of each
    queue and its lag by its own commit offset (no broker has its offsets)."""
    example = str(ROOT / "examples" / "broadcasting-slow-and-failing.json")
    assert run(["client", "127.0.0.1@node-2", "-d", example, "-o", fmt]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "broker-a:0" in line)
    assert row.split()[-3:] == ["18", "313", "295"]  # commit, max, lag
    assert run(["client", "127.0.0.1@node-2", "-d", example, "-o", "json"]) == 0
    first = json.loads(capsys.readouterr().out)["clients"][0]["queues"][0]
    assert (first["commitOffset"], first["maxOffset"], first["lag"]) == (18, 313, 295)


def test_an_unknown_max_offset_or_commit_is_no_lag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = json.loads((ROOT / "examples" / "broadcasting-slow-and-failing.json").read_text())
    group = doc["groups"]["cache-invalidation-consumer"]
    group["offsets"] = group["offsets"][1:]  # broker-a:0's max offset not captured
    client = next(c for c in group["consumers"] if c["clientId"] == "127.0.0.1@node-2")
    client["processQueues"][1]["commitOffset"] = -1  # broker-a:1: nothing committed yet
    path = tmp_path / "client-unknown.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run(["client", "127.0.0.1@node-2", "-d", str(path), "-o", "plain"]) == 0
    rows = {line.split()[1]: line.split()[-3:] for line in capsys.readouterr().out.splitlines()
            if line.startswith("CacheInvalidation")}  # fmt: skip
    assert rows["broker-a:0"] == ["18", "?", "?"]
    assert rows["broker-a:1"] == ["none", "313", "?"]
