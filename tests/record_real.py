"""Record what a real RocketMQ NameServer and its brokers answer to the requests rmqlb sends.

Run it against a disposable cluster (the 4.9.8 kit in ``../shared/rocketmq``) once the
scenario of ``tests/data/real-4.9.8/README.md`` has settled::

    .venv/bin/python tests/record_real.py --namesrv 127.0.0.1:49876 \\
        --out tests/data/real-4.9.8 --topic RecTopic

Two kinds of answers are kept, both through rmqlb's own read-only client (the allowlist
applies: nothing sent can change the cluster):

* ``collector``: every answer rmqlb's collector receives while it captures the whole cluster
  (``rmqlb dump`` without ``--group``), taken with the client's response tap. Replaying them
  gives the collector exactly the same answers again (``tests/real_recording.py``).
* ``recorder``: the requests the collector does not send (consumer ids, topic list, groups of
  a topic, max/min offsets, runtime info) and the error answers (unknown topic, group, client).

For every answer, the body goes byte for byte into ``<code>-<label>.body`` (when there is a
body) and one entry into ``manifest.json``: the request (code, name, target, extFields) and
the response header (code, remark, extFields, language, version, flag, header encoding).
Bodies are RocketMQ's fastjson text (bare integer keys, object keys): never re-encoded.
Targets are roles (``namesrv``, ``broker-a``), not addresses; the addresses inside bodies are
the cluster's own (loopback). Client ids contain process ids. The one rewrite: with
``--kit-dir``, the cluster's directory (which a broker's runtime info names in a store-path
key) becomes ``${RMQ_DIR}``, so no machine path is stored; such an entry says ``rewritten``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmqlb.client.admin import AdminClient, ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.model import Snapshot
from rmqlb.remoting import assignment, bodies
from rmqlb.remoting.codes import RMQLB_VERSION, RequestCode, request_code_name
from rmqlb.remoting.errors import ResponseError
from rmqlb.remoting.frame import RemotingCommand

MANIFEST = "manifest.json"
KIT_DIR_TOKEN = "${RMQ_DIR}"
NAMESRV = "namesrv"
PROXY = "proxy"
TIMEOUT = 15.0  # > the broker's 10 s relay wait: a frozen client's 207 is recorded too
MISSING_TOPIC = "RecNoSuchTopic"
MISSING_GROUP = "RecNoSuchGroup"
MISSING_CLIENT = "127.0.0.1@no-such-client"


def slug(text: str) -> str:
    """A file-name-safe label part: ``%RETRY%G`` -> ``RETRY-G``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


@dataclass
class Answer:
    """One request and the answer to it, as received."""

    by: str  # "collector" or "recorder"
    addr: str
    code: int
    ext_fields: dict[str, str]
    response: RemotingCommand
    request_body: bytes = b""
    target: str = ""
    label: str = ""
    note: str = ""
    rewritten: str = ""

    @property
    def body_file(self) -> str | None:
        """The body's file name (``None``: the response had no body)."""
        return f"{self.code}-{self.label}.body" if self.response.body else None

    def entry(self) -> dict[str, Any]:
        """This answer's manifest entry."""
        resp = self.response
        return {
            "label": self.label,
            "by": self.by,
            "note": self.note,
            "rewritten": self.rewritten,
            "request": {
                "code": self.code,
                "name": request_code_name(self.code),
                "target": self.target,
                "version": RMQLB_VERSION,
                "extFields": self.ext_fields,
                **({"body": self.request_body.decode()} if self.request_body else {}),
            },
            "response": {
                "code": resp.code,
                "remark": resp.remark,
                "extFields": resp.ext_fields,
                "language": resp.language,
                "version": resp.version,
                "flag": resp.flag,
                "serializeType": resp.serialize_type.name,
                "bodyLength": len(resp.body),
                "bodyFile": self.body_file,
            },
        }


def label_for(answer: Answer, client_index: Mapping[str, int]) -> str:
    """A short unique label from the request: its target and extField values."""
    ext = dict(answer.ext_fields)
    if answer.request_body:  # QUERY_ASSIGNMENT names its group, topic and client in the body
        ext.update(assignment.decode_query_assignment_request(answer.request_body))
    parts = [ext[k] for k in ("consumerGroup", "topic", "queueId") if k in ext]
    if "clientId" in ext:
        parts.append(f"client{client_index.get(ext['clientId'], 0)}")
    if answer.target != NAMESRV and ("clientId" not in ext or answer.request_body):
        # a running-info answer is the client's, whoever relays; an assignment the broker's
        parts.append(answer.target)
    return "-".join(slug(p) for p in parts) or answer.target


