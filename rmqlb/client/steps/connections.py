"""Who is connected: GET_CONSUMER_CONNECTION_LIST on every master, united.

Each broker only knows the clients that heartbeat to it, so the answers are united; a broker
that says the group is not online (206) simply lists nobody.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.client.together import together
from rmqlb.model import MessageModel, Subscription
from rmqlb.remoting.bodies import Connection, ConsumerConnection

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


@dataclass(slots=True)
class GroupView:
    """The union of every broker's connection list for one group."""

    message_model: MessageModel = MessageModel.CLUSTERING
    consume_type: str | None = None
    subscriptions: dict[str, Subscription] = field(default_factory=dict)
    connections: list[Connection] = field(default_factory=list)
    relays: dict[str, list[str]] = field(default_factory=dict)  # clientId -> broker addrs
    lists: dict[str, list[str]] = field(default_factory=dict)  # broker addr -> its client ids
    # broker addr -> the subscription it keeps per topic (the expression it filters pulls by)
    tables: dict[str, tuple[Subscription, ...]] = field(default_factory=dict)
    answered: bool = False
    kept: dict[str, int] = field(default_factory=dict)  # clientId -> its entries in connections

    def repeats_an_id(self) -> bool:
        """Whether some broker lists a client id more than once."""
        return any(len(set(ids)) < len(ids) for ids in self.lists.values())

    def lists_differ(self) -> bool:
        """Whether the brokers that answered list different client ids."""
        return len({frozenset(ids) for ids in self.lists.values()}) > 1

    def merge(self, addr: str, conn: ConsumerConnection) -> None:
        """Unite one broker's connection list into this view.

        A client connects to every broker separately, so its ``clientAddr`` differs per
        broker; clients are matched by id. One id listed *n* times by one broker is *n*
        connections (processes sharing the id, or closed connections the broker still
        lists), so the largest count any broker reports is kept; ``lists`` keeps each
        broker's own.
        """
        self.lists[addr] = [c.client_id for c in conn.connections]
        self.tables[addr] = tuple(conn.subscriptions.values())
        if not self.answered:
            self.answered = True
            self.message_model = conn.message_model or MessageModel.CLUSTERING
            self.consume_type = conn.consume_type
        for topic, sub in conn.subscriptions.items():
            known = self.subscriptions.get(topic)
            if known is None or sub.sub_version > known.sub_version:
                self.subscriptions[topic] = sub
        here: dict[str, list[Connection]] = {}
        for c in conn.connections:
            here.setdefault(c.client_id, []).append(c)
            self.relays.setdefault(c.client_id, [])
            if addr not in self.relays[c.client_id]:
                self.relays[c.client_id].append(addr)
        for cid, entries in here.items():
            have = self.kept.get(cid, 0)
            if len(entries) > have:
                self.connections.extend(entries[have:])
                self.kept[cid] = len(entries)


async def connections(
    collector: Collector, group: str, masters: Sequence[tuple[str, str]]
) -> GroupView:
    """Every master's connection list for ``group``, united in master order."""
    c = collector
    lists = await together(
        [
            c.try_request(
                c.label(addr),
                "GET_CONSUMER_CONNECTION_LIST",
                partial(c.admin.consumer_connection, addr, group),
                broker=True,
                group=group,
            )
            for _, addr in masters
        ]
    )
    view = GroupView()
    for (_, addr), conn in zip(masters, lists, strict=True):
        if conn is not None:
            view.merge(addr, conn)
    return view
