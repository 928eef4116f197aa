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
