"""Step 1 (records -> units) and step 2 (units -> rows) of the audit, engine-independent."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rmqlb.model.snapshot import Snapshot
from rmqlb.pipeline.units import (
    KIND_ERROR,
    KIND_FINDING,
    KIND_GROUP,
    KIND_SNAPSHOT,
    KIND_UNIT,
    ROW_FIELDS,
    UNKNOWN_CLUSTER,
    assignment_fingerprint,
    cluster_key,
    diagnose_unit,
    normalise_path,
    parse_captured_at,
    split_record,
    sub_snapshot,
)
from rmqlb.snapshot import parse_snapshot


def test_captured_at_normalised_to_utc() -> None:
    assert parse_captured_at("2026-11-22T13:00:00+01:00") == (
        1795348800000,
        "2026-11-22T12:00:00Z",
    )
    assert parse_captured_at("2026-11-22T12:00:00.250Z") == (
        1795348800250,
        "2026-11-22T12:00:00.250Z",
    )
    # no offset: taken as UTC
    assert parse_captured_at("2026-11-22T12:00:00")[0] == 1795348800000


@pytest.mark.parametrize("bad", [None, "", "yesterday", 17])
def test_captured_at_rejects_garbage(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_captured_at(bad)


def test_cluster_key_from_namesrv_sorted_and_joined() -> None:
    data = {"source": {"namesrv": ["b:9876", "a:9876"]}}
    assert cluster_key(data, "/x.json", None) == "a:9876;b:9876"
    assert cluster_key({"source": {"namesrv": "b:1;a:1"}}, "/x", None) == "a:1;b:1"
    assert cluster_key({}, "/x.json", None) == UNKNOWN_CLUSTER


def test_cluster_key_from_path_pattern_wins_and_falls_back() -> None:
    pattern = re.compile(r"/dumps/([^/]+)/")
    data = {"source": {"namesrv": ["ns:9876"]}}
    assert cluster_key(data, "/dumps/prod-eu/1.json", pattern) == "prod-eu"
    assert cluster_key(data, "/elsewhere/1.json", pattern) == "ns:9876"


def test_normalise_path_handles_spark_uris() -> None:
    assert normalise_path("file:///data/a%20b.json") == "/data/a b.json"
    assert normalise_path("file:/data/x.json") == "/data/x.json"
    assert normalise_path("/data/x.json") == "/data/x.json"
    assert normalise_path("s3a://bucket/x.json") == "s3a://bucket/x.json"


def test_sub_snapshot_keeps_only_the_groups_topics_and_brokers() -> None:
    data: dict[str, Any] = {
        "format": "rmqlb.snapshot/1",
        "capturedAt": "2026-11-22T12:00:00Z",
        "brokers": {"broker-a": {"cluster": "c"}, "broker-z": {"cluster": "c"}},
        "topics": {
            "A": {
                "queueDatas": [{"brokerName": "broker-a", "readQueueNums": 1, "writeQueueNums": 1}]
            },
            "B": {"queues": 4},
            "%RETRY%G1": {"queues": 1},
            "OFFSETS_ONLY": {"queues": 1},
        },
        "groups": {
            "G1": {
                "consumers": [{"clientId": "c", "subscriptions": ["A"]}],
                "offsets": [
                    {
                        "topic": "OFFSETS_ONLY",
                        "brokerName": "broker-a",
                        "queueId": 0,
                        "brokerOffset": 1,
                        "consumerOffset": 1,
                    }
                ],
            },
            "G2": {"consumers": [{"clientId": "d", "subscriptions": [{"topic": "B"}]}]},
        },
    }
    unit = sub_snapshot(data, "G1")
    assert set(unit["groups"]) == {"G1"}
    assert set(unit["topics"]) == {"A", "%RETRY%G1", "OFFSETS_ONLY"}
    assert set(unit["brokers"]) == {"broker-a"}
    assert unit["capturedAt"] == data["capturedAt"]
    parse_snapshot(unit)  # still a valid snapshot
    assert set(sub_snapshot(data, "G2")["topics"]) == {"B"}


def test_split_record_gives_marker_and_one_unit_per_group(
    snap: Callable[..., dict[str, Any]],
) -> None:
    data = snap("2026-11-22T12:00:00Z", {"G1": {}, "G2": {}}, namesrv=["ns:1"])
    rows = split_record(json.dumps(data), "file:///d/s.json")
    assert [r[0] for r in rows] == [KIND_SNAPSHOT, KIND_UNIT, KIND_UNIT]
    assert {r[4] for r in rows[1:]} == {"G1", "G2"}
    assert all(r[1] == "ns:1" and r[3] == "2026-11-22T12:00:00Z" for r in rows)
    assert all(r[6] == "/d/s.json" for r in rows)
    unit = json.loads(rows[1][5] or "")
    assert list(unit["groups"]) == [rows[1][4]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"format": "x"}', "no topics/groups"),
        ('{"topics": {}, "groups": {}}', "no capturedAt"),
    ],
)
def test_split_record_turns_bad_records_into_one_error_row(text: str, message: str) -> None:
    rows = split_record(text, "/d/bad.json")
    assert len(rows) == 1
    assert rows[0][0] == KIND_ERROR
    assert message in (rows[0][7] or "")


def test_blank_records_and_other_rmqlb_documents_are_ignored() -> None:
    assert split_record("  \n", "/d/x.jsonl") == []
    for fmt in ("rmqlb.audit/1", "rmqlb.report/1"):
        assert split_record(json.dumps({"format": fmt, "groups": {}}), "/d/s.json") == []


def _snapshot(holders: list[str]) -> Snapshot:
    consumers = [
        {
            "clientId": cid,
            "subscriptions": ["T"],
            "assigned": [
                {"topic": "T", "brokerName": "broker-a", "queueId": q}
                for q, h in enumerate(holders)
                if h == cid
            ],
        }
        for cid in sorted(set(holders))
    ]
    return parse_snapshot(
        {
            "format": "rmqlb.snapshot/1",
            "topics": {"T": {"queues": len(holders)}},
            "groups": {"G": {"consumers": consumers}},
        }
    )


def test_fingerprint_tracks_the_queue_to_client_mapping() -> None:
    a = assignment_fingerprint(_snapshot(["c1", "c1", "c2", "c2"]), "G")
    same = assignment_fingerprint(_snapshot(["c1", "c1", "c2", "c2"]), "G")
    moved = assignment_fingerprint(_snapshot(["c1", "c2", "c1", "c2"]), "G")
    assert a is not None and a == same
    assert moved != a


def test_fingerprint_unknown_when_no_assignment_is_known() -> None:
    data = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 2}},
        "groups": {"G": {"consumers": [{"clientId": "c", "subscriptions": ["T"]}]}},
    }
    assert assignment_fingerprint(parse_snapshot(data), "G") is None


def test_diagnose_unit_emits_group_and_finding_rows(
    snap: Callable[..., dict[str, Any]], scripted: Callable[[Snapshot], Any]
) -> None:
    data = snap(
        "2026-11-22T12:00:00Z",
        {"G": {"findings": "IDLE_CONSUMER:warning:T_G,DUPLICATE_CLIENT_ID:error:"}},
    )
    rows = diagnose_unit(
        "ns", 1, "2026-11-22T12:00:00Z", "G", json.dumps(data), path="/p", diagnoser=scripted
    )
    assert all(len(r) == len(ROW_FIELDS) for r in rows)
    kinds = [r[0] for r in rows]
    assert kinds == [KIND_GROUP, KIND_FINDING, KIND_FINDING]
    assert rows[0][7] == "error"  # worst severity of the unit
    assert rows[0][10] is not None  # fingerprint
    assert {(r[5], r[6], r[7]) for r in rows[1:]} == {
        ("T_G", "IDLE_CONSUMER", "warning"),
        (None, "DUPLICATE_CLIENT_ID", "error"),
    }


def test_diagnose_unit_reports_a_broken_group_as_an_error_row() -> None:
    bad = json.dumps({"format": "rmqlb.snapshot/1", "topics": {}, "groups": {"G": 5}})
    rows = diagnose_unit("ns", 1, "2026-11-22T12:00:00Z", "G", bad, path="/p")
    assert len(rows) == 1
    assert rows[0][0] == KIND_ERROR
    assert "groups.G" in (rows[0][12] or "")


def _explain_vs_unit(data: dict[str, Any]) -> None:
    from rmqlb.diagnose import diagnose
    from rmqlb.diagnose.report import finding_to_json

    whole = parse_snapshot(data)
    for name in data["groups"]:
        expected = [finding_to_json(f) for f in diagnose(whole, groups=[name]).findings]
        unit = parse_snapshot(json.loads(json.dumps(sub_snapshot(data, name))))
        got = [finding_to_json(f) for f in diagnose(unit).findings]
        assert got == expected, name


def test_unit_diagnosis_equals_explain_on_the_examples() -> None:
    """Diagnosing a group's sub-snapshot gives exactly what explain gives on the whole file."""
    examples = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.json"))
    assert examples
    for path in examples:
        _explain_vs_unit(json.loads(path.read_text()))


