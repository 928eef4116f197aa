"""A consumer group as it runs, read from a snapshot: the starting point of a what-if. Pure.

``rmqlb simulate --dump/-n/--check-config`` asks "what if I add two consumers, go to 24
queues, switch strategy" about the group that is actually running. Its inputs are exactly the
ones every Java client of the group uses, as :mod:`rmqlb.diagnose.context` builds them for
``explain``: ``mqAll`` from the route's readable queues, ``cidAll`` from every consumer of the
group (non-subscribers and duplicated ids included), and the strategy ``explain`` would use
(``--strategy``, else the group's, else the one its clients agree on, else AVG).

>>> from rmqlb.snapshot import parse_snapshot
>>> snap = parse_snapshot({"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": 4}},
...     "groups": {"G": {"consumers": [{"clientId": "c1", "subscriptions": ["T"]},
...                                    {"clientId": "c2", "subscriptions": ["T"]}]}}})
>>> [(r.topic, len(r.queues), r.consumers) for r in running(snap, "G")]
[('T', 4, ('c1', 'c2'))]
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqlb.diagnose.context import (
    DiagnoseOptions,
    Mode,
    group_context,
    topic_context,
)
from rmqlb.diagnose.lookup import known_topics, not_found, topic_not_found
from rmqlb.errors import InputError
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import Snapshot
from rmqlb.model.strategy import StrategySpec


@dataclass(frozen=True, slots=True)
class Running:
    """One (group, topic) as it runs.

    ``brokers`` are the route's readable brokers (Java order), ``queues`` is ``mqAll``,
    ``consumers`` is ``cidAll``; ``actual`` is what every client says it holds (``None``
    unless every consumer's holdings are known).
    """

    group: str
    topic: str
    strategy: StrategySpec
    strategy_source: str
    brokers: tuple[str, ...]
    queues: tuple[MessageQueue, ...]
    consumers: tuple[str, ...]
    subscribers: frozenset[str]
    actual: dict[str, list[MessageQueue]] | None


def running(
    snapshot: Snapshot,
    group: str,
    topic: str | None = None,
    strategy: StrategySpec | None = None,
) -> list[Running]:
    """The (group, topic) pairs to start a what-if from: ``topic``, else every ordinary topic
    the group subscribes. :class:`InputError` when there is nothing to allocate."""
    found = snapshot.groups.get(group)
    if found is None:
        raise not_found(group, snapshot.groups, "in the snapshot")
    g = group_context(snapshot, found, strategy, DiagnoseOptions(proposals=False))
    if g.mode is not Mode.CLUSTERING:
        raise InputError(
            f"group {group} consumes in {g.mode.value} mode: its clients do not allocate "
            "queues among themselves, so there is nothing to simulate"
        )
    if not g.cid_all:
        raise InputError(f"group {group} has no consumer in the snapshot: nothing to allocate")
    subscribed = [t for t in g.subscribed_topics() if not t.startswith("%RETRY%")]
    if topic is not None:
        if topic not in g.subscribed_topics():
            if topic not in known_topics(snapshot):
                raise topic_not_found(topic, known_topics(snapshot))
            known = ", ".join(subscribed) or "none"
            raise InputError(f"group {group} does not subscribe {topic!r} (it subscribes: {known})")
        subscribed = [topic]
    out: list[Running] = []
    for name in subscribed:
        route = snapshot.topics.get(name)
        if route is None:
            raise InputError(f"the snapshot has no route for {name}, subscribed by {group}")
        ctx = topic_context(g, name)
        actual: dict[str, list[MessageQueue]] | None = None
        if ctx.actual_known and ctx.actual:
            actual = {}
            for consumer, held in zip(g.consumers, ctx.actual, strict=True):
                actual.setdefault(consumer.client_id, []).extend(held or ())
        brokers = tuple(ctx.base)  # readable ones, in Java order (a static topic: logical)
        out.append(
            Running(
                group=group,
                topic=name,
                strategy=g.strategy,
                strategy_source=g.strategy_source,
                brokers=brokers,
                queues=tuple(ctx.mq_all),
                consumers=tuple(g.cid_all),
                subscribers=ctx.subscribers,
                actual=actual,
            )
        )
    if not out:
        raise InputError(f"group {group} subscribes no topic: nothing to allocate")
    return out
