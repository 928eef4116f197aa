"""Every real wire sample decodes into the expected model, and the encoders reproduce them.

The samples (and their provenance files) live in ``shared/fixtures/wire``; the expected
values below are read off the sample files by eye, not computed by the code under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rmqlb.check.loader import read_one
from rmqlb.model import BrokerInfo, MessageQueue, QueueData
from rmqlb.remoting import bodies, fastjson
from rmqlb.remoting.bodies import Dialect
from rmqlb.remoting.frame import FrameDecoder, SerializeType, decode_frame, encode_frame

WIRE = "fixtures/wire"


@pytest.fixture(scope="module")
def wire(shared_dir: Path) -> Path:
    path = shared_dir / WIRE
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    return path


def read(wire: Path, name: str) -> bytes:
    return (wire / name).read_bytes()


# --------------------------------------------------------------------------- frames


def test_java_client_route_request_frame(wire: Path) -> None:
    raw = read(wire, "frame.get-routeinfo-request.5.2-java-client.bin")
    assert raw[:8].hex() == "0000008a00000086"
    cmd = decode_frame(raw[4:])
    assert cmd.code == 105
    assert cmd.ext_fields == {"topic": "TeZ_Test_Lng"}
    assert (cmd.flag, cmd.opaque, cmd.language, cmd.version) == (0, 0, "JAVA", 453)
    assert cmd.remark is None and cmd.body == b""
    assert not cmd.is_response
    assert cmd.serialize_type is SerializeType.JSON
    assert encode_frame(cmd) == raw  # Java's JSON header is deterministic


@pytest.mark.parametrize(
    ("frame", "body", "opaque", "version"),
    [
        ("frame.get-routeinfo-response.4.8.bin", "topic-route-data.4.8.json", 32, 373),
        ("frame.get-routeinfo-response.5.2.bin", "topic-route-data.5.2.json", 0, 453),
    ],
)
def test_nameserver_route_response_frames(
    wire: Path, frame: str, body: str, opaque: int, version: int
) -> None:
    raw = read(wire, frame)
    cmd = decode_frame(raw[4:])
    assert cmd.is_response and cmd.code == 0
    assert (cmd.opaque, cmd.version, cmd.language) == (opaque, version, "JAVA")
    assert cmd.ext_fields is None and cmd.remark is None
    assert cmd.body == read(wire, body)
    assert encode_frame(cmd) == raw


def test_broker_heartbeat_response_keeps_ext_field_order(wire: Path) -> None:
    raw = read(wire, "frame.heartbeat-response.5.2.bin")
    cmd = decode_frame(raw[4:])
    assert cmd.opaque == 3 and cmd.flag == 1 and cmd.version == 453
    assert list((cmd.ext_fields or {}).items()) == [
        ("IS_SUPPORT_HEART_BEAT_V2", "true"),
        ("IS_SUB_CHANGE", "true"),
    ]
    assert encode_frame(cmd) == raw


def test_binary_header_reply_to_a_json_request(wire: Path) -> None:
    raw = read(wire, "frame.heartbeat-response-rocketmq-binary.4.8.bin")
    assert len(raw) == 29
    cmd = decode_frame(raw[4:])
    assert cmd.serialize_type is SerializeType.ROCKETMQ
    assert (cmd.code, cmd.language, cmd.version, cmd.opaque, cmd.flag) == (
        0,
        "JAVA",
        373,
        429287,
        1,
    )
    assert cmd.remark is None and cmd.ext_fields is None and cmd.body == b""
    assert encode_frame(cmd) == raw


def test_all_frames_through_the_stream_decoder_byte_by_byte(wire: Path) -> None:
    names = sorted(p.name for p in wire.glob("frame.*.bin"))
    assert len(names) == 5
    stream = b"".join(read(wire, n) for n in names)
    decoder = FrameDecoder()
    got = []
    for i in range(len(stream)):
        got += decoder.feed(stream[i : i + 1])
    assert [c.opaque for c in got] == [0, 32, 0, 429287, 3]  # sorted file names
    assert decoder.buffered == 0


# --------------------------------------------------------------------------- routes


def test_route_4_8_plain_json_bare_keys(wire: Path) -> None:
    raw = read(wire, "topic-route-data.4.8.json")
    assert b'"brokerAddrs":{0:"' in raw  # the quirk under test
    route, brokers = bodies.decode_topic_route(raw, "IOC_INS_PARSE_TOPIC")
    assert route.topic == "IOC_INS_PARSE_TOPIC"
    assert route.queue_datas == (
        QueueData("broker-a", 10, 10, 6, 0),
        QueueData("broker-c", 10, 10, 6, 0),
        QueueData("broker-d", 10, 10, 6, 0),
        QueueData("broker-b", 10, 10, 6, 0),
    )
    assert list(brokers) == ["broker-d", "broker-b", "broker-c", "broker-a"]
    assert brokers["broker-d"] == BrokerInfo("broker-d", "DefaultCluster", {0: "10.7.70.161:10911"})
    assert brokers["broker-a"].master_addr() == "10.9.15.40:10911"
    assert len(route.readable_queues()) == 40


def test_route_5_2_standard_json_quoted_keys(wire: Path) -> None:
    raw = read(wire, "topic-route-data.5.2.json")
    assert b'"brokerAddrs":{"0":"' in raw
    data = bodies.decode_topic_route_data(raw, "TeZ_Test_Lng")
    assert data.route.queue_datas == (QueueData("broker-a", 8, 8, 6, 0),)
    assert data.brokers == {
        "broker-a": BrokerInfo("broker-a", "DefaultCluster", {0: "10.2.3.117:10911"})
    }
    assert data.order_topic_conf is None and not data.route.queue_mappings


def test_route_encoder_reproduces_the_samples(wire: Path) -> None:
    plain = read(wire, "topic-route-data.4.8.json")
    route, brokers = bodies.decode_topic_route(plain, "T")
    again = bodies.encode_topic_route(route, brokers, standard=False, dialect=Dialect.V4)
    # The 4.8 NameServer predates the topicSynFlag -> topicSysFlag rename (4.9.0).
    assert again == plain.replace(b"topicSynFlag", b"topicSysFlag")

    standard = read(wire, "topic-route-data.5.2.json")
    route, brokers = bodies.decode_topic_route(standard, "T")
    assert bodies.encode_topic_route(route, brokers, standard=True, dialect=Dialect.V5) == standard
    bare = bodies.encode_topic_route(route, brokers, standard=False, dialect=Dialect.V5)
    assert bare == standard.replace(b'{"0":', b"{0:")


# --------------------------------------------------------------------------- cluster info


def test_cluster_info_4x(wire: Path) -> None:
    raw = read(wire, "cluster-info.4.x.json")
    info = bodies.decode_cluster_info(raw)
    assert info.brokers == {
        "broker_37_master": BrokerInfo("broker_37_master", "37_cluster", {0: "172.16.16.37:10911"})
    }
    assert info.clusters == {"37_cluster": ("broker_37_master",)}
    assert bodies.encode_cluster_info(info.brokers, Dialect.V4, info.clusters) == raw


def test_cluster_info_5x_pretty(wire: Path) -> None:
    raw = read(wire, "cluster-info.5.x.pretty.json")
    info = bodies.decode_cluster_info(raw)
    assert list(info.brokers) == ["broker-002", "broker-001"]
    assert info.brokers["broker-001"].addrs == {0: "192.168.1.101:10911"}
    assert info.clusters == {"DefaultCluster": ("broker-002", "broker-001")}
    encoded = bodies.encode_cluster_info(info.brokers, Dialect.V5, info.clusters)
    # The sample lists broker-002 first, which no 5.x NameServer does: its tables are hash
    # maps and "broker-001" hashes to the lower slot (4 of 16, 20 of 256). The names were
    # probably edited; the tokens are the sample's, in the NameServer's order.
    sample = fastjson.loads(raw)
    table = sample["brokerAddrTable"]
    in_java_order = {
        "brokerAddrTable": {"broker-001": table["broker-001"], "broker-002": table["broker-002"]},
        "clusterAddrTable": {"DefaultCluster": ["broker-001", "broker-002"]},
    }
    assert encoded == fastjson.dumps(in_java_order)  # same tokens, fastjson layout
    assert b'"brokerAddrs":{0:"192.168.1.102:10911"}' in encoded
    assert b'"enableActingMaster":false' in encoded


# --------------------------------------------------------------------------- offsets


def test_consume_stats_vendor_variant_tolerates_extra_fields(wire: Path) -> None:
    stats = bodies.decode_consume_stats(read(wire, "consume-stats.vendor-variant.json"))
    assert stats.consume_tps == 0.0
    assert len(stats.offsets) == 1
    (offset,) = stats.offsets
    assert offset.queue == MessageQueue("mip_topic_0", "cn-qingdao-public-share-05-2", 5)
    assert (offset.broker_offset, offset.consumer_offset) == (4, 4)
    assert offset.last_timestamp == 1647746454641
    assert offset.lag == 0


def _offset_table(raw: bytes) -> dict[MessageQueue, int]:
    """A ResetOffsetBody's MessageQueue -> offset table, read by the fastjson dialect alone.

    rmqlb sends no request answered with this body (resetting offsets is not read-only);
    the samples stay as the dialect's test of MessageQueue object keys and Gson pairs,
    which ConsumeStats and TopicStatsTable use too."""
    table = fastjson.loads(raw)["offsetTable"]
    pairs = table if isinstance(table, dict) else fastjson.pairs_to_map(table)
    assert pairs is not None
    return {MessageQueue(k["topic"], k["brokerName"], k["queueId"]): v for k, v in pairs.items()}


def test_reset_offset_body_fastjson_object_keys(wire: Path) -> None:
    raw = read(wire, "reset-offset-body.4.x.json")
    assert raw.startswith(b'{"offsetTable":{{"brokerName"')
    assert _offset_table(raw) == {
        MessageQueue("topicB", "RaftNode00", 0): 11110,
        MessageQueue("topicB", "RaftNode00", 1): 0,
        MessageQueue("topicB", "RaftNode00", 2): 0,
        MessageQueue("topicB", "RaftNode00", 3): 0,
    }
    assert fastjson.dumps(fastjson.loads(raw)) == raw


def test_reset_offset_body_gson_pairs(wire: Path) -> None:
    table = _offset_table(read(wire, "reset-offset-body.gson-variant.json"))
    broker = "tjwqtst-common-rocketmq-raft0"
    assert len(table) == 8
    assert table[MessageQueue("zx_tst", broker, 5)] == 23354233
    assert table[MessageQueue("zx_tst", broker, 0)] == 23373350
    assert sorted(mq.queue_id for mq in table) == list(range(8))


# --------------------------------------------------------------------------- broker config files


def test_one_group_is_found_in_a_pretty_table(wire: Path) -> None:
    """A broker's config file is pretty-printed: each group is still read from the text."""
    text = fastjson.text_of(read(wire, "subscription-group-wrapper.4.x.pretty.json"))
    table = bodies.decode_subscription_group_table(text)
    assert all(bodies.find_group_config(text, name) == table[name] for name in table)
    assert bodies.find_group_config(text, "lsqGroupX") is None


