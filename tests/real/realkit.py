"""Drive the real Apache RocketMQ kit (``../shared/rocketmq``: 4.9.8, 5.0.0, 5.1.4) from the tests.

The kit's shell scripts do the work (cluster, topics, producer, ground-truth consumers); this
module only runs them with the right environment, and reads the consumers' JSON lines (what
each real Java client holds, and what its own strategy allocates it from its own inputs).

``rmqlb`` itself always runs as a separate process, as a user runs it: ``explain -n ... -o json``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmqlb.remoting.bodies import decode_consumer_connection
from rmqlb.remoting.codes import RequestCode, ResponseCode
from rmqlb.remoting.frame import FrameDecoder, RemotingCommand, encode_frame

ROOT = Path(__file__).resolve().parents[2]
#: The real lite pull consumers' program (run from source: the JRE compiles it).
LITE_PULL_RIG = Path(__file__).resolve().parent / "java" / "LitePullRig.java"
KIT = Path(os.environ.get("RMQLB_ROCKETMQ_KIT", ROOT.parent / "shared" / "rocketmq"))
CLUSTER = "DefaultCluster"

#: Ports of the test cluster: far from a user's 9876 and from the kit's own default 19876, so a
#: cluster someone left running never collides with the suite, and below Linux's ephemeral
#: range (32768..60999), where an outgoing connection's local port could take a broker's HA
#: port (port + 1) first. pytest-xdist workers add 200 each.
NAMESRV_PORT = 28876
BROKER_PORT = 29911

#: The kit's RocketMQ versions, in the order the suite runs them.
VERSIONS = ("4.9.8", "5.0.0", "5.1.4")
#: Every version: for the scenarios that mean the same on each.
ALL_VERSIONS = VERSIONS

Queue = tuple[str, str, int]  # topic, brokerName, queueId

#: How long a broker (4.x and 5.x alike) may go on listing a dead connection of a client. A
#: client closes its connection on any call that times out; a heartbeat it sent on that
#: connection, handled after the broker handled the close, registers the closed connection
#: again, and only the broker's expiry scan (every 10 s, for connections with no heartbeat in
#: 120 s) drops it. Meanwhile every client sees that id once more in its cidAll. A loaded CI
#: machine did this to one 4.9.8 client for more than a minute; ``lingering`` tells it apart.
BROKER_EXPIRY_S = 120 + 10 + 10  # + the clients' next view of cidAll
#: ``channelExpiredTimeout`` of the suite's 5.1.4 brokers (a 5.1+ setting; 120 s is fixed
#: before and the default since): not the default, so a finding that states it was read.
EXPIRY_5_1_MS = 90_000
#: The brokers' JVM flags: the kit's heap, and 512 MB of direct memory instead of its 128 MB.
#: A 5.x broker gives every thread that stores messages (pop, revive, timer, pull threads) a
#: 4 MB encoder buffer of direct memory; in a run of the 5.x tests 128 MB ran out
#: (OutOfDirectMemoryError in pop.log and store.log), pops failed, and failed messages came
#: back late or not at all. A production broker gets gigabytes (runbroker.sh).
BROKER_JOPTS = "-Xms64m -Xmx256m -XX:MaxDirectMemorySize=512m"


def qkey(q: Mapping[str, Any]) -> Queue:
    """A queue of the truth lines or of rmqlb's JSON as a sortable tuple."""
    return (q["topic"], q["brokerName"], int(q["queueId"]))


@dataclass
class Jvm:
    """One consumer.sh JVM: its name (for ``halt``), its state file and its pid;
    ``encoding``: the charset the JVM writes its state file in (its ``file.encoding``)."""

    name: str
    out: Path
    pid: int
    encoding: str = "utf-8"


