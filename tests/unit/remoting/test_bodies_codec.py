"""Body encoders produce Java's shapes and quirks; decoders give back the same model."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlb.errors import ProtocolError
from rmqlb.model import (
    BrokerInfo,
    Consumer,
    Group,
    MessageModel,
    MessageQueue,
    QueueData,
    QueueOffset,
    Subscription,
    TopicRoute,
)
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import sort_queues
from rmqlb.model.strategy import Avg, AvgByCircle, ConsistentHash, Unknown
from rmqlb.remoting import bodies, fastjson
from rmqlb.remoting.bodies import Dialect
from rmqlb.remoting.errors import BodyError, FastJsonError
from rmqlb.remoting.javahash import concurrent_map, java_hash_set_order, java_string_hash

# The protocol notes' [generated] 5.3.3 examples (real fastjson output, made-up values).
DOC_CONNECTION = (
    b'{"connectionSet":[{"clientAddr":"10.0.0.9:54321","clientId":"10.0.0.9@12345#1234567890",'
    b'"language":"JAVA","version":479}],"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",'
    b'"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","subscriptionTable":{"TopicA":'
    b'{"classFilterMode":false,"codeSet":[2598919,2598920],"expressionType":"TAG","subString":'
    b'"TagA || TagB","subVersion":1700000000000,"tagsSet":["TagA","TagB"],"topic":"TopicA"},'
    b'"%RETRY%GroupA":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*",'
    b'"subVersion":1700000000001,"tagsSet":[],"topic":"%RETRY%GroupA"}}}'
)

PQ = (
    '"cachedMsgCount":0,"cachedMsgMaxOffset":0,"cachedMsgMinOffset":0,"cachedMsgSizeInMiB":0,'
    '"commitOffset":{commit},"droped":false,"lastConsumeTimestamp":0,"lastLockTimestamp":0,'
    '"lastPullTimestamp":0,"locked":{locked},"transactionMsgCount":0,"transactionMsgMaxOffset":0,'
    '"transactionMsgMinOffset":0,"tryUnlockTimes":0'
)
DOC_RUNNING_INFO = (
    '{"mqPopTable":{{"brokerName":"broker-a","queueId":-1,"topic":"TopicB"}:{"droped":false,'
    '"lastPopTimestamp":1700000000002,"waitAckCount":3}},"mqTable":{{"brokerName":"broker-a",'
    '"queueId":0,"topic":"TopicA"}:{' + PQ.format(commit=0, locked="false") + '},{"brokerName":'
    '"broker-b","queueId":1,"topic":"TopicA"}:{' + PQ.format(commit=42, locked="true") + "}},"
    '"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","PROP_CONSUMER_START_TIMESTAMP":'
    '"1700000000000","PROP_CONSUMEORDERLY":"false","PROP_CLIENT_VERSION":"V5_3_3",'
    '"allocateMessageQueueStrategy":"org.apache.rocketmq.client.consumer.rebalance.'
    'AllocateMessageQueueAveragely@6d06d69c","consumerGroup":"GroupA"},"statusTable":{"TopicA":'
    '{"consumeFailedMsgs":0,"consumeFailedTPS":0.0,"consumeOKTPS":100.0,"consumeRT":0.0,'
    '"pullRT":1.5,"pullTPS":0.0}},"subscriptionSet":[{"classFilterMode":false,"codeSet":[],'
    '"expressionType":"TAG","subString":"*","subVersion":1700000000001,"tagsSet":[],"topic":'
    '"%RETRY%GroupA"},{"classFilterMode":false,"codeSet":[2598919,2598920],"expressionType":"TAG",'
    '"subString":"TagA || TagB","subVersion":1700000000000,"tagsSet":["TagA","TagB"],"topic":'
    '"TopicA"}],"userConsumerInfo":{}}'
).encode()

DOC_CONSUME_STATS_5 = (
    b'{"consumeTps":0.0,"offsetTable":{{"brokerName":"broker-a","queueId":1,"topic":"TopicA"}:'
    b'{"brokerOffset":0,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0},{"brokerName":'
    b'"broker-a","queueId":0,"topic":"TopicA"}:{"brokerOffset":100,"consumerOffset":90,'
    b'"lastTimestamp":1700000000000,"pullOffset":90}}}'
)


def _plain_names(texts: Iterable[str]) -> bool:
    """Whether every name is written plain (printable ASCII, no quote or backslash): the
    form the regular-expression readers must read."""
    return all(t.isascii() and t.isprintable() and '"' not in t and "\\" not in t for t in texts)


def test_consumer_connection_decodes_and_reencodes_exactly() -> None:
    conn = bodies.decode_consumer_connection(DOC_CONNECTION)
    assert conn.connections == (
        bodies.Connection("10.0.0.9@12345#1234567890", "10.0.0.9:54321", "JAVA", 479),
    )
    assert conn.message_model is MessageModel.CLUSTERING
    assert conn.consume_type == "CONSUME_PASSIVELY"
    assert conn.consume_from_where == "CONSUME_FROM_LAST_OFFSET"
    assert conn.subscriptions["TopicA"] == Subscription(
        "TopicA", "TAG", "TagA || TagB", 1700000000000
    )
    group = Group(
        "GroupA",
        consume_type=conn.consume_type,
        consumers=tuple(
            Consumer(
                c.client_id,
                tuple(conn.subscriptions.values()),
                c.client_addr,
                c.language,
                c.version,
            )
            for c in conn.connections
        ),
    )
    assert bodies.encode_consumer_connection(group, Dialect.V5) == DOC_CONNECTION


def test_running_info_decodes_into_the_model() -> None:
    info = bodies.decode_consumer_running_info(DOC_RUNNING_INFO)
    assert info.assigned == (
        MessageQueue("TopicA", "broker-a", 0),
        MessageQueue("TopicA", "broker-b", 1),
    )
    assert info.pop_assigned == (MessageQueue("TopicB", "broker-a", -1),)
    assert info.strategy == Avg()
    assert (info.consume_orderly, info.consume_type, info.start_time) == (
        False,
        "CONSUME_PASSIVELY",
        1700000000000,
    )
    assert info.client_version == "V5_3_3" and not info.has_jstack
    assert [s.topic for s in info.subscriptions] == ["%RETRY%GroupA", "TopicA"]
    conn = bodies.Connection("cid", "10.0.0.9:1", "JAVA", 479)
    consumer = bodies.decode_consumer_running_info(DOC_RUNNING_INFO).to_consumer("cid", conn)
    assert consumer.client_id == "cid" and consumer.version == 479
    assert consumer.assigned == info.assigned and consumer.strategy == Avg()


def test_running_info_reencodes_the_doc_sample_structure() -> None:
    consumer = bodies.decode_consumer_running_info(DOC_RUNNING_INFO).to_consumer("cid")
    offsets = (QueueOffset(MessageQueue("TopicA", "broker-b", 1), 50, 42),)
    out = bodies.encode_consumer_running_info(
        consumer, Group("GroupA", offsets=offsets), Dialect.V5
    )
    # Same bytes as the Java sample except the POP statistics the model does not carry and
    # a status entry for every subscribed topic.
    expected = DOC_RUNNING_INFO.replace(
        b'"lastPopTimestamp":1700000000002,"waitAckCount":3',
        b'"lastPopTimestamp":0,"waitAckCount":0',
    ).replace(
        b'"statusTable":{"TopicA"',
        b'"statusTable":{"%RETRY%GroupA":{"consumeFailedMsgs":0,"consumeFailedTPS":0.0,"consumeOKTPS":0.0,"consumeRT":0.0,"pullRT":0.0,"pullTPS":0.0},"TopicA"',
    )
    assert out == expected
    v4 = bodies.encode_consumer_running_info(consumer, None, Dialect.V4)
    assert b"mqPopTable" not in v4 and b"userConsumerInfo" not in v4
    assert b'{"mqTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicA"}:{' in v4


def test_running_info_unknown_states() -> None:
    jstack_only = (
        b'{"jstack":"\\"main\\" ...","mqTable":{},"properties":{},"statusTable":{},'
        b'"subscriptionSet":[]}'
    )
    info = bodies.decode_consumer_running_info(jstack_only)
    assert info.assigned is None and info.has_jstack and info.strategy is None
    idle = b'{"mqTable":{},"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"}}'
    assert bodies.decode_consumer_running_info(idle).assigned == ()
    assert bodies.decode_consumer_running_info(b"{}").assigned is None
    minimal = b'{"mqTable":{},"properties":{},"subscriptionSet":[{"topic":"T"}]}'
    assert bodies.decode_consumer_running_info(minimal).assigned == ()


def test_running_info_quirks_of_other_clients() -> None:
    body = (
        b'{"mqTable":{{"topic":"T","brokerName":"b","queueId":2}:{"dropped":false},'
        b'{"topic":"T","brokerName":"b","queueId":1}:{"droped":true}},'
        b'"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","threads":20,'
        b'"allocateMessageQueueStrategy":"com.acme.MyStrategy@1f","secretKey":"x","AccessKey":"y"}}'
    )
    info = bodies.decode_consumer_running_info(body)
    assert info.assigned == (MessageQueue("T", "b", 2),)  # dropped queue left out
    assert info.strategy == Unknown("MyStrategy")
    assert info.properties == {
        "PROP_CONSUME_TYPE": "CONSUME_PASSIVELY",
        "threads": "20",
        "allocateMessageQueueStrategy": "com.acme.MyStrategy@1f",
    }


def test_consume_stats_5x_shape_and_order() -> None:
    stats = bodies.decode_consume_stats(DOC_CONSUME_STATS_5)
    assert [o.queue.queue_id for o in stats.offsets] == [0, 1]  # Java order
    assert stats.offsets[0] == QueueOffset(
        MessageQueue("TopicA", "broker-a", 0), 100, 90, 1700000000000
    )
    hash_order = (stats.offsets[1], stats.offsets[0])
    assert bodies.encode_consume_stats(hash_order, Dialect.V5) == DOC_CONSUME_STATS_5
    v4 = bodies.encode_consume_stats(hash_order, Dialect.V4)
    assert v4 == DOC_CONSUME_STATS_5.replace(b',"pullOffset":0', b"").replace(
        b',"pullOffset":90', b""
    )
    assert bodies.decode_consume_stats(b'{"consumeTps":null,"offsetTable":{}}').consume_tps == 0.0


def test_route_encoding_switch() -> None:
    assert bodies.route_wants_standard_json(401, None)
    assert not bodies.route_wants_standard_json(400, {"acceptStandardJsonOnly": "false"})
    assert bodies.route_wants_standard_json(373, {"acceptStandardJsonOnly": "true"})
    route = TopicRoute("T", (QueueData("b", 2, 2, 6, 0), QueueData("a", 1, 1, 4, 0)))
    brokers = {"a": BrokerInfo("a", "C", {1: "h2:1", 0: "h1:1"})}
    plain = bodies.encode_topic_route(route, brokers, standard=False, dialect=Dialect.V5)
    assert b'"brokerAddrs":{0:"h1:1",1:"h2:1"}' in plain
    assert b'{"brokerAddrs":{},"brokerName":"b","cluster":"DefaultCluster"' in plain
    std = bodies.encode_topic_route(route, brokers, standard=True)
    assert b'"brokerAddrs":{"0":"h1:1","1":"h2:1"}' in std and b"enableActingMaster" not in std
    assert b'"orderTopicConf":"a:1"' in bodies.encode_topic_route(
        route, brokers, standard=True, order_topic_conf="a:1"
    )
    expected_brokers = {"a": brokers["a"], "b": BrokerInfo("b", "DefaultCluster", {})}
    assert bodies.decode_topic_route(std, "T") == (route, expected_brokers)
    assert bodies.decode_topic_route(plain, "T") == (route, expected_brokers)


def test_lists_and_tables() -> None:
    assert bodies.decode_topic_list(bodies.encode_topic_list(["A", "%RETRY%G"])) == [
        "A",
        "%RETRY%G",
    ]
    assert (
        bodies.encode_topic_list(["A"], "1.2.3.4:10911")
        == b'{"brokerAddr":"1.2.3.4:10911","topicList":["A"]}'
    )
    assert bodies.decode_group_list(bodies.encode_group_list(["G"])) == ["G"]
    # what the fake serves but rmqlb never reads: the bodies as the broker writes them
    ids = ["b@1", "a@2"]
    assert fastjson.loads(bodies.encode_consumer_id_list(ids)) == {"consumerIdList": ids}
    table = {"brokerVersionDesc": "V5_3_3", "putTps": "0.0"}
    assert fastjson.loads(bodies.encode_kv_table(table)) == {"table": table}


def test_subscription_group_5x_shape() -> None:
    body = bodies.encode_subscription_groups(["GroupA"], Dialect.V5)
    assert body == (
        b'{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":0},"forbiddenTable":{},'
        b'"subscriptionGroupTable":{"GroupA":{"attributes":{},"brokerId":0,'
        b'"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,'
        b'"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"GroupA",'
        b'"groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,'
        b'"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,'
        b'"whichBrokerWhenConsumeSlowly":1}}}'
    )
    assert list(bodies.decode_subscription_group_wrapper(body).groups) == ["GroupA"]
    assert bodies.decode_subscription_group_wrapper(body).data_version == bodies.DataVersion(
        0, 0, 0
    )


def test_a_5x_retry_policy_is_kept_as_the_text_updatesubgroup_p_takes() -> None:
    """The default policy is ``None``; another is compact JSON text, written back as the
    object it was (the fake serves it as the broker did), and refused when not an object."""
    policy = {"type": "EXPONENTIAL", "exponentialRetryPolicy": {"initial": 1000, "max": 60000}}
    body = fastjson.dumps(
        {"subscriptionGroupTable": {
            "A": {"groupName": "A", "groupRetryPolicy": {"type": "CUSTOMIZED"}},
            "B": {"groupName": "B", "groupRetryPolicy": policy, "retryQueueNums": 4},
        }}
    )  # fmt: skip
    table = bodies.decode_subscription_group_table(body)
    assert table["A"].group_retry_policy is None
    text = table["B"].group_retry_policy
    assert text == '{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":1000,"max":60000}}'
    model = table["B"].to_model()
    assert (model.group_retry_policy, model.retry_queue_nums) == (text, 4)
    served = bodies.encode_subscription_groups(["B"], Dialect.V5, {"B": model})
    again = bodies.decode_subscription_group_wrapper(served).groups["B"]
    assert (again.group_retry_policy, again.retry_queue_nums) == (text, 4)
    bad = fastjson.dumps({"subscriptionGroupTable": {"C": {"groupRetryPolicy": [1]}}})
    with pytest.raises(BodyError, match=r"C\]\.groupRetryPolicy: expected an object"):
        bodies.decode_subscription_group_wrapper(bad)


def test_config_table_reads_what_the_wrapper_reads_and_fails_where_it_fails() -> None:
    """The table of one group's capture builds an entry when it is read, yet holds the same
    configs in the same order, and refuses a body the wrapper refuses, on decoding."""
    plain = {"groupName": "A", "retryMaxTimes": 3, "consumeEnable": False}
    odd = {"groupName": "B", "attributes": {"k": "v"}, "brokerId": 1}
    body = fastjson.dumps(
        {"subscriptionGroupTable": {"B": odd, "A": plain, "C": {}}, "dataVersion": None}
    )
    table = bodies.decode_subscription_group_table(body)
    wrapper = bodies.decode_subscription_group_wrapper(body)
    assert list(table) == ["B", "A", "C"] and len(table) == 3 and "A" in table
    assert "D" not in table and table.get("D") is None
    assert table["A"] is table["A"] and table["A"].retry_max_times == 3
    assert dict(table) == wrapper.groups
    assert table["B"].attributes == {"k": "v"}
    for bad in (
        {"subscriptionGroupTable": {"A": plain, "X": {"retryMaxTimes": "3"}}},
        {"subscriptionGroupTable": {"A": plain}, "dataVersion": {"counter": "x"}},
        {"subscriptionGroupTable": {"A": plain, "X": []}},
    ):
        raw = fastjson.dumps(bad)
        with pytest.raises(BodyError) as wrapped:
            bodies.decode_subscription_group_wrapper(raw)
        with pytest.raises(BodyError) as tabled:
            bodies.decode_subscription_group_table(raw)
        assert str(tabled.value) == str(wrapped.value)


REAL_TABLES = sorted((Path(__file__).parents[2] / "data").glob("real*/201-*.body"))


@pytest.mark.parametrize("path", REAL_TABLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_one_group_read_from_a_real_table_is_the_entry_the_whole_table_holds(
    path: Path,
) -> None:
    text = fastjson.text_of(path.read_bytes())
    table = bodies.decode_subscription_group_table(text)
    assert len(table) > 3
    for name in table:
        assert bodies.find_group_config(text, name) == table[name]
    assert bodies.find_group_config(text, "NoSuchGroup") is None


TRICKY_NAMES = ["groupName", "groupRetryPolicy", "dataVersion", "subscriptionGroupTable", 'a"b']


@given(
    st.lists(
        st.sampled_from([*TRICKY_NAMES, "G", "é", "x\\y"]) | st.text(max_size=4),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    st.sampled_from([None, 0, 2]),
)
@settings(max_examples=150, deadline=None)
def test_one_group_read_from_the_text_is_never_another_groups(
    names: list[str], indent: int | None
) -> None:
    """Names that are also field names, or need escaping, and pretty text: the entry read
    from the text is the one the whole table holds, or nothing (then the whole table is
    decoded); an absent group is never found."""
    policy = {"type": "CUSTOMIZED", "customizedRetryPolicy": {"next": [1, 2]}}
    raw = {
        n: {"groupName": n, "retryMaxTimes": i, "groupRetryPolicy": policy, "attributes": {n: n}}
        for i, n in enumerate(names)
    }
    doc = {"dataVersion": {"counter": 1}, "subscriptionGroupTable": raw}
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    table = bodies.decode_subscription_group_table(text)
    for name in names:
        found = bodies.find_group_config(text, name)
        assert found is None or found == table[name]
    for absent in TRICKY_NAMES:
        if absent not in names:
            assert bodies.find_group_config(text, absent) is None


def test_one_group_read_from_the_text_is_checked_as_the_whole_table_checks_it() -> None:
    good = {"groupName": "A", "retryMaxTimes": 3}
    bad = {"groupName": "B", "retryMaxTimes": "3"}
    text = fastjson.dumps({"subscriptionGroupTable": {"A": good, "B": bad}}).decode()
    assert bodies.find_group_config(text, "A") == bodies._config_entry("A", good)
    with pytest.raises(BodyError) as one:
        bodies.find_group_config(text, "B")
    with pytest.raises(BodyError) as whole:
        bodies.decode_subscription_group_table(text)
    assert str(one.value) == str(whole.value)
    # the last of a repeated key, as the whole decoding keeps it
    twice = '{"subscriptionGroupTable":{"A":{"groupName":"A","retryMaxTimes":1},'
    twice += '"A":{"groupName":"A","retryMaxTimes":2}}}'
    last = bodies.decode_subscription_group_table(twice)["A"]
    assert bodies.find_group_config(twice, "A") == last
    # a body keying many objects by the name: past a few, the whole table decides
    decoys = ",".join(f'"x{i}":{{"A":{{"groupName":"B"}}}}' for i in range(20))
    many = '{"subscriptionGroupTable":{"A":{"groupName":"A","retryMaxTimes":5},' + decoys + "}}"
    assert bodies.find_group_config(many, "A") is None
    assert bodies.decode_subscription_group_table(many)["A"].retry_max_times == 5
    # too deep for the limit, as in the whole decoding
    deep = '{"subscriptionGroupTable":{"A":{"groupName":"A","attributes":' + "[" * 120
    deep += "]" * 120 + "}}}"
    with pytest.raises(FastJsonError):
        bodies.find_group_config(deep, "A")
    with pytest.raises(FastJsonError):
        bodies.decode_subscription_group_table(deep)


def test_tags_and_codes_in_java_hash_set_order() -> None:
    assert bodies.java_string_hash("TagA") == 2598919
    assert bodies.java_string_hash("") == 0
    assert bodies.java_string_hash("\U0001f600") == (0xD83D * 31 + 0xDE00)
    assert bodies.java_string_hash("polygenelubricants") == -(2**31)
    bean = bodies._subscription_bean(Subscription("T", "TAG", " TagB || TagA ||  || TagB", 1))
    assert bean["tagsSet"] == ["TagA", "TagB"] and bean["codeSet"] == [2598919, 2598920]
    sql = bodies._subscription_bean(Subscription("T", "SQL92", "a > 1", 1))
    assert sql["tagsSet"] == [] and sql["codeSet"] == []


@pytest.mark.parametrize(
    ("decoder", "body", "message"),
    [
        (bodies.decode_consume_stats, b"[]", "expected a JSON object, got an array"),
        (
            bodies.decode_consume_stats,
            b'{"offsetTable":{"x":{}}}',
            r"offsetTable\[0\].key: expected an object",
        ),
        (
            bodies.decode_consume_stats,
            b'{"offsetTable":{{"topic":"T","queueId":1}:{}}}',
            "brokerName: missing",
        ),
        (
            bodies.decode_consume_stats,
            b'{"offsetTable":{{"topic":"T","brokerName":"b","queueId":"1"}:{}}}',
            "queueId: expected an integer",
        ),
        (
            bodies.decode_cluster_info,
            b'{"brokerAddrTable":{"b":{"brokerName":"b","brokerAddrs":{"x":"h"}}}}',
            "broker id 'x'",
        ),
        (
            bodies.decode_topic_route,
            b'{"queueDatas":[{"brokerName":"b"}]}',
            "readQueueNums: missing",
        ),
        (bodies.decode_consumer_connection, b'{"connectionSet":{}}', "expected an array"),
        (bodies.decode_topic_list, b'{"topicList":[1]}', r"topicList\[0\]: expected a string"),
        (
            bodies.decode_consumer_running_info,
            b'{"properties":{{"a":1}:"x"}}',
            "expected a string key",
        ),
    ],
)
def test_bad_shapes_name_the_path(decoder: object, body: bytes, message: str) -> None:
    args = (body, "T") if decoder is bodies.decode_topic_route else (body,)
    with pytest.raises(BodyError, match=message):
        decoder(*args)  # type: ignore[operator]


def test_malformed_json_is_a_fastjson_error() -> None:
    with pytest.raises(FastJsonError):
        bodies.decode_cluster_info(b'{"brokerAddrTable":{0:}')


# --------------------------------------------------------------------------- property round trips

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
queues = st.builds(MessageQueue, names, names, st.integers(-1, 64))
subscriptions = st.builds(
    Subscription,
    names,
    st.sampled_from(["TAG", "SQL92"]),
    st.one_of(st.just("*"), names, st.lists(names, max_size=3).map(" || ".join)),
    st.integers(0, 2**62),
)
strategies = st.one_of(
    st.none(),
    st.just(Avg()),
    st.just(AvgByCircle()),
    st.just(ConsistentHash()),
    st.just(Unknown("MyStrategy")),
)
consumers = st.builds(
    Consumer,
    client_id=names,
    subscriptions=st.lists(subscriptions, max_size=3, unique_by=lambda s: s.topic).map(tuple),
    client_addr=st.one_of(st.none(), names),
    language=st.one_of(st.none(), st.sampled_from(["JAVA", "GO", "CPP"])),
    version=st.one_of(st.none(), st.integers(213, 611)),
    strategy=strategies,
    consume_orderly=st.one_of(st.none(), st.booleans()),
    consume_type=st.one_of(st.none(), st.sampled_from(["CONSUME_PASSIVELY", "CONSUME_ACTIVELY"])),
    assigned=st.one_of(st.none(), st.lists(queues, max_size=5, unique=True).map(tuple)),
    pop_assigned=st.lists(queues, max_size=3, unique=True).map(tuple),
    start_time=st.one_of(st.none(), st.integers(0, 2**62)),
    properties=st.dictionaries(
        names.filter(lambda k: not bodies._SECRET_PROPERTY.search(k)), names, max_size=3
    ),
)


@settings(deadline=None, max_examples=60)
@given(consumers, st.sampled_from(list(Dialect)))
def test_running_info_round_trip(consumer: Consumer, dialect: Dialect) -> None:
    body = bodies.encode_consumer_running_info(consumer, Group("G"), dialect)
    back = bodies.decode_consumer_running_info(body).to_consumer(consumer.client_id)
    assert back.strategy == consumer.strategy
    assert back.consume_orderly == consumer.consume_orderly
    assert back.consume_type == consumer.consume_type
    assert back.start_time == consumer.start_time
    assert back.subscriptions == tuple(
        sorted(consumer.subscriptions, key=lambda s: java_key(f"{s.topic}@{s.sub_string}"))
    )
    told_nothing = not back.properties and not consumer.subscriptions
    if consumer.queues_unreported:  # its empty table: unknown again in the collector
        assert back.assigned == ()
    elif consumer.assigned is None or (not consumer.assigned and told_nothing):
        assert back.assigned is None
    else:
        assert back.assigned == tuple(sort_queues(consumer.assigned))
    assert back.pop_assigned == (
        tuple(sort_queues(consumer.pop_assigned or ())) if dialect is Dialect.V5 else None
    )
    extra = set(back.properties) - set(consumer.properties)
    assert extra <= bodies.DERIVED_PROPERTIES
    assert {
        k: v
        for k, v in back.properties.items()
        if k not in extra and k not in bodies.DERIVED_PROPERTIES
    } == {k: v for k, v in consumer.properties.items() if k not in bodies.DERIVED_PROPERTIES}
    # a second trip changes nothing (the version comes with the connection, not the body)
    again = bodies.encode_consumer_running_info(
        replace(back, version=consumer.version), Group("G"), dialect
    )
    assert bodies.decode_consumer_running_info(again).to_consumer(consumer.client_id) == back


@settings(deadline=None, max_examples=40)
@given(st.lists(consumers, max_size=4), st.sampled_from(list(MessageModel)))
def test_connection_round_trip(members: list[Consumer], model: MessageModel) -> None:
    group = Group("G", message_model=model, consumers=tuple(members))
    conn = bodies.decode_consumer_connection(bodies.encode_consumer_connection(group))
    assert [c.client_id for c in conn.connections] == [c.client_id for c in members]
    assert [(c.client_addr, c.language, c.version) for c in conn.connections] == [
        (c.client_addr, c.language, c.version) for c in members
    ]
    assert conn.message_model is model
    assert conn.subscriptions == bodies.merged_subscriptions(members)


@settings(deadline=None, max_examples=40)
@given(
    st.lists(
        st.builds(
            QueueOffset, queues, st.integers(0, 2**62), st.integers(0, 2**62), st.integers(0, 2**62)
        ),
        max_size=6,
        unique_by=lambda o: o.queue,
    ),
    st.sampled_from(list(Dialect)),
    st.floats(allow_nan=False, allow_infinity=False),
)
def test_consume_stats_round_trip(offsets: list[QueueOffset], dialect: Dialect, tps: float) -> None:
    stats = bodies.decode_consume_stats(
        bodies.encode_consume_stats(offsets, dialect, consume_tps=tps)
    )
    assert set(stats.offsets) == set(offsets)
    assert stats.consume_tps == tps


ascii_names = st.text(st.characters(min_codepoint=0, max_codepoint=127), min_size=1, max_size=8)


@settings(deadline=None, max_examples=80)
@given(
    st.lists(
        st.builds(
            QueueOffset,
            st.builds(MessageQueue, ascii_names | names, ascii_names, st.integers(-1, 64)),
            st.integers(0, 2**62),
            st.integers(-1, 2**62),
            st.integers(0, 2**62),
        ),
        max_size=6,
    ),
    st.sampled_from(list(Dialect)),
    st.floats(allow_nan=False, allow_infinity=False),
)
def test_consume_stats_plain_form_reads_as_the_general_parser(
    offsets: list[QueueOffset], dialect: Dialect, tps: float
) -> None:
    """The regular-expression reader of consume stats gives what the general parser gives,
    and reads every body a broker writes with plain names (escapes and non-ASCII: general)."""
    body = bodies.encode_consume_stats(offsets, dialect, consume_tps=tps)
    plain = bodies._plain_consume_stats(body)
    assert bodies.decode_consume_stats(body) == bodies._general_consume_stats(body)
    if plain is not None:
        assert plain == bodies._general_consume_stats(body)
    if _plain_names(t for o in offsets for t in (o.queue.topic, o.queue.broker_name)):
        assert plain is not None


@pytest.mark.parametrize(
    "body",
    [
        b'{"consumeTps":0.0,"offsetTable":{}}',
        b'{"consumeTps":1.0E-4,"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:'
        b'{"brokerOffset":5,"consumerOffset":3,"lastTimestamp":7},'
        b'{"brokerName":"b","queueId":0,"topic":"T"}:'
        b'{"brokerOffset":2,"consumerOffset":1,"lastTimestamp":0,"pullOffset":1}}}',
        # the same queue twice: the later value, as the general parser keeps it
        b'{"consumeTps":0,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:'
        b'{"brokerOffset":5,"consumerOffset":3,"lastTimestamp":7},'
        b'{"brokerName":"b","queueId":0,"topic":"T"}:'
        b'{"brokerOffset":6,"consumerOffset":4,"lastTimestamp":8}}}',
    ],
)
def test_consume_stats_plain_form_cases(body: bytes) -> None:
    plain = bodies._plain_consume_stats(body)
    assert plain is not None
    assert plain == bodies._general_consume_stats(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"consumeTps":0.0,"offsetTable":{},"x":1}',  # another property
        b'{"offsetTable":{},"consumeTps":0.0}',  # another order
        b'{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":01,"topic":"T"}:'
        b'{"brokerOffset":5,"consumerOffset":3,"lastTimestamp":7}}}',  # not JSON's integer
        b'{"consumeTps":0.0,"offsetTable":{{"brokerName":"b\\u0041","queueId":1,"topic":"T"}:'
        b'{"brokerOffset":5,"consumerOffset":3,"lastTimestamp":7}}}',  # an escape
        b'{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:'
        b'{"brokerOffset":5,"consumerOffset":3,"lastTimestamp":7},}}',  # a trailing comma
        b'{"consumeTps":0.0, "offsetTable":{}}',  # white space
    ],
)
def test_consume_stats_other_forms_take_the_general_parser(body: bytes) -> None:
    assert bodies._plain_consume_stats(body) is None
    bodies._general_consume_stats(body)  # and it reads them


@settings(deadline=None, max_examples=40)
@given(
    st.lists(
        st.builds(
            QueueData,
            names,
            st.integers(0, 64),
            st.integers(0, 64),
            st.integers(0, 7),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda q: q.broker_name,
    ),
    st.dictionaries(st.integers(0, 5), names, max_size=3),
    st.booleans(),
    st.sampled_from(list(Dialect)),
)
def test_route_round_trip(
    queue_datas: list[QueueData], addrs: dict[int, str], standard: bool, dialect: Dialect
) -> None:
    route = TopicRoute("T", tuple(queue_datas))
    brokers = {q.broker_name: BrokerInfo(q.broker_name, "C", addrs) for q in queue_datas}
    body = bodies.encode_topic_route(route, brokers, standard=standard, dialect=dialect)
    assert bodies.decode_topic_route(body, "T") == (route, brokers)
    assert (b'"brokerAddrs":{0:' in body) == (0 in addrs and not standard)
    info = bodies.decode_cluster_info(bodies.encode_cluster_info(brokers, dialect))
    assert info.brokers == brokers
    assert list(info.clusters) == ["C"] and sorted(info.clusters["C"]) == sorted(brokers)
    assert fastjson.loads(body)["filterServerTable"] == {}


def test_running_info_decodes_process_queues_and_status() -> None:
    info = bodies.decode_consumer_running_info(DOC_RUNNING_INFO)
    assert info.process_queues is not None
    by_queue = {pq.queue: pq for pq in info.process_queues}
    held = by_queue[MessageQueue("TopicA", "broker-b", 1)]
    assert (held.commit_offset, held.locked, held.dropped) == (42, True, False)
    assert info.status["TopicA"].consume_ok_tps == 100.0
    assert info.status["TopicA"].pull_rt == 1.5


@settings(deadline=None, max_examples=80)
@given(
    st.dictionaries(
        st.builds(MessageQueue, ascii_names | names, ascii_names, st.integers(-1, 64)),
        st.builds(
            bodies.QueueStats, st.integers(0, 2**62), st.integers(0, 2**62), st.integers(0, 2**62)
        ),
        max_size=6,
    ),
    st.sampled_from(list(Dialect)),
)
def test_topic_stats_plain_form_reads_as_the_general_parser(
    stats: dict[MessageQueue, bodies.QueueStats], dialect: Dialect
) -> None:
    """The regular-expression reader of topic stats gives what the general parser gives,
    and reads every body a broker writes with plain names (escapes and non-ASCII: general)."""
    body = bodies.encode_topic_stats(stats, dialect)
    plain = bodies._plain_topic_stats(body)
    general = bodies._general_topic_stats(body)
    assert bodies.decode_topic_stats(body) == general == stats
    if plain is not None:
        assert list(plain.items()) == list(general.items())
    if _plain_names(t for q in stats for t in (q.topic, q.broker_name)):
        assert plain is not None


@pytest.mark.parametrize(
    "body",
    [
        b'{"offsetTable":{}}',
        # the same queue twice: the later value, as the general parser keeps it
        b'{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:'
        b'{"lastUpdateTimestamp":1,"maxOffset":5,"minOffset":0},'
        b'{"brokerName":"b","queueId":0,"topic":"T"}:'
        b'{"lastUpdateTimestamp":2,"maxOffset":6,"minOffset":1}}}',
    ],
)
def test_topic_stats_plain_form_cases(body: bytes) -> None:
    plain = bodies._plain_topic_stats(body)
    assert plain is not None
    assert list(plain.items()) == list(bodies._general_topic_stats(body).items())


@pytest.mark.parametrize(
    "body",
    [
        b'{"offsetTable":{},"topicPutTps":0.0}',  # another property
        b'{"offsetTable":{{"brokerName":"b","queueId":01,"topic":"T"}:'
        b'{"lastUpdateTimestamp":0,"maxOffset":5,"minOffset":0}}}',  # not JSON's integer
        b'{"offsetTable":{{"brokerName":"b\\u0041","queueId":1,"topic":"T"}:'
        b'{"lastUpdateTimestamp":0,"maxOffset":5,"minOffset":0}}}',  # an escape
        b'{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:'
        b'{"lastUpdateTimestamp":0,"maxOffset":5,"minOffset":0},}}',  # a trailing comma
        b'{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:'
        b'{"maxOffset":5,"minOffset":0,"lastUpdateTimestamp":0}}}',  # another order
        b'{ "offsetTable":{}}',  # white space
    ],
)
def test_topic_stats_other_forms_take_the_general_parser(body: bytes) -> None:
    assert bodies._plain_topic_stats(body) is None
    bodies._general_topic_stats(body)  # and it reads them


def test_topic_stats_round_trip_with_object_keys() -> None:
    body = (
        b'{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicA"}:'
        b'{"lastUpdateTimestamp":0,"maxOffset":10,"minOffset":0}},"topicPutTps":0.0}'
    )
    stats = bodies.decode_topic_stats(body)
    assert stats == {MessageQueue("TopicA", "broker-a", 0): bodies.QueueStats(0, 10, 0)}
    assert bodies.decode_topic_stats(bodies.encode_topic_stats(stats)) == stats


# --------------------------------------------------------------------------- consumer offsets


def test_consumer_offsets_group_topics_as_the_broker_splits_its_keys() -> None:
    body = (
        b'{"offsetTable":{"T@G":{0:5,1:-1},"%RETRY%G@G":{0:0},"U@H":{},"a@b@c":{0:1},'
        b'"@G":{0:2},"V@":{0:3}}}'
    )
    offsets = bodies.decode_consumer_offsets(body)
    assert offsets.table["T@G"] == {0: 5, 1: -1}
    # Java's split: "a@b@c" has three parts, "V@" one (trailing empty part dropped): skipped;
    # "@G" is the empty topic of G
    by_group = offsets.topics_by_group()
    assert set(by_group) == {"G", "H"}
    assert set(by_group["G"]) == {"T", "%RETRY%G", ""} and by_group["H"] == ("U",)
    # the order the broker's HashSet goes through them
    assert list(by_group["G"]) == java_hash_set_order(["T", "%RETRY%G", ""], java_string_hash)


@pytest.mark.parametrize(
    "body",
    [
        b'{ "offsetTable" : { "T@G" : { "0" : 5 } } }',  # spaces, quoted ids: the general parser
        b'{"offsetTable":{"T\\u0040G":{0:5}}}',  # an escape
        b'{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":2},'
        b'"groupTopicMap":{"G":["T"]},"offsetTable":{"T@G":{0:5}}}',  # 5.x
    ],
)
def test_consumer_offsets_in_any_spelling(body: bytes) -> None:
    assert bodies.decode_consumer_offsets(body).table == {"T@G": {0: 5}}


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'{"offsetTable":{"T@G":{0:"x"}}}', "offsetTable[0].value"),
        (b'{"offsetTable":{"T@G":[1]}}', "offsetTable[0].value"),
        (b'{"offsetTable":{1:{0:1}}}', "offsetTable[0].key"),
        (b"[]", "ConsumerOffsetManager"),
    ],
)
def test_consumer_offsets_of_the_wrong_shape_name_the_path(body: bytes, where: str) -> None:
    with pytest.raises(BodyError, match=re.escape(where)):
        bodies.decode_consumer_offsets(body)


def test_consumer_offsets_without_a_comma_between_queues_are_malformed() -> None:
    """The fast path must not split ``1:23:4`` into queue 1 at 23 and drop the rest."""
    with pytest.raises(ProtocolError, match="malformed JSON"):
        bodies.decode_consumer_offsets(b'{"offsetTable":{"T@G":{1:23:4}}}')


@pytest.mark.parametrize("dialect", [Dialect.V4, Dialect.V5])
def test_consumer_offsets_reencode_in_hash_order(dialect: Dialect) -> None:
    table = {f"T{i}@G{i % 3}": {q: i * 10 + q for q in (3, 0, 1)} for i in range(40)}
    body = bodies.encode_consumer_offsets(table, dialect)
    decoded = bodies.decode_consumer_offsets(body)
    assert decoded.table == table
    keys = list(decoded.table)
    assert keys == concurrent_map(512).order(list(table), java_string_hash)
    assert all(list(q) == [0, 1, 3] for q in decoded.table.values())
    doc = fastjson.loads(body)
    if dialect is Dialect.V5:
        assert list(doc) == ["dataVersion", "groupTopicMap", "offsetTable"]
        assert {g: set(t) for g, t in doc["groupTopicMap"].items()} == {
            g: {t for t, _ in (k.split("@") for k in table) if _ == g} for g in ("G0", "G1", "G2")
        }
    else:
        assert list(doc) == ["offsetTable"]


def test_merged_consume_stats_add_rates_as_the_broker_does() -> None:
    def stats(topic: str, tps: float) -> bodies.ConsumeStats:
        return bodies.ConsumeStats((QueueOffset(MessageQueue(topic, "b", 0), 5, 2),), tps)

    parts = [stats("B", 0.1), stats("A", 0.2), stats("C", 0.3)]
    merged = bodies.merge_consume_stats(parts)
    assert [o.queue.topic for o in merged.offsets] == ["A", "B", "C"]
    assert merged.consume_tps == 0.3 + (0.2 + (0.1 + 0.0))  # each topic's rate + the sum so far
    assert bodies.merge_consume_stats([]) == bodies.ConsumeStats(())
