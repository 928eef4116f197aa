"""``rmqlb offsets``: every queue of a group with its offsets, lag and holder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rmqlb.cli import run

DEMO = Path(__file__).resolve().parents[3] / "rmqlb" / "data" / "demo-snapshot.json"


def offsets(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["offsets", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_group_without_consumers_shows_every_queue(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = offsets(capsys, "AuditGroup", "-d", str(DEMO), "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["format"] == "rmqlb.offsets/1" and doc["consumers"] == 0
    assert [q["lag"] for q in doc["queues"]] == [1020, 1090, 1045, 1055]
    assert doc["totals"] == {
        "queues": 4,
        "lag": 4210,
        "lagComplete": True,
        "holdersUnknown": None,
    }
    assert all(q["holders"] == [] for q in doc["queues"])
    assert all(q["lastConsumed"].endswith("Z") for q in doc["queues"])


@pytest.mark.parametrize(
    ("by", "first"),
    [("queue", "%RETRY%OrderGroup"), ("lag", "RefundTopic broker-b:0"), ("holder", "%RETRY%")],
)
def test_sort_by(by: str, first: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = offsets(capsys, "OrderGroup", "-d", str(DEMO), "--sort-by", by, "--no-headers")
    assert code == 0
    row = out.splitlines()[0].split("\t")
    assert " ".join(row[:2]).startswith(first)
    lags = [int(line.split("\t")[4].replace(",", "")) for line in out.splitlines()]
    if by == "lag":
        assert lags == sorted(lags, reverse=True)


def test_totals_and_never_committed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = offsets(capsys, "OrderGroup", "-d", str(DEMO), "-o", "plain")
    assert code == 0
    assert "Totals: 7 queues, lag 3,546, 3 consumers online" in out
    refund = [line for line in out.splitlines() if line.startswith("RefundTopic")]
    assert sum(line.rstrip().endswith("never") for line in refund) == 3


def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = offsets(capsys, "Nope", "-d", str(DEMO))
    assert code == 2 and err.count("\n") == 1 and "Nope" in err
    code, _, err = offsets(capsys, "OrderGroup", "-d", str(DEMO), "--sort-by", "size")
    assert code == 2 and "queue, lag, holder" in err


def test_pop_queues_are_held_by_the_clients_a_broker_lets_pop_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """5.x POP clients hold their queues in mqPopTable, not mqTable: before, every such
    queue showed holder '-' (nobody)."""
    pop = Path(__file__).resolve().parents[3] / "examples" / "pop-share-1.json"
    assert run(["offsets", "pop-consumer", "-d", str(pop), "-t", "PopTopic", "-o", "json"]) == 0
    holders = {q["queueId"]: q["holders"] for q in json.loads(capsys.readouterr().out)["queues"]}
    assert holders == {
        0: ["10.0.0.5@9120#3011000000001", "10.0.0.7@9101#3011000000003"],
        1: ["10.0.0.5@9120#3011000000001", "10.0.0.7@9101#3011000000003"],
        2: ["10.0.0.5@9120#3011000000001", "10.0.0.6@9133#3011000000002"],
        3: ["10.0.0.6@9133#3011000000002", "10.0.0.7@9101#3011000000003"],
    }


def test_a_broadcasting_groups_lag_is_unknown_not_0(capsys: pytest.CaptureFixture[str]) -> None:
    """A BROADCASTING group's clients keep their offsets on their disks: no broker has them,
    so the totals say its lag is unknown and why (it read "lag 0" before)."""
    code, out, _ = offsets(capsys, "NotifyGroup", "-d", str(DEMO), "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["messageModel"] == "BROADCASTING"
    assert doc["totals"]["lag"] is None
    code, out, _ = offsets(capsys, "NotifyGroup", "-d", str(DEMO), "-o", "plain")
    assert "lag unknown: NotifyGroup consumes in BROADCASTING mode" in out
    assert "lag 0" not in out


def test_a_broadcasting_groups_queues_carry_max_offsets_and_no_lag_of_the_group(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A capture lists a BROADCASTING group's queues with the brokers' max offsets, never
    committed (a real 4.9.8 capture): no queue shows max - min as its lag, nor "never"."""
    example = str(DEMO.parents[2] / "examples" / "broadcasting-slow-and-failing.json")
    code, out, _ = offsets(capsys, "cache-invalidation-consumer", "-d", example, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and len(doc["queues"]) == 8
    assert {(q["consumerOffset"], q["lag"], q["lastConsumed"]) for q in doc["queues"]} == {
        (None, None, None)
    }
    assert doc["queues"][0]["brokerOffset"] == 313
    code, out, _ = offsets(capsys, "cache-invalidation-consumer", "-d", example, "-o", "plain")
    row = next(line for line in out.splitlines() if "broker-a:0" in line)
    assert row.split()[2:5] == ["313", "on", "clients"] and "never" not in row
    assert "each client's lag: rmqlb explain cache-invalidation-consumer" in out
    code, out, _ = offsets(
        capsys, "cache-invalidation-consumer", "-d", example, "--sort-by", "lag", "-o", "json"
    )
    assert code == 0


def test_offsets_a_failed_request_left_out_make_the_lag_a_lower_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(DEMO.read_text(encoding="utf-8"))
    doc["errors"] = [
        {
            "target": "broker-b",
            "request": "GET_CONSUME_STATS",
            "message": "timed out",
            "group": "AuditGroup",
        }
    ]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(doc), encoding="utf-8")
    code, out, _ = offsets(capsys, "AuditGroup", "-d", str(partial), "-o", "plain")
    assert code == 4
    assert "lag at least 4,210 (some of its offsets could not be read)" in out
    code, out, _ = offsets(capsys, "AuditGroup", "-d", str(partial), "-o", "json")
    assert json.loads(out)["totals"]["lagComplete"] is False
    code, out, _ = offsets(capsys, "AuditGroup", "-d", str(DEMO), "-o", "json")
    assert json.loads(out)["totals"]["lagComplete"] is True


