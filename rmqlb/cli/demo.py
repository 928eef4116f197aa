"""``rmqlb demo``: a self-contained status and explain against a fake cluster over real TCP."""

import sys
from typing import Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.options import Display, FailOn, FailOnOption, shared_options

DEMO_SNAPSHOT = "demo-snapshot.json"


@app.command()
@shared_options
def demo(
    display: Display = Display(),
    fail_on: FailOnOption = FailOn.error,
    latency_ms: Annotated[
        float,
        typer.Option(
            "--latency-ms", min=0, metavar="MS", help="Delay every fake answer by this many ms."
        ),
    ] = 0.0,
) -> int:
    """Start a fake cluster from a built-in snapshot, sum it up and explain its worst group
    over TCP, stop.

    The built-in cluster has five groups: a split subscription with an idle consumer, a
    rolling deploy with two strategies, a retired group with messages waiting, a
    broadcasting group and a healthy one. It runs 'rmqlb status', then 'rmqlb explain' of
    the group status lists first. The exit code is status's (1: findings at or above
    --fail-on anywhere on the cluster).
    """
    from importlib.resources import files

    from rmqlb.cli import run
    from rmqlb.fake import FakeClusterThread
    from rmqlb.snapshot import decode_json, parse_snapshot

    resource = files("rmqlb.data").joinpath(DEMO_SNAPSHOT)
    snapshot = parse_snapshot(decode_json(resource.read_bytes(), DEMO_SNAPSHOT), DEMO_SNAPSHOT)
    common = ["--fail-on", fail_on.value]
    if display.output is not None:
        common += ["--output", display.output.value]
    if display.color is not None:
        common.append("--color" if display.color else "--no-color")
    with FakeClusterThread(snapshot, latency_ms=latency_ms, as_of_now=True) as fake:
        addr = fake.namesrv_addr
        _say(
            f"rmqlb demo: fake cluster up (NameServer {addr}, {len(fake.broker_addrs)} "
            f"brokers); running 'rmqlb status -n {addr}'\n\n"
        )
        # The real commands, end to end: collect over TCP -> diagnose -> render.
        code = run(["status", "-n", addr, *common])
        worst = _worst_group(addr)
        if worst is None:
            return code
        _say(f"\nrmqlb demo: running 'rmqlb explain -n {addr} {worst}'\n\n")
        run(["explain", "-n", addr, worst, *common])
    return code


def _say(text: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(text)
    sys.stderr.flush()


def _worst_group(addr: str) -> str | None:
    """The first line of ``status``: the group to explain."""
    import contextlib
    import io
    import json

    from rmqlb.cli import run

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        run(["status", "-n", addr, "--output", "json"])
    lines = json.loads(buffer.getvalue())["groups"]
    return str(lines[0]["group"]) if lines and lines[0]["worst"] is not None else None
