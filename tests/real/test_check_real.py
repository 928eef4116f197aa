"""``rmqlb check`` on the config files real brokers write and the real mqadmin exports.

A team points ``check`` at a broker's ``store/config/topics.json`` and
``subscriptionGroup.json`` (or at ``mqadmin exportMetadata -c``'s ``metadata.json``) with a
YAML that says who joins each group. Here real brokers write those files after real
``mqadmin updateTopic`` / ``updateSubGroup`` calls, on each kit version, and ``check`` must
read them: the broker names inferred, the counts, the line of each topic, the group known.
The kit's brokers are shared with the other tests, so only this test's names are looked at.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Names
from realkit import CLUSTER, Kit

ALL = ("4.9.8", "5.0.0", "5.1.4")


def _check(kit: Kit, *files: Path) -> dict[str, Any]:
    done = kit.rmqlb("check", "-o", "json", *map(str, files), expect=(0, 1))
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _members(tmp_path: Path, group: str, topic: str) -> Path:
    """3 to 20 replicas of one service subscribing ``topic``: idle from 17 on (16 queues)."""
    path = tmp_path / "members.yaml"
    path.write_text(
        f"version: 1\ngroups:\n  {group}:\n    members:\n      svc:\n"
        f"        replicas: 3..20\n        subscriptions:\n          {topic}: '*'\n",
        encoding="utf-8",
    )
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.versions(*ALL)
def test_check_reads_the_config_files_real_brokers_write(
    kit: Kit, names: Names, tmp_path: Path
) -> None:
    g, t, wide = names.group, names.topic, names.topic_n(2)
    kit.topic(t, read=8)  # 8 queues on each broker: 16 for the group
    kit.topic(wide, read=4, write=8, brokers=("broker-a",))
    kit.group_config(g)
    config = kit.rmq_dir / "store"
    a_topics = config / "broker-a" / "config" / "topics.json"
    b_topics = config / "broker-b" / "config" / "topics.json"
    a_groups = config / "broker-a" / "config" / "subscriptionGroup.json"
    members = _members(tmp_path, g, t)

    doc = _check(kit, b_topics, a_topics, a_groups, members)  # b first: names are inferred

    ours = [f for f in doc["findings"] if f["topic"] in (t, wide) or f["group"] == g]
    by_code = {f["code"]: f for f in ours}
    write = by_code["WRITE_EXCEEDS_READ"]
    assert write["topic"] == wide and write["file"] == str(a_topics)
    assert write["line"] >= _line_of(a_topics, f'"{wide}"')  # at its writeQueueNums
    assert [(q["brokerName"], q["queueId"]) for q in write["queues"]] == [
        ("broker-a", i) for i in range(4, 8)
    ]  # the broker named from its own topics, not from the order of the files
    assert by_code["TOPIC_NOT_ON_ALL_BROKERS"]["topic"] == wide
    idle = by_code["IDLE_CONSUMER"]
    assert idle["file"] == str(members) and idle["consumerCounts"][0] == 17
    assert "16 readable queues for 17 consumers" in idle["message"]
    assert "NO_CONSUMERS" not in by_code  # the YAML gives the broker's group its members

    # the same from the cluster export, which sums each topic's counts over the masters
    export = tmp_path / "export"
    kit.mqadmin("exportMetadata", "-c", CLUSTER, "-f", str(export))
    doc = _check(kit, export / "metadata.json", members)
    ours = [f for f in doc["findings"] if f["topic"] in (t, wide) or f["group"] == g]
    by_code = {f["code"]: f for f in ours}
    assert by_code["WRITE_EXCEEDS_READ"]["topic"] == wide
    assert "16 readable queues for 17 consumers" in by_code["IDLE_CONSUMER"]["message"]
