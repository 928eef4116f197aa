"""``rmqlb client``: one client up close, like ``mqadmin consumerStatus -i``."""

from __future__ import annotations

import json
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
