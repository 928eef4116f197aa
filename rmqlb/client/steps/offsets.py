"""Offsets and lag: GET_CONSUME_STATS per master, completed with GET_TOPIC_STATS_INFO and
QUERY_CONSUMER_OFFSET (a queue consume stats leave out, or report at 0 while it holds
messages).

Capturing many groups, each master's offset table is read once (GET_ALL_CONSUMER_OFFSET):
a broker asked for a group's consume stats without a topic scans that whole table to find
the group's topics (``whichTopicByConsumer``), so a capture of every group costs the brokers
time quadratic in their groups. Knowing the topics, rmqlb asks per topic instead, and asks
nothing of a broker that holds no offsets of the group (it would answer with empty stats).

Not asked: GET_BROKER_CONSUME_STATS (317), every group's stats in one answer. The broker
builds it with that same scan of its offset table for every group it has a config of: on a
4.9.8 broker of 1,000 groups one such request took it 0.40-0.57 s, against 37-61 ms for the
1,000 per-topic requests sent together, and ``status`` was slower with it. It also lists a
topic's write queues where GET_CONSUME_STATS lists its read queues.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.client.errors import Failed
from rmqlb.model import DeadLetters, MessageQueue, QueueOffset
from rmqlb.model.snapshot import NEVER_COMMITTED, RETRY_PREFIX, V5_0_0, V5_1_0, pop_retry_topic
from rmqlb.remoting.bodies import ConsumeStats, QueueStats, merge_consume_stats
from rmqlb.remoting.errors import QueryNotFound, TopicNotExist

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector


#: Topics of a group on one broker asked one by one at most; a group with more is asked
#: once without a topic: each request costs rmqlb about what a scan of a 1,000-group offset
#: table costs the broker.
MAX_TOPIC_REQUESTS = 4


class Offsets:
    """A group's per-queue offsets; each broker's topic min/max asked once per capture."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.topic_stats: dict[tuple[str, str], asyncio.Task[dict[MessageQueue, QueueStats]]] = {}
        #: master address -> its groups' topics with offsets (``None``: not read)
        self.tables: dict[str, asyncio.Task[dict[str, tuple[str, ...]] | None]] = {}

    def read_tables(self, addrs: Sequence[str]) -> None:
        """Start reading the offset table of each master (once per capture)."""
        for addr in addrs:
            if addr not in self.tables:
                self.tables[addr] = asyncio.ensure_future(self._table(addr))

    async def _table(self, addr: str) -> dict[str, tuple[str, ...]] | None:
        """Each group's topics with offsets on ``addr``; ``None`` when the table could not
        be read: the group's consume stats are then asked without a topic, as without it."""
        c = self.collector
        try:
            found = await c.request(
                c.label(addr),
                "GET_ALL_CONSUMER_OFFSET",
                partial(c.admin.consumer_offsets, addr),
                record=False,
            )
        except Failed:
            return None
        return found.topics_by_group() if found is not None else None

    async def consume_stats(self, addr: str, group: str) -> ConsumeStats | None:
        """One master's consume stats for ``group``: its per-queue offsets and the rate
        the group fetches from it (``None`` when it could not be read).

        With the master's offset table read: nothing asked when it holds no offsets of the
        group (the answer would be empty), one request per topic for up to
        :data:`MAX_TOPIC_REQUESTS` topics (the same rows and rate as the answer without a
        topic, see :func:`~rmqlb.remoting.bodies.merge_consume_stats`), else one without a
        topic. A failure is one error, as for the single request.
        """
        c = self.collector
        table = self.tables.get(addr)
        topics = await table if table is not None else None
        if topics is not None:
            mine = topics.get(group, ())
            if not mine:
                return ConsumeStats(())
            if len(mine) <= MAX_TOPIC_REQUESTS:
                ask = (  # one topic (most groups): the admin call itself, one coroutine less
                    partial(c.admin.consume_stats, addr, group, topic=mine[0])
                    if len(mine) == 1
                    else partial(self._per_topic, addr, group, mine)
                )
                return await c.try_request(
                    c.label(addr), "GET_CONSUME_STATS", ask, broker=True, group=group
                )
        return await c.try_request(
            c.label(addr),
            "GET_CONSUME_STATS",
            partial(c.admin.consume_stats, addr, group),
            broker=True,
            group=group,
        )

    async def _per_topic(
        self, addr: str, group: str, topics: Sequence[str], *, timeout: float
    ) -> ConsumeStats:
        admin = self.collector.admin
        parts = await asyncio.gather(
            *(admin.consume_stats(addr, group, topic=t, timeout=timeout) for t in topics)
        )
        return merge_consume_stats(parts)

    async def complete(
        self,
        group: str,
        topics: Sequence[str],
        stats: Sequence[QueueOffset],
        *,
        ask_committed: bool = True,
    ) -> list[QueueOffset]:
        """Offsets of every queue of the group's topics, not only those consume stats list.

        GET_CONSUME_STATS leaves out whole topics (one absent from the broker's current
        subscription table for the group, e.g. with split subscriptions) and maps "never
        committed" to 0. So each topic's min/max offsets come from GET_TOPIC_STATS_INFO (ids
        ``0 .. writeQueueNums-1``: queues written but never read too), and a queue missing
        from consume stats, or listed there at 0 while it holds messages, is asked with
        QUERY_CONSUMER_OFFSET: code 22 means never committed. Not asked when
        ``ask_committed`` is false (a BROADCASTING group, whose clients keep their offsets:
        its queues are listed never committed, with the broker's min/max offsets).
        """
        if not topics:  # a group no client subscribes anything: what consume stats say
            return list(stats)
        known = {o.queue: o for o in stats}
        wanted = await self._hosts(topics)
        tables = await asyncio.gather(*(self._topic_stats(a, t) for a, t in wanted))
        ranges: dict[MessageQueue, tuple[str, QueueStats]] = {}
        for (addr, _), table in zip(wanted, tables, strict=True):
            for mq, queue_stats in table.items():
                ranges[mq] = (addr, queue_stats)
        ask = [
            (addr, mq)
            for mq, (addr, qs) in ranges.items()
            if ask_committed
            and (
                mq not in known
                or (known[mq].consumer_offset == 0 and qs.max_offset > qs.min_offset)
            )
        ]
        answers = await asyncio.gather(*(self._committed(addr, group, mq) for addr, mq in ask))
        committed = {mq: v for (_, mq), v in zip(ask, answers, strict=True) if v is not None}
        out = [o for o in stats if o.queue not in ranges]
        for mq, (_, qs) in ranges.items():
            old = known.get(mq)
            out.append(
                QueueOffset(
                    mq,
                    broker_offset=qs.max_offset,
                    consumer_offset=committed.get(
                        mq, old.consumer_offset if old is not None else NEVER_COMMITTED
                    ),
                    last_timestamp=old.last_timestamp if old is not None else 0,
                    min_offset=qs.min_offset,
                )
            )
        return out

    async def pop_retries(
        self, group: str, topics: Sequence[str], offsets: Sequence[QueueOffset]
    ) -> list[QueueOffset]:
        """Offsets of the group's POP retry topics (``%RETRY%<group>_<topic>``) of ``topics``
        (those its clients pop) that ``offsets`` lack: a 5.0 broker's consume stats list no
        topic the group's online clients do not subscribe, and no client subscribes its POP
        retry topic (5.1 lists it). Asked of each 5.0 master hosting one of ``topics``
        (min/max offsets, then each queue's committed offset); nothing where that retry topic
        does not exist: nothing came back there yet."""
        c = self.collector
        have = {o.queue.topic for o in offsets}
        hosts = await self._hosts([t for t in topics if not t.startswith(RETRY_PREFIX)])
        wanted = [
            (addr, retry)
            for addr, topic in hosts
            if (retry := pop_retry_topic(topic, group)) not in have
            and V5_0_0 <= c.admin.server_versions.get(addr, 0) < V5_1_0
        ]
        tables = await asyncio.gather(*(self._topic_stats(a, t) for a, t in wanted))
        ranges = [
            (addr, mq, qs)
            for (addr, _), table in zip(wanted, tables, strict=True)
            for mq, qs in table.items()
        ]
        answers = await asyncio.gather(
            *(self._committed(addr, group, mq) for addr, mq, _ in ranges)
        )
        # The last consumed message's store time is known where the group consumed every
        # message there: the newest one's (the broker's lastUpdateTimestamp).
        return [
            QueueOffset(
                mq,
                broker_offset=qs.max_offset,
                consumer_offset=NEVER_COMMITTED if committed is None else committed,
                last_timestamp=qs.last_update_timestamp
                if committed == qs.max_offset > qs.min_offset
                else 0,
                min_offset=qs.min_offset,
            )
            for (_, mq, qs), committed in zip(ranges, answers, strict=True)
        ]

    async def dead_letters(self, topic: str) -> dict[str, DeadLetters]:
        """Each broker's part of the DLQ ``topic``, its queues summed: none where the
        topic has no queue, or where its stats could not be read (a failure recorded)."""
        wanted = await self._hosts([topic])
        tables = await asyncio.gather(*(self._topic_stats(a, t) for a, t in wanted))
        out: dict[str, DeadLetters] = {}
        for table in tables:
            for mq, qs in table.items():
                seen = out.get(mq.broker_name, DeadLetters(0, 0))
                out[mq.broker_name] = DeadLetters(
                    seen.messages + max(0, qs.max_offset - qs.min_offset),
                    seen.max_offset + qs.max_offset,
                    max(seen.last_timestamp, qs.last_update_timestamp),
                )
        return out

    async def uncovered(self, stats: Sequence[QueueOffset], brokers: Sequence[str]) -> list[str]:
        """The topics of ``stats`` (a group's consume stats) whose routes have queues those
        stats leave out: a broker where the group has no offset of the topic (added to the
        topic, or never read: a write-only one), or queue ids up to ``writeQueueNums`` where
        consume stats list ``readQueueNums``. Messages may wait there; for a group nobody
        consumes, only :meth:`complete` over these topics says how many.

        Only the routes of topics some of ``brokers`` (the cluster's masters) has no offset
        of are read: a broker lists every read queue of a topic the group committed there,
        so a topic with offsets on every master is complete but for ids past its
        ``readQueueNums``, whose messages no consumer can be given anyway (most groups of a
        big cluster: no request at all)."""
        rows: dict[tuple[str, str], int] = {}
        on: dict[str, set[str]] = {}
        for o in stats:
            mq = o.queue
            rows[mq.topic, mq.broker_name] = rows.get((mq.topic, mq.broker_name), 0) + 1
            on.setdefault(mq.topic, set()).add(mq.broker_name)
        masters = set(brokers)
        topics = [topic for topic, where in on.items() if not masters <= where]
        if not topics:
            return []
        routes = await asyncio.gather(*(self.collector.routes.get(t) for t in topics))
        return [
            route.topic
            for route in routes
            if route is not None
            and any(
                rows.get((route.topic, qd.broker_name), 0)
                < max(qd.read_queue_nums, qd.write_queue_nums)
                for qd in route.queue_datas
            )
        ]

    async def prefetch(self, topics: Sequence[str]) -> None:
        """Read the min/max offsets of ``topics`` on the brokers hosting them, as soon as
        their routes are known, for a later :meth:`complete` that wants them."""
        wanted = await self._hosts(topics)
        await asyncio.gather(*(self._topic_stats(a, t) for a, t in wanted))

    async def _hosts(self, topics: Sequence[str]) -> list[tuple[str, str]]:
        """(master address, topic) for every broker hosting each of ``topics``, in order."""
        c = self.collector
        routes = await asyncio.gather(*(c.routes.get(t) for t in topics))
        wanted: list[tuple[str, str]] = []
        for route in routes:
            if route is None:
                continue
            for broker in dict.fromkeys(qd.broker_name for qd in route.queue_datas):
                info = c.brokers.get(broker)
                addr = info.master_addr() if info is not None else None
                if addr:
                    wanted.append((addr, route.topic))
        return wanted

    def _topic_stats(self, addr: str, topic: str) -> asyncio.Task[dict[MessageQueue, QueueStats]]:
        """One broker's min/max offsets of ``topic``, asked once per capture."""
        key = (addr, topic)
        task = self.topic_stats.get(key)
        if task is None:
            c = self.collector

            async def ask() -> dict[MessageQueue, QueueStats]:
                found = await c.try_request(
                    c.label(addr),
                    "GET_TOPIC_STATS_INFO",
                    partial(c.admin.topic_stats, addr, topic),
                    quiet=(TopicNotExist,),
                    broker=True,
                    topic=topic,
                )
                return found or {}

            task = self.topic_stats[key] = asyncio.ensure_future(ask())
        return task

    async def _committed(self, addr: str, group: str, mq: MessageQueue) -> int | None:
        """The committed offset, :data:`NEVER_COMMITTED`, or ``None`` when the ask failed."""
        c = self.collector
        label = c.label(addr)
        try:
            return await c.request(
                label,
                "QUERY_CONSUMER_OFFSET",
                partial(c.admin.committed_offset, addr, group, mq),
                record=False,
                broker=True,
            )
        except Failed as failed:
            if isinstance(failed.error, QueryNotFound):
                return NEVER_COMMITTED  # the answer, not a failure
            c.error(
                label, "QUERY_CONSUMER_OFFSET", f"{mq.label()}: {failed.error}", group, mq.topic
            )
            return None