@dataclass
class Recorder:
    """Keeps every answer; targets and labels are filled in once the brokers are known."""

    namesrv: str
    answers: list[Answer] = field(default_factory=list)
    by: str = "collector"
    proxies: tuple[str, ...] = ()

    def tap(
        self,
        addr: str,
        code: int,
        ext_fields: Mapping[str, str],
        body: bytes,
        response: RemotingCommand,
    ) -> None:
        """The admin client's response tap."""
        self.answers.append(Answer(self.by, addr, int(code), dict(ext_fields), response, body))

    def brokers(self) -> dict[str, str]:
        """address -> broker name, from the recorded cluster info."""
        for a in self.answers:
            if a.code == RequestCode.GET_BROKER_CLUSTER_INFO and a.response.code == 0:
                info = bodies.decode_cluster_info(a.response.body)
                return {addr: name for name, b in info.brokers.items() for addr in b.addrs.values()}
        raise SystemExit("no cluster info was recorded")

    def seen(self, target: str, code: int, ext_fields: Mapping[str, str]) -> bool:
        """Whether this exact request (without a body) was answered already."""
        return any(
            (a.target, a.code, a.ext_fields, a.request_body)
            == (target, code, dict(ext_fields), b"")
            for a in self.answers
        )

    def finish(self) -> None:
        """Fill in targets and labels (clients numbered per group in sorted id order).

        The collector asks every broker that lists a client for its running info and takes
        the first answer: only that one is kept, so a replay always gives the same.
        """
        names = self.brokers()
        relayed: set[tuple[str, str]] = set()
        kept = []
        for a in self.answers:
            if a.code == RequestCode.GET_CONSUMER_RUNNING_INFO:
                key = (a.ext_fields.get("consumerGroup", ""), a.ext_fields.get("clientId", ""))
                if key in relayed:
                    continue
                relayed.add(key)
            kept.append(a)
        self.answers = kept
        clients: dict[str, set[str]] = {}
        for i, addr in enumerate(self.proxies):
            names[addr] = PROXY if i == 0 else f"{PROXY}-{i + 1}"
        for a in self.answers:
            a.target = NAMESRV if a.addr == self.namesrv else names.get(a.addr, a.addr)
            ext = dict(a.ext_fields)
            if a.request_body:
                ext.update(assignment.decode_query_assignment_request(a.request_body))
            if "clientId" in ext:
                clients.setdefault(ext.get("consumerGroup", ""), set()).add(ext["clientId"])
        index = {cid: i for ids in clients.values() for i, cid in enumerate(sorted(ids), 1)}
        for a in self.answers:
            a.label = label_for(a, index)
        keys = [(a.code, a.label) for a in self.answers]
        if len(set(keys)) != len(keys):
            raise SystemExit(f"two answers with one label: {sorted(keys)}")


