"""The fake's 4.9 dialect answers every request like the recorded real 4.9.8 cluster.

rmqlb's collector captures the recorded cluster (``tests/data/real-4.9.8``, replayed over
TCP), the fake serves that snapshot, and every recorded request goes to the fake too. Its
answer must be the real one: the same header (code, remark, extFields, language, version),
the same keys at every level of the body in the same order with the same kinds of values
and the same quirks (bare integer keys, MessageQueue keys), and the same bytes, after only
the differences docs/protocol.md lists ("Where the fake differs from a real 4.9.8 broker"),
each a named rule in :data:`DIFFERENCES` that must still be needed by this recording.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from real_recording import NAMESRV, Recorded, Replay, broker_addrs, load, swap_addrs

from rmqlb.client.admin import ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.client.connection import Connection
from rmqlb.fake import FakeCluster
from rmqlb.model import Snapshot
from rmqlb.remoting import bodies, fastjson
from rmqlb.remoting.fastjson import ObjectKey
from rmqlb.remoting.frame import RemotingCommand

ROOT = Path(__file__).resolve().parents[3]
RECORDED = load()


@dataclass(frozen=True)
class Served:
    """What the fake made of the recording: the snapshot it served and its answers."""

    snapshot: Snapshot
    unanswered: list[str]
    answers: dict[str, RemotingCommand]  # by Recorded.name, addresses back to the real ones


async def _serve() -> Served:
    async with Replay(RECORDED) as replay:
        options = CollectOptions(namesrv=(replay.namesrv_addr,), client=ClientOptions(5.0))
        snapshot = await collect(options)
    real = broker_addrs(RECORDED)
    answers = {}
    async with FakeCluster(snapshot, dialect=4, faults=["relay-delay=0"]) as fake:
        back = {fake.broker_addrs[name]: addr for name, addr in real.items()}
        conns: dict[str, Connection] = {}
        for rec in RECORDED:
            addr = fake.namesrv_addr if rec.target == NAMESRV else fake.broker_addrs[rec.target]
            if addr not in conns:
                conns[addr] = await Connection.open(addr, timeout=5)
            resp = await conns[addr].request(rec.code, dict(rec.ext_fields), timeout=5)
            answers[rec.name] = RemotingCommand(
                code=resp.code,
                flag=resp.flag,
                language=resp.language,
                version=resp.version,
                remark=resp.remark,
                ext_fields=resp.ext_fields,
                body=swap_addrs(resp.body, back),
                serialize_type=resp.serialize_type,
            )
        for conn in conns.values():
            await conn.close()
    return Served(snapshot, replay.unanswered, answers)


@pytest.fixture(scope="module")
def served() -> Served:
    return asyncio.run(_serve())


def _client_addrs(snapshot: Snapshot) -> dict[str, str]:
    return {
        c.client_id: c.client_addr
        for g in snapshot.groups.values()
        for c in g.consumers
        if c.client_addr is not None
    }


# --------------------------------------------------------------------------- differences

Body = dict[Hashable, Any]
Rule = Callable[[Recorded, Body, Body, Snapshot], None]


def _data_version(rec: Recorded, real: Body, fake: Body, snapshot: Snapshot) -> None:
    if "dataVersion" in real:
        real["dataVersion"] = fake["dataVersion"]


def _client_order(rec: Recorded, real: Body, fake: Body, snapshot: Snapshot) -> None:
    for body in (real, fake):
        if "consumerIdList" in body:
            body["consumerIdList"] = sorted(body["consumerIdList"])
        if "connectionSet" in body:
            body["connectionSet"] = sorted(body["connectionSet"], key=lambda c: c["clientId"])


def _client_addr(rec: Recorded, real: Body, fake: Body, snapshot: Snapshot) -> None:
    addrs = _client_addrs(snapshot)
    for c in real.get("connectionSet", ()):
        c["clientAddr"] = addrs[c["clientId"]]


def _cached_offsets(rec: Recorded, real: Body, fake: Body, snapshot: Snapshot) -> None:
    for mq, pq in real.get("mqTable", {}).items():
        for key in ("cachedMsgMinOffset", "cachedMsgMaxOffset"):
            pq[key] = fake["mqTable"][mq][key]


#: The runtime statistics the fake serves (docs/protocol.md: "runtime statistics").
RUNTIME_KEYS = frozenset({"brokerVersionDesc", "brokerVersion"})


def _runtime_statistics(rec: Recorded, real: Body, fake: Body, snapshot: Snapshot) -> None:
    # The real table cut to the documented keys, not to the fake's: a key the fake drops
    # must fail the comparison.
    real["table"] = {k: v for k, v in real["table"].items() if k in RUNTIME_KEYS}


def _broker_config(rec: Recorded, real: Body, fake: Body, snapshot: Snapshot) -> None:
    # The real settings cut to the keys rmqlb reads, in one order on both sides.
    kept = {k: v for k, v in real.items() if k in bodies.BROKER_CONFIG_KEYS}
    real.clear()
    real.update(sorted(kept.items()))
    ordered = sorted(fake.items())
    fake.clear()
    fake.update(ordered)


#: name (as docs/protocol.md spells it) -> (request codes, rule).
DIFFERENCES: dict[str, tuple[frozenset[int], Rule]] = {
    "broker config": (frozenset({26}), _broker_config),
    "data version": (frozenset({201, 26}), _data_version),
    "client order": (frozenset({38, 203}), _client_order),
    "one address per client": (frozenset({203}), _client_addr),
    "cached message offsets": (frozenset({307}), _cached_offsets),
    "runtime statistics": (frozenset({28}), _runtime_statistics),
}


def _remark(rec: Recorded, remark: str | None, snapshot: Snapshot) -> str | None:
    """A relay timeout names the relaying broker's own channel to the client: the fake has
    one address per client (the "one address per client" difference)."""
    if remark is None or rec.response.code != 207:
        return remark
    addr = _client_addrs(snapshot)[rec.ext_fields["clientId"]]
    return re.sub(r"on the channel <[^>]*>", f"on the channel <{addr}>", remark)


def _properties(body: bytes) -> Body:
    """A ``java.util.Properties`` text body (GET_BROKER_CONFIG) as a map, in its order."""
    lines = body.decode().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)  # type: ignore[misc]


def _parse(rec: Recorded, body: bytes) -> Body:
    if rec.code == 26:
        return _properties(body)
    parsed: Body = fastjson.loads(body)
    return parsed


def _ext(rec: Recorded, ext: Any) -> Any:
    """Response extFields; a broker config's data version (a time stamp) is one of the
    "data version" difference."""
    if rec.code == 26 and ext and "version" in ext:
        return {**ext, "version": "<data version>"}
    return ext


def _normalized(
    rec: Recorded, fake: RemotingCommand, snapshot: Snapshot
) -> tuple[bytes, bytes, set[str]]:
    """Both bodies after the differences for ``rec``'s code, and the names that mattered."""
    real_body, fake_body = _parse(rec, rec.response.body), _parse(rec, fake.body)
    used = set()
    for name, (codes, rule) in DIFFERENCES.items():
        if rec.code in codes:
            before = (fastjson.dumps(real_body), fastjson.dumps(fake_body))
            rule(rec, real_body, fake_body, snapshot)
            after = (fastjson.dumps(real_body), fastjson.dumps(fake_body))
            if after != before:
                used.add(name)
    return fastjson.dumps(real_body), fastjson.dumps(fake_body), used


