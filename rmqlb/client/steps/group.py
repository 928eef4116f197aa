"""One group's capture: connections, running info, offsets, configs and routes, assembled."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rmqlb.client.steps.connections import connections
from rmqlb.client.steps.running import running_infos, to_consumer
from rmqlb.model import Group, MessageModel, queue_sort_key
from rmqlb.model.snapshot import RETRY_PREFIX

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


async def capture_group(
    collector: Collector, name: str, masters: Sequence[tuple[str, str]]
) -> Group:
    """Everything about group ``name``: each step starts as soon as what it needs is known."""
    c = collector
    c.routes.get(RETRY_PREFIX + name)
    stats_task = asyncio.gather(*(c.offsets.consume_stats(addr, name) for _, addr in masters))
    view = await connections(c, name, masters)
    for topic in view.subscriptions:
        c.routes.get(topic)
    infos = await running_infos(c, name, view)
    consumers = [to_consumer(view, conn, infos[conn.client_id]) for conn in view.connections]
    for consumer in consumers:
        for sub in consumer.subscriptions:
            c.routes.get(sub.topic)
    # Every topic the group's clients subscribe (CLUSTERING push clients include their
    # %RETRY% topic); offsets of other topics stay what consume stats say (committed).
    # A BROADCASTING group keeps its offsets in its clients: the broker has none to add.
    topics = set(view.subscriptions)
    topics.update(sub.topic for cons in consumers for sub in cons.subscriptions)
    if view.message_model is MessageModel.BROADCASTING:
        topics.clear()
    stats = [o for per_broker in await stats_task for o in per_broker]
    offsets = await c.offsets.complete(name, sorted(topics), stats)
    configs = {}
    for broker, addr in masters:
        table = await c.configs.of(addr)
        if table and name in table:
            configs[broker] = table[name].to_model()
    return Group(
        name=name,
        message_model=view.message_model,
        consume_type=view.consume_type,
        consumers=tuple(consumers),
        offsets=tuple(sorted(offsets, key=lambda o: queue_sort_key(o.queue))),
        configs=configs,
    )
