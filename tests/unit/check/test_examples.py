"""Every example under examples/check: the exact codes, files and lines it reports, through
the real diagnosis engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from rmqlb.check import CheckOptions, load_files, run_check

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples/check"


def line(path: Path, needle: str, after: str | None = None) -> int:
    """The 1-based line of the first ``needle`` (after the line holding ``after``)."""
    lines = path.read_text().splitlines()
    start = 0
    if after is not None:
        start = next(i for i, text in enumerate(lines) if after in text) + 1
    for number, text in enumerate(lines[start:], start + 1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def found(*names: str) -> set[tuple[str, str, str, int, str | None]]:
    paths = [str(EXAMPLES / n) for n in names]
    result = run_check(load_files(paths))
    return {
        (
            f.code,
            f.severity.value,
            Path(f.loc.file).relative_to(EXAMPLES).as_posix(),
            f.loc.line,
            f.topic,
        )
        for f in result.findings
    }


def test_clean() -> None:
    assert found("clean.yaml") == set()


def test_idle_consumers() -> None:
    path = EXAMPLES / "idle-consumers.yaml"
    assert found(path.name) == {
        ("IDLE_CONSUMER", "warning", path.name, line(path, "replicas: 16..24"), "ShipmentTopic")
    }
    result = run_check(load_files([str(path)]))
    (idle,) = result.findings
    assert idle.counts == tuple(range(17, 25))
    assert idle.message.startswith("with >= 17 consumers: ")
    assert "16 readable queues" in idle.message


def test_imbalance() -> None:
    path = EXAMPLES / "imbalance.yaml"
    assert found(path.name) == {
        ("IMBALANCE", "warning", path.name, line(path, "queues: 16"), "InvoiceTopic")
    }


def test_imbalance_threshold_is_an_option() -> None:
    path = str(EXAMPLES / "imbalance.yaml")
    assert run_check(load_files([path]), CheckOptions(max_imbalance=2.0)).findings == ()
    assert len(run_check(load_files([path]), CheckOptions(max_imbalance=1.9)).findings) == 1


def test_write_exceeds_read() -> None:
    path = EXAMPLES / "write-exceeds-read.yaml"
    assert found(path.name) == {
        ("WRITE_EXCEEDS_READ", "error", path.name, line(path, "write: 16"), "RefundTopic")
    }


def test_unreadable_perm() -> None:
    path = EXAMPLES / "unreadable-perm.yaml"
    assert found(path.name) == {
        ("QUEUE_NOT_READABLE", "warning", path.name, line(path, "perm: 2"), "StockTopic")
    }


def test_subscription_inconsistent_seed_001() -> None:
    path = EXAMPLES / "subscription-inconsistent.yaml"
    b_subs = line(path, "subscriptions:", after="consumer-b:")
    a_subs = line(path, "subscriptions:", after="consumer-a:")
    b_topic_b = line(path, 'TopicB: "TagB"')
    assert found(path.name) == {
        ("SUBSCRIPTION_INCONSISTENT", "error", path.name, b_subs, "TopicA"),
        ("SUBSCRIPTION_INCONSISTENT", "error", path.name, b_topic_b, "TopicB"),
        ("UNCONSUMED_QUEUE", "error", path.name, b_subs, "TopicA"),
        ("UNCONSUMED_QUEUE", "error", path.name, a_subs, "TopicB"),
    }


def test_strategy_inconsistent() -> None:
    path = EXAMPLES / "strategy-inconsistent.yaml"
    assert found(path.name) == {
        (
            "STRATEGY_INCONSISTENT",
            "error",
            path.name,
            line(path, "strategy: AVG_BY_CIRCLE"),
            "AuditTopic",
        )
    }


def test_undeclared_topic() -> None:
    path = EXAMPLES / "undeclared-topic.yaml"
    assert found(path.name) == {
        ("NO_ROUTE", "warning", path.name, line(path, "NotificationTopik:"), "NotificationTopik")
    }


def test_no_members() -> None:
    path = EXAMPLES / "no-members.yaml"
    assert found(path.name) == {
        ("NO_CONSUMERS", "warning", path.name, line(path, "members: {}"), None)
    }


def test_pop_legacy_member() -> None:
    path = EXAMPLES / "pop-legacy-member.yaml"
    assert found(path.name) == {
        (
            "MIXED_REBALANCE",
            "warning",
            path.name,
            line(path, "settlement-batch-4x:"),
            "SettlementTopic",
        ),
        ("POP_MODE", "info", path.name, line(path, "SettlementGroup:"), None),
    }


def test_broker_files_with_members_yaml() -> None:
    topics = EXAMPLES / "broker/topics.json"
    groups = EXAMPLES / "broker/subscriptionGroup.json"
    members = EXAMPLES / "broker/members.yaml"
    got = found("broker/topics.json", "broker/subscriptionGroup.json", "broker/members.yaml")
    assert got == {
        (
            "WRITE_EXCEEDS_READ",
            "error",
            "broker/topics.json",
            line(topics, '"writeQueueNums":8', after='"LoyaltyTopic"'),
            "LoyaltyTopic",
        ),
        (
            "IDLE_CONSUMER",
            "warning",
            "broker/members.yaml",
            line(members, "replicas: 2..12"),
            "CartTopic",
        ),
        (
            "IMBALANCE",
            "warning",
            "broker/topics.json",
            line(topics, '"readQueueNums":8', after='"CartTopic"'),
            "CartTopic",
        ),
        (
            "NO_CONSUMERS",
            "info",
            "broker/subscriptionGroup.json",
            line(groups, '"LegacyGroup"'),
            None,
        ),
    }


def test_all_yaml_examples_together() -> None:
    names = sorted(p.name for p in EXAMPLES.glob("*.yaml"))
    together = found(*names)
    separately = set().union(*(found(n) for n in names))
    assert together == separately
    assert {code for code, *_ in together} >= {
        "IDLE_CONSUMER",
        "IMBALANCE",
        "WRITE_EXCEEDS_READ",
        "QUEUE_NOT_READABLE",
        "SUBSCRIPTION_INCONSISTENT",
        "STRATEGY_INCONSISTENT",
        "NO_ROUTE",
        "NO_CONSUMERS",
    }


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_finding_points_inside_its_file(name: str) -> None:
    path = EXAMPLES / name
    total = len(path.read_text().splitlines())
    for f in run_check(load_files([str(path)])).findings:
        assert f.loc.file == str(path)
        assert 1 <= f.loc.line <= total
