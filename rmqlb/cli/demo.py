"""``rmqlb demo``: a self-contained explain against a fake cluster over real TCP."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.options import ColorOption, FailOn, FailOnOption, OutputOption

DEMO_SNAPSHOT = "demo-snapshot.json"


@app.command()
def demo(
    output: OutputOption = None,
    color: ColorOption = None,
    fail_on: FailOnOption = FailOn.error,
    latency_ms: Annotated[
        float, typer.Option("--latency-ms", min=0, help="Delay every fake answer by this many ms.")
    ] = 0.0,
) -> int:
    """Start a fake cluster from a built-in snapshot, explain it over TCP, stop.

    The built-in cluster has a group with an idle consumer and a split subscription, and a
    healthy group. The exit code is explain's (1: findings at or above --fail-on).
    """
    from importlib.resources import files

    from rmqlb.cli import run
    from rmqlb.fake import FakeClusterThread
    from rmqlb.snapshot import decode_json, parse_snapshot

    resource = files("rmqlb.data").joinpath(DEMO_SNAPSHOT)
    snapshot = parse_snapshot(decode_json(resource.read_bytes(), DEMO_SNAPSHOT), DEMO_SNAPSHOT)
    with FakeClusterThread(snapshot, latency_ms=latency_ms) as fake:
        sys.stderr.write(
            f"rmqlb demo: fake cluster up (NameServer {fake.namesrv_addr}, "
            f"{len(fake.broker_addrs)} brokers); running "
            f"'rmqlb explain -n {fake.namesrv_addr}'\n\n"
        )
        sys.stderr.flush()
        argv = ["explain", "-n", fake.namesrv_addr, "--fail-on", fail_on.value]
        if output is not None:
            argv += ["--output", output.value]
        if color is not None:
            argv.append("--color" if color else "--no-color")
        # The real explain command, end to end: collect over TCP -> diagnose -> render.
        return run(argv)
