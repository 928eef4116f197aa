"""Remoting frames: :class:`RemotingCommand` <-> bytes, both header encodings.

Layout (all integers big-endian)::

    int32  total_length      = 4 + header_length + body_length (excludes itself)
    byte   serialize_type    0 = JSON header, 1 = ROCKETMQ binary header
    uint24 header_length
    bytes  header, body

The JSON header is written exactly like Java's fastjson: keys alphabetical, nulls omitted,
``extFields`` values as strings (in the map's insertion order), ``language`` by name::

    {"code":105,"extFields":{"topic":"T"},"flag":0,"language":"PYTHON","opaque":1,
     "serializeTypeCurrentRPC":"JSON","version":401}

Worked example (a 4.8 broker's binary-header reply, 29 bytes):

>>> frame = bytes.fromhex("00000019 01000015 0000 00 0175 00068ce7 00000001 00000000 00000000")
>>> cmd = decode_frame(frame[4:])
>>> (cmd.code, cmd.language, cmd.version, cmd.opaque, cmd.is_response, cmd.serialize_type.name)
(0, 'JAVA', 373, 429287, True, 'ROCKETMQ')
>>> encode_frame(cmd) == frame
True

:class:`FrameDecoder` is the incremental reader for a byte stream: it checks the length word
*before* buffering a frame, so a peer announcing a 2 GiB frame costs nothing.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from rmqlb.errors import FrameError
from rmqlb.remoting.codes import (
    LANGUAGE_BYTES,
    RMQLB_LANGUAGE,
    RMQLB_VERSION,
    LanguageCode,
    language_name,
)
from rmqlb.remoting.fastjson import quote

MAX_FRAME_SIZE = 16 * 1024 * 1024
"""Largest frame accepted, *including* the 4-byte length field (Java's default limit)."""

FLAG_RESPONSE = 1
FLAG_ONEWAY = 2

_MAX_HEADER_LENGTH = 0xFFFFFF
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_BIN_FIXED = struct.Struct(">hBhii")  # code, language, version, opaque, flag


class SerializeType(IntEnum):
    """How the header of a frame is encoded (the high byte of the header-length word)."""

    JSON = 0
    ROCKETMQ = 1


@dataclass(frozen=True)
class RemotingCommand:
    """One request or response (Java ``RemotingCommand``).

    ``language`` is the enum name (``"JAVA"``); a language byte unknown to rmqlb is kept as
    its decimal text. ``ext_fields`` ``None`` means absent (not ``{}``); a ``None`` value is
    what the binary header decodes an empty string to, and is omitted when encoding.
    """

    code: int
    opaque: int = 0
    flag: int = 0
    language: str = RMQLB_LANGUAGE
    version: int = RMQLB_VERSION
    remark: str | None = None
    ext_fields: dict[str, str | None] | None = None
    body: bytes = field(default=b"", repr=False)
    serialize_type: SerializeType = SerializeType.JSON

    @property
    def is_response(self) -> bool:
        """Flag bit 0: this frame answers the request with the same opaque."""
        return bool(self.flag & FLAG_RESPONSE)

    @property
    def is_oneway(self) -> bool:
        """Flag bit 1: a request that gets no response."""
        return bool(self.flag & FLAG_ONEWAY)

    def ext(self, key: str) -> str | None:
        """One extField value, ``None`` when absent."""
        return None if self.ext_fields is None else self.ext_fields.get(key)

    def __repr__(self) -> str:
        kind = "response" if self.is_response else "request"
        return (
            f"RemotingCommand({kind} code={self.code} opaque={self.opaque} flag={self.flag} "
            f"language={self.language} version={self.version} remark={self.remark!r} "
            f"ext_fields={self.ext_fields!r} body={len(self.body)} bytes "
            f"serialize_type={self.serialize_type.name})"
        )


_new = object.__new__


def _command(  # noqa: PLR0917  (one parameter per field, in field order)
    code: int,
    opaque: int,
    flag: int,
    language: str,
    version: int,
    remark: str | None,
    ext_fields: dict[str, str | None] | None,
    body: bytes,
    serialize_type: SerializeType,
) -> RemotingCommand:
    """``RemotingCommand(...)`` for values already checked, in half the time: the frozen
    dataclass's ``__init__`` sets each of the 9 fields through ``object.__setattr__``; this
    fills the instance's ``__dict__`` at once (the same, equal, still-frozen object). Every
    frame read and every request written is built here."""
    cmd: RemotingCommand = _new(RemotingCommand)
    cmd.__dict__.update(
        code=code,
        opaque=opaque,
        flag=flag,
        language=language,
        version=version,
        remark=remark,
        ext_fields=ext_fields,
        body=body,
        serialize_type=serialize_type,
    )
    return cmd


def request(
    code: int,
    ext_fields: Mapping[str, str | None] | None = None,
    *,
    opaque: int = 0,
    body: bytes = b"",
    oneway: bool = False,
) -> RemotingCommand:
    """A request as rmqlb sends it (language PYTHON, version :data:`RMQLB_VERSION`)."""
    return _command(
        int(code),
        int(opaque),
        FLAG_ONEWAY if oneway else 0,
        RMQLB_LANGUAGE,
        RMQLB_VERSION,
        None,
        dict(ext_fields) if ext_fields is not None else None,
        bytes(body),
        SerializeType.JSON,
    )


def response_to(
    req: RemotingCommand,
    code: int,
    *,
    body: bytes = b"",
    remark: str | None = None,
    ext_fields: Mapping[str, str | None] | None = None,
    language: str = RMQLB_LANGUAGE,
    version: int = RMQLB_VERSION,
    serialize_type: SerializeType | None = None,
) -> RemotingCommand:
    """The response to ``req``: same opaque, response flag set.

    ``language``/``version`` are the *responder's* (a fake broker passes ``"JAVA"`` and the
    version it emulates); the header encoding defaults to the request's.
    """
    return RemotingCommand(
        code=int(code),
        opaque=req.opaque,
        flag=FLAG_RESPONSE,
        language=language,
        version=version,
        remark=remark,
        ext_fields=dict(ext_fields) if ext_fields is not None else None,
        body=body,
        serialize_type=req.serialize_type if serialize_type is None else serialize_type,
    )


# --------------------------------------------------------------------------- encoding


def _json_header(cmd: RemotingCommand) -> bytes:
    # One format string, not a list of parts joined (the header of every request sent).
    ext = cmd.ext_fields
    if ext is None:
        fields = ""
    else:
        entries = ",".join(
            [f"{quote(str(k))}:{quote(str(v))}" for k, v in ext.items() if v is not None]
        )
        fields = f'"extFields":{{{entries}}},'
    remark = "" if cmd.remark is None else f'"remark":{quote(cmd.remark)},'
    return (
        f'{{"code":{int(cmd.code)},{fields}"flag":{int(cmd.flag)},'
        f'"language":{quote(cmd.language)},"opaque":{int(cmd.opaque)},{remark}'
        f'"serializeTypeCurrentRPC":"JSON","version":{int(cmd.version)}}}'
    ).encode("utf-8", "replace")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "replace")


