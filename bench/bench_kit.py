"""Whole processes on a real RocketMQ 4.9.8 cluster of 1,000 consumer groups, against the kit's
own ``mqadmin consumerProgress`` in the same run.

The kit (``../shared/rocketmq`` beside the clone, or ``$RMQLB_ROCKETMQ_KIT``) starts a
NameServer and two brokers on ports of their own (``RMQLB_BENCH_KIT_PORT_OFFSET``, default
3000, added to 28876 / 29911). The cluster then gets, as a big production cluster has,
:data:`TOPICS` topics of 8 queues (4 per broker) and :data:`GROUPS` subscription groups, most
of them with a subscription config and committed offsets only, written straight to the brokers
in a few pipelined connections (``UPDATE_AND_CREATE_TOPIC``,
``UPDATE_AND_CREATE_SUBSCRIPTIONGROUP``, ``UPDATE_CONSUMER_OFFSET``: the requests
``mqadmin updateTopic`` / ``updateSubGroup`` and a consumer's offset commit send, in one
Python process instead of one JVM per call), plus :data:`LIVE` groups with real Java push
consumers (one JVM).

Rows (wall time of whole processes, median of :data:`RUNS` each, mqadmin in the same run):

- ``explain -n ADDR GROUP -o json`` and the table, one live group: 0.15 s (the detail also
  gives the floor of any process with rmqlb's mandated dependencies, ``python -c "import
  typer, asyncio"``, for the table with Rich's console and table too, timed the same way in
  the same run, and rmqlb's time above it);
- ``status -n ADDR -o json``, every group: 0.5 s;
- ``explain -n ADDR --all-groups -o json``: 1 s.

Each row's detail also gives the process's CPU time and the CPU time the kit's JVMs spent
meanwhile (from ``/proc``, medians): on a machine of few cores, both share them.

Those seconds were set on a machine where ``mqadmin consumerProgress -g GROUP`` took
:data:`SET_WHERE_MQADMIN_TOOK` s (status's: "about what mqadmin takes for one group"). A
whole process's time scales with the machine, so each row's ratio is against that peer:
rmqlb's time / mqadmin ``-g``'s in the same run, with the target the seconds / 0.54 s (one
group 0.28, status 0.93, ``--all-groups`` 1.85). The detail keeps the seconds and the
absolute target. Skipped with the reason when the kit or Java is missing. The cluster is
killed at the end.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench._util import BenchResult, ms, user_env
from rmqlb.remoting.codes import RequestCode
from rmqlb.remoting.frame import FrameDecoder, encode_frame, request

ROOT = Path(__file__).resolve().parents[1]
KIT = Path(os.environ.get("RMQLB_ROCKETMQ_KIT", ROOT.parent / "shared" / "rocketmq"))
OFFSET = int(os.environ.get("RMQLB_BENCH_KIT_PORT_OFFSET", "3000"))
NAMESRV_PORT = 28876 + OFFSET
BROKER_PORT = 29911 + OFFSET
BROKERS = {"broker-a": BROKER_PORT, "broker-b": BROKER_PORT + 10}
TOPICS = 100
QUEUES_PER_BROKER = 4
GROUPS = 1000
LIVE = 4
RUNS = 5
WINDOW = 256  # requests in flight per connection while seeding


def _names() -> list[tuple[str, str]]:
    """(group, topic) for every group: group i consumes topic i mod TOPICS."""
    return [(f"bench-group-{i:04d}", f"bench-topic-{i % TOPICS:03d}") for i in range(GROUPS)]


def _send_all(port: int, commands: Iterable[tuple[int, dict[str, str], bytes]]) -> None:
    """Send the requests to one broker, :data:`WINDOW` in flight; every answer must be 0."""
    decoder = FrameDecoder()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        pending = 0

        def drain(down_to: int) -> None:
            nonlocal pending
            while pending > down_to:
                data = sock.recv(1 << 16)
                if not data:
                    raise RuntimeError(f"broker 127.0.0.1:{port} closed the connection")
                for answer in decoder.feed(data):
                    pending -= 1
                    if answer.code != 0:
                        raise RuntimeError(f"broker refused a seeding request: {answer.remark}")

        for opaque, (code, ext, body) in enumerate(commands, 1):
            sock.sendall(encode_frame(request(code, ext, opaque=opaque, body=body)))
            pending += 1
            drain(WINDOW)
        drain(0)


def _seed() -> None:
    """Topics, subscription groups and committed offsets (0: nothing to consume) on both
    brokers."""
    topics = sorted({t for _, t in _names()})
    for port in BROKERS.values():
        _send_all(
            port,
            (
                (
                    RequestCode.UPDATE_AND_CREATE_TOPIC,
                    {
                        "topic": t,
                        "defaultTopic": "TBW102",
                        "readQueueNums": str(QUEUES_PER_BROKER),
                        "writeQueueNums": str(QUEUES_PER_BROKER),
                        "perm": "6",
                        "topicFilterType": "SINGLE_TAG",
                        "topicSysFlag": "0",
                        "order": "false",
                    },
                    b"",
                )
                for t in topics
            ),
        )
        groups: Iterable[tuple[int, dict[str, str], bytes]] = (
            (
                RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
                {},
                json.dumps({"groupName": g}).encode(),
            )
            for g, _ in _names()
        )
        offsets = (
            (
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": g, "topic": t, "queueId": str(q), "commitOffset": "0"},
                b"",
            )
            for g, t in _names()[LIVE:]
            for q in range(QUEUES_PER_BROKER)
        )
        _send_all(port, (*groups, *offsets))


def _env(rmq_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "RMQ_NAMESRV_PORT": str(NAMESRV_PORT),
        "RMQ_BROKER_PORT": str(BROKER_PORT),
        "RMQ_DIR": str(rmq_dir),
        "RMQ_FAST": "1",
    }


def _run(args: Sequence[str | Path], env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(a) for a in args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} exited {done.returncode}: {done.stderr}")
    return done.stdout


@dataclass(frozen=True)
class Timing:
    """Medians over :data:`RUNS` processes: wall time, the process's CPU time (user + system)
    and the CPU time the kit's JVMs spent meanwhile (``None`` where ``/proc`` cannot say)."""

    wall: float
    cpu: float
    servers_cpu: float | None

    def cpu_text(self) -> str:
        """The CPU times: a whole process's own, and what the cluster spent serving it."""
        if self.servers_cpu is None:
            return f"CPU {ms(self.cpu)}"
        return f"CPU {ms(self.cpu)}, the kit's JVMs {ms(self.servers_cpu)} meanwhile"


