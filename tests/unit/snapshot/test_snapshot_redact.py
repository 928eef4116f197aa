"""``redact``: pseudonyms are stable and order-preserving; no original id, address or IP leaks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlb.diagnose import diagnose, report_to_json
from rmqlb.model.javaorder import java_key
from rmqlb.snapshot import dumps_snapshot, load_snapshot, parse_snapshot, redact

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
IPV4 = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")


def _originals(text: str) -> set[str]:
    return {ip for ip in IPV4.findall(text) if not ip.startswith("198.1")}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_redacted_examples_leak_nothing_and_diagnose_the_same(path: Path) -> None:
    snap = load_snapshot(path)
    redacted = redact(snap)
    text = dumps_snapshot(redacted)
    originals = {c.client_id for g in snap.groups.values() for c in g.consumers}
    for cid in originals:
        assert cid not in text
    assert not _originals(text), _originals(text)
    assert redact(snap) == redacted  # deterministic
    if "ConsistentHash" in path.read_text(encoding="utf-8"):
        return  # a hash ring is built from the client ids themselves (docs/snapshot.md)
    before, after = report_to_json(diagnose(snap)), report_to_json(diagnose(redacted))
    if any(g["strategy"].startswith("CONSISTENT_HASH") for g in before["groups"]):
        # the ring hashes the client ids themselves: expected cannot survive redaction
        # (docs/snapshot.md), and it does not
        assert before["groups"] != after["groups"]
        return
    assert [f["code"] for f in before["findings"]] == [f["code"] for f in after["findings"]]
    for g0, g1 in zip(before["groups"], after["groups"], strict=True):
        for t0, t1 in zip(g0["topics"], g1["topics"], strict=True):
            assert [q["status"] for q in t0["queues"]] == [q["status"] for q in t1["queues"]]


def test_redact_keeps_java_order_and_duplicates() -> None:
    ids = ["10.0.0.9@1#2", "10.0.0.10@1#2", "10.0.0.9@1#2", "\U0001f600@a", "\uffff@b"]
    snap = parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {"T": {"queues": 4}},
            "groups": {"G": {"consumers": [{"clientId": c, "subscriptions": ["T"]} for c in ids]}},
        }
    )
    out = [c.client_id for c in redact(snap).groups["G"].consumers]
    assert len(set(out)) == 4 and out[0] == out[2]
    order_before = sorted(range(5), key=lambda i: java_key(ids[i]))
    order_after = sorted(range(5), key=lambda i: java_key(out[i]))
    assert order_before == order_after


def test_redact_scrubs_properties_errors_addresses_and_tables() -> None:
    snap = parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "source": {"namesrv": ["10.9.9.9:9876", "ns.prod.example.com:9876"]},
            "brokers": {"broker-a": {"addrs": {"0": "10.1.1.1:10911"}}},
            "topics": {"T": {"queues": 2}},
            "groups": {
                "G": {
                    "strategy": {
                        "name": "MACHINE_ROOM_NEARBY",
                        "inner": {"name": "CONFIG", "config": {"10.0.0.5@1": []}},
                        "brokerRooms": {"broker-a": "hz"},
                        "consumerRooms": "^10\\.0\\.(\\d+)\\.",
                    },
                    "consumers": [
                        {
                            "clientId": "10.0.0.5@1",
                            "clientAddr": "10.0.0.5:4000",
                            "subscriptions": ["T"],
                            "properties": {
                                "PROP_NAMESRV_ADDR": "10.9.9.9:9876",
                                "self": "id 10.0.0.5@1 here",
                            },
                        }
                    ],
                }
            },
            "errors": [
                {
                    "target": "10.0.0.5:4000",
                    "request": "GET_CONSUMER_RUNNING_INFO",
                    "message": "10.0.0.5@1 did not answer",
                }
            ],
        }
    )
    redacted = redact(snap)
    text = dumps_snapshot(redacted)
    for secret in ("10.0.0.5", "10.9.9.9", "10.1.1.1", "ns.prod.example.com"):
        assert secret not in text
    assert "client-1" in text and "host-1:9876" in text
    strategy = redacted.groups["G"].strategy
    assert strategy is not None
    assert strategy.consumer_rooms.resolve("client-1") == "0"  # type: ignore[union-attr]


def test_redact_scrubs_ipv6_addresses_and_keeps_ports() -> None:
    from rmqlb.model import CaptureError, Consumer, Group, Snapshot

    snap = Snapshot(
        topics={},
        groups={
            "G": Group(
                "G",
                consumers=(
                    Consumer("fe80::1@1#2", client_addr="fe80::1:53412"),
                    Consumer(
                        "2001:db8:aa::7@3#4",
                        client_addr="2001:db8:aa::7:60000",
                        properties={"note": "peer 2001:db8:aa::7 at 12:30:45"},
                    ),
                ),
            )
        },
        errors=(CaptureError("fd00::5:10911", "GET_CONSUME_STATS", "timed out"),),
    )
    text = dumps_snapshot(redact(snap))
    for original in ("fe80::1", "2001:db8:aa::7", "fd00::5"):
        assert original not in text
    redacted = redact(snap)
    addrs = [c.client_addr for c in redacted.groups["G"].consumers]
    assert addrs == ["2001:db8::1:53412", "2001:db8::2:60000"]
    assert redacted.groups["G"].consumers[1].properties["note"] == "peer 2001:db8::2 at 12:30:45"
    assert redacted.errors[0].target == "2001:db8::3:10911"


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(1, 99999)),
        min_size=1,
        max_size=6,
    )
)
def test_random_ids_never_leak(parts: list[tuple[int, int, int]]) -> None:
    ids = [f"172.{a}.{b}.7@{pid}#123" for a, b, pid in parts]
    snap = parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {"T": {"queues": 3}},
            "groups": {
                "G": {
                    "consumers": [
                        {
                            "clientId": c,
                            "clientAddr": c.split("@")[0] + ":1",
                            "subscriptions": ["T"],
                            "properties": {"echo": c},
                        }
                        for c in ids
                    ]
                }
            },
        }
    )
    text = dumps_snapshot(redact(snap))
    for c in ids:
        assert c not in text
        assert c.split("@")[0] not in text


def test_the_package_exports_functions_whatever_was_imported_first() -> None:
    """``rmqlb.snapshot`` loads some re-exports on first use; each name is still the function
    (a submodule of the same name must not take its place)."""
    code = (
        "import rmqlb.snapshot.redact, rmqlb.snapshot.schema, rmqlb.snapshot._parse\n"
        "from rmqlb.snapshot import parse_snapshot, redact, snapshot_schema, snapshot_to_json\n"
        "assert all(callable(f) and type(f).__name__ == 'function' for f in "
        "(parse_snapshot, redact, snapshot_schema, snapshot_to_json))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