def _language_byte(name: str) -> int:
    code = LANGUAGE_BYTES.get(name)
    if code is not None:
        return code
    if name.isdigit() and int(name) < 256:
        return int(name)
    return LanguageCode.OTHER


def _binary_header(cmd: RemotingCommand) -> bytes:
    for what, value, lo, hi in (
        ("code", cmd.code, -0x8000, 0x7FFF),
        ("version", cmd.version, -0x8000, 0x7FFF),
        ("opaque", cmd.opaque, -0x80000000, 0x7FFFFFFF),
        ("flag", cmd.flag, -0x80000000, 0x7FFFFFFF),
    ):
        if not lo <= value <= hi:
            raise FrameError(f"{what} {value} does not fit the binary (ROCKETMQ) header")
    out = bytearray(
        _BIN_FIXED.pack(cmd.code, _language_byte(cmd.language), cmd.version, cmd.opaque, cmd.flag)
    )
    remark = _utf8(cmd.remark) if cmd.remark else b""
    out += _INT32.pack(len(remark)) + remark
    ext = bytearray()
    for key, text in (cmd.ext_fields or {}).items():
        if text is None:
            continue  # Java skips null keys/values
        k, v = _utf8(key), _utf8(text)
        if len(k) > 0x7FFF:
            raise FrameError("extFields key longer than 32767 bytes")
        ext += struct.pack(">h", len(k)) + k + _INT32.pack(len(v)) + v
    out += _INT32.pack(len(ext)) + ext
    return bytes(out)


