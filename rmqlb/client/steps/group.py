"""One group's capture: connections (brokers' and Proxies'), running info, offsets, configs,
routes and broker-side assignment, assembled."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from rmqlb.client.steps.connections import connections
from rmqlb.client.steps.running import running_infos, to_consumer
from rmqlb.client.together import together
from rmqlb.model import Consumer, Group, MessageModel, queue_sort_key
from rmqlb.model.snapshot import (
    DLQ_PREFIX,
    RETRY_PREFIX,
    FilterKey,
    GroupOnBroker,
    consumed_model,
    logical_offsets,
    read_by_assign,
)

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


async def capture_group(
    collector: Collector, name: str, masters: Sequence[tuple[str, str]]
) -> Group:
    """Everything about group ``name``: each step starts as soon as what it needs is known."""
    c = collector
    c.routes.get(RETRY_PREFIX + name)
    c.routes.get(DLQ_PREFIX + name)  # no task where the topic list lacks it (most groups)
    # (one task for the pair, which awaits the last in its own: see together)
    pair = together([c.offsets.consume_stats(addr, name) for _, addr in masters])
    stats_task = asyncio.ensure_future(pair)
    view = await connections(c, name, masters)
    # An id listed more than once may be connections its client closed: how long a broker
    # keeps those listed is in its config (5.1+: channelExpiredTimeout).
    repeats = view.repeats_an_id()
    expiry = (
        [c.assignment.broker_config(b, addr) for b, addr in masters if addr in view.lists]
        if repeats
        else []
    )
    for topic in view.subscriptions:
        c.routes.get(topic)
    # The offsets of the topics the brokers list are wanted whatever the clients answer:
    # their min/max offsets are read while the clients are asked for their queues (and the
    # Proxies for their clients). A BROADCASTING group's too: each client's own progress
    # (its commit offsets, in its running info) is measured against the max offsets.
    # (No task where there is nothing to ask: most groups of a big cluster have no client.)
    wanted = [*view.subscriptions]
    ranges = asyncio.ensure_future(c.offsets.prefetch(wanted)) if wanted else None
    listed = frozenset(conn.client_id for conn in view.connections)
    proxies = c.options.proxies
    proxied = asyncio.ensure_future(c.proxies.clients(name, listed)) if proxies else None
    infos_task = asyncio.ensure_future(running_infos(c, name, view)) if listed else None
    # Each broker's config table (read once per capture) is needed last: asked now, it is
    # decoded while the clients answer, not before the connection lists are read.
    for _, addr in masters:
        c.configs.ask(addr)
    infos = await infos_task if infos_task is not None else {}
    consumers = [to_consumer(view, conn, infos[conn.client_id]) for conn in view.connections]
    consumers += await proxied if proxied is not None else []
    for consumer in consumers:
        for sub in consumer.subscriptions:
            c.routes.get(sub.topic)
    # Every topic the group's clients subscribe (CLUSTERING push clients include their
    # %RETRY% topic); offsets of other topics stay what consume stats say (committed).
    # A BROADCASTING group keeps its offsets in its clients: its queues are listed with the
    # broker's min/max offsets only (never committed), nothing asked of its commits.
    model = consumed_model(view.message_model, consumers)
    broadcasting = model is MessageModel.BROADCASTING
    topics = set(view.subscriptions)
    topics.update(sub.topic for cons in consumers for sub in cons.subscriptions)
    if ranges is not None:
        await ranges
    answers = await stats_task
    stats = [o for answer in answers if answer is not None for o in answer.offsets]
    if not broadcasting:  # with their routes, as GroupContext.assigned_topics shows them
        for topic in read_by_assign(consumers, (o.queue.topic for o in stats)) - topics:
            c.routes.get(topic)
            topics.add(topic)
    if not consumers and await c.routes.get(RETRY_PREFIX + name) is None:
        # Nobody listed and no %RETRY% topic: a POP-only group (5.x gRPC clients, which no
        # broker lists): the routes of the topics it has offsets of, so its queues and lag
        # are shown against them.
        for topic in dict.fromkeys(o.queue.topic for o in stats):
            c.routes.get(topic)
    if not consumers and not broadcasting:
        # Nobody to say what it subscribes: the topics it has offsets of, where their routes
        # hold queues its consume stats leave out (messages may wait there, never committed).
        topics.update(await c.offsets.uncovered(stats, [broker for broker, _ in masters]))
    offsets = await c.offsets.complete(name, sorted(topics), stats, ask_committed=not broadcasting)
    popped = sorted({mq.topic for cons in consumers for mq in cons.pop_assigned or ()})
    if popped:  # their POP retry topics: a 5.0 broker leaves them out while they are online
        offsets += await c.offsets.pop_retries(name, popped, offsets)
    routes = {t: await c.routes.get(t) for t in sorted({*topics, RETRY_PREFIX + name})}
    offsets = logical_offsets(offsets, routes)  # a static topic's: its logical queues'
    on_brokers = await c.assignment.group(name, masters, model, consumers, routes)
    for (broker, _), answer in zip(masters, answers, strict=True):
        if answer is not None:  # read: 0 is a rate, not unknown
            known = on_brokers.get(broker, GroupOnBroker())
            on_brokers[broker] = replace(known, consume_tps=answer.consume_tps)
    # Which broker lists a repeated id how often tells closed connections; which brokers
    # list which clients tells what each client's cidAll is (it asks one broker of a topic).
    if repeats or view.lists_differ():
        for broker, addr in masters:
            known = on_brokers.get(broker, GroupOnBroker())
            if addr in view.lists and known.client_ids is None:
                on_brokers[broker] = replace(known, client_ids=tuple(view.lists[addr]))
    # Clients filtering a topic differently: the brokers' own subscription tables say which
    # expression each broker filters pulls by (a client's newer subVersion may not have
    # reached it yet: its heartbeat after a rebalance is skipped while another is sent).
    if _expressions_differ(consumers):
        for broker, addr in masters:
            table = view.tables.get(addr)
            if table is not None:
                known = on_brokers.get(broker, GroupOnBroker())
                on_brokers[broker] = replace(known, subscriptions=table)
    for broker, letters in (await c.offsets.dead_letters(DLQ_PREFIX + name)).items():
        known = on_brokers.get(broker, GroupOnBroker())
        on_brokers[broker] = replace(known, dead_letters=letters)
    for task in expiry:
        await task
    configs = {}
    for broker, addr in masters:
        config = await c.configs.config(addr, name)
        if config is not None:
            configs[broker] = config.to_model()
    return Group(
        name=name,
        message_model=view.message_model,
        consume_type=view.consume_type,
        consumers=tuple(consumers),
        offsets=tuple(sorted(offsets, key=lambda o: queue_sort_key(o.queue))),
        configs=configs,
        on_brokers=on_brokers,
    )


def _expressions_differ(consumers: Sequence[Consumer]) -> bool:
    """Whether two of ``consumers`` filter one topic differently (``'A || B'`` and ``'B||A'``
    are one filter: SUBSCRIPTION_INCONSISTENT has no expression to name then)."""
    seen: dict[str, FilterKey] = {}
    for consumer in consumers:
        for sub in consumer.subscriptions:
            expression = sub.filter_key()
            if seen.setdefault(sub.topic, expression) != expression:
                return True
    return False
