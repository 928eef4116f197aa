"""``rmqlb exporter``'s machinery: capture in the background, serve the last result.

:class:`Exporter` runs ``capture`` every ``interval`` seconds on a thread of its own (a capture
of a big cluster can outlast a scrape timeout) and keeps the last :class:`Capture` that
finished. :class:`CaptureCollector` is the ``prometheus_client`` collector whose ``collect()``
yields the families of that one capture, so a scrape never mixes two. :func:`serve` answers
``/metrics`` and ``/-/healthy`` over HTTP until :meth:`Exporter.stop`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, cast
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer
from wsgiref.simple_server import make_server as wsgi_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily
from prometheus_client.openmetrics.exposition import generate_latest

from rmqlb.exporter.metrics import Capture, families

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIEnvironment

    from prometheus_client.metrics_core import Metric


class Exporter:
    """The capture loop. ``capture`` returns the next :class:`Capture` (a failed one with
    ``report=None``; an exception is served as one too); ``log`` gets a line when captures
    start failing (or fail differently) and when they recover."""

    def __init__(
        self,
        capture: Callable[[float | None], Capture],
        interval: float,
        log: Callable[[str], None] = lambda _line: None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._capture = capture
        self.interval = interval
        self._log = log
        self.clock = clock
        self.current: Capture | None = None
        self.results = {"ok": 0, "partial": 0, "failed": 0}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> Capture:
        """One capture, made current (a failure keeps the time of the last success)."""
        before = self.current
        last = before.last_success if before is not None else None
        try:
            result = self._capture(last)
        except Exception as exc:  # a bug must not stop the loop: served as a failed capture
            failure = f"internal error: {type(exc).__name__}: {exc}"
            result = Capture(None, finished=self.clock(), last_success=last, failure=failure)
        kind = "failed" if result.report is None else ("partial" if result.errors else "ok")
        self.results[kind] += 1
        if result.report is None:
            if before is None or before.failure != result.failure:
                self._log(f"capture failed: {result.failure}")  # once, until it changes
        elif before is not None and before.report is None:
            self._log("capture succeeded again")
        self.current = result  # one reference swap: collect() sees the old or the new
        return result

    def _loop(self) -> None:
        while not self._stop.is_set():
            start = time.monotonic()
            self.run_once()
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - start)))

    def start(self) -> None:
        """Start capturing in the background."""
        self._thread = threading.Thread(target=self._loop, name="rmqlb-capture", daemon=True)
        self._thread.start()

    def stop(self, wait: float = 5.0) -> None:
        """Stop after the capture under way (waiting at most ``wait`` seconds for it)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(wait)

    @property
    def stopped(self) -> threading.Event:
        """Set once :meth:`stop` was called."""
        return self._stop


class CaptureCollector:
    """Yields the families of the exporter's current capture (one consistent result) and
    the exporter's own counter of captures by result."""

    def __init__(self, exporter: Exporter, *, per_queue: bool = False) -> None:
        self.exporter = exporter
        self.per_queue = per_queue

    def collect(self) -> Iterator[Metric]:
        """The families a scrape sees."""
        current = self.exporter.current
        runs = CounterMetricFamily(
            "rmqlb_captures", "Captures since the exporter started, by result.", labels=["result"]
        )
        for kind, n in self.exporter.results.items():
            runs.add_metric([kind], n)
        yield runs
        if current is not None:
            yield from families(current, now=self.exporter.clock(), per_queue=self.per_queue)


def registry_for(collector: Any) -> CollectorRegistry:
    """A registry holding ``collector`` only (no process or platform collectors)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


class _Families:
    def __init__(self, items: Iterable[Metric]) -> None:
        self.items = list(items)

    def collect(self) -> Iterator[Metric]:
        yield from self.items


def openmetrics(items: Iterable[Metric]) -> bytes:
    """``items`` in the OpenMetrics text format (with its ``# EOF``)."""
    return cast(bytes, generate_latest(registry_for(_Families(items))))  # type: ignore[no-untyped-call]


def wsgi_app(
    registry: CollectorRegistry,
) -> Callable[[WSGIEnvironment, StartResponse], list[bytes]]:
    """``/metrics`` (content-negotiated by prometheus_client), ``/-/healthy``, else 404."""
    metrics = make_wsgi_app(registry)

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> list[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            return list(metrics(environ, start_response))
        if path == "/-/healthy":
            start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"rmqlb exporter is healthy\n"]
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found: try /metrics or /-/healthy\n"]

    return app


def make_server(host: str, port: int, registry: CollectorRegistry) -> Any:
    """A threaded WSGI server on ``host:port`` that logs nothing per request."""

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """No access log."""

    return wsgi_server(host, port, wsgi_app(registry), Server, Quiet)


__all__ = [
    "CaptureCollector",
    "Exporter",
    "make_server",
    "openmetrics",
    "registry_for",
    "wsgi_app",
]