@dataclass
class Kit:
    """One running kit cluster: its ports, its directory and the files of its consumers."""

    namesrv_port: int
    broker_port: int
    rmq_dir: Path
    workdir: Path
    version: str = "4.9.8"
    jvms: dict[str, Jvm] = field(default_factory=dict)

    @property
    def has_proxy(self) -> bool:
        """5.x clusters run the gRPC Proxy too."""
        return self.version != "4.9.8"

    @property
    def proxy_remoting(self) -> str | None:
        """The Proxy's remoting address (5.1.4 only: the 5.0.0 Proxy has none)."""
        if self.version in ("4.9.8", "5.0.0"):
            return None
        return f"127.0.0.1:{self.broker_port + 101}"

    @property
    def namesrv(self) -> str:
        return f"127.0.0.1:{self.namesrv_port}"

    def broker_addr(self, broker: str) -> str:
        port = self.broker_port if broker == "broker-a" else self.broker_port + 10
        return f"127.0.0.1:{port}"

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "RMQ_NAMESRV_PORT": str(self.namesrv_port),
            "RMQ_BROKER_PORT": str(self.broker_port),
            "RMQ_DIR": str(self.rmq_dir),
            "RMQ_VERSION": self.version,
            "RMQ_BROKER_JOPTS": os.environ.get("RMQ_BROKER_JOPTS", BROKER_JOPTS),
            **extra,
        }

    def _run(self, args: Sequence[str | Path], *, env: Mapping[str, str] | None = None) -> str:
        done = subprocess.run(
            [str(a) for a in args],
            env=dict(env or self.env()),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )
        return done.stdout

    # --- cluster -------------------------------------------------------------------------

    def mqadmin(self, *args: str) -> str:
        """Run the real mqadmin with the kit's NameServer."""
        return self._run([KIT / "mqadmin.sh", *args, "-n", self.namesrv])

    def topic(
        self,
        name: str,
        *,
        read: int = 4,
        write: int | None = None,
        brokers: Iterable[str] = ("broker-a", "broker-b"),
        perm: int | None = None,
        order: bool = False,
    ) -> None:
        """Create (or update) ``name`` on each broker with ``read``/``write`` queues."""
        for broker in brokers:
            args = ["updateTopic", "-b", self.broker_addr(broker), "-t", name]
            args += ["-r", str(read), "-w", str(write if write is not None else read)]
            if perm is not None:
                args += ["-p", str(perm)]
            if order:
                args += ["-o", "true"]
            self.mqadmin(*args)

    def produce(self, topic: str, count: int, tags: str = "") -> None:
        """Send ``count`` messages round-robin over the topic's write queues."""
        self._run([KIT / "producer.sh", topic, str(count), *([tags] if tags else [])])

    def group_config(self, group: str, *options: str) -> None:
        """``mqadmin updateSubGroup`` on every broker of the cluster."""
        self.mqadmin("updateSubGroup", "-c", CLUSTER, "-g", group, *options)

    def halt(self, name: str) -> None:
        """Stop one process of the kit cleanly (a consumer JVM, or ``broker-b``)."""
        self._run([KIT / "cluster.sh", "halt", name])

    def start_broker(self, broker: str) -> None:
        """Start a halted broker again, with its old configuration and store.

        A restarted 4.9.8 broker may drop a stale index file while loading, which on Java 17
        needs ``jdk.internal.ref`` opened (the kit's flags lack it: the load then fails and
        the broker exits at once), so it is added here.
        """
        script = (
            '. "$KIT/env.sh"; rmq_need_java || exit 1;'
            ' export ROCKETMQ_HOME="$RMQ_DIR";'
            ' rmq_bg "$B" "$RMQ_JAVA" $RMQ_BROKER_JOPTS $(rmq_jopts "$RMQ_DIR") -cp "$RMQ_CP"'
            ' org.apache.rocketmq.broker.BrokerStartup -c "$RMQ_DIR/conf/$B.conf"'
        )
        extra = os.environ.get("RMQ_EXTRA_JOPTS", "")
        extra += " --add-opens java.base/jdk.internal.ref=ALL-UNNAMED"
        extra += " --add-exports java.base/jdk.internal.ref=ALL-UNNAMED"
        self._run(
            ["bash", "-c", script], env=self.env(KIT=str(KIT), B=broker, RMQ_EXTRA_JOPTS=extra)
        )

    def brokers_registered(self) -> set[str]:
        """Broker names the NameServer lists in the cluster right now, each answering.

        Empty while mqadmin fails (a broker answers its runtime stats only after its first
        second, and clusterList then throws).
        """
        try:
            out = self.mqadmin("clusterList")
        except AssertionError:
            return set()
        return {line.split()[1] for line in out.splitlines()[1:] if line.startswith(CLUSTER)}

    # --- consumers -----------------------------------------------------------------------

    def consumer(self, name: str, *specs: str, fast: bool = True, **env: str | int) -> Jvm:
        """Start one JVM of real push consumers (one per spec); returns when they started."""
        out = self.workdir / f"{name}.jsonl"
        extra = {k: str(v) for k, v in env.items()}
        if fast:
            extra.setdefault("RMQ_FAST", "1")
        pid_file = self._run([KIT / "consumer.sh", name, out, *specs], env=self.env(**extra))
        charset = re.search(r"-Dfile\.encoding=(\S+)", extra.get("RMQ_CLIENT_JOPTS", ""))
        pid = int(Path(pid_file.strip()).read_text().strip())
        jvm = Jvm(name, out, pid, charset[1] if charset else "utf-8")
        self.jvms[name] = jvm
        return jvm

    def lite_pull(self, name: str, *specs: str) -> Jvm:
        """Start one JVM of real ``DefaultLitePullConsumer``s (one per spec, see
        ``java/LitePullRig.java``), run from source by the kit's JRE against the client jars
        of its version; returns once each has written a state line. Stopped like the kit's
        own consumers (``halt``, or with the cluster)."""
        out = self.workdir / f"{name}.jsonl"
        script = (
            '. "$KIT/env.sh"; rmq_need_java || exit 1;'
            ' rmq_bg "$NAME" "$RMQ_JAVA" $RMQ_CLIENT_JOPTS $(rmq_jopts "$RMQ_DIR")'
            " $(rmq_logback client) -Drocketmq.client.rebalance.waitInterval=1000"
            ' -Drocketmq.client.logRoot="$RMQ_DIR/logs/$NAME" -cp "$RMQ_CP" "$RIG" "$RMQ_NAMESRV"'
            ' "$OUT" "$@"'
        )
        env = self.env(KIT=str(KIT), NAME=name, OUT=str(out), RIG=str(LITE_PULL_RIG))
        self._run(["bash", "-c", script, "lite-pull", *specs], env=env)
        pid = int((self.rmq_dir / "pids" / f"{name}.pid").read_text().strip())
        jvm = Jvm(name, out, pid)
        self.jvms[name] = jvm
        self.wait_for(
            f"{len(specs)} lite pull consumers of {name} to start",
            lambda: len(lite_pull_states(jvm)) == len(specs),
            timeout=90,
        )
        return jvm

    def freeze(self, jvm: Jvm) -> None:
        os.kill(jvm.pid, signal.SIGSTOP)

    def thaw(self, jvm: Jvm) -> None:
        os.kill(jvm.pid, signal.SIGCONT)

    def wait(
        self,
        group: str,
        *jvms: Jvm,
        consumers: int | None = None,
        queues: Mapping[str, int] | None = None,
        timeout: float = 60,
    ) -> None:
        """Poll the truth files until ``truth.py wait`` calls the group settled; longer while
        the broker still lists a dead connection of a client (``lingering``)."""
        args: list[str | Path] = [sys.executable, KIT / "truth.py", "wait"]
        args += [j.out for j in jvms] + ["--group", group]
        if consumers is not None:
            args += ["--consumers", str(consumers)]
        for topic, n in (queues or {}).items():
            args += ["--queues", f"{topic}={n}"]
        try:
            self._run([*args, "--timeout", str(timeout)])
        except AssertionError:
            if not lingering(self.truth(group, *jvms)):
                raise
            self._run([*args, "--timeout", str(BROKER_EXPIRY_S)])

    @contextmanager
    def listed_again(
        self, broker: str, group: str, client_id: str, *topics: str
    ) -> Iterator[socket.socket]:
        """One more connection of ``client_id`` in ``group`` on ``broker``, with no client
        behind it: one consumer heartbeat (what a client sends), then silence until the block
        ends and it closes. To the broker this is a client's closed connection that a late
        heartbeat registered again (``BROKER_EXPIRY_S``), or a second process with that id."""
        now = int(time.time() * 1000)
        subscriptions = [
            {"topic": t, "subString": "*", "tagsSet": [], "codeSet": [], "subVersion": now,
             "expressionType": "TAG", "classFilterMode": False}
            for t in (*topics, f"%RETRY%{group}")
        ]  # fmt: skip
        consumer = {"groupName": group, "consumeType": "CONSUME_PASSIVELY",
                    "messageModel": "CLUSTERING", "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                    "subscriptionDataSet": subscriptions, "unitMode": False}  # fmt: skip
        body = json.dumps(
            {"clientID": client_id, "consumerDataSet": [consumer], "producerDataSet": []}
        ).encode()
        with self._remoting(broker) as conn:
            answer = _call(conn, RequestCode.HEART_BEAT, {}, body)
            assert answer.code == 0, f"{broker} answered the heartbeat with {answer}"
            yield conn

    def listed_by(self, broker: str, group: str) -> list[str]:
        """The client ids ``broker`` lists for ``group`` (its connection list, one entry per
        connection; [] when it says the group is not online)."""
        with self._remoting(broker) as conn:
            answer = _call(conn, RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": group})
        if answer.code == ResponseCode.CONSUMER_NOT_ONLINE:
            return []
        assert answer.code == 0, f"{broker} answered the connection list with {answer}"
        return [c.client_id for c in decode_consumer_connection(answer.body).connections]

    def _remoting(self, broker: str) -> socket.socket:
        host, _, port = self.broker_addr(broker).rpartition(":")
        return socket.create_connection((host, int(port)), timeout=10)

    def truth(self, group: str, *jvms: Jvm, stale: float = 10) -> dict[str, dict[str, Any]]:
        """The newest state line of every live client of ``group``, by client id."""
        states: dict[str, dict[str, Any]] = {}
        seen: dict[str, float] = {}
        newest = 0.0
        for jvm in jvms:
            for line in jvm.out.read_text(encoding=jvm.encoding).splitlines():
                if not line.endswith("}"):
                    continue
                event = json.loads(line)
                cid = event.get("clientId")
                newest = max(newest, event.get("ts", 0))
                if event.get("group") != group or not cid:
                    continue
                if event.get("event") == "state":
                    if event["ts"] >= seen.get(cid, 0):
                        states[cid], seen[cid] = event, event["ts"]
                elif event.get("event") == "stopped":
                    states.pop(cid, None)
                    seen[cid] = float("inf")
        return {c: s for c, s in states.items() if s["ts"] >= newest - stale * 1000}

    def wait_steady(
        self,
        group: str,
        *jvms: Jvm,
        consumers: int,
        queues: Mapping[str, int] | None = None,
        timeout: float = 60,
    ) -> dict[str, dict[str, Any]]:
        """Wait until every client of ``group`` holds what its own strategy allocates it.

        Unlike ``truth.py wait`` this does not require every queue to be held exactly once:
        for the faults under test (split subscriptions, a rolling deploy) that never happens.
        Each of ``consumers`` live clients must see every live client in its ``cidAll``, see
        ``queues[topic]`` queues where given, and hold exactly its ``allocated``; and no
        broker of their queues may list a client twice: a client takes ``cidAll`` from one
        broker of the topic at random, so a connection one broker still lists after it
        closed (seen on a loaded machine) makes the clients flap between two allocations,
        and a moment between two flaps is not steady.
        Returns the settled states.
        """

        last: dict[str, dict[str, Any]] = {}
        repeated: set[str] = set()  # ids a broker lists more than once

        def steady() -> dict[str, dict[str, Any]] | None:
            states = self.truth(group, *jvms)
            last.clear()
            last.update(states)
            if len(states) != consumers:
                return None
            for state in states.values():
                for topic, view in state.get("views", {}).items():
                    if sorted(view.get("cidAll") or []) != sorted(states):
                        return None
                    want = (queues or {}).get(topic)
                    if not view.get("mqAll") or (want is not None and view["mqAll"] != want):
                        return None
                    held = {qkey(q) for q in state.get("held", []) if q["topic"] == topic}
                    if held != {qkey(q) for q in view.get("allocated", [])}:
                        return None
            repeated.clear()
            for broker in sorted(
                {
                    q["brokerName"]
                    for state in states.values()
                    for view in state.get("views", {}).values()
                    for q in view.get("allocated", [])
                }
            ):
                try:
                    listed = self.listed_by(broker, group)
                except OSError:  # a broker the test stopped
                    continue
                repeated.update(cid for cid, n in Counter(listed).items() if n > 1)
            return None if repeated else states

        try:
            return dict(
                self.wait_for(
                    f"group {group} to hold steady",
                    steady,
                    timeout=timeout,
                    lingering=lambda: lingering(last) | repeated,
                )
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}; last seen: {steady_summary(last, consumers)}") from None

    def wait_for(
        self,
        what: str,
        check: Callable[[], Any],
        *,
        timeout: float = 60,
        every: float = 0.3,
        lingering: Callable[[], Iterable[str]] | None = None,
    ) -> Any:
        """Poll ``check()`` until it returns a truthy value; fail with ``what`` on timeout.

        If ``lingering()`` then names client ids the broker lists only for dead connections,
        wait once more, for as long as the broker takes to drop them (``BROKER_EXPIRY_S``).
        """
        deadline = time.monotonic() + timeout
        waited = f"{timeout:g} s"
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                ids = sorted(lingering()) if lingering is not None else []
                if not ids:
                    raise AssertionError(f"timed out after {waited} waiting for {what}")
                lingering = None  # once
                deadline = time.monotonic() + BROKER_EXPIRY_S
                waited += f" and {BROKER_EXPIRY_S} s more for the broker to drop {ids}"
            time.sleep(every)

    # --- rmqlb ---------------------------------------------------------------------------

    def rmqlb(
        self, *args: str, expect: Iterable[int] = (0, 1, 4)
    ) -> subprocess.CompletedProcess[str]:
        """Run rmqlb as a separate process, as a user would."""
        done = subprocess.run(
            [sys.executable, "-m", "rmqlb", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        )
        if done.returncode not in set(expect):
            raise AssertionError(
                f"rmqlb {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )
        return done

    def explain(self, *args: str, expect: Iterable[int] = (0, 1, 4)) -> dict[str, Any]:
        """``rmqlb explain -n <kit> ... -o json``, parsed."""
        done = self.rmqlb("explain", "-n", self.namesrv, *args, "-o", "json", expect=expect)
        report: dict[str, Any] = json.loads(done.stdout)
        report["_stderr"] = done.stderr
        report["_exit"] = done.returncode
        return report


# --- comparing rmqlb's report with the Java clients' own state ----------------------------


def report_topic(report: Mapping[str, Any], group: str, topic: str) -> dict[str, Any]:
    """The report's section for ``topic`` of ``group``."""
    for g in report["groups"]:
        if g["group"] != group:
            continue
        for t in g["topics"]:
            if t["topic"] == topic:
                return dict(t)
    raise AssertionError(f"no topic {topic} of group {group} in the report")


def report_actual(report: Mapping[str, Any], group: str, topic: str) -> dict[Queue, list[str]]:
    """queue -> sorted client ids that actually hold it, as rmqlb reports."""
    rows = report_topic(report, group, topic)["queues"]
    return {(topic, r["brokerName"], r["queueId"]): sorted(r.get("actual") or []) for r in rows}


def report_expected(report: Mapping[str, Any], group: str, topic: str) -> dict[Queue, str | None]:
    """queue -> the client rmqlb expects to hold it."""
    rows = report_topic(report, group, topic)["queues"]
    return {(topic, r["brokerName"], r["queueId"]): r.get("expected") for r in rows}


def _call(
    conn: socket.socket, code: int, ext: Mapping[str, str], body: bytes = b""
) -> RemotingCommand:
    """Send one request as a Java client would (language JAVA) with rmqlb's frame codec, and
    read frames until its answer (a broker may first send requests of its own, such as
    NOTIFY_CONSUMER_IDS_CHANGED). The kit helpers send what rmqlb never does (HEART_BEAT)."""
    ask = RemotingCommand(code, 1, language="JAVA", version=0, ext_fields=dict(ext), body=body)
    conn.sendall(encode_frame(ask))
    frames = FrameDecoder()
    while True:
        data = conn.recv(65536)
        assert data, "the broker closed the connection instead of answering"
        for frame in frames.feed(data):
            if frame.is_response and frame.opaque == ask.opaque:
                return frame


def lingering(states: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Client ids some live client's cidAll lists beyond the live clients: a live id listed
    more than once, or the id of no live client. Both are connections the broker lists with
    no client behind them (see ``BROKER_EXPIRY_S``)."""
    return {
        cid
        for state in states.values()
        for view in state.get("views", {}).values()
        for cid in beyond_live(view.get("cidAll") or [], states)
    }


def beyond_live(cid_all: Sequence[str], live: Iterable[str]) -> list[str]:
    """The ids of ``cid_all`` listed more than once or for no ``live`` client, sorted."""
    known = set(live)
    return sorted(cid for cid, n in Counter(cid_all).items() if n > 1 or cid not in known)


def steady_summary(states: Mapping[str, Mapping[str, Any]], consumers: int) -> str:
    """What the live clients said last, for a wait that timed out: per client and topic, the
    clients and queues it sees (with the ids listed beyond the live clients) and how its
    holdings differ from its own allocation."""
    parts = [f"{len(states)} of {consumers} clients live"]
    for cid, state in sorted(states.items()):
        for topic, view in sorted(state.get("views", {}).items()):
            held = {qkey(q) for q in state.get("held", []) if q["topic"] == topic}
            allocated = {qkey(q) for q in view.get("allocated", [])}
            extra = beyond_live(view.get("cidAll") or [], states)
            parts.append(
                f"{cid} {topic}: cidAll {len(view.get('cidAll') or [])}"
                + (f" (beyond the live clients: {', '.join(extra)})" if extra else "")
                + f", mqAll {view.get('mqAll')}, held {len(held)}, "
                f"allocated {len(allocated)}, held not allocated {len(held - allocated)}, "
                f"allocated not held {len(allocated - held)}"
            )
    return "; ".join(parts)


def truth_held(states: Mapping[str, Mapping[str, Any]], topic: str) -> dict[Queue, list[str]]:
    """queue -> sorted client ids that hold it, as the Java clients say."""
    held: dict[Queue, list[str]] = {}
    for cid, state in states.items():
        for q in state.get("held", []):
            if q["topic"] == topic:
                held.setdefault(qkey(q), []).append(cid)
    return {q: sorted(c) for q, c in held.items()}


def truth_allocated(states: Mapping[str, Mapping[str, Any]], topic: str) -> dict[Queue, str]:
    """queue -> the client whose own strategy allocates it, from its own view."""
    allocated: dict[Queue, str] = {}
    for cid, state in states.items():
        for q in state.get("views", {}).get(topic, {}).get("allocated", []):
            assert qkey(q) not in allocated, f"{qkey(q)} allocated twice in the truth"
            allocated[qkey(q)] = cid
    return allocated


def lite_pull_states(jvm: Jvm) -> dict[str, dict[str, Any]]:
    """The latest state line of each consumer of a :meth:`Kit.lite_pull` JVM, by client id
    (``held``: the queues it holds, as ``(topic, broker, id)``)."""
    states: dict[str, dict[str, Any]] = {}
    if not jvm.out.exists():
        return states
    for line in jvm.out.read_text(encoding="utf-8").splitlines():
        if line.strip():
            state = json.loads(line)
            state["held"] = sorted(qkey(q) for q in state["held"])
            states[state["clientId"]] = state
    return states


def finding_codes(report: Mapping[str, Any], group: str | None = None) -> set[str]:
    """The finding codes of the report (of one group when named)."""
    return {f["code"] for f in report["findings"] if group is None or f.get("group") == group}


#: What a client reports of its own activity, per held queue: it moves between two captures
#: of an idle group too (the broker's long polling renews each queue's pull every 15 s).
CLIENT_ACTIVITY = frozenset({"lastPullTimestamp", "lastConsumeTimestamp", "lastLockTimestamp"})


def without_activity(value: Any) -> Any:
    """A report's JSON (or part of it) without the clients' own activity: their queues' last
    pull, consume and lock times and their consume rates (a consumer row's ``status``)."""
    return json.loads(
        json.dumps(value),
        object_hook=lambda d: {
            k: v
            for k, v in d.items()
            if k not in CLIENT_ACTIVITY and not (k == "status" and isinstance(v, dict))
        },
    )


def findings(report: Mapping[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["code"] == code]


def assert_actual_is_truth(
    report: Mapping[str, Any], states: Mapping[str, Mapping[str, Any]], group: str, topic: str
) -> None:
    """rmqlb's ``actual`` is exactly what each real client holds, for every queue."""
    actual = {q: c for q, c in report_actual(report, group, topic).items() if c}
    assert actual == truth_held(states, topic)


def assert_expected_is_truth(
    report: Mapping[str, Any], states: Mapping[str, Mapping[str, Any]], group: str, topic: str
) -> None:
    """rmqlb's ``expected`` is what each real client's own strategy allocates it."""
    expected = {q: c for q, c in report_expected(report, group, topic).items() if c}
    assert expected == truth_allocated(states, topic)
