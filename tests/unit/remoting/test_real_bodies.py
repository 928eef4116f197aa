"""The answers recorded from a real 4.9.8 cluster decode into what the scenario set up.

``tests/data/real-4.9.8`` (README there) holds every answer rmqlb's collector got from a
real cluster, plus the other read-only requests and the error cases. The expected values
come from the scenario (groups, subscriptions, strategies) and from cross-checks between
answers; process ids, ports and offsets are read from the files, never assumed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from real_recording import REAL, Recorded, Replay, find, load, manifest

from rmqlb.client.admin import AdminClient
from rmqlb.model import MessageModel, MessageQueue, QueueData
from rmqlb.model.strategy import Avg, ConsistentHash
from rmqlb.remoting import bodies, fastjson
from rmqlb.remoting.codes import READ_ONLY_CODES, RequestCode
from rmqlb.remoting.errors import (
    ConsumeMsgTimeout,
    ConsumerNotOnline,
    ResponseError,
    TopicNotExist,
    response_error,
)

RECORDED = load()
# Every body but the broker config's (java.util.Properties text: tested on its own) is JSON.
WITH_BODY = [r for r in RECORDED if r.response.body and r.code != RequestCode.GET_BROKER_CONFIG]
TOPIC = "RecTopic"
BROKERS = ("broker-a", "broker-b")

DECODERS: dict[int, Callable[[Recorded], object]] = {
    105: lambda r: bodies.decode_topic_route_data(r.response.body, r.ext_fields["topic"]),
    106: lambda r: bodies.decode_cluster_info(r.response.body),
    206: lambda r: bodies.decode_topic_list(r.response.body),
    300: lambda r: bodies.decode_group_list(r.response.body),
    203: lambda r: bodies.decode_consumer_connection(r.response.body),
    307: lambda r: bodies.decode_consumer_running_info(r.response.body),
    208: lambda r: bodies.decode_consume_stats(r.response.body),
    201: lambda r: bodies.decode_subscription_group_wrapper(r.response.body),
    202: lambda r: bodies.decode_topic_stats(r.response.body),
    38: lambda r: bodies.decode_consumer_id_list(r.response.body),
}
# Recorded for the fake's sake (tests/unit/fake/test_fake_vs_real.py): rmqlb does not read it.
RECORDER_ONLY = {RequestCode.GET_BROKER_RUNTIME_INFO}


def running(group: str) -> list[bodies.RunningInfo]:
    """The running info of every client of ``group`` that answered."""
    return [
        bodies.decode_consumer_running_info(r.response.body)
        for r in RECORDED
        if r.code == RequestCode.GET_CONSUMER_RUNNING_INFO
        and r.ext_fields["consumerGroup"] == group
        and r.response.code == 0
    ]


def connection(group: str, broker: str = "broker-a") -> bodies.ConsumerConnection:
    rec = find(RECORDED, RequestCode.GET_CONSUMER_CONNECTION_LIST, f"{group}-{broker}")
    return bodies.decode_consumer_connection(rec.response.body)


def stats(group: str, broker: str) -> bodies.ConsumeStats:
    rec = find(RECORDED, RequestCode.GET_CONSUME_STATS, f"{group}-{broker}")
    return bodies.decode_consume_stats(rec.response.body)


# --------------------------------------------------------------------------- the files


def test_manifest_and_files_agree() -> None:
    listed = {e["response"]["bodyFile"] for e in manifest()["answers"]} - {None}
    assert listed == {p.name for p in REAL.glob("*.body")}
    names = [r.name for r in RECORDED]
    assert len(names) == len(set(names))
    assert all(r.code in READ_ONLY_CODES for r in RECORDED)


def test_every_request_code_rmqlb_may_send_was_recorded() -> None:
    # GET_ALL_CONSUMER_OFFSET in the recording of its own (test_real_offsets.py)
    offsets = load(REAL.parent / "real-offsets-4.9.8")
    assert {r.code for r in RECORDED} | {r.code for r in offsets} == set(READ_ONLY_CODES)
    assert RequestCode.GET_ALL_CONSUMER_OFFSET not in {r.code for r in RECORDED}
    collector = {r.code for r in RECORDED if r.by == "collector"}
    assert collector == {106, 105, 201, 203, 208, 307, 202, 14}


def test_every_answer_comes_from_a_4_9_8_server_in_json() -> None:
    for rec in RECORDED:
        resp = rec.response
        assert (resp.version, resp.language, resp.flag) == (409, "JAVA", 1), rec.name
        assert resp.serialize_type.name == "JSON", rec.name


@pytest.mark.parametrize("rec", WITH_BODY, ids=[r.name for r in WITH_BODY])
def test_body_decodes_and_reencodes_byte_for_byte(rec: Recorded) -> None:
    if rec.code not in RECORDER_ONLY:
        DECODERS[rec.code](rec)
    assert fastjson.dumps(fastjson.loads(rec.response.body)) == rec.response.body


def test_the_non_standard_json_is_there() -> None:
    cluster = find(RECORDED, 106, "namesrv").response.body
    assert b'"brokerAddrs":{0:"127.0.0.1:' in cluster  # bare integer keys
    with pytest.raises(json.JSONDecodeError):
        json.loads(cluster)
    for rec in WITH_BODY:
        if rec.code in (208, 202) and b'offsetTable":{}' not in rec.response.body:
            assert b'"offsetTable":{{"brokerName":"broker-' in rec.response.body, rec.name
    # rmqlb's requests carry version 401: the NameServer answers routes in standard JSON.
    route = find(RECORDED, 105, TOPIC).response.body
    assert b'"brokerAddrs":{"0":"127.0.0.1:' in route
    assert json.loads(route)["queueDatas"][0]["readQueueNums"] == 4


# --------------------------------------------------------------------------- the cluster


def test_cluster_and_routes() -> None:
    info = bodies.decode_cluster_info(find(RECORDED, 106, "namesrv").response.body)
    # Java's HashMap order: "broker-b" hashes to a lower slot than "broker-a".
    assert list(info.brokers) == ["broker-b", "broker-a"]
    assert info.clusters == {"DefaultCluster": ("broker-b", "broker-a")}
    for name in BROKERS:
        assert info.brokers[name].cluster == "DefaultCluster"
        assert list(info.brokers[name].addrs) == [0]
        assert info.brokers[name].addrs[0].startswith("127.0.0.1:")
    route = bodies.decode_topic_route_data(find(RECORDED, 105, TOPIC).response.body, TOPIC)
    assert route.route.queue_datas == (
        QueueData("broker-b", 4, 4, 6, 0),
        QueueData("broker-a", 4, 4, 6, 0),
    )
    assert dict(route.brokers) == dict(info.brokers)
    retry = find(RECORDED, 105, "RETRY-RecClusterGroup").response.body
    queues = bodies.decode_topic_route(retry, "%RETRY%RecClusterGroup")[0].queue_datas
    assert [(q.read_queue_nums, q.write_queue_nums) for q in queues] == [(1, 1), (1, 1)]


def test_topic_list_and_groups_of_a_topic() -> None:
    topics = bodies.decode_topic_list(find(RECORDED, 206, "namesrv").response.body)
    groups = manifest()["scenario"]["groups"]
    assert {f"%RETRY%{g}" for g in groups if g != "RecBroadcastGroup"} <= set(topics)
    assert {TOPIC, "TBW102", "SELF_TEST_TOPIC", "DefaultCluster", *BROKERS} <= set(topics)
    consuming = bodies.decode_group_list(find(RECORDED, 300, f"{TOPIC}-broker-a").response.body)
    assert sorted(consuming) == sorted(groups)
    assert (
        bodies.decode_group_list(find(RECORDED, 300, "RecNoSuchTopic-broker-a").response.body) == []
    )


def test_subscription_groups_are_the_scenarios_plus_the_built_in_ones() -> None:
    for broker in BROKERS:
        body = find(RECORDED, 201, broker).response.body
        wrapper = bodies.decode_subscription_group_wrapper(body)
        built_in = {
            "TOOLS_CONSUMER",
            "FILTERSRV_CONSUMER",
            "SELF_TEST_C_GROUP",
            "CID_ONS-HTTP-PROXY",
            "CID_ONSAPI_PULL",
            "CID_ONSAPI_PERMISSION",
            "CID_ONSAPI_OWNER",
        }  # no CID_RMQ_SYS_TRANS before 5.x
        assert set(wrapper.groups) == built_in | set(manifest()["scenario"]["groups"])
        assert all(cfg == bodies.SubscriptionGroupConfig(n) for n, cfg in wrapper.groups.items())
        assert wrapper.data_version is not None and wrapper.data_version.timestamp > 0


# --------------------------------------------------------------------------- the groups


def test_consumer_ids_are_the_connections() -> None:
    for group in manifest()["scenario"]["groups"]:
        ids = fastjson.loads(find(RECORDED, 38, f"{group}-broker-a").response.body)[
            "consumerIdList"
        ]
        for broker in BROKERS:
            conn = connection(group, broker)
            assert sorted(c.client_id for c in conn.connections) == sorted(ids)
            assert {(c.language, c.version) for c in conn.connections} == {("JAVA", 409)}


def test_split_tag_subscriptions_the_broker_keeps_the_latest() -> None:
    infos = running("RecClusterGroup")
    subs = {s.sub_string: s for i in infos for s in i.subscriptions if s.topic == TOPIC}
    assert set(subs) == {"TagA || TagB", "*"}
    table = connection("RecClusterGroup").subscriptions
    # the "*" client subscribed later (higher subVersion): the broker's table says "*" only
    assert subs["*"].sub_version > subs["TagA || TagB"].sub_version
    assert table[TOPIC] == subs["*"]
    tagged = find(RECORDED, 307, "RecClusterGroup-client1").response.body
    assert b'"codeSet":[2598919,2598920]' in tagged and b'"tagsSet":["TagA","TagB"]' in tagged
    # AVG over 8 queues and 2 clients: 4 each, plus one retry queue each
    assert sorted(len(i.assigned or ()) for i in infos) == [5, 5]
    assert {i.strategy for i in infos} == {Avg()}


def test_orderly_clients_report_it_and_hold_locked_queues() -> None:
    (info,) = running("RecOrderlyGroup")
    assert info.consume_orderly is True
    assert len(info.assigned or ()) == 10  # 8 queues of RecTopic, 2 retry queues
    assert info.process_queues is not None
    assert all(pq.locked for pq in info.process_queues)


def test_every_4_9_8_process_queue_is_locked_even_when_not_orderly() -> None:
    infos = running("RecClusterGroup") + running("RecBroadcastGroup")
    assert {i.consume_orderly for i in infos} == {False}
    assert all(pq.locked for i in infos for pq in i.process_queues or ())


def test_broadcasting_keeps_no_offsets_on_the_broker() -> None:
    conn = connection("RecBroadcastGroup")
    assert conn.message_model is MessageModel.BROADCASTING
    assert list(conn.subscriptions) == [TOPIC]  # no retry topic for broadcasting
    (info,) = running("RecBroadcastGroup")
    assert info.message_model is MessageModel.BROADCASTING
    every = {MessageQueue(TOPIC, b, q) for b in BROKERS for q in range(4)}
    assert set(info.assigned or ()) == every
    for broker in BROKERS:
        assert stats("RecBroadcastGroup", broker).offsets == ()
    # Never committed, yet a 4.9 broker answers 0 while the queue starts at offset 0 (the
    # collector asks because consume stats list nothing for the group).
    asked = [
        r for r in RECORDED if r.code == 14 and r.ext_fields["consumerGroup"] == "RecBroadcastGroup"
    ]
    assert {(r.target, r.ext_fields["topic"], int(r.ext_fields["queueId"])) for r in asked} == {
        (q.broker_name, q.topic, q.queue_id) for q in every
    }
    assert {(r.response.code, (r.response.ext_fields or {}).get("offset")) for r in asked} == {
        (0, "0")
    }


def test_consistent_hash_clients_split_the_queues_and_one_is_stuck() -> None:
    infos = running("RecHashGroup")
    assert {i.strategy for i in infos} == {ConsistentHash(10)}
    held = [{q for q in i.assigned or () if q.topic == TOPIC} for i in infos]
    assert not held[0] & held[1] and len(held[0] | held[1]) == 8
    cached = [
        pq.cached_msg_count
        for i in infos
        for pq in i.process_queues or ()
        if pq.queue.topic == TOPIC
    ]
    assert len(cached) == 8 and min(cached) > 0  # a consume thread sleeps on each client
    lag = [
        o.lag for b in BROKERS for o in stats("RecHashGroup", b).offsets if o.queue.topic == TOPIC
    ]
    assert len(lag) == 8 and min(lag) > 0
    assert stats("RecHashGroup", "broker-a").consume_tps > 0  # java Double.toString spelling
    assert (
        b'"consumeTps":0.3333333333333333'
        in find(RECORDED, 208, "RecHashGroup-broker-a").response.body
    )


def test_a_frozen_client_times_out_in_the_broker_relay() -> None:
    rec = find(RECORDED, 307, "RecFrozenGroup-client1")
    assert rec.response.code == 207 and not rec.response.body
    addrs = {c.client_addr for b in BROKERS for c in connection("RecFrozenGroup", b).connections}
    assert rec.response.remark in {
        "consumer <RecFrozenGroup> <127.0.0.1@frozen> Timeout: "
        "org.apache.rocketmq.remoting.exception.RemotingTimeoutException: wait response on the "
        f"channel <{addr}> timeout, 10000(ms), org.apache.rocketmq.remoting.netty."
        "NettyRemotingAbstract.invokeSyncImpl(NettyRemotingAbstract.java:439)"
        for addr in addrs
    }
    assert isinstance(response_error(207, rec.response.remark, 307), ConsumeMsgTimeout)
    assert manifest()["scenario"]["captureErrors"] == [
        "127.0.0.1@frozen: GET_CONSUMER_RUNNING_INFO"
    ]


def test_a_relayed_answer_keeps_the_clients_leftover_remark() -> None:
    answered = [r for r in RECORDED if r.code == 307 and r.response.code == 0]
    assert len(answered) == 6
    assert {r.response.remark for r in answered} == {"not set any response code"}


# --------------------------------------------------------------------------- errors, offsets


@pytest.mark.parametrize(
    ("code", "label", "error", "remark"),
    [
        (
            105,
            "RecNoSuchTopic",
            TopicNotExist,
            "No topic route info in name server for the topic: RecNoSuchTopic\n"
            "See http://rocketmq.apache.org/docs/faq/ for further details.",
        ),
        (
            38,
            "RecNoSuchGroup-broker-a",
            ResponseError,
            "no consumer for this group, RecNoSuchGroup",
        ),
        (
            203,
            "RecNoSuchGroup-broker-a",
            ConsumerNotOnline,
            "the consumer group[RecNoSuchGroup] not online",
        ),
        (
            307,
            "RecNoSuchGroup-client1",
            ResponseError,
            "The Consumer <RecNoSuchGroup> <127.0.0.1@no-such-client> not online",
        ),
        (202, "RecNoSuchTopic-broker-a", TopicNotExist, "topic[RecNoSuchTopic] not exist"),
    ],
)
def test_error_answers(code: int, label: str, error: type[ResponseError], remark: str) -> None:
    resp = find(RECORDED, code, label).response
    assert (resp.remark, resp.body) == (remark, b"")
    assert isinstance(response_error(resp.code, resp.remark, code), error)
    assert (resp.ext_fields == {}) == (code == 38)  # an empty custom header: "extFields":{}


def test_offset_answers_agree_with_the_tables() -> None:
    def offset(code: int, label: str) -> str:
        resp = find(RECORDED, code, label).response
        assert resp.code == 0 and not resp.body
        return str((resp.ext_fields or {})["offset"])

    q0 = MessageQueue(TOPIC, "broker-a", 0)
    table = bodies.decode_topic_stats(find(RECORDED, 202, f"{TOPIC}-broker-a").response.body)
    assert offset(30, f"{TOPIC}-0-broker-a") == str(table[q0].max_offset)
    assert offset(31, f"{TOPIC}-0-broker-a") == str(table[q0].min_offset) == "0"
    committed = {o.queue: o.consumer_offset for o in stats("RecHashGroup", "broker-a").offsets}
    assert offset(14, f"RecHashGroup-{TOPIC}-0-broker-a") == str(committed[q0])
    assert offset(14, f"RecNoSuchGroup-{TOPIC}-0-broker-a") == "0"


def test_runtime_info() -> None:
    rec = find(RECORDED, 28, "broker-a")
    table = fastjson.loads(rec.response.body)["table"]
    assert (table["brokerVersionDesc"], table["brokerVersion"]) == ("V4_9_8", "409")
    assert int(table["bootTimestamp"]) > 0
    assert "commitLogDiskRatio_${RMQ_DIR}/store/broker-a/commitlog" in table
    entries = [e for e in manifest()["answers"] if e["rewritten"]]
    assert [(e["label"], e["request"]["code"]) for e in entries] == [
        ("broker-a", 28),
        ("broker-a", 26),
    ]


def test_broker_config_and_the_5x_codes_on_4_9_8() -> None:
    """A 4.9.8 broker answers its config (none of the 5.x broker-side-assignment keys) and
    REQUEST_CODE_NOT_SUPPORTED to GET_ALL_MESSAGE_REQUEST_MODE and QUERY_ASSIGNMENT."""
    config = find(RECORDED, RequestCode.GET_BROKER_CONFIG, "broker-a").response
    assert b"brokerName=broker-a\n" in config.body
    assert b"${RMQ_DIR}" in config.body
    assert bodies.decode_broker_config(config.body) == {}
    for rec in RECORDED:
        if rec.code in (RequestCode.GET_ALL_MESSAGE_REQUEST_MODE, RequestCode.QUERY_ASSIGNMENT):
            assert rec.response.code == 3, rec.name
            assert rec.response.remark == f" request type {rec.code} not supported"


# --------------------------------------------------------------------------- typed calls


def test_typed_admin_calls_read_the_recorded_answers() -> None:
    q0 = MessageQueue(TOPIC, "broker-a", 0)

    async def run() -> dict[str, Any]:
        async with Replay(RECORDED) as replay, AdminClient() as admin:
            broker = replay.addrs["broker-a"]
            got = {
                "topics": await admin.topic_list(replay.namesrv_addr),
                "committed": await admin.committed_offset(broker, "RecHashGroup", q0),
                "stats": await admin.topic_stats(broker, TOPIC),
            }
            assert replay.unanswered == []
            return got

    got = asyncio.run(run())
    assert TOPIC in got["topics"]
    assert got["stats"][q0].max_offset > got["committed"] > got["stats"][q0].min_offset == 0


def test_a_real_brokers_no_consumer_answer_is_an_empty_list() -> None:
    """GET_CONSUMER_LIST_BY_GROUP of a group the broker has no client of: code 1, "no
    consumer for this group, G", read as the broker's (empty) list, not as a failure."""

    async def run() -> tuple[list[str], list[str]]:
        async with Replay(RECORDED) as replay, AdminClient() as admin:
            broker = replay.addrs["broker-a"]
            got = (
                await admin.consumer_ids(broker, "RecNoSuchGroup"),
                await admin.consumer_ids(broker, "RecClusterGroup"),
            )
            assert replay.unanswered == []
            return got

    none, some = asyncio.run(run())
    assert none == []
    assert len(some) == 2
