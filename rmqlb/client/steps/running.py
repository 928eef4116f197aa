"""What each client holds: GET_CONSUMER_RUNNING_INFO, relayed by a broker that lists it."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.client.errors import Failed, failure_text
from rmqlb.client.steps.connections import GroupView
from rmqlb.model import Consumer
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


async def _running(
    collector: Collector, group: str, view: GroupView, client_id: str
) -> RunningInfo | None:
    """The client's running info, relayed by a broker that lists it; ``None`` on failure.

    Every broker that lists the client is asked at once and the first answer wins, so a
    silent client (frozen, or behind a broker that cannot reach it) costs one
    ``--timeout``, not one per broker; the other requests are cancelled.
    """
    relays = view.relays.get(client_id, [])
    tasks = [asyncio.ensure_future(_relay(collector, a, group, client_id)) for a in relays]
    info = None
    try:
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


async def _relay(collector: Collector, addr: str, group: str, client_id: str) -> RunningInfo | str:
    """One broker's relay of a running-info request: the answer, or why there is none."""
    c = collector
    try:
        info = await c.request(
            c.label(addr),
            "GET_CONSUMER_RUNNING_INFO",
            partial(c.admin.running_info, addr, group, client_id),
            record=False,
        )
    except Failed as failed:
        return f"via {c.label(addr)}: {failure_text(failed.error, addr)}"
    return info if info is not None else f"via {c.label(addr)}: not sent (deadline)"


def to_consumer(view: GroupView, conn: Connection, info: RunningInfo | None) -> Consumer:
    """The model consumer; without running info its actual queues stay unknown and its
    subscriptions are the group's as the broker keeps them."""
    if info is None:
        return Consumer(
            client_id=conn.client_id,
            subscriptions=tuple(view.subscriptions.values()),
            client_addr=conn.client_addr,
            language=conn.language,
            version=conn.version,
        )
    return info.to_consumer(conn.client_id, conn)
