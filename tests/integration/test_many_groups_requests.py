"""What a capture of many groups costs in requests and socket writes (counts, not seconds).

A fake cluster as a big production cluster looks: two brokers, topics of 4 queues on each,
most groups with a subscription config and committed offsets only, a few with a live client.
The collector must ask per group only what its answers need: each broker's connection list
and consume stats, running info for listed clients only, no route of a ``%RETRY%`` topic the
NameServer does not list; and requests issued in the same event-loop turn leave together.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

from rmqlb.client.admin import AdminClient, ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.client.connection import Connection
from rmqlb.client.errors import ConnectionLost
from rmqlb.fake import FakeCluster, FakeClusterThread
from rmqlb.model import Snapshot
from rmqlb.remoting.codes import RequestCode
from rmqlb.snapshot import dumps_snapshot, parse_snapshot

pytestmark = pytest.mark.timeout(120)

TOPICS = 20
GROUPS = 200
LIVE = 4
BROKERS = ("broker-a", "broker-b")


def _group(i: int) -> dict[str, object]:
    topic = f"Topic{i % TOPICS}"
    offsets = [
        {"topic": topic, "brokerName": b, "queueId": q, "brokerOffset": 10, "consumerOffset": 7}
        for b in BROKERS
        for q in range(4)
    ]
    if i >= LIVE:
        return {"offsets": offsets}
    retry = f"%RETRY%Group{i}"
    return {
        "consumers": [
            {
                "clientId": f"10.0.0.{i}@{i}",
                "subscriptions": [topic, retry],
                "assigned": [
                    {"topic": topic, "brokerName": b, "queueId": q}
                    for b in BROKERS
                    for q in range(4)
                ],
            }
        ],
        "offsets": offsets,
    }


def fleet() -> Snapshot:
    """:data:`GROUPS` groups on :data:`TOPICS` topics; the first :data:`LIVE` have a client
    (and so a ``%RETRY%`` topic), the others offsets only."""
    both = [{"brokerName": b, "readQueueNums": 4, "writeQueueNums": 4, "perm": 6} for b in BROKERS]
    topics: dict[str, object] = {f"Topic{t}": {"queueDatas": both} for t in range(TOPICS)}
    topics.update({f"%RETRY%Group{i}": {"queues": 1} for i in range(LIVE)})
    return parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": topics,
            "groups": {f"Group{i}": _group(i) for i in range(GROUPS)},
        }
    )


def test_a_fleet_capture_asks_each_group_only_what_it_needs() -> None:
    async def main() -> tuple[Snapshot, Counter[str], list[str]]:
        async with FakeCluster(fleet()) as fake:
            snapshot = await collect(CollectOptions(namesrv=(fake.namesrv_addr,)))
            counts = Counter(r.name for r in fake.requests)
            routes = [
                r.ext_fields.get("topic", "")
                for r in fake.requests
                if r.code == RequestCode.GET_ROUTEINFO_BY_TOPIC
            ]
            return snapshot, counts, routes

    snapshot, counts, routes = asyncio.run(main())
    assert len(snapshot.groups) == GROUPS and not snapshot.errors
    live = [g for g in snapshot.groups.values() if g.consumers]
    assert len(live) == LIVE
    # every queue of the group's topic, and of its %RETRY% topic for the live ones
    assert all(len(g.offsets) == (9 if g.consumers else 8) for g in snapshot.groups.values())
    masters = len(BROKERS)
    # per group and broker: the connection list and the consume stats, nothing more
    assert counts["GET_CONSUMER_CONNECTION_LIST"] == GROUPS * masters
    assert counts["GET_CONSUME_STATS"] == GROUPS * masters
    # running info: listed clients only (each asked through at most every relay at once)
    assert LIVE <= counts["GET_CONSUMER_RUNNING_INFO"] <= LIVE * masters
    # routes: the topics, and the %RETRY% topics the NameServer lists; never an unlisted one
    assert sorted(routes) == sorted(
        [f"Topic{t}" for t in range(TOPICS)] + [f"%RETRY%Group{i}" for i in range(LIVE)]
    )
    # discovery: configs and the topic list once, who consumes each topic on each broker
    assert counts["GET_ALL_SUBSCRIPTIONGROUP_CONFIG"] == masters
    assert counts["GET_ALL_TOPIC_LIST_FROM_NAMESERVER"] == 1
    assert counts["QUERY_TOPIC_CONSUME_BY_WHO"] == TOPICS * masters
    # offsets complete for live groups: one topic stats per (broker, topic) at most
    assert counts["GET_TOPIC_STATS_INFO"] <= (LIVE * 2) * masters
    per_group = sum(counts.values()) / GROUPS
    assert per_group < 5, counts


def test_a_fleet_capture_makes_few_tasks_per_group() -> None:
    """Tasks cost about what a request does: a group's capture runs in one, its consume stats
    in two (one per broker) and its connection lists in one more (the other in the group's
    own task); the rest (discovery, routes, the live groups' running info) is per topic or
    per live group, not per group."""

    async def main() -> int:
        made = 0
        loop = asyncio.get_running_loop()

        def counting(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
            nonlocal made
            code = getattr(coro, "cr_code", None)
            if code is not None and f"client{os.sep}" in code.co_filename:  # not the fake's
                made += 1
            return asyncio.Task(coro, loop=loop, **kwargs)

        async with FakeCluster(fleet()) as fake:
            loop.set_task_factory(counting)
            try:
                snapshot = await collect(CollectOptions(namesrv=(fake.namesrv_addr,)))
            finally:
                loop.set_task_factory(None)
        assert len(snapshot.groups) == GROUPS and not snapshot.errors
        return made

    made = asyncio.run(main())
    assert made <= 4 * GROUPS + 150, made


def test_a_capture_without_the_topic_list_still_asks_every_route() -> None:
    """Named groups are not discovered: the topic list is not read, so every route is
    asked (an unknown %RETRY% topic answers TOPIC_NOT_EXIST) and the result is the same."""

    async def main() -> tuple[Snapshot, list[str]]:
        async with FakeCluster(fleet()) as fake:
            snapshot = await collect(
                CollectOptions(namesrv=(fake.namesrv_addr,), groups=("Group0", "Group9"))
            )
            routes = [
                r.ext_fields.get("topic", "")
                for r in fake.requests
                if r.code == RequestCode.GET_ROUTEINFO_BY_TOPIC
            ]
            return snapshot, routes

    snapshot, routes = asyncio.run(main())
    assert sorted(snapshot.groups) == ["Group0", "Group9"]
    assert "%RETRY%Group9" in routes  # asked, absent
    assert "%RETRY%Group9" not in snapshot.topics
    assert "%RETRY%Group0" in snapshot.topics


def test_requests_queued_in_one_turn_leave_in_one_write() -> None:
    async def main() -> tuple[int, int]:
        async with FakeCluster(fleet()) as fake, AdminClient(ClientOptions()) as admin:
            await admin.cluster_info(fake.namesrv_addr)  # the connection is open
            conn = admin._connections[fake.namesrv_addr]
            writes = 0
            write = conn._writer.write

            def counting(data: bytes) -> None:
                nonlocal writes
                writes += 1
                write(data)

            setattr(conn._writer, "write", counting)  # noqa: B010  (a counting spy)
            before = len(fake.requests)
            await asyncio.gather(
                *(admin.route(fake.namesrv_addr, f"Topic{t}") for t in range(TOPICS))
            )
            return writes, len(fake.requests) - before

    writes, sent = asyncio.run(main())
    assert sent == TOPICS
    assert writes == 1


def test_a_request_to_a_closed_connection_fails_at_once() -> None:
    """Nothing is written after the connection ended; the request fails, it does not hang."""

    async def main() -> str:
        async with FakeCluster(fleet()) as fake:
            conn = await Connection.open(fake.namesrv_addr, timeout=5)
            await conn.close()
            try:
                await conn.request(RequestCode.GET_BROKER_CLUSTER_INFO, timeout=5)
            except Exception as exc:
                return type(exc).__name__
            return "answered"

    assert asyncio.run(main()) == "ConnectionLost"


PROBE = (
    "import json, sys\n"
    "import rmqlb.cli\n"
    "code = rmqlb.cli.run(sys.argv[1:])\n"
    "sys.stdout.write('\\n' + json.dumps({'code': code, 'modules': sorted(sys.modules)}) + '\\n')\n"
)


@pytest.mark.parametrize("command", [["status"], ["explain", "--all-groups"]])
def test_the_json_of_a_fleet_needs_neither_rich_nor_pydantic_core(command: list[str]) -> None:
    """200 groups' JSON is written by the standard library, straight to stdout."""
    with FakeClusterThread(fleet()) as fake:
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, *command, "-n", fake.namesrv_addr, "-o", "json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    lines = proc.stdout.strip().splitlines()
    assert len(json.loads(lines[0])["groups"]) == GROUPS, proc.stderr
    modules = json.loads(lines[-1])["modules"]
    assert "rmqlb.client.collector" in modules  # the capture ran
    assert [m for m in modules if m.split(".")[0] in ("rich", "pydantic_core")] == []


def _mixed_fleet() -> Snapshot:
    """:func:`fleet`, and groups with offsets on one broker only, on five topics, none."""
    base = fleet()
    raw = json.loads(dumps_snapshot(base))
    solo = [
        {
            "topic": "Topic0",
            "brokerName": "broker-a",
            "queueId": q,
            "brokerOffset": 10,
            "consumerOffset": 3,
        }
        for q in range(4)
    ]
    five = [
        {
            "topic": f"Topic{t}",
            "brokerName": b,
            "queueId": q,
            "brokerOffset": 10,
            "consumerOffset": t,
        }
        for t in range(1, 6)
        for b in BROKERS
        for q in range(4)
    ]
    raw["groups"].update(
        {"SoloGroup": {"offsets": solo}, "FiveGroup": {"offsets": five}, "EmptyGroup": {}}
    )
    return parse_snapshot(raw)


def test_offset_tables_ask_consume_stats_per_topic_and_only_where_there_are_offsets() -> None:
    """With each broker's offset table read once (as the CLI captures every group), consume
    stats are asked per topic for groups of up to four topics there, without a topic for
    more, and not at all of a broker holding no offsets of the group (its queues there are
    completed from the topic's stats); the snapshot is the same as with a request per group
    and broker."""

    async def main(tables: bool) -> tuple[Snapshot, Counter[str]]:
        async with FakeCluster(_mixed_fleet()) as fake:
            options = CollectOptions(namesrv=(fake.namesrv_addr,), offset_tables=tables)
            snapshot = await collect(options)
            counts = Counter(
                f"{r.name} {'topic' if 'topic' in r.ext_fields else 'all'}"
                if r.code == RequestCode.GET_CONSUME_STATS
                else r.name
                for r in fake.requests
            )
            return snapshot, counts

    with_tables, counts = asyncio.run(main(True))
    without, before = asyncio.run(main(False))
    groups = GROUPS + 3
    masters = len(BROKERS)
    assert before["GET_CONSUME_STATS all"] == groups * masters
    assert "GET_ALL_CONSUMER_OFFSET" not in before
    assert counts["GET_ALL_CONSUMER_OFFSET"] == masters
    # one topic per broker for the fleet's groups and SoloGroup on broker-a; nothing asked
    # of broker-b for SoloGroup nor of any broker for EmptyGroup; FiveGroup without a topic
    assert counts["GET_CONSUME_STATS topic"] == GROUPS * masters + 1
    assert counts["GET_CONSUME_STATS all"] == masters
    assert (with_tables.groups, with_tables.topics) == (without.groups, without.topics)
    assert not with_tables.errors
    assert len(with_tables.groups["FiveGroup"].offsets) == 5 * 4 * masters
    # SoloGroup, nobody consuming it, has no offset on broker-b, which holds Topic0 too: its
    # queues there are read (topic stats, then what it committed: nothing), not left out
    solo = with_tables.groups["SoloGroup"].offsets
    assert {o.queue.broker_name for o in solo} == {"broker-a", "broker-b"}
    assert all(o.lag == o.broker_offset for o in solo if o.queue.broker_name == "broker-b")


class _Failing(AdminClient):
    """Fails the offset tables, or the per-topic consume stats of one group."""

    def __init__(self, *, tables: bool = False, group: str = "") -> None:
        super().__init__(ClientOptions())
        self.fail_tables, self.fail_group = tables, group

    async def consumer_offsets(self, broker: str, *, timeout: float | None = None) -> Any:
        if self.fail_tables:
            raise ConnectionLost(f"{broker}: connection lost: reset", broker)
        return await super().consumer_offsets(broker, timeout=timeout)

    async def consume_stats(
        self, broker: str, group: str, *, topic: str | None = None, timeout: float | None = None
    ) -> Any:
        if group == self.fail_group and topic is not None:
            raise ConnectionLost(f"{broker}: connection lost: reset", broker)
        return await super().consume_stats(broker, group, topic=topic, timeout=timeout)


def test_without_offset_tables_each_group_is_asked_without_topic_as_before() -> None:
    async def main() -> tuple[Snapshot, Snapshot, Counter[str]]:
        async with FakeCluster(_mixed_fleet()) as fake:
            plain = await collect(CollectOptions(namesrv=(fake.namesrv_addr,)))
            before = len(fake.requests)
            async with _Failing(tables=True) as admin:
                options = CollectOptions(namesrv=(fake.namesrv_addr,), offset_tables=True)
                failed = await collect(options, admin=admin)
            counts = Counter(
                "topic" in r.ext_fields
                for r in fake.requests[before:]
                if r.code == RequestCode.GET_CONSUME_STATS
            )
            return plain, failed, Counter({str(k): v for k, v in counts.items()})

    plain, failed, counts = asyncio.run(main())
    assert counts == {"False": (GROUPS + 3) * len(BROKERS)}  # every group, no topic
    assert (failed.groups, failed.errors) == (plain.groups, ())  # nothing missing: no error


def test_a_failed_request_per_topic_leaves_that_brokers_offsets_unknown() -> None:
    async def main() -> Snapshot:
        async with FakeCluster(_mixed_fleet()) as fake, _Failing(group="Group7") as admin:
            options = CollectOptions(namesrv=(fake.namesrv_addr,), offset_tables=True)
            return await collect(options, admin=admin)

    snapshot = asyncio.run(main())
    errors = [e for e in snapshot.errors if e.group == "Group7"]
    # one error per broker, as for the one request without a topic; no offsets made up
    assert sorted((e.request, e.target.split(" ")[0]) for e in errors) == [
        ("GET_CONSUME_STATS", b) for b in BROKERS
    ]
    assert all("connection lost" in e.message for e in errors)
    assert snapshot.groups["Group7"].offsets == ()  # its lag unknown (the line marked), not 0
    assert len(snapshot.groups["Group8"].offsets) == 8
    assert [e for e in snapshot.errors if e.group != "Group7"] == []
