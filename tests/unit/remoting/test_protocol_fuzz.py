"""Fuzzing: any input gives a value or a typed protocol error, never another exception.

Sized for a 2-core machine; every example is bounded by the decoders' own limits, so no
example can hang or allocate more than its input.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rmqlb.errors import FrameError, ProtocolError
from rmqlb.remoting import bodies, fastjson
from rmqlb.remoting.frame import FrameDecoder, RemotingCommand, decode_frame, encode_frame

FUZZ = settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])

DECODERS: list[Callable[[bytes], Any]] = [
    lambda b: bodies.decode_topic_route(b, "T"),
    bodies.decode_cluster_info,
    bodies.decode_consumer_connection,
    bodies.decode_consumer_running_info,
    bodies.decode_consume_stats,
    bodies.decode_topic_stats,
    bodies.decode_topic_list,
    bodies.decode_group_list,
    bodies.decode_subscription_group_wrapper,
    bodies.decode_consumer_offsets,
]

SEEDS = [
    b'{"brokerDatas":[{"brokerAddrs":{0:"h:1"},"brokerName":"b","cluster":"C"}],'
    b'"queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":4,"writeQueueNums":4}]}',
    b'{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:'
    b'{"brokerOffset":5,"consumerOffset":2,"lastTimestamp":0}}}',
    b'{"mqTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"droped":false}},'
    b'"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"},"subscriptionSet":[{"topic":"T"}]}',
    b'{"offsetTable":[[{"topic":"t","brokerName":"b","queueId":5},1]]}',
    b'{"offsetTable":{"T@G":{0:5,1:-1},"%RETRY%G@G":{0:0}}}',
]


def json_values(finite: bool = False) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**63), 2**63),
        st.floats(allow_nan=not finite, allow_infinity=not finite),
        st.text(max_size=8),
    )
    keys = st.one_of(st.text(max_size=6), st.integers(-5, 5))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(keys, inner, max_size=4),
        ),
        max_leaves=20,
    )


def body_shaped() -> st.SearchStrategy[bytes]:
    """Objects with the right top-level keys and arbitrary values (reaches deep code)."""
    names = st.sampled_from(
        [
            "brokerDatas", "queueDatas", "brokerAddrTable", "clusterAddrTable", "connectionSet",
            "subscriptionTable", "mqTable", "mqPopTable", "properties", "subscriptionSet",
            "offsetTable", "topicList", "groupList", "subscriptionGroupTable", "dataVersion",
            "consumeTps",
        ]
    )  # fmt: skip
    mq_key = st.fixed_dictionaries(
        {}, optional={"topic": json_values(), "brokerName": json_values(), "queueId": json_values()}
    ).map(fastjson.freeze)
    inner = st.one_of(json_values(), st.dictionaries(mq_key, json_values(), max_size=3))
    return st.dictionaries(names, inner, max_size=4).map(fastjson.dumps)


def call(decoder: Callable[[bytes], Any], data: bytes) -> None:
    with contextlib.suppress(ProtocolError):
        decoder(data)


@FUZZ
@given(st.binary(max_size=300))
@example(b"\x7f\xff\xff\xff")
@example(b"\x00\x00\x00\x08\x00\xff\xff\xff\x00\x00\x00\x00")
@example(encode_frame(RemotingCommand(code=105, ext_fields={"topic": "T"}, body=b"{}")) * 2)
def test_frame_decoder_any_bytes(data: bytes) -> None:
    decoder = FrameDecoder(max_frame_size=4096)
    try:
        for i in range(0, len(data), 7):
            for cmd in decoder.feed(data[i : i + 7]):
                assert isinstance(cmd, RemotingCommand)
    except FrameError:
        pass
    assert decoder.buffered <= 4096


@FUZZ
@given(st.binary(max_size=300))
def test_decode_frame_any_bytes(data: bytes) -> None:
    call(decode_frame, data)


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.binary(max_size=40))
def test_length_words(total: int, word: int, rest: bytes) -> None:
    """Any announced length/header word: rejected or buffered, never allocated up front."""
    decoder = FrameDecoder()
    try:
        decoder.feed(struct.pack(">II", total, word) + rest)
    except FrameError:
        return
    assert decoder.buffered <= 8 + len(rest)


@FUZZ
@given(st.builds(RemotingCommand, code=st.integers(-(2**15), 2**15 - 1)), st.binary(max_size=20))
def test_mutated_valid_frames(cmd: RemotingCommand, noise: bytes) -> None:
    raw = bytearray(encode_frame(cmd))
    for i, b in enumerate(noise):
        raw[(i * 31 + b) % len(raw)] ^= b
    with contextlib.suppress(FrameError):
        FrameDecoder().feed(bytes(raw))


@FUZZ
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200)))
@example(b"[" * 5000)
@example(b"{" * 5000)
@example(b'{{{{{{{{"a":1}:1}:1}:1}:1}:1}:1}:1}')
@example(b"{0:" + b"9" * 5000 + b"}")
def test_fastjson_any_input(data: bytes | str) -> None:
    with contextlib.suppress(ProtocolError):
        fastjson.loads(data)


@FUZZ
@given(
    st.sampled_from(SEEDS),
    st.lists(st.tuples(st.integers(0, 400), st.binary(max_size=3)), max_size=4),
)
def test_fastjson_mutated_bodies(seed: bytes, edits: list[tuple[int, bytes]]) -> None:
    data = bytearray(seed)
    for where, chunk in edits:
        pos = where % (len(data) + 1)
        data[pos : pos + len(chunk)] = chunk
    for decoder in DECODERS:
        call(decoder, bytes(data))


@FUZZ
@given(json_values().map(fastjson.dumps))
def test_body_decoders_random_json(data: bytes) -> None:
    for decoder in DECODERS:
        call(decoder, data)


@FUZZ
@given(body_shaped())
def test_body_decoders_shaped_json(data: bytes) -> None:
    for decoder in DECODERS:
        call(decoder, data)


@FUZZ
@given(json_values(finite=True))
def test_dumps_loads_round_trip(value: Any) -> None:
    """What the writer emits the reader takes back, and writes again identically."""
    text = fastjson.dumps(value)
    again = fastjson.loads(text)
    assert fastjson.dumps(again) == text


@FUZZ
@given(body_shaped(), st.integers(0, 3))
def test_c_assisted_parse_equals_pure_parse(data: bytes, budget: int) -> None:
    """Handing standard subtrees to the C decoder never changes the result."""
    text = data.decode()
    pure = fastjson._Parser(text, fastjson.MAX_DEPTH, c_budget=0).document()
    assert fastjson._Parser(text, fastjson.MAX_DEPTH, c_budget=budget).document() == pure
    assert fastjson.loads(data) == pure


def test_depth_limit_holds_inside_c_parsed_subtrees() -> None:
    deep = "[" * 150 + "]" * 150
    for text in ("{0:" + deep + "}", "{0:1," + '"a":' + deep + "}", "[{0:1}," + deep + "]"):
        try:
            fastjson.loads(text)
        except ProtocolError as exc:
            assert "nesting deeper than 100" in str(exc)
        else:
            raise AssertionError(f"accepted {text[:20]}")


def _walked_depth_ok(value: Any, max_depth: int, base: int) -> bool:
    """The depth limit by walking the parsed value (the root and every container below it
    counted): what the bracket count must agree with."""
    stack = [(value, base)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return False
        children = node.values() if isinstance(node, dict) else node
        if isinstance(node, dict | list):
            stack.extend((v, depth + 1) for v in children if isinstance(v, dict | list))
    return True


JSON_VALUES = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@FUZZ
@given(JSON_VALUES, st.integers(1, 6), st.integers(1, 4))
def test_depth_check_agrees_with_a_walk_of_every_node(
    value: Any, max_depth: int, base: int
) -> None:
    """The level-by-level depth check accepts exactly what a walk of every node does."""
    try:
        fastjson._check_depth(value, max_depth, base)
        accepted = True
    except ProtocolError:
        accepted = False
    assert accepted == _walked_depth_ok(value, max_depth, base)


CONFIG_VALUES = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", 1.5])


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from([key for key, _ in bodies._GROUP_CONFIG_FIELDS] + ["groupName"]),
        CONFIG_VALUES,
    ),
    st.sampled_from([None, {}, {"k": "v"}, [], "", 0]),
)
def test_config_entry_fast_path_equals_the_checked_one(entry: dict[str, Any], attrs: Any) -> None:
    """A config entry decodes (or fails) the same with or without the one-step path."""
    if attrs is not None:
        entry = {**entry, "attributes": attrs}

    def outcome(decode: Callable[[str, Any], Any]) -> Any:
        try:
            return decode("G", entry)
        except ProtocolError as exc:
            return str(exc)

    assert outcome(bodies._config_entry) == outcome(bodies._config_entry_checked)


CONFIG_ENTRIES: st.SearchStrategy[Any] = st.dictionaries(
    st.sampled_from([key for key, _ in bodies._GROUP_CONFIG_FIELDS] + ["groupName"]),
    CONFIG_VALUES,
) | st.sampled_from([[], "", 0, None])


@FUZZ
@given(
    st.lists(CONFIG_ENTRIES, min_size=1, max_size=3),
    st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from([None, {}, {"k": "v"}, [], "", 0])),
        max_size=8,
    ),
)
@example(pool=[{}], picks=[(0, {}), (0, {"k": "v"}), (0, None), (0, [])])
@example(pool=[{"retryMaxTimes": 1}, {"retryMaxTimes": "1"}], picks=[(0, None), (1, None)])
def test_config_table_decodes_like_the_wrapper(
    pool: list[Any], picks: list[tuple[int, Any]]
) -> None:
    """A table whose entries share shapes (what is checked once per shape) decodes, or fails,
    as the wrapper's entry-by-entry decoding does."""
    table = {}
    for i, (index, attrs) in enumerate(picks):
        entry = pool[index % len(pool)]
        has_attrs = isinstance(entry, dict) and attrs is not None
        table[f"G{i}"] = {**entry, "attributes": attrs} if has_attrs else entry
    body = fastjson.dumps({"subscriptionGroupTable": table})

    def outcome(decode: Callable[[bytes], Any]) -> Any:
        try:
            return dict(decode(body))
        except ProtocolError as exc:
            return str(exc)

    assert outcome(bodies.decode_subscription_group_table) == outcome(
        lambda b: bodies.decode_subscription_group_wrapper(b).groups
    )
