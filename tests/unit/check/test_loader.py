"""Broker files, mqadmin exports, auto-detection and merging of several inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rmqlb.check.brokerfiles import MERGED_BROKER, infer_broker_name
from rmqlb.check.decl import Loc
from rmqlb.check.loader import load_files
from rmqlb.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
BROKER = ROOT / "examples/check/broker"


def line_of(path: Path, needle: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_broker_pair_with_members_yaml() -> None:
    files = [str(BROKER / n) for n in ("topics.json", "subscriptionGroup.json", "members.yaml")]
    config = load_files(files)
    topics_file = files[0]
    cart = config.topics["CartTopic"]
    assert [(b.broker, b.read, b.write, b.perm) for b in cart.brokers] == [("broker-a", 8, 8, 6)]
    assert cart.loc == Loc(topics_file, line_of(BROKER / "topics.json", '"CartTopic":{'))
    loyalty = config.topics["LoyaltyTopic"].brokers[0]
    assert (loyalty.read, loyalty.write) == (4, 8)
    assert loyalty.write_loc.line == loyalty.loc.line + 7
    # system groups are left out; the YAML supplies members of the broker's groups
    assert set(config.groups) == {"CartGroup", "LoyaltyGroup", "LegacyGroup"}
    assert config.groups["CartGroup"].members_declared
    assert config.groups["CartGroup"].loc.file == files[2]
    legacy = config.groups["LegacyGroup"]
    assert not legacy.members_declared
    assert legacy.loc == Loc(files[1], line_of(BROKER / "subscriptionGroup.json", '"LegacyGroup"'))


def test_shared_broker_samples(shared_dir: Path) -> None:
    wire = shared_dir / "fixtures/wire"
    config = load_files(
        [
            str(wire / "topic-config-wrapper.4.x.pretty.json"),
            str(wire / "subscription-group-wrapper.4.x.pretty.json"),
        ]
    )
    topic = config.topics["lsqTopic1"]
    assert [(b.broker, b.read, b.write, b.perm) for b in topic.brokers] == [("broker-a", 4, 4, 6)]
    assert config.topics["BenchmarkTest"].brokers[0].read == 1024
    assert set(config.groups) == {"lsqGroup"}


def test_broker_name_inference() -> None:
    assert infer_broker_name({"rmq_sys_SYNC_BROKER_MEMBER_b-2": {}}) == "b-2"
    cfg = {"perm": 7, "readQueueNums": 1, "writeQueueNums": 1}
    assert infer_broker_name({"x": cfg, "y": cfg}) is None  # ambiguous
    assert infer_broker_name({"x": {**cfg, "perm": 6}}) is None  # no inherit bit


def test_unnamed_broker_files_get_successive_names(tmp_path: Path) -> None:
    for name in ("one", "two"):
        body = {
            "dataVersion": {},
            "topicConfigTable": {"T": {"readQueueNums": 2, "writeQueueNums": 2}},
        }
        (tmp_path / f"{name}.json").write_text(json.dumps(body, indent=1))
    config = load_files([str(tmp_path / "one.json"), str(tmp_path / "two.json")])
    assert [b.broker for b in config.topics["T"].brokers] == ["broker-a", "broker-b"]


def test_cluster_export_is_one_merged_broker(tmp_path: Path) -> None:
    body = {
        "exportTime": 1763812800000,
        "topicConfigTable": {"T": {"perm": 6, "readQueueNums": 16, "writeQueueNums": 16}},
        "subscriptionGroupTable": {"G": {"groupName": "G"}, "TOOLS_CONSUMER": {}},
    }
    path = tmp_path / "metadata.json"
    path.write_text(json.dumps(body, indent="\t"))
    config = load_files([str(path)])
    assert [(b.broker, b.read) for b in config.topics["T"].brokers] == [(MERGED_BROKER, 16)]
    assert list(config.groups) == ["G"]


def test_same_broker_twice_is_an_error(tmp_path: Path) -> None:
    shutil.copy(BROKER / "topics.json", tmp_path / "a.json")
    shutil.copy(BROKER / "topics.json", tmp_path / "b.json")
    with pytest.raises(
        InputError,
        match=r"b\.json:\d+: topic .* on broker broker-a is already declared at .*a\.json:\d+",
    ):
        load_files([str(tmp_path / "a.json"), str(tmp_path / "b.json")])


def test_members_merge_across_yaml_files(tmp_path: Path) -> None:
    member = (
        "groups:\n  G:\n    members:\n      {name}:\n"
        "        replicas: 1\n        subscriptions: {{T: '*'}}\n"
    )
    (tmp_path / "a.yaml").write_text(member.format(name="a"))
    (tmp_path / "b.yaml").write_text(member.format(name="b"))
    config = load_files([str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert [m.name for m in config.groups["G"].members] == ["a", "b"]
    (tmp_path / "c.yaml").write_text(member.format(name="a"))
    with pytest.raises(
        InputError, match=r"c\.yaml:4: member a of group G is already declared at .*a\.yaml:4"
    ):
        load_files([str(tmp_path / "a.yaml"), str(tmp_path / "c.yaml")])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("just: text\n", r"x\.(yaml|json):1: not a check input"),
        ("- 1\n- 2\n", r"x\.(yaml|json):1: not a check input"),
        ('{"topicConfigTable": [1]}', r"x\.(yaml|json):1: topicConfigTable: expected an object"),
        (
            '{"topicConfigTable": {"T": {"perm": "rw"}}}',
            r"x\.(yaml|json):1: topicConfigTable\.T\.perm: expected an integer",
        ),
    ],
)
@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_not_an_input(tmp_path: Path, content: str, expected: str, suffix: str) -> None:
    path = tmp_path / f"x.{suffix}"
    path.write_text(content)
    with pytest.raises(InputError, match=expected):
        load_files([str(path)])


def test_bad_json_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "topics.json"
    path.write_text('{\n\t"topicConfigTable":{\n\t\t"T":{,}\n\t}\n}')
    with pytest.raises(InputError, match=r"topics\.json:3: invalid JSON: "):
        load_files([str(path)])


def test_unreadable_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.yaml: no such file"):
        load_files([str(tmp_path / "missing.yaml")])
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00topics")
    with pytest.raises(InputError, match=r"bin\.yaml:1: not UTF-8 text"):
        load_files([str(path)])
    with pytest.raises(InputError, match="no input files"):
        load_files([])


def test_config_written_as_json_keeps_lines(tmp_path: Path) -> None:
    path = tmp_path / "rmqlb.json"
    path.write_text(
        '{\n\t"topics": {\n\t\t"T": {\n\t\t\t"queues": 4\n\t\t}\n\t},\n'
        '\t"groups": {\n\t\t"G": {\n\t\t\t"members": {\n\t\t\t\t"a": {\n'
        '\t\t\t\t\t"replicas": "2..5",\n\t\t\t\t\t"subscriptions": {"T": "*"}\n'
        "\t\t\t\t}\n\t\t\t}\n\t\t}\n\t}\n}\n"
    )
    config = load_files([str(path)])
    assert config.topics["T"].queues_loc == Loc(str(path), 4)
    member = config.groups["G"].members[0]
    assert (member.min_replicas, member.max_replicas) == (2, 5)
    assert member.replicas_loc == Loc(str(path), 11)
    assert member.subscriptions[0].loc == Loc(str(path), 12)
    path.write_text('{"topics": {"T": {"queues": true}}}')
    with pytest.raises(
        InputError, match=r"rmqlb\.json:1: topics\.T\.queues: expected an integer, found a boolean"
    ):
        load_files([str(path)])
