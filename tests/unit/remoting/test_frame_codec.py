"""Frame codec: both header encodings, Java's exact JSON header, the bounded stream decoder."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest

from rmqlb.errors import FrameError
from rmqlb.remoting.codes import RMQLB_VERSION, RequestCode
from rmqlb.remoting.frame import (
    MAX_FRAME_SIZE,
    FrameDecoder,
    RemotingCommand,
    SerializeType,
    decode_frame,
    encode_frame,
    request,
    response_to,
)


def frame_of(serialize_type: int, header: bytes, body: bytes = b"") -> bytes:
    word = (serialize_type << 24) | len(header)
    return struct.pack(">II", 4 + len(header) + len(body), word) + header + body


def roundtrip(cmd: RemotingCommand) -> RemotingCommand:
    raw = encode_frame(cmd)
    (total,) = struct.unpack(">I", raw[:4])
    assert total == len(raw) - 4
    return decode_frame(raw[4:])


def test_request_header_is_written_like_java() -> None:
    cmd = request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicA"}, opaque=7)
    raw = encode_frame(cmd)
    assert raw[8:] == (
        b'{"code":105,"extFields":{"topic":"TopicA"},"flag":0,"language":"PYTHON",'
        b'"opaque":7,"serializeTypeCurrentRPC":"JSON","version":'
        + str(RMQLB_VERSION).encode()
        + b"}"
    )
    assert raw[4] == 0 and int.from_bytes(raw[5:8], "big") == len(raw) - 8


def test_remark_and_null_ext_values() -> None:
    cmd = RemotingCommand(
        code=17,
        flag=1,
        remark='No topic route info\nSee "FAQ" / é \x01',
        ext_fields={"a": "1", "gone": None},
        language="JAVA",
        version=479,
    )
    raw = encode_frame(cmd)
    header = raw[8:]
    assert b'"extFields":{"a":"1"}' in header  # null values omitted, as fastjson does
    assert b'"remark":"No topic route info\\nSee \\"FAQ\\" / \xc3\xa9 \\u0001"' in header
    back = decode_frame(raw[4:])
    assert back.remark == cmd.remark
    assert back.ext_fields == {"a": "1"}


@pytest.mark.parametrize("stype", list(SerializeType))
def test_roundtrip_both_header_types(stype: SerializeType) -> None:
    cmd = RemotingCommand(
        code=307,
        opaque=-5,
        flag=0,
        language="GO",
        version=317,
        remark="ünïcode remark",
        ext_fields={"consumerGroup": "G", "clientId": "10.0.0.1@1#2", "jstackEnable": "false"},
        body=b'{"x":1}',
        serialize_type=stype,
    )
    assert roundtrip(cmd) == cmd


def test_binary_header_empty_string_reads_back_as_null() -> None:
    cmd = RemotingCommand(
        code=0, remark="", ext_fields={"k": ""}, serialize_type=SerializeType.ROCKETMQ
    )
    back = roundtrip(cmd)
    assert back.remark is None
    assert back.ext_fields == {"k": None}


def test_binary_header_refuses_codes_that_do_not_fit_16_bits() -> None:
    cmd = RemotingCommand(code=RequestCode.POP_MESSAGE, serialize_type=SerializeType.ROCKETMQ)
    with pytest.raises(FrameError, match="code 200050"):
        encode_frame(cmd)
    assert roundtrip(replace(cmd, serialize_type=SerializeType.JSON)).code == 200050


def test_unknown_language_byte_is_kept_as_its_number() -> None:
    header = struct.pack(">hBhiiii", 0, 42, 1, 2, 1, 0, 0)
    cmd = decode_frame(frame_of(1, header)[4:])
    assert cmd.language == "42"
    assert encode_frame(cmd) == frame_of(1, header)


def test_response_to_copies_opaque_and_sets_the_flag() -> None:
    req = request(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "G"}, opaque=99)
    resp = response_to(req, 0, body=b"{}", language="JAVA", version=479)
    assert (resp.opaque, resp.flag, resp.is_response, resp.is_oneway) == (99, 1, True, False)
    assert (resp.language, resp.version, resp.body) == ("JAVA", 479, b"{}")
    assert not req.is_response
    assert request(10, oneway=True).is_oneway


def test_json_header_leniency_matches_fastjson() -> None:
    header = b'{"Code":"105","language":3,"opaque":5,"extFields":{"n":1,"b":true,"z":null}}'
    cmd = decode_frame(frame_of(0, header)[4:])
    assert (cmd.code, cmd.language, cmd.opaque, cmd.flag, cmd.version) == (105, "PYTHON", 5, 0, 0)
    assert cmd.ext_fields == {"n": "1", "b": "true", "z": None}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x00\x00", "too short"),
        (struct.pack(">I", 50) + b"{}", "bad header length 50"),
        (struct.pack(">I", (2 << 24) | 2) + b"{}", "unknown serialize type 2"),
        (struct.pack(">I", 3) + b"[1]", "not a JSON object"),
        (struct.pack(">I", 2) + b"{x", "not valid JSON"),
        (struct.pack(">I", 12) + b'{"code":"x"}', "'code' is not an integer"),
        (struct.pack(">I", (1 << 24) | 3) + b"abc", "shorter than the fixed"),
    ],
)
def test_decode_frame_errors(raw: bytes, message: str) -> None:
    with pytest.raises(FrameError, match=message):
        decode_frame(raw)


def test_binary_header_lengths_are_checked() -> None:
    fixed = struct.pack(">hBhii", 0, 0, 0, 0, 1)
    with pytest.raises(FrameError, match="remark length"):
        decode_frame(frame_of(1, fixed + struct.pack(">i", 1000) + struct.pack(">i", 0))[4:])
    with pytest.raises(FrameError, match="extFields length"):
        decode_frame(frame_of(1, fixed + struct.pack(">ii", 0, 1000))[4:])
    truncated = struct.pack(">h", 5) + b"ab"
    with pytest.raises(FrameError, match="truncated"):
        decode_frame(frame_of(1, fixed + struct.pack(">ii", 0, len(truncated)) + truncated)[4:])


# --------------------------------------------------------------------------- stream decoder


def commands(n: int) -> list[RemotingCommand]:
    return [
        RemotingCommand(
            code=105,
            opaque=i,
            ext_fields={"topic": f"T{i}"},
            body=bytes(i),
            serialize_type=SerializeType(i % 2),
        )
        for i in range(n)
    ]


def test_stream_split_at_every_position() -> None:
    cmds = commands(3)
    stream = b"".join(encode_frame(c) for c in cmds)
    for cut in range(len(stream) + 1):
        dec = FrameDecoder()
        got = dec.feed(stream[:cut]) + dec.feed(stream[cut:])
        assert got == cmds
        assert dec.buffered == 0


def test_oversized_length_is_rejected_before_buffering() -> None:
    dec = FrameDecoder()
    with pytest.raises(FrameError, match="exceeds the maximum frame size"):
        dec.feed(struct.pack(">I", 0x7FFFFFF0))  # 2 GiB announced, 4 bytes sent
    assert dec.buffered == 0
    with pytest.raises(FrameError):  # sticky: the stream is out of sync
        dec.feed(encode_frame(RemotingCommand(code=0)))


def test_max_frame_size_is_inclusive_of_the_length_field() -> None:
    limit = 200
    body_fits = limit - 4 - 4 - len(encode_frame(RemotingCommand(code=0))[8:])
    ok = encode_frame(RemotingCommand(code=0, body=b"x" * body_fits))
    assert len(ok) == limit
    assert len(FrameDecoder(max_frame_size=limit).feed(ok)) == 1
    too_big = encode_frame(RemotingCommand(code=0, body=b"x" * (body_fits + 1)))
    with pytest.raises(FrameError, match="exceeds"):
        FrameDecoder(max_frame_size=limit).feed(too_big[:4])
    assert MAX_FRAME_SIZE == 16 * 1024 * 1024


def test_negative_and_tiny_lengths() -> None:
    with pytest.raises(FrameError, match="negative frame length"):
        FrameDecoder().feed(b"\xff\xff\xff\xff")
    with pytest.raises(FrameError, match="too short"):
        FrameDecoder().feed(b"\x00\x00\x00\x02")


def test_bad_header_word_is_rejected_once_8_bytes_arrive() -> None:
    dec = FrameDecoder()
    assert dec.feed(struct.pack(">I", 1000)) == []
    with pytest.raises(FrameError, match="bad header length"):
        dec.feed(struct.pack(">I", 2000))
    dec = FrameDecoder()
    with pytest.raises(FrameError, match="unknown serialize type 7"):
        dec.feed(struct.pack(">II", 1000, (7 << 24) | 3))


def test_encode_refuses_frames_over_the_limit() -> None:
    with pytest.raises(FrameError, match="exceeds"):
        encode_frame(RemotingCommand(code=0, body=bytes(MAX_FRAME_SIZE)))


def test_repr_does_not_dump_the_body() -> None:
    text = repr(RemotingCommand(code=0, flag=1, body=b"secret-ish body"))
    assert "secret-ish" not in text and "15 bytes" in text


@pytest.mark.parametrize("chunk", [4, 12, 200])
def test_an_http_answer_is_named_as_such(chunk: int) -> None:
    """A web server answering our frame: say HTTP, not 'frame length 1213486160'."""
    answer = b"HTTP/1.1 400 Bad Request\r\nServer: nginx\r\nContent-Length: 0\r\n\r\n"
    decoder = FrameDecoder()
    with pytest.raises(FrameError, match="answered in HTTP") as err:
        for i in range(0, len(answer), chunk):
            decoder.feed(answer[i : i + chunk])
    if chunk >= 24:
        assert "'HTTP/1.1 400 Bad Request'" in str(err.value)
    assert "9876" in str(err.value)


@pytest.mark.parametrize(
    "header",
    [
        b'{"code":0,"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON",'
        b'"version":395}',
        b'{"code":206,"flag":1,"language":"JAVA","opaque":7,"remark":"the consumer group[G] '
        b'not online","serializeTypeCurrentRPC":"JSON","version":395}',
        b'{"code":0,"extFields":{"offset":"12","x":null},"flag":1,"language":"JAVA",'
        b'"opaque":7,"serializeTypeCurrentRPC":"JSON","version":395}',
        b' {"code":0,"opaque":7} ',  # whitespace around: json.loads' path
        b'{"code":0,"extFields":{"n":1.5,"o":{"a":[1]}},"opaque":7}',  # values converted
        b'{"CODE":1,"Opaque":"7","flag":true}',  # folded keys, a number as text, a boolean
        b'{"code":0,"opaque":7}x',  # trailing garbage
        b'{"code":0,"opaque":7}{}',
        b'{"code":0,"opaque":NaN}',
        b'{"code":0,"remark":"\\u00e9\\ud83d\\ude00"}',
        b'{"code":0,"remark":"\xff"}',  # invalid UTF-8: replaced, as before
        b"[" * 5000,  # too deep for the scanner: one line, not a RecursionError
        b"",
    ],
)
def test_the_header_fast_path_reads_what_json_loads_reads(header: bytes) -> None:
    """Headers decoded through the JSON scanner directly (and a command built without its
    ``__init__``) equal what ``json.loads`` and the dataclass constructor give, and a
    malformed header fails with the same one-line error."""
    import json

    from rmqlb.remoting import frame

    def reference(raw: bytes) -> object:
        try:
            parsed = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError) as exc:
            return ("error", f"JSON header is not valid JSON: {exc}")
        return ("ok", parsed)

    expected = reference(header)
    try:
        got: object = ("ok", frame._parse_json_header(header))
    except FrameError as exc:
        got = ("error", str(exc))
    assert repr(got) == repr(expected)  # repr: NaN equals itself
    if expected[0] == "error":
        assert "\n" not in str(got)
        return
    try:
        cmd = decode_frame(frame_of(0, header)[4:])
    except FrameError:
        return  # e.g. "flag" true: refused, as before
    slow = RemotingCommand(
        code=cmd.code,
        opaque=cmd.opaque,
        flag=cmd.flag,
        language=cmd.language,
        version=cmd.version,
        remark=cmd.remark,
        ext_fields=None if cmd.ext_fields is None else dict(cmd.ext_fields),
        body=cmd.body,
        serialize_type=cmd.serialize_type,
    )
    assert cmd == slow and repr(cmd) == repr(slow)
    assert vars(cmd) == vars(slow)
    with pytest.raises(AttributeError):
        cmd.code = 1  # type: ignore[misc]  # still frozen


def test_a_request_is_built_as_the_constructor_builds_it() -> None:
    fast = request(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "G"}, opaque=3, body=b"x")
    slow = RemotingCommand(
        code=int(RequestCode.GET_CONSUME_STATS),
        opaque=3,
        ext_fields={"consumerGroup": "G"},
        body=b"x",
    )
    assert fast == slow and vars(fast) == vars(slow) and encode_frame(fast) == encode_frame(slow)
    assert type(fast.code) is int
