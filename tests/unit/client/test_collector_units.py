"""Pure pieces of the live client: system groups, addresses, client options."""

from __future__ import annotations

import asyncio

import pytest

from rmqlb.client.collector import CollectOptions, Slots, utc_now
from rmqlb.client.connection import split_addr
from rmqlb.client.errors import ConnectFailed
from rmqlb.model.system import is_system_group


@pytest.mark.parametrize(
    "name",
    [
        "TOOLS_CONSUMER",
        "FILTERSRV_CONSUMER",
        "SELF_TEST_C_GROUP",
        "CID_ONS-HTTP-PROXY",
        "CID_ONSAPI_OWNER",
        "CID_ONSAPI_ANYTHING",
        "CID_RMQ_SYS_TRANS",
        "CID_RMQ_SYS_TRACE_2",
        "DEFAULT_CONSUMER",
        "__MONITOR_CONSUMER",
    ],
)
def test_system_groups(name: str) -> None:
    assert is_system_group(name)


@pytest.mark.parametrize("name", ["OrderGroup", "tools_consumer", "CID_ORDER", "GID_x"])
def test_user_groups(name: str) -> None:
    assert not is_system_group(name)


@pytest.mark.parametrize(
    ("addr", "host", "port"),
    [("10.0.0.1:10911", "10.0.0.1", 10911), ("::1:9876", "::1", 9876), ("[::1]:9876", "::1", 9876)],
)
def test_split_addr(addr: str, host: str, port: int) -> None:
    assert split_addr(addr) == (host, port)


@pytest.mark.parametrize("addr", ["localhost", ":9876", "host:port", "host:70000", ""])
def test_bad_addresses(addr: str) -> None:
    with pytest.raises(ConnectFailed, match="not a host:port address"):
        split_addr(addr)


def test_overall_deadline_default_and_explicit() -> None:
    assert CollectOptions(namesrv=("a:1",)).overall_deadline() == 30.0
    assert CollectOptions(namesrv=("a:1",), deadline=2.5).overall_deadline() == 2.5


def test_captured_at_is_utc_seconds() -> None:
    stamp = utc_now()
    assert stamp.endswith("Z") and len(stamp) == len("2026-11-22T12:00:00Z")


def test_slots_admit_at_most_the_limit_in_arrival_order() -> None:
    async def main() -> tuple[int, list[int]]:
        slots = Slots(3)
        inside = peak = 0
        order: list[int] = []

        async def one(i: int) -> None:
            nonlocal inside, peak
            async with slots:
                order.append(i)
                inside += 1
                peak = max(peak, inside)
                await asyncio.sleep(0)
                inside -= 1

        await asyncio.gather(*(one(i) for i in range(20)))
        return peak, order

    peak, order = asyncio.run(main())
    assert peak == 3
    assert order == list(range(20))


def test_a_cancelled_waiter_gives_its_slot_on() -> None:
    async def main() -> list[str]:
        slots = Slots(1)
        seen: list[str] = []

        async def waiter(name: str) -> None:
            async with slots:
                seen.append(name)

        await slots.__aenter__()  # this task holds the only slot
        cancelled = asyncio.ensure_future(waiter("cancelled"))
        handed = asyncio.ensure_future(waiter("handed over"))
        late = asyncio.ensure_future(waiter("late"))
        await asyncio.sleep(0)  # all three wait
        cancelled.cancel()  # still waiting: skipped
        await slots.__aexit__()  # the slot goes to "handed over"...
        handed.cancel()  # ...cancelled before it runs: the slot moves on
        await asyncio.gather(cancelled, handed, late, return_exceptions=True)
        async with slots:  # and the slot is free again afterwards
            seen.append("after")
        return seen

    assert asyncio.run(main()) == ["late", "after"]
