"""One real RocketMQ cluster (NameServer, broker-a, broker-b; 5.x with the Proxy) per kit
version, each started once and stopped when its tests are done. ``make test-real`` runs the
versions side by side, one pytest-xdist worker each (see
:func:`pytest_collection_modifyitems`); a worker's number moves its ports by 200.

Every test runs on the versions its ``@pytest.mark.versions(...)`` names (unmarked: 4.9.8
only, where the fault scenarios restart brokers with the 4.9.8 store); ``RMQLB_REAL_VERSIONS``
(comma-separated) narrows the run, e.g. ``RMQLB_REAL_VERSIONS=5.0.0``. The test id says the
version: ``test_x[5.0.0]``.

Skipped with the reason when Java or the kit is missing, unless ``RMQLB_REAL_BROKER=require``
(CI sets it), which turns the reason into a failure: CI can never skip the real suite.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from realkit import BROKER_PORT, EXPIRY_5_1_MS, KIT, NAMESRV_PORT, VERSIONS, Kit

#: Port offset of each version's cluster (inside the run's offset): a version's ports are
#: never reused by the next one, whose NameServer and brokers start while the old sockets
#: may linger.
VERSION_OFFSET = {"4.9.8": 0, "5.0.0": 40, "5.1.4": 80}


def _selected() -> tuple[str, ...]:
    wanted = os.environ.get("RMQLB_REAL_VERSIONS", "")
    if not wanted.strip():
        return VERSIONS
    chosen = tuple(v.strip() for v in wanted.split(",") if v.strip())
    unknown = set(chosen) - set(VERSIONS)
    if unknown:
        raise pytest.UsageError(f"RMQLB_REAL_VERSIONS: unknown {sorted(unknown)}; known {VERSIONS}")
    return chosen


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "versions(*names): the kit versions a real test runs on (default 4.9.8)"
    )
    # pytest-xdist registers it too; here so that a run without xdist accepts it
    config.addinivalue_line("markers", "xdist_group(name): the pytest-xdist worker group")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each real test once per kit version it is marked for (and the run selects)."""
    if "kit" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("versions")
    versions = marker.args if marker is not None else ("4.9.8",)
    chosen = [v for v in _selected() if v in versions]
    if chosen:
        metafunc.parametrize("kit", chosen, indirect=True, scope="session")


#: ``cluster.sh start`` attempts per cluster. The kit can take a starting server for exited
#: (it then kills the cluster): its liveness check pipes ``/proc/PID/cmdline`` through ``tr``
#: into ``grep -q`` under ``pipefail``, and a server's command line is longer than the 4,096
#: bytes ``tr`` writes at once (4.2-5.0 KB, its classpath after the marker ``grep`` looks
#: for). When ``grep`` has matched and exited before ``tr``'s second write, ``tr`` dies of
#: SIGPIPE (status 141) and the check fails. Both of its looks must fail, so it depends on
#: load. It was seen in 1 of 13 5.1.4 starts beside two busy loops, and in both attempts of one
#: full real suite run. Each attempt is independent.
START_ATTEMPTS = 5
#: Seconds between attempts: the killed cluster's processes are gone before the next start.
START_PAUSE = 2.0


def _start(command: list[Path | str], env: dict[str, str]) -> str:
    """Start the cluster (stopped after a failed attempt); ``""`` once it runs, else what
    every attempt wrote on stderr."""
    failures: list[str] = []
    for attempt in range(1, START_ATTEMPTS + 1):
        start = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if start.returncode == 0:
            return ""
        failures.append(f"attempt {attempt}:\n{start.stderr}")
        subprocess.run(
            [KIT / "cluster.sh", "stop", "--kill"], env=env, capture_output=True, check=False
        )
        if attempt < START_ATTEMPTS:
            time.sleep(START_PAUSE)
    return "\n".join(failures)


def _unavailable() -> str:
    if not (KIT / "cluster.sh").exists():
        return f"no RocketMQ kit at {KIT} (set RMQLB_ROCKETMQ_KIT)"
    check = subprocess.run(
        [KIT / "cluster.sh", "check"], capture_output=True, text=True, check=False
    )
    return check.stderr.strip() if check.returncode else ""


