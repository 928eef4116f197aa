"""Offset tables and consume stats per topic, as real 4.9.8, 5.0.0 and 5.1.4 brokers answer.

``tests/data/real-offsets-<version>`` was recorded by ``tests/record_real.py --offset-tables``
(the capture the CLI makes of every group: GET_ALL_CONSUMER_OFFSET once per broker, then
GET_CONSUME_STATS per topic) on the scenario of ``tests/data/real-offsets-4.9.8/README.md``;
the recorder also asked broker-a each group's consume stats without a topic. So the real
brokers show that the topics their offset table gives a group are the topics they report
without a topic, that the answers per topic add up to the answer without one, and that the
fake answers both requests like them.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from real_recording import NAMESRV, Recorded, Replay, broker_addrs, find, load, swap_addrs

from rmqlb.client.admin import ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.client.connection import Connection
from rmqlb.fake import FakeCluster
from rmqlb.model import Snapshot
from rmqlb.remoting import bodies, fastjson
from rmqlb.remoting.codes import READ_ONLY_CODES, RequestCode
from rmqlb.remoting.javahash import concurrent_map, java_string_hash

DATA = Path(__file__).resolve().parents[2] / "data"
VERSIONS = ("4.9.8", "5.0.0", "5.1.4")
RECORDED = {v: load(DATA / f"real-offsets-{v}") for v in VERSIONS}
TABLE = RequestCode.GET_ALL_CONSUMER_OFFSET
STATS = RequestCode.GET_CONSUME_STATS
#: the scenario's groups and, on broker-a, the topics they committed offsets of
TOPICS_ON_A = {
    "RecLiveGroup": {"RecTopic", "%RETRY%RecLiveGroup"},
    "RecTwoGroup": {"RecTopic", "RecOther", "%RETRY%RecTwoGroup"},
    "RecThreeGroup": {"RecTopic", "RecOther", "RecThird", "%RETRY%RecThreeGroup"},
    "RecSoloGroup": {"RecSolo", "%RETRY%RecSoloGroup"},
}


def _tables(recorded: list[Recorded]) -> dict[str, bodies.ConsumerOffsets]:
    return {
        r.target: bodies.decode_consumer_offsets(r.response.body)
        for r in recorded
        if r.code == TABLE
    }


def _capture(recorded: list[Recorded]) -> tuple[Snapshot, list[str]]:
    async def run() -> tuple[Snapshot, list[str]]:
        async with Replay(recorded) as replay:
            options = CollectOptions(
                namesrv=(replay.namesrv_addr,), client=ClientOptions(5.0), offset_tables=True
            )
            return await collect(options), replay.unanswered

    return asyncio.run(run())


@pytest.mark.parametrize("version", VERSIONS)
def test_the_collector_reads_each_table_once_and_asks_per_topic(version: str) -> None:
    recorded = RECORDED[version]
    assert {r.code for r in recorded} <= READ_ONLY_CODES
    by_collector = [r for r in recorded if r.by == "collector"]
    assert sorted(r.target for r in by_collector if r.code == TABLE) == ["broker-a", "broker-b"]
    asked = [r.ext_fields for r in by_collector if r.code == STATS]
    assert asked and all("topic" in ext for ext in asked)  # at most four topics each here
    # nothing asked of a group without offsets on a broker: the config-only group anywhere,
    # the topic that lives on broker-a only on broker-b
    assert not any(ext["consumerGroup"] == "RecConfigOnlyGroup" for ext in asked)
    assert not any(
        r.code == STATS and r.ext_fields.get("topic") == "RecSolo" and r.target == "broker-b"
        for r in by_collector
    )
    snapshot, unanswered = _capture(recorded)
    assert unanswered == []
    assert set(TOPICS_ON_A) | {"RecConfigOnlyGroup"} <= set(snapshot.groups)
    assert not snapshot.errors


@pytest.mark.parametrize("version", VERSIONS)
def test_the_table_gives_the_topics_a_request_without_topic_reports(version: str) -> None:
    recorded = RECORDED[version]
    table = _tables(recorded)["broker-a"]
    groups = table.topics_by_group()
    assert {g: set(t) for g, t in groups.items()} == TOPICS_ON_A
    for group in [*TOPICS_ON_A, "RecConfigOnlyGroup"]:
        whole = bodies.decode_consume_stats(
            find(recorded, STATS, f"{group}-broker-a").response.body
        )
        assert {o.queue.topic for o in whole.offsets} == set(groups.get(group, ()))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_answers_per_topic_add_up_to_the_answer_without_topic(version: str) -> None:
    recorded = RECORDED[version]
    groups = _tables(recorded)["broker-a"].topics_by_group()
    for group, topics in groups.items():
        parts = [
            bodies.decode_consume_stats(
                find(recorded, STATS, f"{group}-{_slug(t)}-broker-a").response.body
            )
            for t in topics
        ]
        whole = bodies.decode_consume_stats(
            find(recorded, STATS, f"{group}-broker-a").response.body
        )
        assert bodies.merge_consume_stats(parts) == whole, group


@pytest.mark.parametrize("version", VERSIONS)
def test_the_plain_reader_and_the_general_parser_agree(version: str) -> None:
    for r in RECORDED[version]:
        if r.code == TABLE:
            body = r.response.body
            assert bodies.decode_consumer_offsets(body) == bodies.decode_consumer_offsets(
                body + b"\n"  # not the plain form: the general parser
            )


@pytest.mark.parametrize("version", VERSIONS)
def test_the_fake_answers_the_table_and_per_topic_stats_like_the_real_brokers(
    version: str,
) -> None:
    recorded = RECORDED[version]
    snapshot, _ = _capture(recorded)
    asked = [
        r for r in recorded if r.code == TABLE or (r.code == STATS and "topic" in r.ext_fields)
    ]

    async def serve() -> dict[str, bytes]:
        real = broker_addrs(recorded)
        dialect = 4 if version.startswith("4") else 5
        out = {}
        async with FakeCluster(snapshot, dialect=dialect) as fake:
            back = {fake.broker_addrs[name]: addr for name, addr in real.items()}
            for r in asked:
                assert r.target != NAMESRV
                conn = await Connection.open(fake.broker_addrs[r.target], timeout=5)
                resp = await conn.request(r.code, dict(r.ext_fields), timeout=5)
                await conn.close()
                assert resp.code == r.response.code == 0
                out[r.name] = swap_addrs(resp.body, back)
        return out

    answers = asyncio.run(serve())
    for r in asked:
        real, fake = r.response.body, answers[r.name]
        if r.code == STATS:  # the snapshot keeps one rate per broker, not one per topic
            if version == "5.0.0":  # the fake's 5.x dialect writes 5.1's pullOffset
                fake = re.sub(rb',"pullOffset":-?[0-9]+', b"", fake)
            assert _tps(fake) == _tps(real), r.name
            continue
        # The same table, keys in the same hash order; keys sharing a slot of the table
        # come in the order they were first committed, which no snapshot keeps.
        real_doc, fake_doc = fastjson.loads(real), fastjson.loads(fake)
        assert list(fake_doc) == list(real_doc)
        assert fake_doc["offsetTable"] == real_doc["offsetTable"]
        assert [_slot(k) for k in fake_doc["offsetTable"]] == [
            _slot(k) for k in real_doc["offsetTable"]
        ]
        if "groupTopicMap" in real_doc:  # 5.x
            assert list(fake_doc["groupTopicMap"]) == list(real_doc["groupTopicMap"])
            assert {g: set(t) for g, t in fake_doc["groupTopicMap"].items()} == {
                g: set(t) for g, t in real_doc["groupTopicMap"].items()
            }
            assert set(fake_doc["dataVersion"]) == set(real_doc["dataVersion"])


def _slot(key: str) -> int:
    """The slot of ``key`` in the broker's offset table (a ConcurrentHashMap(512))."""
    h = java_string_hash(key) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (concurrent_map(512).size - 1)


def _slug(topic: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", topic).strip("-")


def _tps(body: bytes) -> bytes:
    return re.sub(rb'^\{"consumeTps":[^,]*,', b'{"consumeTps":_,', body)
