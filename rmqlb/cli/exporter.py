"""``rmqlb exporter``: rmqlb's diagnoses as Prometheus metrics, over HTTP.

Thin: every ``--interval`` seconds a background thread captures the cluster (the live
options of ``status -n``), sums it up with :func:`rmqlb.diagnose.status.status` and hands
the result to :mod:`rmqlb.exporter`; ``/metrics`` serves the last capture that finished,
``/-/healthy`` says the process runs. SIGTERM or Ctrl-C stops it (exit 0).
"""

import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.options import (
    Connection,
    ConsumersOfTopicOption,
    GroupGlobArguments,
    GroupOption,
    shared_options,
)
from rmqlb.errors import InputError

if TYPE_CHECKING:
    from rmqlb.cli.live import LiveOptions
    from rmqlb.diagnose.context import PollHistory
    from rmqlb.exporter.metrics import Capture

DEFAULT_LISTEN = "127.0.0.1:9877"
DEFAULT_INTERVAL = 30.0


def split_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` listens on every address); :class:`InputError` otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError(f"--listen {value!r}: expected HOST:PORT, e.g. 127.0.0.1:9877")
    return host.strip("[]") or "0.0.0.0", int(port)


def capture_live(
    options: "LiveOptions",
    names: list[str],
    last_success: float | None,
    history: "PollHistory | None" = None,
) -> "Capture":
    """One capture of the cluster: a failed one (``report=None``) when it cannot be read;
    ``history``: the earlier captures, to compare this one with (QUEUE_STALLED)."""
    from rmqlb.cli.live import snapshot_from_cluster
    from rmqlb.diagnose.context import DiagnoseOptions
    from rmqlb.diagnose.status import status
    from rmqlb.errors import RmqlbError
    from rmqlb.exporter.metrics import Capture, capture_of

    start = time.perf_counter()
    try:
        snapshot = snapshot_from_cluster(options)
        earlier = None if history is None else history.earlier(snapshot)
        report = status(
            snapshot,
            names=names,
            topic=options.topic,
            system=options.system,
            options=DiagnoseOptions(earlier=earlier),
        )
    except RmqlbError as exc:
        took = time.perf_counter() - start
        return Capture(
            report=None,
            duration=took,
            finished=time.time(),
            last_success=last_success,
            failure=str(exc),
        )
    took = time.perf_counter() - start
    return capture_of(report, snapshot, duration=took, finished=time.time())


@app.command()
@shared_options
def exporter(  # noqa: PLR0917  (typer maps every option to a parameter)
    groups: GroupGlobArguments = None,
    group: GroupOption = None,
    connection: Connection = Connection(),
    listen: Annotated[
        str,
        typer.Option("--listen", metavar="HOST:PORT", help="Where to serve /metrics."),
    ] = DEFAULT_LISTEN,
    interval: Annotated[
        float,
        typer.Option(
            "--interval", min=1.0, metavar="SECONDS", help="Capture the cluster this often."
        ),
    ] = DEFAULT_INTERVAL,
    per_queue: Annotated[
        bool,
        typer.Option(
            "--per-queue", help="Also one lag series per queue (many series on big clusters)."
        ),
    ] = False,
    topic: ConsumersOfTopicOption = None,
    system: Annotated[
        bool, typer.Option("--system", help="RocketMQ's built-in groups too.")
    ] = False,
) -> int:
    """Serve rmqlb's diagnoses as Prometheus metrics: lag, stranded messages, queues by
    status and findings per group, and the health of each capture.

    Captures the cluster (-n ADDR, default $NAMESRV_ADDR) every --interval seconds in the
    background and serves the last capture that finished on http://HOST:PORT/metrics
    (and /-/healthy). SIGTERM or Ctrl-C stops it (exit 0). The metrics are listed in
    docs/exporter.md.
    """
    import contextlib
    import signal

    from rmqlb.cli.messages import say
    from rmqlb.diagnose.status import is_pattern
    from rmqlb.exporter.server import CaptureCollector, Exporter, make_server, registry_for
    from rmqlb.render.safe import escape_controls

    names = [*(groups or ()), *(group or ())]
    host, port = split_listen(listen)
    options = connection.live(
        groups=tuple(n for n in names if not is_pattern(n)),
        patterns=tuple(n for n in names if is_pattern(n)),
        topic=topic,
        system=system,
        progress=False,
    )
    options.collect_options()  # bad flags: exit 2 now, not a failed capture every interval

    def log(line: str) -> None:
        say("exporter: " + escape_controls(line))

    from rmqlb.diagnose.context import PollHistory

    history = PollHistory()
    loop = Exporter(lambda last: capture_live(options, names, last, history), interval, log)
    try:
        server = make_server(host, port, registry_for(CaptureCollector(loop, per_queue=per_queue)))
    except OSError as exc:
        raise InputError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(ValueError):  # not the main thread (tests): Ctrl-C only
            signal.signal(sig, lambda _sig, _frame: loop.stopped.set())
    bound_host, bound_port = server.server_address[:2]
    sys.stdout.write(
        f"rmqlb exporter: serving http://{bound_host}:{bound_port}/metrics, capturing "
        f"{', '.join(options.namesrv)} every {interval:g}s (Ctrl-C stops)\n"
    )
    sys.stdout.flush()
    import threading

    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2})
    serving.daemon = True
    serving.start()
    loop.start()
    try:
        while not loop.stopped.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        loop.stop()
        server.shutdown()
        server.server_close()
    sys.stdout.write("rmqlb exporter: stopped\n")
    return 0