def test_unit_diagnosis_equals_explain_on_a_generated_snapshot(tmp_path: Path) -> None:
    from rmqlb.pipeline.generate import generate_fleet

    generate_fleet(tmp_path, 3, seed=8, groups=18, clusters=1)
    for path in sorted(tmp_path.rglob("2026*.json")):
        _explain_vs_unit(json.loads(path.read_text()))


@pytest.mark.parametrize(
    "text",
    [
        '{"a":NaN,"b":-Infinity,"c":1e400}',
        '{"a":"\\u0000\\u2028é","b":[1.5,-0,true,null],"c":"\\ud83d\\ude00"}',
        "[1,2",
        '{"a":1} x',
        "",
    ],
)
def test_decode_json_reads_what_json_loads_reads(text: str) -> None:
    from rmqlb.pipeline.units import decode_json

    try:
        expected: object = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            decode_json(text)
    else:
        got = decode_json(text)
        assert json.dumps(got) == json.dumps(expected)  # NaN-safe comparison


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a":"\\ud800"}', "lone surrogate"),
        ('{"a":1,"a":2}', "duplicate key 'a'"),
        ('{"a":123456789012345678901234567890}', "out of range"),
    ],
)
def test_decode_json_refuses_what_every_loader_refuses(text: str, why: str) -> None:
    from rmqlb.pipeline.units import decode_json

    with pytest.raises(ValueError, match=why):
        decode_json(text)


