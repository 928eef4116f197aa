"""``rmqlb offsets``: every queue of a group with its offsets, lag and holder.

What ``mqadmin consumerProgress -g`` and ``kafka-consumer-groups --describe`` show, for a
group with consumers or without: per queue the broker's max offset, the committed offset
(``never`` when the group never committed one), the lag, the client holding it and how long
before the capture its last consumed message was stored; totals under the table.
:func:`offsets_view` is pure (snapshot in, rows out); the renderers write the four formats.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, assert_never

from rmqlb.humanize import plural
from rmqlb.model.queue import MessageQueue, queue_sort_key
from rmqlb.model.snapshot import (
    UNREPORTING_CLIENTS,
    MessageModel,
    QueueOffset,
    physical_offsets,
)
from rmqlb.render.formats import Output

if TYPE_CHECKING:
    from rich.console import Console

    from rmqlb.model.snapshot import Group, Snapshot

SORT_KEYS = ("queue", "lag", "holder")
"""``--sort-by`` values: queue order (Java's), lag (largest first), holder (then queue)."""


@dataclass(frozen=True, slots=True)
class OffsetRow:
    """One queue: ``committed`` None when never committed, ``holders`` None when unknown
    (a client could not be asked), ``last_consumed_ms`` None when nothing was consumed or
    the broker did not say when (``committed`` tells the two apart);
    ``lag`` None when unknown: a BROADCASTING group's queue its clients keep the offsets of
    (each client's own lag: ``rmqlb explain``)."""

    queue: MessageQueue
    broker_offset: int
    committed: int | None
    lag: int | None
    holders: tuple[str, ...] | None
    last_consumed_ms: int | None


@dataclass(frozen=True, slots=True)
class OffsetsView:
    """A group's offset rows (sorted), its online consumers and the capture time.

    A BROADCASTING group's clients keep their own offsets (``LocalFileOffsetStore``): the
    brokers' rows, if any, are not its progress. ``complete`` False: a request for some of
    its offsets failed, so rows may be missing.
    """

    group: str
    rows: tuple[OffsetRow, ...]
    consumers: int
    captured_at: str | None
    message_model: MessageModel = MessageModel.CLUSTERING
    complete: bool = True
    #: Why some holders are ``?`` (``None``: every holder is known).
    holders_unknown: str | None = None

    @property
    def broadcasting(self) -> bool:
        """Whether the group consumes in BROADCASTING mode."""
        return self.message_model is MessageModel.BROADCASTING

    @property
    def lag(self) -> int | None:
        """Total lag of the rows; ``None`` for a BROADCASTING group (unknown, never 0)."""
        return None if self.broadcasting else sum(r.lag or 0 for r in self.rows)


def _holders(
    group: Group, queue: MessageQueue, readers: Mapping[MessageQueue, set[str]]
) -> tuple[str, ...] | None:
    """The clients holding ``queue``, in Java order of client id (``None``: unknown).
    ``readers``: the clients whose broker queue of a static topic is read as that logical
    queue (a client before 5.0: ``TopicRoute.read_as``)."""
    from rmqlb.model.javaorder import java_key  # noqa: PLC0415

    via = readers.get(queue, set())
    held = tuple(
        sorted(
            (c.client_id for c in group.consumers if c.holds(queue) or c.client_id in via),
            key=java_key,
        )
    )
    if held or all(c.assigned is not None or c.pop_assigned for c in group.consumers):
        return held
    return None


def _static_views(
    snapshot: Snapshot, group: Group
) -> tuple[list[QueueOffset], dict[MessageQueue, set[str]]]:
    """The group's offsets as explain shows them: a static topic's by its logical queues,
    but by the brokers' own where it is popped (from those); and who reads each logical
    queue through a broker queue it holds (a client before 5.0)."""
    offsets = list(group.offsets)
    readers: dict[MessageQueue, set[str]] = {}
    static = [route for route in snapshot.topics.values() if route.queue_mappings]
    if not static:
        return offsets, readers
    from rmqlb.diagnose.context import DiagnoseOptions, group_context  # noqa: PLC0415

    g = group_context(snapshot, group, None, DiagnoseOptions())
    for route in static:
        if g.pops(route.topic):  # (by POP, or through a Proxy)
            offsets = physical_offsets(route, offsets)
            continue
        read_as = route.read_as()
        for c in group.consumers:
            for q in c.assigned or ():
                logical = (
                    read_as.get((q.broker_name, q.queue_id)) if q.topic == route.topic else None
                )
                if logical is not None:
                    readers.setdefault(logical, set()).add(c.client_id)
    return offsets, readers


def _sort_key(by: str) -> Callable[[OffsetRow], Any]:
    if by == "lag":
        return lambda r: (r.lag is None, -(r.lag or 0), queue_sort_key(r.queue))
    if by == "holder":
        return lambda r: (
            r.holders is None,
            not r.holders,
            r.holders or (),
            queue_sort_key(r.queue),
        )
    return lambda r: queue_sort_key(r.queue)


def offsets_view(
    snapshot: Snapshot, group: str, *, topic: str | None = None, sort_by: str = "queue"
) -> OffsetsView:
    """The rows of ``group`` (only ``topic``'s when given), sorted by ``sort_by``."""
    g = snapshot.groups[group]
    offsets, readers = _static_views(snapshot, g)
    invisible = _consumed_invisibly(snapshot, g)
    # a BROADCASTING group's clients keep its offsets: a queue it never committed to a
    # broker has no lag of the group's (its rows carry the broker's max offsets)
    clients_keep = g.consumed_model is MessageModel.BROADCASTING
    rows = [
        OffsetRow(
            queue=o.queue,
            broker_offset=o.broker_offset,
            committed=o.consumer_offset if o.committed else None,
            lag=None if clients_keep and not o.committed else o.lag,
            holders=None if invisible else _holders(g, o.queue, readers),
            last_consumed_ms=o.last_timestamp if o.committed and o.last_timestamp else None,
        )
        for o in offsets
        if topic is None or o.queue.topic == topic
    ]
    rows.sort(key=_sort_key(sort_by))
    unknown = any(r.holders is None for r in rows)
    return OffsetsView(
        group,
        tuple(rows),
        len(g.consumers),
        snapshot.captured_at,
        message_model=g.consumed_model,
        complete=_complete(snapshot, g),
        holders_unknown=_INVISIBLE if invisible else _why_unknown(g) if unknown else None,
    )


_INVISIBLE = (
    "no broker lists a client, yet the group is being consumed: 5.x gRPC clients pop through "
    "a Proxy (--proxy HOST:PORT, a 5.1+ Proxy's remoting port, lists them)"
)


def _consumed_invisibly(snapshot: Snapshot, group: Group) -> bool:
    """No client listed, and signs of consumption through a Proxy (explain's PROXY_CONSUMED)."""
    if group.consumers:
        return False
    from rmqlb.diagnose.balance import consumed_invisibly  # noqa: PLC0415
    from rmqlb.diagnose.context import epoch_ms  # noqa: PLC0415

    return consumed_invisibly(snapshot, group, epoch_ms(snapshot.captured_at))


def _why_unknown(group: Group) -> str:
    """Why the clients that did not say which queues they hold did not."""
    from rmqlb.diagnose.balance import is_proxy_client, through_proxy_remoting  # noqa: PLC0415

    silent = [c for c in group.consumers if c.assigned is None and not c.pop_assigned]
    grpc = sum(map(is_proxy_client, silent))
    if grpc == len(silent):
        return (
            f"{plural(grpc, 'gRPC client')} {'pops' if grpc == 1 else 'pop'} through a Proxy, "
            "which does not say who pops which queue"
        )
    if all(is_proxy_client(c) or through_proxy_remoting(c) for c in silent):
        return (
            f"{plural(len(silent), 'client')} {'connects' if len(silent) == 1 else 'connect'} "
            "through a Proxy, which relays no running-info request"
        )
    if all(c.queues_unreported for c in silent):
        return (
            f"{plural(len(silent), 'pull consumer')} {'lists' if len(silent) == 1 else 'list'} "
            f"no queue in {'its' if len(silent) == 1 else 'their'} running info "
            f"({UNREPORTING_CLIENTS})"
        )
    return (
        f"{plural(len(silent), 'client')} did not report {'its' if len(silent) == 1 else 'their'}"
        " queues (see the capture errors)"
    )


def _complete(snapshot: Snapshot, group: Group) -> bool:
    """Whether every request for the group's offsets answered (the error index is loaded
    only when something failed)."""
    if not snapshot.errors:
        return True
    from rmqlb.diagnose.context import OFFSET_REQUESTS, group_errors  # noqa: PLC0415

    return not any(e.request in OFFSET_REQUESTS for e in group_errors(snapshot, group))


# ----- cells -------------------------------------------------------------------------------


HEADERS = ("topic", "queue", "max offset", "committed", "lag", "holder", "last consumed")


def holder_text(row: OffsetRow) -> str:
    """``-`` for nobody, ``?`` when unknown, the client ids otherwise (one per line)."""
    if row.holders is None:
        return "?"
    return "\n".join(row.holders) if row.holders else "-"


def cells(view: OffsetsView, row: OffsetRow) -> list[str]:
    """The text cells of one row, in :data:`HEADERS` order."""
    from rmqlb.render._view import age_text, captured_ms  # noqa: PLC0415

    kept_by_clients = view.broadcasting and row.committed is None
    if row.last_consumed_ms is not None:
        last = age_text(row.last_consumed_ms, captured_ms(view.captured_at))
    elif kept_by_clients:
        last = "-"
    else:  # consumed with its time unknown (a queue consume stats left out), as explain says
        last = "" if row.committed else "never"
    return [
        row.queue.topic,
        row.queue.label(),
        f"{row.broker_offset:,}",
        ("on clients" if kept_by_clients else "never")
        if row.committed is None
        else f"{row.committed:,}",
        "-" if row.lag is None else f"{row.lag:,}",
        holder_text(row),
        last,
    ]


def totals_line(view: OffsetsView) -> str:
    """``Totals: 8 queues, lag 4,210, 0 consumers online``; ``lag at least 4,210 (...)``
    when some offsets could not be read; for a BROADCASTING group, why its lag is unknown;
    why holders are ``?`` where some are."""
    online = f"{plural(view.consumers, 'consumer')} online"
    queues = plural(len(view.rows), "queue")
    if view.lag is None:
        return (
            f"Totals: {queues}, {online}; lag unknown: {view.group} consumes in BROADCASTING "
            "mode, whose clients keep their own offsets (LocalFileOffsetStore, on their "
            f"disks), which no broker has; each client's lag: rmqlb explain {view.group}"
        )
    if not view.complete:
        line = (
            f"Totals: {queues}, lag at least {view.lag:,} (some of its offsets could not be "
            f"read), {online}"
        )
    else:
        line = f"Totals: {queues}, lag {view.lag:,}, {online}"
    return f"{line}; holder ?: {view.holders_unknown}" if view.holders_unknown else line


def to_json(view: OffsetsView) -> dict[str, Any]:
    """The ``rmqlb.offsets/1`` document (times ISO 8601 UTC; unknown is null)."""
    from rmqlb.jsontext import iso_ms  # noqa: PLC0415

    return {
        "format": "rmqlb.offsets/1",
        "group": view.group,
        "capturedAt": view.captured_at,
        "consumers": view.consumers,
        "messageModel": view.message_model.value,
        "queues": [
            {
                "topic": r.queue.topic,
                "brokerName": r.queue.broker_name,
                "queueId": r.queue.queue_id,
                "brokerOffset": r.broker_offset,
                "consumerOffset": r.committed,
                "lag": r.lag,
                "holders": list(r.holders) if r.holders is not None else None,
                "lastConsumed": iso_ms(r.last_consumed_ms),
            }
            for r in view.rows
        ],
        "totals": {
            "queues": len(view.rows),
            "lag": view.lag,
            "lagComplete": view.complete,
            "holdersUnknown": view.holders_unknown,
        },
    }


# ----- formats -----------------------------------------------------------------------------


def render_offsets(
    view: OffsetsView,
    fmt: Output,
    target: Console | IO[str],
    *,
    headers: bool = True,
    pretty_json: bool = True,
) -> None:
    """Write ``view`` in ``fmt`` (a Rich console for ``table``); ``headers`` False leaves
    out the column names and the totals (``--no-headers``, for scripts)."""
    from rmqlb.render.safe import escape_controls, escape_json_controls  # noqa: PLC0415

    if fmt is Output.json:
        from pydantic_core import to_json as dump  # noqa: PLC0415

        text = dump(to_json(view), indent=2 if pretty_json else None).decode("utf-8")
        write(target, escape_json_controls(text) + "\n")
        return
    raw = [cells(view, r) for r in view.rows]
    rows = [[escape_controls(c) for c in row] for row in raw]  # blocks escape on their own
    title = f"Group {view.group} · offsets"
    if fmt is Output.table or fmt is Output.wide:
        _table(view, rows, target, headers=headers, title=escape_controls(title))
        return
    if fmt is Output.plain or fmt is Output.markdown:
        flat = [[c.replace("\n", ", ") for c in row] for row in raw]
        if not headers:
            body = "\n".join("\t".join(escape_controls(c) for c in row) for row in flat)
            write(target, body + "\n" if body else "")
            return
        from rmqlb.render.blocks import Block, Column, Heading, Line, Table, to_text  # noqa: PLC0415

        right = {"max offset", "committed", "lag", "last consumed"}
        columns = tuple(
            Column(h, "right" if h in right else "left", code=h == "holder") for h in HEADERS
        )
        doc: list[Block] = [
            Heading(title, 1),
            Table(columns, tuple(tuple(row) for row in flat)),
            Line(totals_line(view)),
        ]
        write(target, to_text(doc, markdown=fmt is Output.markdown, spaced=True))
        return
    assert_never(fmt)


def _table(
    view: OffsetsView,
    rows: list[list[str]],
    target: Console | IO[str],
    *,
    headers: bool,
    title: str,
) -> None:
    from rich.console import Console as RichConsole  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    from rmqlb.render.screen import Trimmed  # noqa: PLC0415
    from rmqlb.render.table import Column, fit_table  # noqa: PLC0415

    console = (
        target
        if isinstance(target, RichConsole)
        else RichConsole(file=target, color_system=None, highlight=False)
    )
    right = {"max offset", "committed", "lag", "last consumed"}
    give_way = {"last consumed": 1, "max offset": 2, "topic": 3}
    columns = [
        Column(
            h.capitalize(),
            justify="right" if h in right else "left",
            key=h == "holder",
            give_way=give_way.get(h, 0),
        )
        for h in HEADERS
    ]
    cells_ = [
        [
            Text(c, style="bold red" if h == "lag" and c != "0" else "")
            for h, c in zip(HEADERS, row, strict=True)
        ]
        for row in rows
    ]
    if headers:
        console.print(Text(title, style="bold"))
    if rows:
        table = fit_table(columns, cells_, console.width)
        if not headers and hasattr(table, "show_header"):
            table.show_header = False
        console.print(Trimmed(table))
    if headers:
        console.print(Text(totals_line(view)))


def write(target: Console | IO[str], text: str) -> None:
    import sys  # noqa: PLC0415

    rich_console = sys.modules.get("rich.console")
    if rich_console is not None and isinstance(target, rich_console.Console):
        target.file.write(text)
    else:
        target.write(text)  # type: ignore[union-attr]