def encode_frame(cmd: RemotingCommand) -> bytes:
    """The complete frame for ``cmd``, 4-byte length prefix included.

    The header encoding is ``cmd.serialize_type``. Raises :class:`FrameError` when the frame
    would exceed :data:`MAX_FRAME_SIZE` or a field does not fit the binary header.
    """
    if cmd.serialize_type == SerializeType.ROCKETMQ:
        header = _binary_header(cmd)
    else:
        header = _json_header(cmd)
    if len(header) > _MAX_HEADER_LENGTH:
        raise FrameError(f"header of {len(header)} bytes exceeds the 24-bit header length")
    total = 4 + len(header) + len(cmd.body)
    if total + 4 > MAX_FRAME_SIZE:
        raise FrameError(f"frame of {total + 4} bytes exceeds the {MAX_FRAME_SIZE} byte limit")
    word = (int(cmd.serialize_type) << 24) | len(header)
    return _UINT32.pack(total) + _UINT32.pack(word) + header + cmd.body


# --------------------------------------------------------------------------- decoding


def _int_field(header: Mapping[str, Any], name: str, default: int) -> int:
    value = header.get(name, default)
    if type(value) is int:
        return value
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if (
            isinstance(value, str)
            and value.isascii()
            and value.lstrip("-").isdigit()
            and len(value) < 20
        ):
            return int(value)
        raise FrameError(f"JSON header field {name!r} is not an integer: {value!r:.40}")
    return value


def _ext_value(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: The header keys as Java writes them: a header with only these needs no case folding.
_JAVA_KEYS = frozenset(
    (
        "code",
        "extFields",
        "flag",
        "language",
        "opaque",
        "remark",
        "serializeTypeCurrentRPC",
        "version",
    )
)


#: The standard library's JSON scanner itself: ``json.loads`` without its two Python-level
#: calls and whitespace matches (a header never has whitespace around it; one that has goes
#: through ``json.loads``, which reads it the same or fails with the same message).
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _parse_json_header(raw: bytes) -> Any:
    text = raw.decode("utf-8", "replace")
    try:
        parsed, end = _scan(text, 0)
        if end == len(text):
            return parsed
    except (StopIteration, ValueError, RecursionError):
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"JSON header is not valid JSON: {exc}") from exc


def _plain_ext(ext_raw: dict[str, Any]) -> bool:
    """Whether every extFields value is a string or null (then kept as it was decoded)."""
    return all(value is None or type(value) is str for value in ext_raw.values())