def skeleton(value: Any) -> Any:
    """``value`` with every leaf replaced by its kind: keys, their order and kinds stay."""
    if isinstance(value, dict):
        return [(_key(k), skeleton(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [skeleton(v) for v in value]
    return "null" if value is None else type(value).__name__


def _key(key: Hashable) -> Any:
    if isinstance(key, ObjectKey):
        return ("object", tuple(key.items()))  # written as a JSON object, in this order
    if isinstance(key, int):
        return ("bare int", key)
    return key


# --------------------------------------------------------------------------- tests


def test_the_collector_captures_the_recorded_cluster(served: Served) -> None:
    # The recording predates the group sweep (QUERY_TOPIC_CONSUME_BY_WHO of every topic on
    # every broker): it holds that answer of broker-a only. Every other request is answered.
    unanswered = [u for u in served.unanswered if "QUERY_TOPIC_CONSUME_BY_WHO" not in u]
    assert unanswered == []
    assert served.unanswered == ["broker-b QUERY_TOPIC_CONSUME_BY_WHO {'topic': 'RecTopic'}"]
    assert sorted(served.snapshot.groups) == sorted(
        r.ext_fields["consumerGroup"] for r in RECORDED if r.code == 38 and r.response.code == 0
    )
    frozen = served.snapshot.groups["RecFrozenGroup"].consumers[0]
    assert frozen.assigned is None  # the client that did not answer: actual unknown
    errors = served.snapshot.errors
    sweep = [e for e in errors if e.request == "QUERY_TOPIC_CONSUME_BY_WHO"]
    assert [e.target for e in errors if e not in sweep] == [frozen.client_id]


@pytest.mark.parametrize("rec", RECORDED, ids=[r.name for r in RECORDED])
def test_the_fake_answers_like_the_real_cluster(rec: Recorded, served: Served) -> None:
    fake, real = served.answers[rec.name], rec.response
    assert (fake.code, _ext(rec, fake.ext_fields), fake.language, fake.version, fake.flag) == (
        real.code,
        _ext(rec, real.ext_fields),
        real.language,
        real.version,
        real.flag,
    )
    assert _remark(rec, fake.remark, served.snapshot) == _remark(rec, real.remark, served.snapshot)
    assert fake.serialize_type == real.serialize_type
    if not real.body:
        assert fake.body == b""
        return
    if rec.code not in (28, 26):  # the fake's runtime info and config: the keys rmqlb reads
        assert skeleton(fastjson.loads(fake.body)) == skeleton(fastjson.loads(real.body))
    real_bytes, fake_bytes, used = _normalized(rec, fake, served.snapshot)
    assert fake_bytes == real_bytes
    if not used:
        assert fake.body == real.body  # byte for byte, as the server wrote it


def test_every_listed_difference_is_needed_and_documented(served: Served) -> None:
    used: set[str] = set()
    for rec in RECORDED:
        if rec.response.body:
            used |= _normalized(rec, served.answers[rec.name], served.snapshot)[2]
    assert used == set(DIFFERENCES)
    docs = (ROOT / "docs" / "protocol.md").read_text("utf-8")
    section = docs[docs.index("## Where the fake differs from a real 4.9.8 broker") :]
    for name in DIFFERENCES:
        assert f"**{name}**" in section, name


def test_most_answers_are_byte_for_byte_the_real_ones(served: Served) -> None:
    same = [r.name for r in RECORDED if served.answers[r.name].body == r.response.body]
    with_body = [r for r in RECORDED if r.response.body]
    # every route, cluster info, topic/group list, topic stats of the retry topics, and the
    # running info of the clients whose process queues hold no cached messages
    assert len(same) >= len(RECORDED) // 2
    assert {r.code for r in with_body if r.name in same} >= {105, 106, 206, 300, 307, 202}
