"""One real RocketMQ 4.9.8 cluster (NameServer, broker-a, broker-b) for the whole real suite.

Skipped with the reason when Java or the kit is missing, unless ``RMQLB_REAL_BROKER=require``
(CI sets it), which turns the reason into a failure: CI can never skip the real suite.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from realkit import BROKER_PORT, KIT, NAMESRV_PORT, Kit


def _unavailable() -> str:
    if not (KIT / "cluster.sh").exists():
        return f"no RocketMQ kit at {KIT} (set RMQLB_ROCKETMQ_KIT)"
    check = subprocess.run(
        [KIT / "cluster.sh", "check"], capture_output=True, text=True, check=False
    )
    return check.stderr.strip() if check.returncode else ""


@pytest.fixture(scope="session")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    """The running cluster; stopped (SIGKILL, it is thrown away) when the session ends."""
    problem = _unavailable()
    if problem:
        if os.environ.get("RMQLB_REAL_BROKER") == "require":
            pytest.fail(f"RMQLB_REAL_BROKER=require but {problem}", pytrace=False)
        pytest.skip(f"real RocketMQ unavailable: {problem}")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    offset = 200 * int(worker.removeprefix("gw") or 0)
    offset += int(os.environ.get("RMQLB_REAL_PORT_OFFSET", "0"))  # two suites side by side
    base = tmp_path_factory.mktemp("rocketmq")
    cluster = Kit(NAMESRV_PORT + offset, BROKER_PORT + offset, base / "kit", base / "truth")
    cluster.workdir.mkdir()
    env = cluster.env()
    start = subprocess.run(
        [KIT / "cluster.sh", "start"], env=env, capture_output=True, text=True, check=False
    )
    if start.returncode != 0:
        pytest.fail("cluster.sh start failed:\n" + start.stderr, pytrace=False)
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.real)
