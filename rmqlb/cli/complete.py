"""Shell completion of group and topic names from the cluster, as kubectl completes resources.

Only when an address is known (``-n`` on the partial command line, else ``$NAMESRV_ADDR``),
within :data:`DEADLINE` seconds, with the read-only admin client and plain connections:
group names from every master's subscription group configs (after the NameServer's broker
list), topic names from the NameServer's topic list (less the cluster and broker names it
holds too). Anything that fails, is slow or needs TLS or ACL completes nothing, silently:
completion never prints an error or a traceback. Built-in groups and topics, and names
holding control characters, are not offered.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer  # at run time: typer reads the completion functions' annotations

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from rmqlb.client.admin import AdminClient

DEADLINE = 1.0
"""Seconds a completion may spend on the cluster, every request included."""


def _namesrv(ctx: typer.Context) -> str | None:
    """The first NameServer address of ``-n``, else of ``$NAMESRV_ADDR``."""
    from rmqlb.cli.live import _split

    value = ctx.params.get("namesrv") or os.environ.get("NAMESRV_ADDR")
    addrs = _split(value) if isinstance(value, str) else ()
    return addrs[0] if addrs else None


def _ask(
    ctx: typer.Context, fetch: Callable[[AdminClient, str], Awaitable[list[str]]]
) -> list[str]:
    """``fetch``'s names, or nothing on any failure or past :data:`DEADLINE`."""
    namesrv = _namesrv(ctx)
    if namesrv is None:
        return []
    try:
        import asyncio

        from rmqlb.client.admin import AdminClient, ClientOptions

        async def run() -> list[str]:
            async with AdminClient(ClientOptions(timeout=DEADLINE, busy_retries=0)) as admin:
                return await asyncio.wait_for(fetch(admin, namesrv), DEADLINE)

        return asyncio.run(run())
    except Exception:
        return []


def _offer(names: list[str], incomplete: str, hidden: Callable[[str], bool]) -> list[str]:
    from rmqlb.render.safe import escape_controls

    return sorted(
        {n for n in names if n.startswith(incomplete) and not hidden(n) and escape_controls(n) == n}
    )


async def _groups(admin: AdminClient, namesrv: str) -> list[str]:
    import asyncio

    brokers = await admin.cluster_info(namesrv)
    masters = {addr for b in brokers.values() if (addr := b.master_addr()) is not None}
    answers = await asyncio.gather(
        *(admin.subscription_group_configs(m) for m in sorted(masters)), return_exceptions=True
    )
    return [name for a in answers if not isinstance(a, BaseException) for name in a]


async def _topics(admin: AdminClient, namesrv: str) -> list[str]:
    """The NameServer's topic list, less the cluster and broker names it holds too."""
    import asyncio

    topics, brokers = await asyncio.gather(admin.topic_list(namesrv), admin.cluster_info(namesrv))
    names = set(brokers) | {b.cluster for b in brokers.values() if b.cluster}
    return [t for t in topics if t not in names]


def complete_group(ctx: typer.Context, incomplete: str) -> list[str]:
    """The cluster's consumer groups starting with ``incomplete``."""
    from rmqlb.model.system import is_system_group

    return _offer(_ask(ctx, _groups), incomplete, is_system_group)


def complete_topic(ctx: typer.Context, incomplete: str) -> list[str]:
    """The cluster's topics starting with ``incomplete`` (retry and dead-letter topics aside)."""
    from rmqlb.model.system import is_system_topic

    def hidden(name: str) -> bool:
        return is_system_topic(name) or name.startswith(("%RETRY%", "%DLQ%"))

    return _offer(_ask(ctx, _topics), incomplete, hidden)
