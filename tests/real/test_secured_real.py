"""TLS and ACL on the real servers, 4.9.8 and 5.0.0: one secured cluster per version
(``RMQ_TLS=enforcing RMQ_ACL=1``), started once for this module.

explain, status and dump over TLS (``--tls-ca``, ``--tls-insecure``) with the read-only
monitoring account; credentials every broker refuses are one line and exit 3; a certificate
from another CA is refused unless ``--tls-insecure``; the secret appears nowhere."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from realkit import BROKER_PORT, CLUSTER, KIT, NAMESRV_PORT

MONITOR_AK, MONITOR_SK = "rmqmonitor", "rmqmonitor-secret"
GROUP, TOPIC = "SecuredGroup", "SecuredTopic"
#: beside the suite's own cluster (which takes the offset's first 50 ports)
SECURED_PORTS = 50


@dataclass(frozen=True)
class Secured:
    version: str
    namesrv: str
    ca: Path
    other_ca: Path

    def rmqlb(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        keys = {"ROCKETMQ_ACCESS_KEY": MONITOR_AK, "ROCKETMQ_SECRET_KEY": MONITOR_SK}
        return subprocess.run(
            [sys.executable, "-m", "rmqlb", *args, "-n", self.namesrv, "--timeout", "10"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **keys, **env},
        )


@pytest.fixture(scope="module", params=["4.9.8", "5.0.0"])
def secured(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, kit: object
) -> Iterator[Secured]:
    """A secured cluster of one version, with ``SecuredTopic`` and ``SecuredGroup``."""
    version: str = request.param
    offset = int(os.environ.get("RMQLB_REAL_PORT_OFFSET", "0")) + SECURED_PORTS
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    offset += 200 * int(worker.removeprefix("gw") or 0)
    rmq_dir = tmp_path_factory.mktemp(f"secured-{version}")
    env = {
        **os.environ,
        "RMQ_NAMESRV_PORT": str(NAMESRV_PORT + offset),
        "RMQ_BROKER_PORT": str(BROKER_PORT + offset),
        "RMQ_DIR": str(rmq_dir),
        "RMQ_VERSION": version,
        "RMQ_TLS": "enforcing",
        "RMQ_ACL": "1",
    }

    def kit_run(*args: str) -> str:
        done = subprocess.run(
            args, env=env, capture_output=True, text=True, timeout=180, check=False
        )
        assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout

    kit_run(str(KIT / "cluster.sh"), "start")
    try:
        namesrv = f"127.0.0.1:{NAMESRV_PORT + offset}"
        # the admin account (the kit's default) creates what rmqlb then reads
        mqadmin = str(KIT / "mqadmin.sh")
        kit_run(mqadmin, "updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "4", "-n", namesrv)
        kit_run(mqadmin, "updateSubGroup", "-c", CLUSTER, "-g", GROUP, "-n", namesrv)
        tls = rmq_dir / "tls"
        yield Secured(version, namesrv, tls / "ca.pem", tls / "other-ca.pem")
    finally:
        stop = [str(KIT / "cluster.sh"), "stop", "--kill"]
        subprocess.run(stop, env=env, capture_output=True, check=False)


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode in (0, 1), f"exit {done.returncode}:\n{done.stdout}{done.stderr}"
    assert "partial data" not in done.stderr + done.stdout, done.stderr
    assert MONITOR_SK not in done.stdout + done.stderr


def test_explain_status_and_dump_over_tls_with_the_monitor_account(
    secured: Secured, tmp_path: Path
) -> None:
    ca = str(secured.ca)
    explain = secured.rmqlb("explain", GROUP, "--tls-ca", ca, "-o", "json")
    _clean(explain)
    assert GROUP in explain.stdout
    status = secured.rmqlb("status", "--tls-ca", ca, "-o", "json")
    _clean(status)
    assert GROUP in status.stdout
    snap = tmp_path / "snap.json"
    dump = secured.rmqlb("dump", "--tls-insecure", "--out", str(snap))
    _clean(dump)
    text = snap.read_text()
    assert GROUP in text
    assert MONITOR_SK not in text


@pytest.mark.parametrize(
    ("keys", "why"),
    [
        ({"ROCKETMQ_SECRET_KEY": "not-the-secret"}, "wrong secret key"),
        ({"ROCKETMQ_ACCESS_KEY": "nobody"}, "unknown access key"),
        ({"ROCKETMQ_ACCESS_KEY": "", "ROCKETMQ_SECRET_KEY": ""}, "no access key given"),
    ],
)
def test_refused_credentials_are_one_line_and_exit_3(
    secured: Secured, keys: dict[str, str], why: str
) -> None:
    done = secured.rmqlb("status", "--tls-ca", str(secured.ca), **keys)
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "every broker refused the credentials" in lines[0], done.stderr
    assert why in lines[0]
    assert "not-the-secret" not in done.stderr


def test_a_certificate_from_another_ca_is_refused_unless_insecure(secured: Secured) -> None:
    refused = secured.rmqlb("explain", GROUP, "--tls-ca", str(secured.other_ca))
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    _clean(secured.rmqlb("explain", GROUP, "--tls-insecure"))
