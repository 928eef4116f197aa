"""``together``: gather's answer, with the last awaitable in the caller's own task."""

from __future__ import annotations

import asyncio

import pytest

from rmqlb.client.together import together


def test_results_come_in_order_and_the_awaitables_run_concurrently() -> None:
    async def main() -> tuple[list[int], list[str]]:
        events: list[str] = []

        async def one(i: int, delay: float) -> int:
            events.append(f"start {i}")
            await asyncio.sleep(delay)
            events.append(f"end {i}")
            return i

        return await together([one(0, 0.03), one(1, 0.02), one(2, 0.01)]), events

    results, events = asyncio.run(main())
    assert results == [0, 1, 2]
    # every one started before any ended: in flight together; the last finished first
    assert sorted(events[:3]) == ["start 0", "start 1", "start 2"]
    assert events[3:] == ["end 2", "end 1", "end 0"]


def test_one_task_fewer_than_the_awaitables() -> None:
    async def main() -> tuple[int, asyncio.Task[object] | None, asyncio.Task[object] | None]:
        made = 0
        loop = asyncio.get_running_loop()
        factory = loop.get_task_factory()

        def counting(loop: asyncio.AbstractEventLoop, coro: object) -> asyncio.Task[object]:
            nonlocal made
            made += 1
            return asyncio.Task(coro, loop=loop)  # type: ignore[arg-type]

        loop.set_task_factory(counting)  # type: ignore[arg-type]
        seen: dict[int, asyncio.Task[object] | None] = {}

        async def where(i: int) -> None:
            seen[i] = asyncio.current_task()
            await asyncio.sleep(0)

        try:
            await together([where(0), where(1), where(2)])
        finally:
            loop.set_task_factory(factory)
        return made, seen[2], asyncio.current_task()

    made, last, caller = asyncio.run(main())
    assert made == 2
    assert last is caller


def test_a_failure_propagates_and_cancels_the_others() -> None:
    async def main() -> tuple[str, bool]:
        slow_cancelled = False

        async def slow() -> int:
            nonlocal slow_cancelled
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                slow_cancelled = True
                raise
            return 1

        async def bad() -> int:
            await asyncio.sleep(0)
            raise ValueError("no")

        try:
            await together([slow(), bad()])
        except ValueError as exc:
            await asyncio.sleep(0)  # let the cancellation run
            return str(exc), slow_cancelled
        return "", slow_cancelled

    assert asyncio.run(main()) == ("no", True)


def test_nothing_to_await() -> None:
    assert asyncio.run(together([])) == []


@pytest.mark.parametrize("count", [1, 2])
def test_plain_futures_too(count: int) -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(count)]
        for i, f in enumerate(futures):
            loop.call_later(0.001 * (count - i), f.set_result, i)
        return await together(futures)

    assert asyncio.run(main()) == list(range(count))