def test_subscription_group_wrapper_4x(wire: Path) -> None:
    raw = read(wire, "subscription-group-wrapper.4.x.pretty.json")
    wrapper = bodies.decode_subscription_group_wrapper(raw)
    assert wrapper.data_version == bodies.DataVersion(counter=1, timestamp=1646128095713)
    assert list(wrapper.groups) == [
        "SELF_TEST_C_GROUP",
        "CID_ONSAPI_OWNER",
        "CID_ONSAPI_PERMISSION",
        "lsqGroup",
        "TOOLS_CONSUMER",
        "CID_ONS-HTTP-PROXY",
        "FILTERSRV_CONSUMER",
        "CID_ONSAPI_PULL",
    ]
    lsq = wrapper.groups["lsqGroup"]
    assert lsq == bodies.SubscriptionGroupConfig("lsqGroup")  # every field at its default
    # The wire body is the same object written compactly; the file is fastjson's pretty form.
    compact = bodies.encode_subscription_group_wrapper(wrapper, Dialect.V4)
    assert compact == fastjson.dumps(fastjson.loads(raw))
    assert fastjson.dumps(fastjson.loads(compact), pretty=True) == raw


def test_topic_config_wrapper_4x(wire: Path) -> None:
    """A broker's topics.json (the GET_ALL_TOPIC_CONFIG body, pretty): rmqlb reads it as a
    check input, with the line of every value."""
    path = wire / "topic-config-wrapper.4.x.pretty.json"
    config, _ = read_one(path.read_text(encoding="utf-8"), path.name)
    assert len(config.topics) == 9
    (tbw,) = config.topics["TBW102"].brokers
    assert (tbw.perm, tbw.read, tbw.write) == (7, 8, 8)
    assert config.topics["BenchmarkTest"].brokers[0].read == 1024
    assert config.topics["DefaultCluster"].brokers[0].perm == 7
    (retry,) = config.topics["%RETRY%lsqGroup"].brokers
    assert (retry.perm, retry.read) == (6, 1)
    raw = path.read_bytes()
    assert fastjson.dumps(fastjson.loads(raw), pretty=True) == raw


def test_every_sample_is_covered(wire: Path) -> None:
    """A new sample in the shared directory must get a test here."""
    covered = {
        "cluster-info.4.x.json",
        "cluster-info.5.x.pretty.json",
        "consume-stats.vendor-variant.json",
        "frame.get-routeinfo-request.5.2-java-client.bin",
        "frame.get-routeinfo-response.4.8.bin",
        "frame.get-routeinfo-response.5.2.bin",
        "frame.heartbeat-response-rocketmq-binary.4.8.bin",
        "frame.heartbeat-response.5.2.bin",
        "reset-offset-body.4.x.json",
        "reset-offset-body.gson-variant.json",
        "subscription-group-wrapper.4.x.pretty.json",
        "topic-config-wrapper.4.x.pretty.json",
        "topic-route-data.4.8.json",
        "topic-route-data.5.2.json",
    }
    present = {p.name for p in wire.iterdir() if not p.name.endswith(".source.txt")}
    assert present == covered