def _jvm_cpu(pids: Sequence[int]) -> float | None:
    """CPU seconds (user + system) the processes ``pids`` have used so far."""
    ticks = 0
    try:
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    except (OSError, ValueError, IndexError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def _kit_pids(rmq_dir: Path) -> list[int]:
    """The kit's JVMs of this cluster (NameServer, brokers, the live consumers)."""
    found = subprocess.run(
        ["pgrep", "-f", f"rocketmq.kit.dir={rmq_dir}"], capture_output=True, text=True, check=False
    )
    return [int(pid) for pid in found.stdout.split()]


def _timed(cmd: Sequence[str], env: dict[str, str], pids: Sequence[int] = ()) -> Timing:
    walls, cpus, servers = [], [], []
    for _ in range(RUNS):
        jvm_before = _jvm_cpu(pids) if pids else None
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            cmd, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        walls.append(time.perf_counter() - start)
        if done.returncode != 0:  # a failed run is no time of the command
            why = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {why}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        jvm_after = _jvm_cpu(pids) if pids else None
        if jvm_before is not None and jvm_after is not None:
            servers.append(jvm_after - jvm_before)
    return Timing(
        statistics.median(walls),
        statistics.median(cpus),
        statistics.median(servers) if len(servers) == RUNS else None,
    )


def _until_it_answers(cmd: Sequence[str], env: dict[str, str], seconds: float = 30) -> None:
    """Run ``cmd`` until it exits 0: ``mqadmin consumerProgress -g`` throws until the group
    has committed an offset (a new consumer's first commit comes within 5 s)."""
    deadline = time.monotonic() + seconds
    while True:
        done = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:
            why = done.stderr.strip().splitlines()[-1:]
            raise RuntimeError(f"{' '.join(cmd)} still exits {done.returncode}: {why}")
        time.sleep(1)


def _unavailable() -> str:
    if not (KIT / "cluster.sh").exists():
        return f"no RocketMQ kit at {KIT} (set RMQLB_ROCKETMQ_KIT)"
    check = subprocess.run(
        [KIT / "cluster.sh", "check"], check=False, capture_output=True, text=True
    )
    return check.stderr.strip() if check.returncode else ""


#: Seconds ``mqadmin consumerProgress -g GROUP`` took on the machine where the rows' seconds
#: were set: a row's target is its seconds over this, as a ratio to mqadmin's same-run time.
SET_WHERE_MQADMIN_TOOK = 0.54

#: What any process with rmqlb's mandated dependencies (the CLI on typer, the client on
#: asyncio) costs before doing anything: the JSON row's floor, printed beside it.
FLOOR = "import typer, asyncio"
#: The same for the colour table, which Rich draws: the table row's floor.
TABLE_FLOOR = "import typer, asyncio, rich.console, rich.table"

ROWS = (
    ("live explain of one group, -o json", 0.15, ["explain", "-o", "json", "{live}"], FLOOR),
    ("live explain of one group, table", 0.15, ["explain", "-o", "table", "{live}"], TABLE_FLOOR),
    (f"status of {GROUPS} groups, -o json", 0.5, ["status", "-o", "json"], None),
    (
        f"explain --all-groups ({GROUPS} groups), -o json",
        1.0,
        ["explain", "--all-groups"],
        None,
    ),
)


def _peer_target(seconds: float) -> float:
    """A row's seconds as a ratio to mqadmin ``-g``'s time where they were set."""
    return round(seconds / SET_WHERE_MQADMIN_TOOK, 2)


def run() -> list[BenchResult]:
    """Start the kit, seed it, time rmqlb and mqadmin; skipped rows when the kit is absent."""
    problem = _unavailable()
    if problem:
        return [
            BenchResult(
                f"kit: {name} / mqadmin -g",
                float("nan"),
                _peer_target(target),
                f"skipped: {problem}",
            )
            for name, target, _, _ in ROWS
        ]
    with tempfile.TemporaryDirectory(prefix="rmqlb-bench-kit-") as tmp:
        env = _env(Path(tmp) / "kit")
        (Path(tmp) / "kit").mkdir()
        _run([KIT / "cluster.sh", "start"], env)
        try:
            return _measure(env, Path(tmp), _kit_pids(Path(tmp) / "kit"))
        finally:
            subprocess.run(
                [KIT / "cluster.sh", "stop", "--kill"], check=False, env=env, capture_output=True
            )


def _measure(env: dict[str, str], tmp: Path, pids: Sequence[int]) -> list[BenchResult]:
    seeded = time.perf_counter()
    _seed()
    seed_s = time.perf_counter() - seeded
    specs = [f"group={g};sub={t}:*" for g, t in _names()[:LIVE]]
    _run([KIT / "consumer.sh", "live", tmp / "live.jsonl", *specs], env)
    live = _names()[0][0]
    _run([KIT / "truth.py", "wait", tmp / "live.jsonl", "--group", live, "--consumers", "1"], env)
    namesrv = f"127.0.0.1:{NAMESRV_PORT}"
    rmqlb = [sys.executable, "-m", "rmqlb"]
    rmqlb_env = user_env(env)
    subprocess.run([*rmqlb, "--help"], check=False, env=rmqlb_env, capture_output=True)
    status = json.loads(
        subprocess.run(
            [*rmqlb, "status", "-n", namesrv, "-o", "json", "--fail-on", "never"],
            check=False,
            env=rmqlb_env,
            capture_output=True,
            text=True,
        ).stdout
    )
    seen = len(status["groups"])
    admin = [str(KIT / "mqadmin.sh"), "consumerProgress", "-n", namesrv]
    _until_it_answers([*admin, "-g", live], env)
    mq_one = _timed([*admin, "-g", live], env).wall
    mq_all = _timed(admin, env).wall
    floors = {
        code: _timed([sys.executable, "-c", code], rmqlb_env).wall for code in (FLOOR, TABLE_FLOOR)
    }
    results = []
    for name, target, args, floor_code in ROWS:
        argv = [a.replace("{live}", live) for a in args]
        run = _timed([*rmqlb, *argv, "-n", namesrv, "--fail-on", "never"], rmqlb_env, pids)
        took = run.wall
        versus = f"mqadmin consumerProgress -g GROUP {ms(mq_one)}"  # the ratio's peer
        if floor_code is not None:
            floor = floors[floor_code]
            versus += f"; floor ({floor_code}) {ms(floor)}, rmqlb - floor {ms(took - floor)}"
        else:
            versus += f" (every group it finds: {ms(mq_all)})"
        results.append(
            BenchResult(
                f"kit: {name} / mqadmin -g",
                took / mq_one,
                _peer_target(target),
                f"{ms(took)} (median of {RUNS} processes; the absolute target {target:g} s: "
                f"{'met' if took <= target else 'missed'}; {run.cpu_text()}) vs {versus}; "
                f"status saw {seen} groups; seeded in {seed_s:.1f} s; "
                f"load {os.getloadavg()[0]:.1f}",
            )
        )
    return results


if __name__ == "__main__":
    for row in run():
        print(f"{row.name:50s} {row.ratio:6.2f} (target {row.target}) {row.detail}")
