"""``rmqlb client``: one consumer client up close, like ``mqadmin consumerStatus -i``.

Its group, address, version, strategy and subscriptions, then per held queue the state of
its process queue (cached messages and MiB, last pull and consume as ages before the
capture, locked, dropped, the offset it will commit, the brokers' max offset and what is left
between them: the client's own lag of the queue). All of it is in the snapshot already.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, assert_never

from rmqlb.model.snapshot import UNREPORTING_CLIENTS, Rebalance
from rmqlb.render.formats import Output

if TYPE_CHECKING:
    from rich.console import Console

    from rmqlb.model.queue import MessageQueue
    from rmqlb.model.snapshot import Consumer, ProcessQueueState, Snapshot

UNKNOWN = "unknown (its running info was not captured)"
#: Why a gRPC client's held queues are never known: nobody can ask it.
UNKNOWN_GRPC = "unknown (a gRPC client pops through its Proxy, which reports no held queues)"
#: Why the held queues of a remoting client connected through a Proxy are never known.
UNKNOWN_VIA_PROXY = "unknown (connected through a Proxy, which relays no running-info request)"
#: Why a pull consumer's held queues are unknown when its kind never lists them.
UNKNOWN_UNREPORTED = f"unknown (its running info lists no queue: {UNREPORTING_CLIENTS})"
HEADERS = (
    "queue",
    "cached",
    "MiB",
    "last pull",
    "last consume",
    "locked",
    "dropped",
    "commit",
    "max",
    "lag",
)


@dataclass(frozen=True, slots=True)
class ClientView:
    """One client of one group, and the capture time its ages are measured from."""

    group: str
    consumer: Consumer
    captured_at: str | None
    #: Who balances it (as explain's consumer table says), and why rmqlb thinks so when the
    #: client did not report it (``None``: reported).
    balanced_by: Rebalance
    balance_inferred: str | None
    #: The brokers' max offset of each queue, from the group's offsets (a queue missing:
    #: not captured).
    max_offsets: Mapping[MessageQueue, int] = field(default_factory=dict)

    def lag(self, pq: ProcessQueueState) -> int | None:
        """What the client has yet to consume of the queue by its own progress: the max
        offset minus its commit offset (``None``: either unknown)."""
        return pq.lag(self.max_offsets.get(pq.queue))


def find_clients(snapshot: Snapshot, client_id: str, group: str | None) -> list[ClientView]:
    """Every appearance of ``client_id`` (in ``group`` only, when given)."""
    from rmqlb.diagnose.balance import client_balance  # noqa: PLC0415

    return [
        ClientView(
            name,
            c,
            snapshot.captured_at,
            *client_balance(c, g),
            {o.queue: o.broker_offset for o in g.offsets},
        )
        for name, g in snapshot.groups.items()
        if group is None or name == group
        for c in g.consumers
        if c.client_id == client_id
    ]


def balance_text(view: ClientView) -> str:
    """``client``, ``broker`` or ``proxy`` (with the Proxy's address when a Proxy listed
    it), and why when inferred: ``client (inferred: a client older than 5.0 ...)``."""
    who = view.balanced_by.value
    if view.consumer.proxy is not None:  # a gRPC client's Proxy, or one a client connects via
        proxied = view.balanced_by is Rebalance.PROXY
        who += f" {view.consumer.proxy}" if proxied else f" via {view.consumer.proxy}"
    return who if view.balance_inferred is None else f"{who} (inferred: {view.balance_inferred})"


def held_unknown(view: ClientView) -> str:
    """Why the client's held queues are unknown."""
    if view.balanced_by is Rebalance.PROXY:
        return UNKNOWN_GRPC
    if view.consumer.proxy is not None:
        return UNKNOWN_VIA_PROXY
    return UNKNOWN_UNREPORTED if view.consumer.queues_unreported else UNKNOWN


def facts(view: ClientView) -> list[tuple[str, str]]:
    """``(name, value)`` lines of the client's header (unknown: ``?``)."""
    from rmqlb.model.strategy import describe  # noqa: PLC0415
    from rmqlb.remoting.codes import version_name  # noqa: PLC0415

    c = view.consumer
    subs = ", ".join(f"{s.topic} {s.sub_string}" for s in c.subscriptions) or "none"
    return [
        ("client", c.client_id),
        ("group", view.group),
        ("address", c.client_addr or "?"),
        ("version", version_name(c.version) if c.version is not None else "?"),
        ("strategy", describe(c.strategy) if c.strategy is not None else "?"),
        ("consume", c.consume_type or "?"),
        ("orderly", "?" if c.consume_orderly is None else "yes" if c.consume_orderly else "no"),
        ("balanced by", balance_text(view)),
        ("subscriptions", subs),
    ] + ([("pops", pops_text(c))] if c.pop_assigned else [])


def pops_text(c: Consumer) -> str:
    """The queues a broker lets ``c`` pop (5.x POP): ``T broker-a:3``, or ``T broker-a (every
    queue)`` for :data:`~rmqlb.model.queue.WHOLE_BROKER`."""
    from rmqlb.model.queue import WHOLE_BROKER  # noqa: PLC0415

    return ", ".join(
        f"{q.topic} {q.broker_name} (every queue)"
        if q.queue_id == WHOLE_BROKER
        else f"{q.topic} {q.label()}"
        for q in c.pop_assigned or ()
    )