def test_the_totals_say_why_a_holder_is_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'?' holders: gRPC clients pop through a Proxy, which says nobody's queues (seen on a
    real 5.1.4 gRPC group: the table showed '?' on every row and nothing said why); a
    remoting client whose running info failed did not report them."""
    offset = {"topic": "T", "brokerName": "broker-a", "queueId": 0, "brokerOffset": 9,
              "consumerOffset": 9}  # fmt: skip
    doc = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 1}},
        "groups": {
            "G": {
                "consumers": [
                    {"clientId": "host-1@4242@0@lmr3x9k2ab", "subscriptions": ["T"]},
                    {"clientId": "host-2@77@0@lmr3x9zz01", "subscriptions": ["T"]},
                ],
                "offsets": [offset],
            }
        },
    }
    path = tmp_path / "grpc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _, out, _ = offsets(capsys, "G", "-d", str(path), "-o", "plain")
    assert out.rstrip().endswith(
        "Totals: 1 queue, lag 0, 2 consumers online; holder ?: 2 gRPC clients pop through a "
        "Proxy, which does not say who pops which queue"
    )
    doc["groups"]["G"]["consumers"][0]["clientId"] = "10.0.0.1@1#2"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _, out, _ = offsets(capsys, "G", "-d", str(path), "-o", "plain")
    assert out.rstrip().endswith(
        "holder ?: 2 clients did not report their queues (see the capture errors)"
    )


def test_a_group_consumed_through_a_proxy_that_no_broker_lists_has_unknown_holders(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No broker lists its gRPC clients, yet it is consumed (explain's PROXY_CONSUMED): its
    holders are unknown, not '-' (nobody), which they read before."""
    proxied = Path(__file__).resolve().parents[3] / "examples" / "proxy-consumed.json"
    _, out, _ = offsets(capsys, "grpc-consumer", "-d", str(proxied), "-o", "json")
    doc = json.loads(out)
    assert {q["queueId"]: q["holders"] for q in doc["queues"]} == dict.fromkeys(range(4))
    assert doc["totals"]["holdersUnknown"].startswith("no broker lists a client, yet the group")
    _, out, _ = offsets(capsys, "grpc-consumer", "-d", str(proxied), "-o", "plain")
    assert out.rstrip().endswith(
        "holder ?: no broker lists a client, yet the group is being consumed: 5.x gRPC "
        "clients pop through a Proxy (--proxy HOST:PORT, a 5.1+ Proxy's remoting port, lists "
        "them)"
    )


def test_a_committed_queue_whose_time_the_broker_did_not_say_is_not_never(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A queue consume stats left out (read apart: no store time) but committed at 4 was
    consumed: its last-consumed cell is empty, as in explain's table; 'never' stays for a
    queue nothing was committed on."""
    offsets_ = [
        {"topic": "T", "brokerName": "broker-a", "queueId": 0, "brokerOffset": 6,
         "consumerOffset": 4, "lastTimestamp": 0},
        {"topic": "T", "brokerName": "broker-a", "queueId": 1, "brokerOffset": 6,
         "consumerOffset": -1, "minOffset": 0},
    ]  # fmt: skip
    route = {"queueDatas": [{"brokerName": "broker-a", "readQueueNums": 2, "writeQueueNums": 2}]}
    groups = {"G": {"offsets": offsets_}}
    doc = {"format": "rmqlb.snapshot/1", "topics": {"T": route}, "groups": groups}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    code, out, _ = offsets(capsys, "G", "-d", str(path), "-o", "plain", "--no-headers")
    rows = [line.split("\t") for line in out.splitlines() if line.startswith("T")]
    assert code == 0 and [row[-1] for row in rows] == ["", "never"], rows