def _decode_json_header(raw: bytes, body: bytes = b"") -> RemotingCommand:
    parsed = _parse_json_header(raw)
    if not isinstance(parsed, dict):
        raise FrameError("JSON header is not a JSON object")
    # fastjson matches property names case-insensitively; so do we.
    if _JAVA_KEYS.issuperset(parsed):
        header = parsed  # Java's own spelling: nothing to fold
        ext_raw = parsed.get("extFields")
    else:
        header = {str(k).lower(): v for k, v in parsed.items()}
        ext_raw = header.get("extfields")
    language = header.get("language", "JAVA")
    if isinstance(language, int) and not isinstance(language, bool):
        language = language_name(language)
    elif not isinstance(language, str):
        language = "JAVA" if language is None else str(language)
    remark = header.get("remark")
    if remark is not None and not isinstance(remark, str):
        remark = str(remark)
    ext_fields: dict[str, str | None] | None
    if ext_raw is None:
        ext_fields = None
    elif type(ext_raw) is dict and _plain_ext(ext_raw):
        ext_fields = ext_raw  # JSON object keys are strings: nothing to convert
    elif isinstance(ext_raw, dict):
        ext_fields = {str(k): _ext_value(v) for k, v in ext_raw.items()}
    else:
        raise FrameError("JSON header field 'extFields' is not an object")
    code, opaque, flag, version = (
        header.get("code", 0),
        header.get("opaque", 0),
        header.get("flag", 0),
        header.get("version", 0),
    )
    if not (type(code) is type(opaque) is type(flag) is type(version) is int):
        code = _int_field(header, "code", 0)
        opaque = _int_field(header, "opaque", 0)
        flag = _int_field(header, "flag", 0)
        version = _int_field(header, "version", 0)
    return _command(
        code, opaque, flag, language, version, remark, ext_fields, body, SerializeType.JSON
    )


def _decode_binary_header(raw: bytes, body: bytes = b"") -> RemotingCommand:
    size = len(raw)
    if size < _BIN_FIXED.size + 8:
        raise FrameError(f"binary header of {size} bytes is shorter than the fixed 21 bytes")
    code, lang, version, opaque, flag = _BIN_FIXED.unpack_from(raw, 0)
    pos = _BIN_FIXED.size
    (remark_len,) = _INT32.unpack_from(raw, pos)
    pos += 4
    if remark_len < 0 or remark_len > size - pos - 4:
        raise FrameError(f"binary header remark length {remark_len} exceeds the header")
    remark = raw[pos : pos + remark_len].decode("utf-8", "replace") if remark_len else None
    pos += remark_len
    (ext_len,) = _INT32.unpack_from(raw, pos)
    pos += 4
    if ext_len < 0 or ext_len > size - pos:
        raise FrameError(f"binary header extFields length {ext_len} exceeds the header")
    end = pos + ext_len
    ext_fields: dict[str, str | None] | None = {} if ext_len else None
    while pos < end:
        if end - pos < 2:
            raise FrameError("binary header extFields entry is truncated")
        (klen,) = struct.unpack_from(">h", raw, pos)
        pos += 2
        if klen < 0 or end - pos < klen + 4:
            raise FrameError("binary header extFields key is truncated")
        key = raw[pos : pos + klen].decode("utf-8", "replace")
        pos += klen
        (vlen,) = _INT32.unpack_from(raw, pos)
        pos += 4
        if vlen < 0 or end - pos < vlen:
            raise FrameError("binary header extFields value is truncated")
        value = raw[pos : pos + vlen].decode("utf-8", "replace") if vlen else None
        pos += vlen
        assert ext_fields is not None
        ext_fields[key] = value  # an empty string comes back as null, as in Java
    if pos != size:
        raise FrameError(f"binary header has {size - pos} unexpected trailing bytes")
    return RemotingCommand(
        code=code,
        opaque=opaque,
        flag=flag,
        language=language_name(lang),
        version=version,
        remark=remark,
        ext_fields=ext_fields,
        body=body,
        serialize_type=SerializeType.ROCKETMQ,
    )


def decode_frame(buf: bytes | bytearray | memoryview) -> RemotingCommand:
    """Decode one frame given the bytes *after* the 4-byte length prefix.

    Raises :class:`FrameError` for a bad header length, an unknown serialize type or a
    header that does not decode.
    """
    data = bytes(buf)
    if len(data) < 4:
        raise FrameError(f"frame of {len(data)} bytes is too short for the header length")
    (word,) = _UINT32.unpack_from(data, 0)
    stype, header_len = word >> 24, word & _MAX_HEADER_LENGTH
    if header_len > len(data) - 4:
        raise FrameError(
            f"bad header length {header_len}: only {len(data) - 4} bytes follow in the frame"
        )
    header = data[4 : 4 + header_len]
    body = data[4 + header_len :]
    if stype == SerializeType.JSON:
        return _decode_json_header(header, body)
    if stype == SerializeType.ROCKETMQ:
        return _decode_binary_header(header, body)
    raise FrameError(f"unknown serialize type {stype} (expected 0 JSON or 1 ROCKETMQ)")


