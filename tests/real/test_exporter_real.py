"""``rmqlb exporter`` against the real cluster, scraped by a real Prometheus (Debian's 2.42).

A split subscription strands messages; Prometheus, evaluating the shipped alert rules (their
``for:`` shortened to seconds, the only change), sees the stranded messages through its HTTP
API and raises RmqlbStrandedMessages; once every client subscribes both topics the alert
clears. Everything is polled: no fixed sleep.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Names
from exporter_series import queries, substitute
from realkit import ROOT, Kit

PROMETHEUS = shutil.which("prometheus")
ALERT = "RmqlbStrandedMessages"
#: Dashboard queries with no data while nothing fails: the failed requests.
EMPTY_WHEN_HEALTHY = "rmqlb_capture_failed_requests"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Prometheus:
    """A Prometheus server of its own (scrape and rule evaluation every second)."""

    def __init__(self, workdir: Path, target: str) -> None:
        if PROMETHEUS is None:
            problem = "Debian's prometheus package is not installed"
            if os.environ.get("RMQLB_REAL_BROKER") == "require":
                pytest.fail(f"RMQLB_REAL_BROKER=require but {problem}", pytrace=False)
            pytest.skip(problem)
        rules = (ROOT / "examples" / "prometheus" / "alerts.yml").read_text(encoding="utf-8")
        (workdir / "alerts.yml").write_text(re.sub(r"for: \S+", "for: 3s", rules))
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": ["alerts.yml"],
            "scrape_configs": [{"job_name": "rmqlb", "static_configs": [{"targets": [target]}]}],
        }
        (workdir / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self.addr = f"127.0.0.1:{free_port()}"
        self.log = (workdir / "prometheus.log").open("w")
        self.proc = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address={self.addr}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def api(self, path: str, **params: str) -> Any:
        url = f"http://{self.addr}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return json.load(answer)["data"]
        except OSError:
            return None  # not listening yet

    def value(self, query: str) -> float | None:
        data = self.api("query", query=query)
        result = data["result"] if data else []
        return float(result[0]["value"][1]) if len(result) == 1 else None

    def alerts(self, group: str) -> list[dict[str, Any]]:
        data = self.api("alerts")
        found = data["alerts"] if data else []
        return [a for a in found if a["labels"].get("group") == group]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def check_dashboard(prom: Prometheus, group: str) -> None:
    """Every query of the shipped Grafana dashboard (its variables set to this job and
    group) is evaluated by Prometheus without an error and, but for the failed requests,
    returns data; a variable's ``label_values`` finds its label."""
    for where, expr, legend in queries():
        query = substitute(expr, job="rmqlb", group=group)
        data = prom.api("query", query=query)
        assert data is not None, f"{where}: Prometheus rejected {query}"
        if EMPTY_WHEN_HEALTHY in expr:
            continue
        assert data["result"], f"{where}: no data for {query}"
        label = legend.strip("{}")
        if where in ("job", "group", "topic"):  # a variable: label_values(SELECTOR, label)
            assert all(label in r["metric"] for r in data["result"]), (where, data["result"])
    assert prom.api("query", query="rmqlb_group_info{") is None  # a parse error does show


@contextlib.contextmanager
def exporter_and_prometheus(kit: Kit, group: str, workdir: Path) -> Iterator[Prometheus]:
    """``rmqlb exporter`` for ``group``, and a Prometheus scraping it; both stopped after
    (the exporter by SIGTERM, which must end it cleanly)."""
    listen = f"127.0.0.1:{free_port()}"
    args = ["exporter", "-n", kit.namesrv, group, "--listen", listen, "--interval", "1"]
    exporter = subprocess.Popen(
        [sys.executable, "-m", "rmqlb", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    prometheus = None
    try:
        prometheus = Prometheus(workdir, listen)
        yield prometheus
    finally:
        if prometheus is not None:
            prometheus.stop()
        exporter.terminate()  # SIGTERM: a clean stop
        out, err = exporter.communicate(timeout=30)
    assert exporter.returncode == 0, err
    assert out.splitlines()[-1] == "rmqlb exporter: stopped"


def test_prometheus_fires_on_stranded_messages_and_clears_when_fixed(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    g, t1, t2 = names.group, names.topic_n(1), names.topic_n(2)
    kit.topic(t1, read=4)
    kit.topic(t2, read=4)
    split = kit.consumer(
        "exp-split", f"group={g};sub={t1}:*;instance=one", f"group={g};sub={t2}:*;instance=two"
    )
    kit.wait_steady(g, split, consumers=2, queues={t1: 8, t2: 8})
    kit.produce(t1, 80)  # 10 per queue: 40 in the 4 queues that fall to the non-subscriber

    # only now the exporter and Prometheus: the cluster's set-up has the machine to itself
    with exporter_and_prometheus(kit, g, tmp_path) as prom:
        stranded = f'rmqlb_topic_stranded_messages{{group="{g}",topic="{t1}"}}'
        kit.wait_for("Prometheus to see 40 stranded messages", lambda: prom.value(stranded) == 40)
        states: set[str] = set()

        def firing() -> dict[str, Any] | None:
            mine = [a for a in prom.alerts(g) if a["labels"]["alertname"] == ALERT]
            states.update(a["state"] for a in mine)
            return next((a for a in mine if a["state"] == "firing"), None)

        alert = kit.wait_for("the stranded-messages alert to fire", firing, every=0.5)
        assert states <= {"pending", "firing"}
        assert alert["labels"]["code"] in ("SUBSCRIPTION_INCONSISTENT", "UNCONSUMED_QUEUE")
        assert alert["annotations"]["runbook"] == f"rmqlb explain {g}"
        assert alert["annotations"]["summary"].startswith(f"Group {g}: ")
        assert prom.value('rmqlb_up{job="rmqlb"}') == 1
        check_dashboard(prom, g)

        # the fix: every client subscribes both topics
        kit.halt("exp-split")
        both = f"group={g};sub={t1}:*;sub={t2}:*"
        fixed = kit.consumer("exp-fixed", f"{both};instance=one", f"{both};instance=two")
        kit.wait(g, fixed, consumers=2, queues={t1: 8, t2: 8})
        group_stranded = f'rmqlb_group_stranded_messages{{group="{g}"}}'
        kit.wait_for("Prometheus to see nothing stranded", lambda: prom.value(group_stranded) == 0)
        kit.wait_for(
            "the alert to clear",
            lambda: not [a for a in prom.alerts(g) if a["labels"]["alertname"] == ALERT],
        )
