"""The answers recorded from a real RocketMQ 4.9.8 cluster, and a server that replays them.

``tests/data/real-4.9.8`` holds what ``tests/record_real.py`` recorded (see its README):
every answer rmqlb's collector received while capturing the cluster, plus the answers to
the other read-only requests. :func:`load` reads them back as :class:`Recorded` answers;
:class:`Replay` serves them over TCP on loopback (a NameServer and one listener per
broker), so the real collector can capture the recorded cluster again without Java.

Replay rules: a request is answered with the recorded answer to the same target, code and
extFields (QUERY_CONSUMER_OFFSET's ``lo=false``, added since, aside; a running-info request
with the answer recorded for that client via any broker: the broker relays the client's own
answer); broker addresses inside bodies become the replay's; a request nothing was recorded
for is answered code 3 and remembered in
:attr:`Replay.unanswered`, so a test can fail on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmqlb.errors import ProtocolError
from rmqlb.remoting import bodies
from rmqlb.remoting.codes import RequestCode, request_code_name
from rmqlb.remoting.frame import (
    FLAG_RESPONSE,
    FrameDecoder,
    RemotingCommand,
    SerializeType,
    encode_frame,
)

REAL = Path(__file__).resolve().parent / "data" / "real-4.9.8"
NAMESRV = "namesrv"
PROXY = "proxy"  # a 5.1 Proxy's remoting port (recorded with --proxy)


@dataclass(frozen=True)
class Recorded:
    """One recorded request and the real answer to it."""

    label: str
    by: str
    note: str
    target: str
    code: int
    ext_fields: Mapping[str, str]
    response: RemotingCommand
    request_body: bytes = b""

    @property
    def name(self) -> str:
        """``105 RecTopic``: the request code and the label, for test ids."""
        return f"{self.code}-{self.label}"

    @property
    def request_name(self) -> str:
        """The request code's Java name."""
        return request_code_name(self.code)


def _response(raw: Mapping[str, Any], directory: Path) -> RemotingCommand:
    body_file = raw.get("bodyFile")
    body = (directory / body_file).read_bytes() if body_file else b""
    if len(body) != raw["bodyLength"]:
        raise ValueError(f"{body_file}: {len(body)} bytes, the manifest says {raw['bodyLength']}")
    return RemotingCommand(
        code=raw["code"],
        opaque=0,
        flag=raw["flag"],
        language=raw["language"],
        version=raw["version"],
        remark=raw["remark"],
        ext_fields=raw["extFields"],
        body=body,
        serialize_type=SerializeType[raw["serializeType"]],
    )


def manifest(directory: Path = REAL) -> dict[str, Any]:
    """The recording's manifest (scenario and answers) as stored."""
    loaded: dict[str, Any] = json.loads((directory / "manifest.json").read_text("utf-8"))
    return loaded


def load(directory: Path = REAL) -> list[Recorded]:
    """Every recorded answer, in the order it was received."""
    return [
        Recorded(
            label=entry["label"],
            by=entry["by"],
            note=entry["note"],
            target=entry["request"]["target"],
            code=entry["request"]["code"],
            ext_fields=dict(entry["request"]["extFields"]),
            response=_response(entry["response"], directory),
            request_body=entry["request"].get("body", "").encode(),
        )
        for entry in manifest(directory)["answers"]
    ]


def find(recorded: Iterable[Recorded], code: int, label: str) -> Recorded:
    """The answer recorded under ``code`` and ``label``."""
    for rec in recorded:
        if (rec.code, rec.label) == (code, label):
            return rec
    raise KeyError(f"nothing recorded as {code}-{label}")


def broker_addrs(recorded: Iterable[Recorded]) -> dict[str, str]:
    """Broker name -> the address the real cluster gave it (from its cluster info)."""
    for rec in recorded:
        if rec.code == RequestCode.GET_BROKER_CLUSTER_INFO and rec.response.code == 0:
            info = bodies.decode_cluster_info(rec.response.body)
            return {name: b.addrs[0] for name, b in info.brokers.items()}
    raise KeyError("no cluster info recorded")


def swap_addrs(body: bytes, addrs: Mapping[str, str]) -> bytes:
    """``body`` with every address of ``addrs`` (old -> new) replaced."""
    for old, new in addrs.items():
        body = body.replace(old.encode(), new.encode())
    return body


@dataclass
class Replay:
    """Serves ``recorded`` on loopback; ``async with`` starts and stops it."""

    recorded: list[Recorded]
    namesrv_addr: str = ""
    addrs: dict[str, str] = field(default_factory=dict)  # target -> replay address
    unanswered: list[str] = field(default_factory=list)
    _swap: dict[str, str] = field(default_factory=dict)
    _servers: list[asyncio.Server] = field(default_factory=list)
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    async def __aenter__(self) -> Replay:
        real = broker_addrs(self.recorded)
        proxies = sorted({r.target for r in self.recorded if r.target.startswith(PROXY)})
        for target in [NAMESRV, *sorted(real), *proxies]:
            server = await asyncio.start_server(self._handler(target), "127.0.0.1", 0)
            self._servers.append(server)
            self.addrs[target] = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self.namesrv_addr = self.addrs[NAMESRV]
        self._swap = {real[name]: self.addrs[name] for name in real}
        return self

    async def __aexit__(self, *exc: object) -> None:
        for server in self._servers:
            server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2.0)
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    def answer(self, target: str, cmd: RemotingCommand) -> RemotingCommand:
        """The recorded answer to ``cmd`` sent to ``target`` (code 3 when there is none)."""
        fields = {k: v or "" for k, v in (cmd.ext_fields or {}).items()}
        # rmqlb has asked QUERY_CONSUMER_OFFSET with lo=false (the broker's own queue id)
        # since these were recorded: for the recorded topics, none of them static, every
        # broker answers the same with and without it (4.x brokers ignore it)
        if cmd.code == RequestCode.QUERY_CONSUMER_OFFSET and fields.get("lo") == "false":
            del fields["lo"]
        relayed = cmd.code == RequestCode.GET_CONSUMER_RUNNING_INFO
        for rec in self.recorded:
            same = (
                rec.code == cmd.code
                and dict(rec.ext_fields) == fields
                and rec.request_body == bytes(cmd.body)
            )
            if same and (rec.target == target or relayed):
                resp = rec.response
                return RemotingCommand(
                    code=resp.code,
                    opaque=cmd.opaque,
                    flag=FLAG_RESPONSE,
                    language=resp.language,
                    version=resp.version,
                    remark=resp.remark,
                    ext_fields=None if resp.ext_fields is None else dict(resp.ext_fields),
                    body=swap_addrs(resp.body, self._swap),
                    serialize_type=resp.serialize_type,
                )
        self.unanswered.append(f"{target} {request_code_name(cmd.code)} {fields}")
        return RemotingCommand(
            code=3, opaque=cmd.opaque, flag=FLAG_RESPONSE, language="JAVA", version=409
        )

    def _handler(self, target: str) -> Any:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if task is not None:
                self._tasks.add(task)
            self._writers.add(writer)
            decoder = FrameDecoder()
            try:
                while data := await reader.read(65536):
                    for cmd in decoder.feed(data):
                        writer.write(encode_frame(self.answer(target, cmd)))
                    await writer.drain()
            except (ConnectionError, OSError, ProtocolError, asyncio.CancelledError):
                pass  # the peer hung up, or the replay is shutting down
            finally:
                self._writers.discard(writer)
                writer.close()
                if task is not None:
                    self._tasks.discard(task)

        return handle