def _http_answer(head: bytes) -> str:
    """What to say when a peer answers a remoting frame in HTTP: a web server's port (a
    dashboard, a proxy's HTTP endpoint) was given where a RocketMQ one was meant.

    >>> _http_answer(b"HTTP/1.1 400 Bad Request\\r\\nServer: nginx\\r\\n")[:60]
    "the peer answered in HTTP ('HTTP/1.1 400 Bad Request'), not "
    """
    status = head.split(b"\r\n", 1)[0].split(b"\n", 1)[0].decode("ascii", "replace")
    return (
        f"the peer answered in HTTP ({status!r}), not in RocketMQ's protocol: this is a web "
        "server's port (a NameServer listens on 9876 by default, a broker on 10911)"
    )


class FrameDecoder:
    """Turns a byte stream into commands; keeps at most one partial frame.

    >>> dec = FrameDecoder()
    >>> wire = encode_frame(RemotingCommand(code=105, opaque=7))
    >>> dec.feed(wire[:5]), [c.opaque for c in dec.feed(wire[5:] + wire)]
    ([], [7, 7])

    Errors are sticky: once a frame was rejected the stream is out of sync, and every later
    ``feed`` raises the same :class:`FrameError` (close the connection).
    """

    def __init__(self, max_frame_size: int = MAX_FRAME_SIZE) -> None:
        if max_frame_size < 12:
            raise ValueError("max_frame_size must allow at least the 8-byte frame preamble")
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._error: FrameError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held for a frame not yet complete."""
        return len(self._buf)

    def _check_preamble(self, buf: bytearray, pos: int) -> int:
        if buf.startswith(b"HTTP", pos):  # as a length, 1.2 GB: never a frame
            raise FrameError(_http_answer(bytes(buf[pos : pos + 200])))
        (total,) = _UINT32.unpack_from(buf, pos)
        if total + 4 > self.max_frame_size:
            raise FrameError(
                f"frame length {total} exceeds the maximum frame size {self.max_frame_size}"
                if total < 0x80000000
                else f"negative frame length {total - 0x100000000}"
            )
        if total < 4:
            raise FrameError(f"frame length {total} is too short for the header length")
        if len(buf) - pos >= 8:
            (word,) = _UINT32.unpack_from(buf, pos + 4)
            if (word & _MAX_HEADER_LENGTH) > total - 4:
                raise FrameError(
                    f"bad header length {word & _MAX_HEADER_LENGTH} in a frame of {total} bytes"
                )
            if word >> 24 not in (SerializeType.JSON, SerializeType.ROCKETMQ):
                raise FrameError(f"unknown serialize type {word >> 24}")
        return int(total)

    def feed(self, data: bytes | bytearray | memoryview) -> list[RemotingCommand]:
        """Add bytes; return every command completed by them (possibly none)."""
        if self._error is not None:
            raise self._error
        buf = self._buf
        buf += data
        out: list[RemotingCommand] = []
        pos = 0
        try:
            with memoryview(buf) as view:  # released before ``buf`` is cut below
                while len(buf) - pos >= 4:
                    total = self._check_preamble(buf, pos)
                    if len(buf) - pos - 4 < total:
                        break
                    out.append(decode_frame(bytes(view[pos + 4 : pos + 4 + total])))
                    pos += 4 + total
        except FrameError as exc:
            self._error = exc
            self._buf = bytearray()
            raise
        if pos:
            del buf[:pos]
        return out
