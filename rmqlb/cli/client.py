"""``rmqlb client CLIENT_ID``: one consumer client up close (``mqadmin consumerStatus -i``)."""

import sys
from typing import Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.messages import report_failures
from rmqlb.cli.options import (
    Connection,
    Display,
    DumpOption,
    GroupOption,
    Inputs,
    Output,
    check_source,
    make_console,
    resolve_output,
    shared_options,
)
from rmqlb.errors import ExitCode, InputError


@app.command()
@shared_options
def client(  # noqa: PLR0917  (typer maps every option to a parameter)
    ctx: typer.Context,
    client_id: Annotated[str, typer.Argument(metavar="CLIENT_ID", help="The client id.")],
    group: GroupOption = None,
    dump: DumpOption = None,
    connection: Connection = Connection(),
    display: Display = Display(),
    inputs: Inputs = Inputs(),
) -> int:
    """One client: its group, address, version, strategy and subscriptions, and per held
    queue its process-queue state (cached messages and MiB, last pull and consume, locked,
    dropped, the offset it will commit), as mqadmin consumerStatus -i shows.

    Exit codes: 0 found, 2 bad input (no such client), 3 cluster unreachable, 4 partial data.
    """
    from rmqlb.cli.live import snapshot_from
    from rmqlb.render.client import find_clients, render_client

    check_source(ctx, dump, connection)
    groups = tuple(group or ())
    snapshot = snapshot_from(dump, connection, groups)
    views = [v for g in (groups or (None,)) for v in find_clients(snapshot, client_id, g)]
    if not views:
        where = f" in {', '.join(groups)}" if groups else ""
        raise InputError(f"no consumer client {client_id!r}{where}")
    report_failures(snapshot.errors)
    fmt = resolve_output(display.output)
    target = make_console(display.color) if fmt is Output.table else sys.stdout
    render_client(views, fmt, target, pretty_json=sys.stdout.isatty())
    return int(ExitCode.PARTIAL if snapshot.errors else ExitCode.OK)
