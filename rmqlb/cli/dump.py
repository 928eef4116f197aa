"""``rmqlb dump``: capture a live cluster into a snapshot file."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.complete import complete_group
from rmqlb.cli.messages import report_failures, say
from rmqlb.cli.options import (
    AllGroupsOption,
    Connection,
    ConsumersOfTopicOption,
    GroupOption,
    shared_options,
)
from rmqlb.errors import ExitCode, InputError
from rmqlb.humanize import plural

if TYPE_CHECKING:
    from rmqlb.model.snapshot import Snapshot


@app.command()
@shared_options
def dump(  # noqa: PLR0917  (typer maps every option to a parameter)
    groups: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="GROUP...",
            help="Consumer groups to capture (default: every non-system group).",
            show_default=False,
            autocompletion=complete_group,
        ),
    ] = None,
    connection: Connection = Connection(),
    group: GroupOption = None,
    topic: ConsumersOfTopicOption = None,
    all_groups: AllGroupsOption = False,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="json",
            help="Format: a snapshot is always JSON (rmqlb.snapshot/1); the file goes to --out.",
            show_default=False,
        ),
    ] = None,
    output_file: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="Write the snapshot to FILE (default: stdout).",
            show_default=False,
        ),
    ] = None,
    redact: Annotated[
        bool,
        typer.Option("--redact", help="Replace client ids and addresses with stable pseudonyms."),
    ] = False,
) -> int:
    """Capture consumer groups, their clients, queues and offsets into a snapshot.

    Strategy parameters the clients do not report (virtual nodes, rooms, CONFIG lists) are
    inferred from what they hold and recorded in the group's strategy, marked inferred.
    Only read-only requests are sent. A group that exists nowhere on the cluster is an
    error (exit 2, nothing written). Exit codes: 0 complete, 2 bad input, 3 cluster
    unreachable, 4 partial (the failed requests are listed on stderr and in the snapshot's
    errors).
    """
    from rmqlb.cli.live import snapshot_from_cluster
    from rmqlb.diagnose import record_inferred
    from rmqlb.render.safe import escape_json_controls
    from rmqlb.snapshot import dumps_snapshot, save_snapshot
    from rmqlb.snapshot import redact as redact_snapshot

    groups = [*(groups or ()), *(group or ())]
    if groups and all_groups:
        raise typer.BadParameter("give GROUP names or --all-groups, not both")
    _check_format(output)
    opts = connection.live(
        groups=tuple(groups),
        topic=topic,
        all_groups=all_groups,
    )
    snapshot = snapshot_from_cluster(opts)
    if topic is not None:
        snapshot = _consumers_of(snapshot, topic)
    # strategy parameters the wire does not carry, inferred from what the clients hold
    # (before redaction: a hash ring is built from the real client ids)
    snapshot = record_inferred(snapshot)
    if redact:
        snapshot = redact_snapshot(snapshot)
    if output_file is None:
        sys.stdout.write(escape_json_controls(dumps_snapshot(snapshot)))
        sys.stdout.flush()
    else:
        save_snapshot(snapshot, output_file)
    consumers = sum(len(g.consumers) for g in snapshot.groups.values())
    where = f" -> {output_file}" if output_file is not None else ""
    counts = ", ".join(
        plural(n, noun)
        for n, noun in (
            (len(snapshot.groups), "group"),
            (consumers, "consumer"),
            (len(snapshot.topics), "topic"),
        )
    )
    say(f"{counts}{where}", prefix="rmqlb dump")
    if snapshot.errors:
        report_failures(snapshot.errors, prefix="rmqlb dump")
        return int(ExitCode.PARTIAL)
    return int(ExitCode.OK)


def _check_format(output: str | None) -> None:
    """``-o/--output`` is a format on every command; a snapshot has one, JSON. A file name
    there (``dump -o snap.json``, the old spelling) is refused with the new one, so no file
    is ever named after a format or written where a format was meant."""
    if output is None or output.lower() == "json":
        return
    from rmqlb.render.formats import Output

    if output.lower() in Output.__members__:
        raise InputError(f"-o/--output {output}: dump writes a snapshot, which is JSON only")
    raise InputError(
        f"-o/--output is the format (json) on every command; "
        f"to write the snapshot to a file use --out {output}"
    )


def _consumers_of(snapshot: "Snapshot", topic: str) -> "Snapshot":
    """Only the groups that consume ``topic``; none is bad input (nothing is written)."""
    import dataclasses

    from rmqlb.diagnose.lookup import known_topics, topic_not_found
    from rmqlb.diagnose.status import consumes

    kept = {n: g for n, g in snapshot.groups.items() if consumes(g, topic)}
    if not kept and topic not in known_topics(snapshot):
        raise topic_not_found(topic, known_topics(snapshot), where="on this cluster")
    if not kept:
        raise InputError(f"no consumer group consumes topic {topic!r} on this cluster")
    return dataclasses.replace(snapshot, groups=kept)