def test_a_broadcasting_groups_lag_in_the_audit_is_its_most_behind_clients() -> None:
    """As status says it (a real 4.9.8 capture: the slow client is 2,360 behind), not
    unknown: its queues have no lag of the group's."""
    path = Path(__file__).resolve().parents[3] / "examples" / "broadcasting-slow-and-failing.json"
    text = path.read_text(encoding="utf-8")
    group = "cache-invalidation-consumer"
    rows = diagnose_unit("ns", 1, "2026-11-29T23:39:59Z", group, text, path=str(path))
    lag = ROW_FIELDS.index("lag")
    (group_row,) = [r for r in rows if r[0] == KIND_GROUP]
    assert group_row[lag] == 2360
    behind = [r for r in rows if r[0] == KIND_FINDING and r[6] == "BROADCAST_LAG"]
    assert [r[lag] for r in behind] == [2360]  # its topic's


def test_the_audits_group_lag_counts_offsets_of_topics_nobody_subscribes() -> None:
    """As explain and status count it: T0's 7 waiting messages, nobody subscribing T0."""
    doc = {
        "format": "rmqlb.snapshot/1",
        "capturedAt": "2026-11-30T03:00:00Z",
        "topics": {"T": {"queues": 1}, "T0": {"queues": 1}},
        "groups": {"G": {
            "consumers": [{"clientId": "c1", "subscriptions": ["T"]}],
            "offsets": [
                {"topic": t, "brokerName": "broker-a", "queueId": 0, "brokerOffset": 10 + lag,
                 "consumerOffset": 10}
                for t, lag in (("T", 5), ("T0", 7))
            ],
        }},
    }  # fmt: skip
    rows = diagnose_unit("ns", 1, "2026-11-30T03:00:00Z", "G", json.dumps(doc), path="/p")
    lag = ROW_FIELDS.index("lag")
    (group_row,) = [r for r in rows if r[0] == KIND_GROUP]
    assert group_row[lag] == 12