@pytest.fixture(scope="session")
def kit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    """The running cluster of one version; stopped (SIGKILL, it is thrown away) when the
    tests of that version are done."""
    version: str = request.param
    problem = _unavailable()
    if problem:
        if os.environ.get("RMQLB_REAL_BROKER") == "require":
            pytest.fail(f"RMQLB_REAL_BROKER=require but {problem}", pytrace=False)
        pytest.skip(f"real RocketMQ unavailable: {problem}")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    offset = 200 * int(worker.removeprefix("gw") or 0)
    offset += int(os.environ.get("RMQLB_REAL_PORT_OFFSET", "0"))  # two suites side by side
    offset += VERSION_OFFSET[version]
    base = tmp_path_factory.mktemp(f"rocketmq-{version}")
    cluster = Kit(
        NAMESRV_PORT + offset, BROKER_PORT + offset, base / "kit", base / "truth", version
    )
    cluster.workdir.mkdir()
    # A send waits in a broker's queue at most waitTimeMillsInSendQueue (200 ms by default)
    # before the broker answers "broker busy" (TIMEOUT_CLEAN_QUEUE), which ends the kit's
    # producer: seen once producing 4,000 messages on a loaded 2-core machine; 3 s rides it out.
    conf = ["waitTimeMillsInSendQueue=3000"]
    # 5.x brokers assign queues from their own route caches, refreshed every 30 s by default:
    # 1 s settles broker-assigned groups without waiting out a refresh. A 5.1 broker keeps a
    # connection without heartbeat listed for channelExpiredTimeout: not its default here, so
    # rmqlb is seen to read it (3 of the clients' 30 s heartbeats: live clients stay listed).
    if cluster.has_proxy:
        conf += ["loadBalancePollNameServerInterval=1000", f"channelExpiredTimeout={EXPIRY_5_1_MS}"]
    env = cluster.env(RMQ_BROKER_CONF=" ".join(conf))
    command: list[Path | str] = [
        KIT / "cluster.sh",
        "start",
        *(["--proxy"] if cluster.has_proxy else []),
    ]
    failures = _start(command, env)
    if failures:
        pytest.fail(f"cluster.sh start ({version}) failed:\n" + failures, pytrace=False)
    try:
        yield cluster
    finally:
        subprocess.run(
            [KIT / "cluster.sh", "stop", "--kill"], env=env, capture_output=True, check=False
        )


@dataclass(frozen=True)
class Names:
    """A group and a topic name of one test: unique, so tests never see each other."""

    group: str
    topic: str

    def topic_n(self, n: int) -> str:
        return f"{self.topic}-{n}"


@pytest.fixture
def names(request: pytest.FixtureRequest) -> Names:
    base = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name.removeprefix("test_"))[:60]
    return Names(group=f"G-{base}", topic=f"T-{base}")


@pytest.fixture(autouse=True)
def _halt_consumers(kit: Kit) -> Iterator[None]:
    """Each test's consumer JVMs are stopped when it ends (frozen ones too)."""
    before = set(kit.jvms)
    yield
    for name in set(kit.jvms) - before:
        jvm = kit.jvms.pop(name)
        try:
            kit.thaw(jvm)
        except ProcessLookupError:
            continue
        kit.halt(name)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the real tests; leave out those for no version the run selects.

    Each test on a cluster is grouped by its version (``xdist_group``): under
    ``pytest -n N --dist loadgroup`` (``make test-real``) one worker runs every test of a
    version, so each cluster starts once, and the versions' clusters run side by side.
    """
    here = Path(__file__).parent
    keep, dropped = [], []
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.real)
            callspec = getattr(item, "callspec", None)
            if "kit" in getattr(item, "fixturenames", ()):
                if callspec is None or "kit" not in callspec.params:
                    dropped.append(item)
                    continue
                item.add_marker(pytest.mark.xdist_group(f"rocketmq-{callspec.params['kit']}"))
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
