"""What each client holds: GET_CONSUMER_RUNNING_INFO, relayed by a broker that lists it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.client.errors import Failed, failure_text
from rmqlb.client.steps.connections import GroupView
from rmqlb.model import Consumer
from rmqlb.model.snapshot import lists_no_queues, rebalance_from_properties
from rmqlb.remoting.bodies import Connection, RunningInfo

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


async def running_infos(
    collector: Collector, group: str, view: GroupView
) -> dict[str, RunningInfo | None]:
    """Each listed client's running info, by client id (``None``: it could not be read).

    One relayed request per client id: for two processes sharing an id the broker relays to
    one channel anyway, and both get its answer.
    """
    ids = list(dict.fromkeys(c.client_id for c in view.connections))
    answers = await asyncio.gather(*(_running(collector, group, view, i) for i in ids))
    return dict(zip(ids, answers, strict=True))


#: How long the first broker that lists a client may take to relay its running info, as a
#: fraction of the request timeout, before every other broker that lists it is asked too.
RELAY_HEDGE = 0.1


async def _running(
    collector: Collector, group: str, view: GroupView, client_id: str
) -> RunningInfo | None:
    """The client's running info, relayed by a broker that lists it; ``None`` on failure.

    One broker is asked first. When it fails, or has not answered :data:`RELAY_HEDGE` of the
    request timeout after the request went out, every other broker that lists the client is
    asked at once and the first answer wins: a silent client (frozen, or behind a broker
    that cannot reach it) costs about one ``--timeout``, not one per broker, and a client
    that answers is asked once, not once per broker (each ask makes it build its running
    info, and each answer is decoded).
    """
    relays = view.relays.get(client_id, [])
    tasks: list[asyncio.Future[RunningInfo | str]] = []
    info = None
    try:
        if relays:
            out = asyncio.Event()
            first = asyncio.ensure_future(
                _relay(collector, relays[0], group, client_id, sent=out.set)
            )
            tasks.append(first)
            if len(relays) > 1:
                await _first_answer(first, out, RELAY_HEDGE * collector.options.client.timeout)
                if not first.done() or isinstance(first.result(), str):
                    tasks += [
                        asyncio.ensure_future(_relay(collector, a, group, client_id))
                        for a in relays[1:]
                    ]
        for next_done in asyncio.as_completed(tasks):
            answer = await next_done
            if not isinstance(answer, str):
                info = answer
                break
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if info is None:
        # In relay order, not in the order the failures arrived: the message is stable.
        failures = [r for t in tasks if isinstance(r := t.result(), str)]
        message = "; ".join(failures) or "no broker left to relay the request"
        collector.error(client_id, "GET_CONSUMER_RUNNING_INFO", message, group)
    return info


async def _first_answer(
    first: asyncio.Future[RunningInfo | str], out: asyncio.Event, hedge: float
) -> None:
    """Wait until ``first`` is done, or has been out (``out`` set) for ``hedge`` seconds."""
    sending = asyncio.ensure_future(out.wait())
    try:
        await asyncio.wait((first, sending), return_when=asyncio.FIRST_COMPLETED)
    finally:
        sending.cancel()
    if not first.done():
        await asyncio.wait((first,), timeout=hedge)


async def _relay(
    collector: Collector,
    addr: str,
    group: str,
    client_id: str,
    sent: Callable[[], object] | None = None,
) -> RunningInfo | str:
    """One broker's relay of a running-info request: the answer, or why there is none
    (``sent``: called when the request goes out)."""
    c = collector
    try:
        info = await c.request(
            c.label(addr),
            "GET_CONSUMER_RUNNING_INFO",
            partial(c.admin.running_info, addr, group, client_id),
            record=False,
            sent=sent,
        )
    except Failed as failed:
        return f"via {c.label(addr)}: {failure_text(failed.error, addr)}"
    return info if info is not None else f"via {c.label(addr)}: not sent (deadline)"


def to_consumer(view: GroupView, conn: Connection, info: RunningInfo | None) -> Consumer:
    """The model consumer; without running info its actual queues stay unknown and its
    subscriptions are the group's as the broker keeps them. So do the queues of a pull
    consumer whose running info never lists them (:func:`lists_no_queues`)."""
    if info is None:
        return Consumer(
            client_id=conn.client_id,
            subscriptions=tuple(view.subscriptions.values()),
            client_addr=conn.client_addr,
            language=conn.language,
            version=conn.version,
        )
    consumer = info.to_consumer(conn.client_id, conn)
    if not consumer.assigned and lists_no_queues(
        consumer.properties, consumer.version, consumer.consume_type
    ):
        consumer = replace(consumer, assigned=None, process_queues=None)
    rebalance = rebalance_from_properties(consumer.properties)  # who balances it, as it says
    return replace(consumer, rebalance=rebalance) if rebalance is not None else consumer