def queue_cells(view: ClientView, pq: ProcessQueueState) -> list[str]:
    """One held queue's cells, in :data:`HEADERS` order."""
    from rmqlb.render._view import age_text, captured_ms  # noqa: PLC0415

    now = captured_ms(view.captured_at)
    return [
        f"{pq.queue.topic} {pq.queue.label()}",
        f"{pq.cached_msg_count:,}",
        f"{pq.cached_msg_size_mib:,}",
        age_text(pq.last_pull_timestamp, now),
        age_text(pq.last_consume_timestamp, now),
        "yes" if pq.locked else "no",
        "yes" if pq.dropped else "no",
        f"{pq.commit_offset:,}" if pq.commit_offset >= 0 else "none",
        "?" if (high := view.max_offsets.get(pq.queue)) is None else f"{high:,}",
        "?" if (lag := view.lag(pq)) is None else f"{lag:,}",
    ]


def to_json(views: list[ClientView]) -> dict[str, Any]:
    """The ``rmqlb.client/1`` document (times ISO 8601 UTC; unknown is null)."""
    from rmqlb.jsontext import iso_ms  # noqa: PLC0415
    from rmqlb.model.strategy import describe  # noqa: PLC0415
    from rmqlb.remoting.codes import version_name  # noqa: PLC0415

    def when(ms: int) -> str | None:
        return iso_ms(ms) if ms else None

    return {
        "format": "rmqlb.client/1",
        "capturedAt": views[0].captured_at if views else None,
        "clients": [
            {
                "clientId": v.consumer.client_id,
                "group": v.group,
                "address": v.consumer.client_addr,
                "version": version_name(v.consumer.version)
                if v.consumer.version is not None
                else None,
                "strategy": describe(v.consumer.strategy)
                if v.consumer.strategy is not None
                else None,
                "balancedBy": v.balanced_by.value,
                "balanceInferred": v.balance_inferred,
                "proxy": v.consumer.proxy,
                "subscriptions": [
                    {"topic": s.topic, "expression": s.sub_string} for s in v.consumer.subscriptions
                ],
                "popQueues": None
                if v.consumer.pop_assigned is None
                else [
                    {"topic": q.topic, "brokerName": q.broker_name, "queueId": q.queue_id}
                    for q in v.consumer.pop_assigned
                ],
                "queues": None
                if v.consumer.process_queues is None
                else [
                    {
                        "topic": pq.queue.topic,
                        "brokerName": pq.queue.broker_name,
                        "queueId": pq.queue.queue_id,
                        "cachedMessages": pq.cached_msg_count,
                        "cachedMiB": pq.cached_msg_size_mib,
                        "lastPull": when(pq.last_pull_timestamp),
                        "lastConsume": when(pq.last_consume_timestamp),
                        "locked": pq.locked,
                        "dropped": pq.dropped,
                        "commitOffset": pq.commit_offset,
                        "maxOffset": v.max_offsets.get(pq.queue),
                        "lag": v.lag(pq),
                    }
                    for pq in v.consumer.process_queues
                ],
            }
            for v in views
        ],
    }


def render_client(
    views: list[ClientView], fmt: Output, target: Console | IO[str], *, pretty_json: bool
) -> None:
    """Write the clients in ``fmt`` (a Rich console for ``table``)."""
    from rmqlb.render.offsets import write  # noqa: PLC0415
    from rmqlb.render.safe import escape_json_controls  # noqa: PLC0415

    if fmt is Output.json:
        from pydantic_core import to_json as dump  # noqa: PLC0415

        text = dump(to_json(views), indent=2 if pretty_json else None).decode("utf-8")
        write(target, escape_json_controls(text) + "\n")
        return
    if fmt is Output.table or fmt is Output.wide:
        _table(views, target)
        return
    if fmt is Output.plain or fmt is Output.markdown:
        from rmqlb.render.blocks import Block, Column, Line, Table, to_text  # noqa: PLC0415

        doc: list[Block] = []
        for v in views:
            doc.append(Line("\n".join(f"{k}: {val}" for k, val in facts(v))))
            states = v.consumer.process_queues
            if states is None:
                doc.append(Line(f"held queues: {held_unknown(v)}"))
                continue
            right = set(HEADERS) - {"queue"}
            columns = tuple(Column(h, "right" if h in right else "left") for h in HEADERS)
            rows = tuple(tuple(queue_cells(v, pq)) for pq in states)
            doc.append(Table(columns, rows) if rows else Line("held queues: none"))
        write(target, to_text(doc, markdown=fmt is Output.markdown, spaced=True))
        return
    assert_never(fmt)


def _table(views: list[ClientView], target: Console | IO[str]) -> None:
    from rich.console import Console as RichConsole  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    from rmqlb.render.safe import escape_controls  # noqa: PLC0415
    from rmqlb.render.screen import Trimmed  # noqa: PLC0415
    from rmqlb.render.table import Column, fit_table  # noqa: PLC0415

    console = (
        target
        if isinstance(target, RichConsole)
        else RichConsole(file=target, color_system=None, highlight=False)
    )
    give_way = {"MiB": 1, "dropped": 2, "locked": 3, "last pull": 4, "max": 5}
    columns = [
        Column(
            h.capitalize() if h != "MiB" else h,
            justify="left" if h == "queue" else "right",
            give_way=give_way.get(h, 0),
        )
        for h in HEADERS
    ]
    for i, v in enumerate(views):
        if i:
            console.print()
        for name, value in facts(v):
            fact = Text.assemble((f"{name:<14}", "bold"), escape_controls(value))
            console.print(Trimmed(fact))  # a long fact wraps: no blank at its lines' ends
        states = v.consumer.process_queues
        if states is None:
            console.print(Text(f"held queues: {held_unknown(v)}", "yellow"))
            continue
        if not states:
            console.print(Text("held queues: none", "dim"))
            continue
        rows = [[Text(escape_controls(c)) for c in queue_cells(v, pq)] for pq in states]
        console.print(Trimmed(fit_table(columns, rows, console.width)))
