"""Topic rules stand alone: every topic of every input is checked, with or without groups,
and each finding points at the line of the broker entry that causes it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rmqlb.check import load_files, run_check
from rmqlb.cli import run

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples/check"
TOPICS = EXAMPLES / "topics"


def line(path: Path, needle: str, after: str) -> int:
    lines = path.read_text().splitlines()
    start = next(i for i, text in enumerate(lines) if after in text) + 1
    return next(n for n, text in enumerate(lines[start:], start + 1) if needle in text)


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def test_a_topics_json_alone_fails_on_its_two_bad_topics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "topics.json"
    path.write_text(
        json.dumps(
            {
                "topicConfigTable": {
                    "Stranded": {"readQueueNums": 4, "writeQueueNums": 8, "perm": 6},
                    "Unread": {"readQueueNums": 8, "writeQueueNums": 8, "perm": 2},
                    "Fine": {"readQueueNums": 8, "writeQueueNums": 8, "perm": 6},
                }
            },
            indent=2,
        )
    )
    assert run(["check", "-o", "json", str(path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    got = {(f["code"], f["topic"], f["group"], f["line"]) for f in doc["findings"]}
    assert got == {
        ("WRITE_EXCEEDS_READ", "Stranded", None, line(path, "writeQueueNums", '"Stranded"')),
        ("QUEUE_NOT_READABLE", "Unread", None, line(path, '"perm"', '"Unread"')),
    }
    cases = {c["topic"]: c["status"] for c in doc["cases"]}
    assert cases == {"Stranded": "failed", "Unread": "failed", "Fine": "passed"}


def test_two_brokers_files_are_one_cluster() -> None:
    a, b = TOPICS / "broker-a-topics.json", TOPICS / "broker-b-topics.json"
    result = run_check(load_files([str(a), str(b)]))
    got = {(f.code, f.topic, Path(f.loc.file).name, f.loc.line) for f in result.findings}
    assert got == {
        ("WRITE_EXCEEDS_READ", "LoyaltyTopic", a.name, line(a, "writeQueueNums", '"LoyaltyTopic"')),
        ("QUEUE_NOT_READABLE", "ShipmentTopic", a.name, line(a, '"perm"', '"ShipmentTopic"')),
        ("QUEUE_NOT_WRITABLE", "ArchiveTopic", a.name, line(a, '"perm"', '"ArchiveTopic"')),
        ("QUEUE_NOT_WRITABLE", "ArchiveTopic", b.name, line(b, '"perm"', '"ArchiveTopic"')),
        ("TOPIC_NOT_ON_ALL_BROKERS", "InvoiceTopic", a.name, line(a, '"InvoiceTopic"', "{")),
        ("NO_QUEUES", "RetiredTopic", a.name, line(a, '"readQueueNums"', '"RetiredTopic"')),
        ("NO_QUEUES", "RetiredTopic", b.name, line(b, '"readQueueNums"', '"RetiredTopic"')),
    }
    assert all(f.group is None for f in result.findings)
    # one file: the cluster is unknown, so a topic on one broker is no finding
    alone = run_check(load_files([str(a)]))
    assert "TOPIC_NOT_ON_ALL_BROKERS" not in {f.code for f in alone.findings}


def test_yaml_topics_without_groups(tmp_path: Path) -> None:
    path = tmp_path / "topics.yaml"
    path.write_text(
        "topics:\n"
        "  A: {read: 4, write: 8}\n"
        "  B: {queues: 8, perm: w}\n"
        "  C: {queues: 0}\n"
        "  D: {queues: 8, perm: r}\n"
    )
    found = {(f.code, f.topic, f.loc.line) for f in run_check(load_files([str(path)])).findings}
    assert found == {
        ("WRITE_EXCEEDS_READ", "A", 2),
        ("QUEUE_NOT_READABLE", "B", 3),
        ("NO_QUEUES", "C", 4),
        ("QUEUE_NOT_WRITABLE", "D", 5),
    }


def test_mqadmin_cluster_export(tmp_path: Path) -> None:
    path = tmp_path / "metadata.json"
    path.write_text(
        json.dumps(
            {
                "exportTime": 1763812800000,
                "topicConfigTable": {
                    "Summed": {"readQueueNums": 8, "writeQueueNums": 16, "perm": 6}
                },
                "subscriptionGroupTable": {},
            }
        )
    )
    (f,) = run_check(load_files([str(path)])).findings
    assert (f.code, f.topic, f.group) == ("WRITE_EXCEEDS_READ", "Summed", None)
    assert "summed over the cluster's masters" in f.message  # no broker to name: all of them
    assert {q.broker_name for q in f.queues} == {"all-brokers"}


def test_a_subscribed_topic_is_reported_once(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "topics:\n"
        "  T: {read: 4, write: 8}\n"
        "groups:\n"
        "  G1: {members: {a: {replicas: 2, subscriptions: {T: '*'}}}}\n"
        "  G2: {members: {b: {replicas: 2, subscriptions: {T: '*'}}}}\n"
    )
    result = run_check(load_files([str(path)]))
    assert [(f.code, f.group) for f in result.findings] == [("WRITE_EXCEEDS_READ", None)]


def test_junit_and_annotations_name_the_topic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    junit = tmp_path / "junit.xml"
    a = str(TOPICS / "broker-a-topics.json")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert run(["check", "-o", "plain", "--junit", str(junit), a]) == 1
    out = capsys.readouterr().out
    assert "title=rmqlb WRITE_EXCEEDS_READ (LoyaltyTopic)::" in out
    assert "WRITE_EXCEEDS_READ LoyaltyTopic: LoyaltyTopic on broker-a" in out
    cases = {
        (c.get("classname"), c.get("name")): c for c in ET.parse(junit).getroot().iter("testcase")
    }
    assert cases[("(topics)", "LoyaltyTopic")].find("failure") is not None
    assert cases[("(topics)", "OrderTopic")].find("failure") is None
