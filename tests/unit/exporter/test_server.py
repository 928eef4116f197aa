"""The exporter's capture loop and HTTP routes, without a cluster."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

from rmqlb.diagnose.status import status
from rmqlb.exporter.metrics import Capture, capture_of
from rmqlb.exporter.server import CaptureCollector, Exporter, registry_for, wsgi_app
from rmqlb.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[3]


def test_failures_are_served_as_up_0_and_logged_once_until_they_change() -> None:
    outcomes: list[Any] = [
        Capture(None, finished=1.0, failure="no NameServer answered"),
        Capture(None, finished=2.0, failure="no NameServer answered"),
        RuntimeError("boom"),
        Capture(None, finished=4.0, failure="no NameServer answered"),
    ]
    lasts: list[float | None] = []

    def capture(last: float | None) -> Capture:
        lasts.append(last)
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    lines: list[str] = []
    exporter = Exporter(capture, interval=1.0, log=lines.append, clock=lambda: 10.0)
    for _ in range(4):
        exporter.run_once()
    assert lines == [
        "capture failed: no NameServer answered",
        "capture failed: internal error: RuntimeError: boom",
        "capture failed: no NameServer answered",
    ]
    assert exporter.results == {"ok": 0, "partial": 0, "failed": 4}
    names = {f.name: f for f in CaptureCollector(exporter).collect()}
    assert names["rmqlb_up"].samples[0].value == 0
    assert "rmqlb_last_success_age_seconds" not in names  # never succeeded: no age to give
    assert lasts == [None, None, None, None]


def test_the_loop_stops_when_asked() -> None:
    exporter = Exporter(lambda last: Capture(None, finished=0.0, failure="x"), interval=60.0)
    exporter.start()
    exporter.stop(wait=5.0)
    assert exporter.stopped.is_set()
    assert exporter.results["failed"] == 1


def call(app: Any, path: str) -> tuple[str, bytes]:
    got: list[str] = []
    environ = {
        "PATH_INFO": path,
        "REQUEST_METHOD": "GET",
        "QUERY_STRING": "",
        "wsgi.input": io.BytesIO(),
    }
    body = b"".join(app(environ, lambda status, headers: got.append(status)))
    return got[0], body


def test_routes_metrics_health_and_nothing_else() -> None:
    exporter = Exporter(lambda last: Capture(None, finished=0.0, failure="x"), interval=1.0)
    exporter.run_once()
    app = wsgi_app(registry_for(CaptureCollector(exporter)))
    status, body = call(app, "/metrics")
    assert status == "200 OK"
    assert b"rmqlb_up 0.0" in body
    assert b'rmqlb_captures_total{result="failed"} 1.0' in body
    assert call(app, "/-/healthy")[0] == "200 OK"
    assert call(app, "/")[0].startswith("404")


def test_a_group_or_broker_that_vanishes_leaves_no_stale_series() -> None:
    """Each scrape is the current capture only: nothing of a vanished group or broker stays."""
    snapshot = load_snapshot(ROOT / "rmqlb" / "data" / "demo-snapshot.json")
    gone = "AuditGroup"
    later = dataclasses.replace(
        snapshot, groups={n: g for n, g in snapshot.groups.items() if n != gone}
    )
    first = capture_of(status(snapshot), snapshot, duration=0.1, finished=1.0)
    second = dataclasses.replace(
        capture_of(status(later), later, duration=0.1, finished=2.0),
        brokers={n: b for n, b in snapshot.brokers.items() if n != "broker-b"},
    )
    captures = [first, second]
    exporter = Exporter(lambda last: captures.pop(0), interval=1.0, clock=lambda: 3.0)
    app = wsgi_app(registry_for(CaptureCollector(exporter)))

    def scrape() -> str:
        exporter.run_once()
        status_line, body = call(app, "/metrics")
        assert status_line == "200 OK"
        return body.decode()

    before, after = scrape(), scrape()
    assert f'group="{gone}"' in before
    assert 'broker="broker-b"' in before
    assert f'group="{gone}"' not in after
    assert 'broker="broker-b"' not in after
    assert 'group="OrderGroup"' in after  # the others are still served