async def record(
    namesrv: str, topic: str, proxies: tuple[str, ...] = (), *, offset_tables: bool = False
) -> tuple[Recorder, Snapshot]:
    """The collector's capture (``offset_tables``: as the CLI captures every group, reading
    each broker's offset table and asking consume stats per topic), then the recorder's own
    requests."""
    rec = Recorder(namesrv, proxies=proxies)
    options = ClientOptions(timeout=TIMEOUT)
    async with AdminClient(options, tap=rec.tap) as admin:
        collect_options = CollectOptions(
            namesrv=(namesrv,), client=options, proxies=proxies, offset_tables=offset_tables
        )
        snapshot = await collect(collect_options, admin=admin)
        rec.by = "recorder"
        rec.finish()
        addrs = {name: addr for addr, name in rec.brokers().items()}
        proxy_addrs = {PROXY if i == 0 else f"{PROXY}-{i + 1}": a for i, a in enumerate(proxies)}
        first = sorted(addrs)[0]
        groups = sorted(snapshot.groups)

        async def ask(
            target: str,
            code: RequestCode,
            ext: Mapping[str, str] | None = None,
            note: str = "",
            body: bytes = b"",
        ) -> None:
            if not body and rec.seen(target, code, ext or {}):
                return
            if body and any(a.request_body == body and a.target == target for a in rec.answers):
                return
            addr = namesrv if target == NAMESRV else {**addrs, **proxy_addrs}[target]
            before = len(rec.answers)
            with contextlib.suppress(ResponseError):  # an error answer is recorded too
                await admin.call(addr, code, ext, body=body)
            if len(rec.answers) != before + 1:
                raise SystemExit(f"{request_code_name(code)} to {target}: no answer")
            rec.answers[-1].note, rec.answers[-1].target = note, target

        await ask(NAMESRV, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": MISSING_TOPIC}, "unknown")
        await ask(NAMESRV, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
        for t in (topic, MISSING_TOPIC):
            await ask(first, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": t})
        for group in [*groups, MISSING_GROUP]:
            note = "unknown" if group == MISSING_GROUP else ""
            ext = {"consumerGroup": group}
            await ask(first, RequestCode.GET_CONSUMER_LIST_BY_GROUP, ext, note)
            await ask(first, RequestCode.GET_CONSUMER_CONNECTION_LIST, ext, note)
            await ask(first, RequestCode.GET_CONSUME_STATS, ext, note)
            queue = {"consumerGroup": group, "topic": topic, "queueId": "0"}
            await ask(first, RequestCode.QUERY_CONSUMER_OFFSET, queue, note)
        missing = {"consumerGroup": MISSING_GROUP, "clientId": MISSING_CLIENT}
        await ask(
            first,
            RequestCode.GET_CONSUMER_RUNNING_INFO,
            {**missing, "jstackEnable": "false"},
            "unknown",
        )
        for code in (RequestCode.GET_MAX_OFFSET, RequestCode.GET_MIN_OFFSET):
            await ask(first, code, {"topic": topic, "queueId": "0"})
        await ask(first, RequestCode.GET_TOPIC_STATS_INFO, {"topic": MISSING_TOPIC}, "unknown")
        await ask(first, RequestCode.GET_BROKER_RUNTIME_INFO)
        await ask(first, RequestCode.GET_BROKER_CONFIG)
        await ask(first, RequestCode.GET_ALL_MESSAGE_REQUEST_MODE)
        body = assignment.encode_query_assignment_request(
            topic, MISSING_GROUP, MISSING_CLIENT, "CLUSTERING", "AVG"
        )
        await ask(first, RequestCode.QUERY_ASSIGNMENT, {}, "unknown", body)
        for target in proxy_addrs:  # what a 5.1 Proxy's remoting port answers
            for group in [*groups, MISSING_GROUP]:
                note = "unknown" if group == MISSING_GROUP else ""
                ext = {"consumerGroup": group}
                await ask(target, RequestCode.GET_CONSUMER_CONNECTION_LIST, ext, note)
                await ask(target, RequestCode.GET_CONSUMER_LIST_BY_GROUP, ext, note)
            for code in (
                RequestCode.GET_BROKER_CLUSTER_INFO,
                RequestCode.GET_CONSUME_STATS,
                RequestCode.GET_CONSUMER_RUNNING_INFO,
                RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
                RequestCode.GET_BROKER_CONFIG,
            ):
                await ask(target, code, {"consumerGroup": groups[0]} if groups else {})
    rec.finish()
    return rec, snapshot


def without_kit_dir(rec: Recorder, kit_dir: str) -> None:
    """Replace the cluster's directory in every body by :data:`KIT_DIR_TOKEN`."""
    path = kit_dir.rstrip("/").encode()
    for a in rec.answers:
        if path and path in a.response.body:
            body = a.response.body.replace(path, KIT_DIR_TOKEN.encode())
            a.response = dataclasses.replace(a.response, body=body)
            a.rewritten = f"the cluster's directory -> {KIT_DIR_TOKEN}"


def write(out: Path, rec: Recorder, scenario: Mapping[str, Any]) -> None:
    """Write every body and the manifest into ``out`` (old ``.body`` files are removed)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.body"):
        old.unlink()
    for a in rec.answers:
        if a.body_file is not None:
            (out / a.body_file).write_bytes(a.response.body)
    manifest = {"scenario": dict(scenario), "answers": [a.entry() for a in rec.answers]}
    text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    (out / MANIFEST).write_text(text, encoding="utf-8")


def append(out: Path, rec: Recorder) -> int:
    """Add to the recording in ``out`` the answers to request codes it does not have yet
    (marked ``"appended": true``); the rest of it stays as it is. Returns how many."""
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    have = {entry["request"]["code"] for entry in manifest["answers"]}
    new = [a for a in rec.answers if a.code not in have]
    for a in new:
        if a.body_file is not None:
            (out / a.body_file).write_bytes(a.response.body)
        manifest["answers"].append({**a.entry(), "appended": True})
    text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    (out / MANIFEST).write_text(text, encoding="utf-8")
    return len(new)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``--namesrv ADDR --out DIR --topic T [--append]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--namesrv", required=True, help="NameServer host:port")
    parser.add_argument("--out", required=True, type=Path, help="directory for the files")
    parser.add_argument("--topic", required=True, help="the scenario's topic")
    parser.add_argument("--kit-dir", default="", help="the cluster's directory (RMQ_DIR)")
    parser.add_argument(
        "--proxy",
        action="append",
        default=[],
        help="a 5.1 Proxy's remoting address (repeatable): its answers are recorded too",
    )
    parser.add_argument(
        "--offset-tables",
        action="store_true",
        help="capture as the CLI does for every group: offset tables, consume stats per topic",
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="only add the answers to request codes the recording in --out lacks",
    )
    args = parser.parse_args(argv)
    rec, snapshot = asyncio.run(
        record(args.namesrv, args.topic, tuple(args.proxy), offset_tables=args.offset_tables)
    )
    without_kit_dir(rec, args.kit_dir)
    if args.append:
        added = append(args.out, rec)
        print(f"{added} answers appended to {args.out}", file=sys.stderr)
        return 0
    versions = sorted({a.response.version for a in rec.answers})
    scenario = {
        "namesrv": args.namesrv,
        "proxies": list(args.proxy),
        "topic": args.topic,
        "offsetTables": args.offset_tables,
        "groups": sorted(snapshot.groups),
        "responseVersions": versions,
        "captureErrors": [f"{e.target}: {e.request}" for e in snapshot.errors],
    }
    write(args.out, rec, scenario)
    print(f"{len(rec.answers)} answers written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
