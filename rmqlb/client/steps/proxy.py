"""Clients only a Proxy knows: GET_CONSUMER_CONNECTION_LIST on each 5.1+ Proxy's remoting port.

A gRPC client talks to the Proxy and pops through it: in CLUSTER mode the brokers do not list
it (they answer 206 for its group). A 5.1 Proxy's remoting port answers the connection list
of a group's clients connected to it (id, address, language, version; the group's
subscriptions); each becomes a consumer with ``proxy`` set to the Proxy's address. Its
queues stay unknown: the Proxy pops any queue for a gRPC client, and relays no request for a
client's running info. A 5.0 Proxy has no remoting port: its clients stay invisible. A Proxy
that says the group is not online (206) lists nobody.

Remoting clients may connect through that port too (their NameServer address is the
Proxy's): they balance themselves over the route and consumer list the Proxy answers, and
the brokers do not list them either. Their group subscribes its retry topic (a push
consumer's ``%RETRY%group``), which no gRPC client does: such clients are left with
``rebalance`` unreported (:func:`rmqlb.diagnose.balance.through_proxy_remoting`), the others
get ``rebalance=proxy``.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.client.errors import BadFrame, ConnectionLost
from rmqlb.model import Consumer, Rebalance
from rmqlb.model.snapshot import subscribes_retry
from rmqlb.remoting.bodies import ConsumerConnection

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


#: Why a Proxy address may drop a remoting request: it is the gRPC port (TLS, HTTP/2).
NOT_REMOTING = (
    "if this is the Proxy's gRPC port, give its remoting port (remotingListenPort, 8080 by "
    "default; gRPC is grpcServerPort, 8081): a 5.0 Proxy has none"
)


class Proxies:
    """The Proxies the user named (``CollectOptions.proxies``)."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector

    async def _listing(
        self, addr: str, group: str, *, timeout: float | None = None
    ) -> ConsumerConnection | None:
        """The Proxy's connection list of ``group``; a connection it drops or fills with
        bytes that are no remoting frame says which port ``--proxy`` takes."""
        try:
            return await self.collector.admin.consumer_connection(addr, group, timeout=timeout)
        except (ConnectionLost, BadFrame) as exc:
            raise type(exc)(f"{exc.message}; {NOT_REMOTING}", exc.target) from None

    async def clients(self, group: str, known: frozenset[str] = frozenset()) -> list[Consumer]:
        """Every Proxy's clients of ``group``, in Proxy order, each id once (``known``: ids
        the brokers listed already)."""
        c = self.collector
        if not c.options.proxies:
            return []
        lists: list[ConsumerConnection | None] = await asyncio.gather(
            *(
                c.try_request(
                    addr,
                    "GET_CONSUMER_CONNECTION_LIST",
                    partial(self._listing, addr, group),
                    group=group,
                )
                for addr in c.options.proxies
            )
        )
        seen = set(known)
        out = []
        for addr, conn in zip(c.options.proxies, lists, strict=True):
            if conn is None:
                continue
            subscriptions = tuple(conn.subscriptions.values())
            remoting = subscribes_retry(subscriptions)
            for entry in conn.connections:
                if entry.client_id in seen:
                    continue
                seen.add(entry.client_id)
                out.append(
                    Consumer(
                        client_id=entry.client_id,
                        subscriptions=subscriptions,
                        client_addr=entry.client_addr,
                        language=entry.language,
                        version=entry.version,
                        rebalance=None if remoting else Rebalance.PROXY,
                        proxy=addr,
                    )
                )
        return out
