"""RocketMQ's own consumer groups (``status --system``, or named): what uses each, never
advice to start their consumers or delete them, and never "5.x gRPC clients" for the groups
the brokers consume with themselves (seen on the kit's 5.1.4: CID_RMQ_SYS_REVIVE_GROUP)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from diagnose_builders import codes, only, run

from rmqlb.diagnose import Code, Severity, diagnose
from rmqlb.render.offsets import offsets_view, totals_line
from rmqlb.snapshot import parse_snapshot

REVIVE = "rmq_sys_REVIVE_LOG_DefaultCluster"
NOW_ISO = "2026-11-22T12:00:00Z"
NOW = 1_795_348_800_000


def _revive_snapshot() -> dict[str, Any]:
    """The revive group as a 5.1.4 capture shows it: committed offsets moving a moment ago,
    a fetch rate on its brokers, no consumer listed, no %RETRY% topic."""
    return {
        "format": "rmqlb.snapshot/1",
        "capturedAt": NOW_ISO,
        "brokers": {"broker-a": {"addrs": {"0": "10.0.0.11:10911"}, "version": 453}},
        "topics": {REVIVE: {"queueDatas": [{"brokerName": "broker-a", "readQueueNums": 2,
                                            "writeQueueNums": 2, "perm": 6}]}},
        "groups": {"CID_RMQ_SYS_REVIVE_GROUP": {
            "offsets": [
                {"topic": REVIVE, "brokerName": "broker-a", "queueId": i, "brokerOffset": 10 + i,
                 "consumerOffset": 4, "lastTimestamp": NOW - 3_000}
                for i in range(2)
            ],
            "onBrokers": {"broker-a": {"consumeTps": 1.0}},
        }},
    }  # fmt: skip


def test_the_revive_group_is_the_brokers_own_not_a_proxys_clients() -> None:
    doc = _revive_snapshot()
    report = run(doc["topics"], doc["groups"], extra={k: doc[k] for k in ("capturedAt", "brokers")})
    assert codes(report) == ["SYSTEM_GROUP"]  # not PROXY_CONSUMED, not NO_CONSUMERS
    f = only(report, Code.SYSTEM_GROUP)
    assert f.severity is Severity.info
    assert "PopReviveService" in f.message
    assert f"committed offsets on 1 topic ({REVIVE}), 13 messages of lag" in f.message
    assert "gRPC" not in f.message and "do not delete CID_RMQ_SYS_REVIVE_GROUP" in f.hint
    view = offsets_view(parse_snapshot(doc), "CID_RMQ_SYS_REVIVE_GROUP")
    assert {r.holders for r in view.rows} == {()}  # nobody, not "?"
    assert "gRPC" not in totals_line(view)


def test_an_idle_built_in_group_is_no_missing_consumer() -> None:
    report = run({}, {"CID_ONSAPI_OWNER": {}, "OrderGroup": {}})
    assert [(f.group, f.code.value) for f in report.findings] == [
        ("OrderGroup", "NO_CONSUMERS"),
        ("CID_ONSAPI_OWNER", "SYSTEM_GROUP"),
    ]
    f = only(report, Code.SYSTEM_GROUP)
    assert "RocketMQ creates it on every broker" in f.message
    assert "committed offsets" not in f.message


def test_the_catalogue_quotes_the_revive_groups_finding() -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "findings.md").read_text("utf-8")
    f = only(diagnose(parse_snapshot(_revive_snapshot())), Code.SYSTEM_GROUP)
    assert f"> {f.message}\n>\n> fix: {f.hint}\n" in doc
