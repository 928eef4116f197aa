"""Snapshot documents of repeated polls of one group for QUEUE_STALLED: two clients connected
through a Proxy (what they hold is unknown), consuming topic T's 4 queues on broker-a."""

from __future__ import annotations

from typing import Any

T, G = "T", "G"
PROXY = "127.0.0.1:8081"


def poll_doc(seconds: int, committed: list[int], high: int = 100, **client: Any) -> dict[str, Any]:
    """The capture ``seconds`` after 2026-01-01T00:00:00Z, with each queue committed at
    ``committed`` and ``high`` messages written to each; ``client``: more keys per client."""
    offsets = [
        {"topic": T, "brokerName": "broker-a", "queueId": i, "brokerOffset": high,
         "consumerOffset": c, "lastTimestamp": 1}
        for i, c in enumerate(committed)
    ]  # fmt: skip
    clients = [
        {"clientId": f"10.0.0.{i}@c", "subscriptions": [T, f"%RETRY%{G}"], "proxy": PROXY, **client}
        for i in (1, 2)
    ]
    return {
        "format": "rmqlb.snapshot/1",
        "capturedAt": f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z",
        "source": {"namesrv": ["10.0.0.9:9876"], "proxies": [PROXY]},
        "topics": {T: {"queues": 4}},
        "groups": {G: {"consumers": clients, "offsets": offsets}},
    }
