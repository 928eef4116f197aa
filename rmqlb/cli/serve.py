"""``rmqlb serve``: run the fake cluster for a snapshot in the foreground."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.errors import InputError


@app.command()
def serve(  # noqa: PLR0917  (typer maps every option to a parameter)
    snapshot: Annotated[
        Path, typer.Argument(metavar="SNAPSHOT", help="Snapshot file (rmqlb.snapshot/1) to serve.")
    ],
    port: Annotated[
        int,
        typer.Option(
            "--port",
            "-p",
            min=0,
            max=65535,
            metavar="PORT",
            help="NameServer port (0: any free port).",
        ),
    ] = 9876,
    latency_ms: Annotated[
        float,
        typer.Option(
            "--latency-ms", min=0, metavar="MS", help="Delay every answer by this many ms."
        ),
    ] = 0.0,
    fault: Annotated[
        list[str] | None,
        typer.Option(
            "--fault",
            metavar="SPEC",
            help="Inject a fault (repeatable): latency=MS, namesrv-down, broker-down=BROKER, "
            "silent-client=CLIENT_ID, relay-delay=MS, garbage=BROKER, reset=BROKER, "
            "oversized=BROKER.",
            show_default=False,
        ),
    ] = None,
    log_requests: Annotated[
        Path | None,
        typer.Option(
            "--log-requests",
            metavar="FILE",
            help="Write one line per request received: '105 GET_ROUTEINFO_BY_TOPIC ns'.",
            show_default=False,
        ),
    ] = None,
    dialect: Annotated[
        int,
        typer.Option(
            "--dialect", min=4, max=5, metavar="4|5", help="Emulate 4.9.x (4) or 5.x (5) bodies."
        ),
    ] = 4,
    host: Annotated[
        str, typer.Option("--host", metavar="HOST", help="Address to listen on (keep it local).")
    ] = "127.0.0.1",
) -> int:
    """Serve SNAPSHOT as a fake NameServer + brokers over the RocketMQ protocol.

    Runs in the foreground until Ctrl-C. Point any client at the printed NameServer
    address, e.g. 'rmqlb explain -n 127.0.0.1:9876'.
    """
    import asyncio
    import contextlib
    import signal

    from rmqlb.fake import FakeCluster, Faults
    from rmqlb.render.safe import escape_controls
    from rmqlb.snapshot import load_snapshot

    snap = load_snapshot(snapshot)
    faults = Faults.parse(fault or [])

    async def main() -> None:
        cluster = FakeCluster(
            snap,
            host=host,
            namesrv_port=port,
            dialect=dialect,
            latency_ms=latency_ms,
            faults=faults.specs,
            log_path=str(log_requests) if log_requests else None,
            as_of_now=True,  # ages as of each request, as a live capture sees them
        )
        try:
            await cluster.start()
        except OSError as exc:
            await cluster.stop()
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            # not possible off the main thread or on some platforms: Ctrl-C still works
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
        lines: list[str] = []
        version = "4.9.8" if dialect == 4 else "5.3.3"
        lines.append(
            f"rmqlb serve: NameServer {cluster.namesrv_addr} (emulating RocketMQ {version})"
        )
        for name, addr in cluster.broker_addrs.items():
            state = " (down)" if faults.has("broker-down", name) else ""
            lines.append(f"  broker {name} {addr}{state}")
        if faults.specs:
            lines.append("  faults: " + ", ".join(str(f) for f in faults.specs))
        lines.append(f"Try: rmqlb explain -n {cluster.namesrv_addr}   (Ctrl-C stops)")
        # broker names and fault targets come from the snapshot and the flags
        sys.stdout.write(escape_controls("\n".join(lines)) + "\n")
        sys.stdout.flush()
        try:
            await stop.wait()
        finally:
            await cluster.stop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
    sys.stdout.write("rmqlb serve: stopped\n")
    return 0
