"""``rmqlb offsets GROUP``: every queue of one group with its offsets, lag and holder.

Thin, like explain: acquire a snapshot (``--dump`` or the live cluster, only that group),
build the rows with :func:`rmqlb.render.offsets.offsets_view`, render them.
"""

import sys
from typing import Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.complete import complete_group, complete_topic
from rmqlb.cli.messages import report_failures
from rmqlb.cli.options import (
    Connection,
    Display,
    DumpOption,
    Inputs,
    NoHeadersOption,
    Output,
    check_source,
    make_console,
    resolve_output,
    shared_options,
)
from rmqlb.errors import ExitCode, InputError


@app.command()
@shared_options
def offsets(  # noqa: PLR0917  (typer maps every option to a parameter)
    ctx: typer.Context,
    group: Annotated[
        str,
        typer.Argument(metavar="GROUP", help="The consumer group.", autocompletion=complete_group),
    ],
    dump: DumpOption = None,
    connection: Connection = Connection(),
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            "-t",
            metavar="TOPIC",
            help="Only this topic's queues.",
            show_default=False,
            autocompletion=complete_topic,
        ),
    ] = None,
    sort_by: Annotated[
        str,
        typer.Option(
            "--sort-by",
            metavar="queue|lag|holder",
            help="Row order: queue (Java's), lag (largest first) or holder.",
        ),
    ] = "queue",
    no_headers: NoHeadersOption = False,
    display: Display = Display(),
    inputs: Inputs = Inputs(),
) -> int:
    """Every queue of GROUP with the broker's max offset, the committed offset, the lag,
    the client holding it and when its last consumed message was stored, with totals: what
    mqadmin consumerProgress -g shows, for groups with or without consumers.

    Exit codes: 0 read, 2 bad input, 3 cluster unreachable, 4 partial data.
    """

    from rmqlb.cli.live import snapshot_from
    from rmqlb.render.offsets import SORT_KEYS, offsets_view, render_offsets

    if sort_by not in SORT_KEYS:
        raise InputError(f"--sort-by {sort_by}: expected one of {', '.join(SORT_KEYS)}")
    check_source(ctx, dump, connection)
    snapshot = snapshot_from(dump, connection, (group,))
    if group not in snapshot.groups:
        raise InputError(f"no consumer group {group!r} in this {'file' if dump else 'cluster'}")
    view = offsets_view(snapshot, group, topic=topic, sort_by=sort_by)
    report_failures(snapshot.errors)
    fmt = resolve_output(display.output)
    target = make_console(display.color) if fmt is Output.table else sys.stdout
    render_offsets(view, fmt, target, headers=not no_headers, pretty_json=sys.stdout.isatty())
    return int(ExitCode.PARTIAL if snapshot.errors else ExitCode.OK)
