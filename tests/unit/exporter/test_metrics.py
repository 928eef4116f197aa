"""The metric families of one capture: the numbers of ``rmqlb status``, unknown left out,
bounded labels, and the OpenMetrics text that ``status -o openmetrics`` prints."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from rmqlb.diagnose.status import status
from rmqlb.exporter.metrics import Capture, capture_of, families, peer, reason
from rmqlb.exporter.server import openmetrics
from rmqlb.model.snapshot import BrokerInfo, CaptureError
from rmqlb.snapshot import load_snapshot, parse_snapshot

ROOT = Path(__file__).resolve().parents[3]
SPLIT = ROOT / "examples" / "split-subscriptions.json"
DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(capture: Capture, **kwargs: bool) -> Samples:
    """Every sample as ``{(name, sorted labels): value}``, through the exposition text."""
    text = openmetrics(families(capture, now=capture.finished, **kwargs)).decode()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def capture(path: Path) -> Capture:
    snapshot = load_snapshot(path)
    return capture_of(status(snapshot), snapshot, duration=0.5, finished=1000.0)


def test_split_subscriptions_publish_the_stranded_messages_of_status() -> None:
    snapshot = load_snapshot(SPLIT)
    report = status(snapshot)
    (line,) = report.lines
    got = samples(capture_of(report, snapshot, duration=0.5, finished=1000.0))
    g = (("group", "GroupA"),)
    assert got[("rmqlb_up", ())] == 1
    assert got[("rmqlb_capture_duration_seconds", ())] == 0.5
    assert got[("rmqlb_last_success_timestamp_seconds", ())] == 1000.0
    assert got[("rmqlb_last_success_age_seconds", ())] == 0.0
    assert got[("rmqlb_group_stranded_messages", g)] == line.stranded.messages > 0
    assert got[("rmqlb_group_stranded_queues", g)] == line.stranded.queues == 4
    assert got[("rmqlb_group_lag_messages", g)] == line.lag
    assert got[("rmqlb_group_consumers", g)] == 2
    per_topic = {
        dict(k[1])["topic"]: v for k, v in got.items() if k[0] == "rmqlb_topic_stranded_messages"
    }
    assert per_topic == {t: s.messages for t, s in line.stranded_topics.items()}
    assert sum(per_topic.values()) == line.stranded.messages
    unconsumed = {
        dict(k[1])["topic"]: v
        for k, v in got.items()
        if k[0] == "rmqlb_topic_queues" and dict(k[1])["status"] == "unconsumed"
    }
    assert unconsumed == {"topicA": 2, "topicB": 2}
    worst = line.worst
    assert worst is not None
    labels = tuple(sorted((*g, ("code", worst.code.value), ("severity", "error"))))
    key = ("rmqlb_group_worst_finding", labels)
    assert got[key] == 1
    codes = {dict(k[1])["code"]: v for k, v in got.items() if k[0] == "rmqlb_group_findings"}
    assert codes == {"SUBSCRIPTION_INCONSISTENT": 2, "UNCONSUMED_QUEUE": 2}
    assert got[("rmqlb_group_root_cause", (*g, ("severity", "error")))] == 1
    assert got[("rmqlb_group_root_cause", (*g, ("severity", "warning")))] == 1


def test_client_ids_are_never_label_values() -> None:
    snapshot = load_snapshot(DEMO)
    clients = {c.client_id for g in snapshot.groups.values() for c in g.consumers}
    for per_queue in (False, True):
        got = samples(capture(DEMO), per_queue=per_queue)
        values = {v for _, labels in got for _, v in labels}
        assert not values & clients
        assert any(name == "rmqlb_queue_lag_messages" for name, _ in got) is per_queue


def test_a_healthy_group_has_no_root_cause_and_no_stranded_messages() -> None:
    got = samples(capture(ROOT / "examples" / "healthy.json"))
    roots = [v for (name, _), v in got.items() if name == "rmqlb_group_root_cause"]
    assert roots and not any(roots)
    assert all(v == 0 for (name, _), v in got.items() if "stranded" in name)
    assert not any(name == "rmqlb_group_findings" for name, _ in got)


def test_a_broker_that_could_not_be_read_leaves_the_lag_out_never_zero() -> None:
    snapshot = load_snapshot(SPLIT)
    failure = CaptureError(
        "broker-a (127.0.0.1:10911)",
        "QUERY_CONSUMER_OFFSET",
        "QUERY_CONSUMER_OFFSET timed out after 5 s",
        group="GroupA",
    )
    snapshot = dataclasses.replace(snapshot, errors=(failure,))
    got = samples(capture_of(status(snapshot), snapshot, duration=1.0, finished=5.0))
    names = {name for name, _ in got}
    assert got[("rmqlb_up", ())] == 1
    assert got[("rmqlb_broker_up", (("broker", "broker-a"),))] == 0
    assert got[("rmqlb_group_partial", (("group", "GroupA"),))] == 1
    failed = (("broker", "broker-a"), ("reason", "timeout"), ("request", "QUERY_CONSUMER_OFFSET"))
    assert got[("rmqlb_capture_failed_requests", failed)] == 1
    for unknown in ("rmqlb_group_lag_messages", "rmqlb_topic_lag_messages"):
        assert unknown not in names
    assert "rmqlb_group_stranded_messages" not in names
    assert got[("rmqlb_group_stranded_queues", (("group", "GroupA"),))] == 4


def test_a_queue_holding_messages_whose_holder_was_not_read_leaves_stranded_out() -> None:
    def queue(qid: int, behind: int) -> dict[str, object]:
        mq = {"topic": "T", "brokerName": "broker-a", "queueId": qid}
        return {**mq, "brokerOffset": 100 + behind, "consumerOffset": 100}

    held = [{"topic": "T", "brokerName": "broker-a", "queueId": 0}]
    doc = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 2}},
        "groups": {
            "G": {
                "consumers": [
                    {"clientId": "c1", "subscriptions": ["T"], "assigned": held},
                    {"clientId": "c2", "subscriptions": ["T"]},  # its running info failed
                ],
                "offsets": [queue(0, 0), queue(1, 25)],
            }
        },
        "errors": [
            {"target": "c2", "request": "GET_CONSUMER_RUNNING_INFO", "message": "timeout",
             "group": "G"},
        ],
    }  # fmt: skip
    snapshot = parse_snapshot(doc)
    got = samples(capture_of(status(snapshot), snapshot, duration=1.0, finished=5.0))
    names = {name for name, _ in got}
    assert "rmqlb_group_stranded_messages" not in names
    assert "rmqlb_topic_stranded_messages" not in names
    assert got[("rmqlb_group_lag_messages", (("group", "G"),))] == 25  # the lag is known


def test_a_failed_capture_is_up_0_with_the_age_of_the_last_success_and_no_group() -> None:
    failed = Capture(report=None, duration=2.0, finished=100.0, last_success=40.0, failure="x")
    got = samples(failed)
    assert got[("rmqlb_up", ())] == 0
    assert got[("rmqlb_last_success_age_seconds", ())] == 60.0
    assert got[("rmqlb_last_success_timestamp_seconds", ())] == 40.0
    assert not [name for name, _ in got if name.startswith("rmqlb_group_")]
    never = samples(Capture(report=None, finished=1.0))
    assert set(never) == {("rmqlb_up", ())}


def test_request_targets_and_messages_map_to_bounded_labels() -> None:
    brokers = {"broker-a": BrokerInfo("broker-a", addrs={0: "10.0.0.1:10911"})}
    ns = ("10.0.0.9:9876",)
    assert peer("broker-a (10.0.0.1:10911)", brokers, ns) == "broker-a"
    assert peer("10.0.0.1:10911", brokers, ns) == "broker-a"
    assert peer("10.0.0.9:9876", brokers, ns) == "namesrv"
    assert peer("10.0.3.32@5188#1900217004444", brokers, ns) == "client"
    assert reason("GET_CONSUME_STATS timed out after 5 s") == "timeout"
    assert reason("connection refused") == "refused"
    assert reason("not sent: overall deadline of 30 s exceeded") == "deadline"
    assert reason("TOPIC_NOT_EXIST (17): no topic") == "answer"


def test_openmetrics_text_ends_with_eof_and_has_one_type_per_family() -> None:
    text = openmetrics(families(capture(DEMO), now=1000.0)).decode()
    assert text.endswith("# EOF\n")
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")]
    assert len(types) == len(set(types))


def test_docs_list_every_metric_with_its_labels() -> None:
    from rmqlb.exporter.server import CaptureCollector, Exporter

    rows: dict[str, set[str]] = {}
    for line in (ROOT / "docs" / "exporter.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 3 and cells[0].startswith("`rmqlb_"):
            rows[cells[0].strip("`")] = {c.strip(" `") for c in cells[1].split(",") if c.strip()}
    snapshot = load_snapshot(DEMO)
    failed = CaptureError("10.0.0.1:10911", "GET_CONSUME_STATS", "timed out", topic="T")
    snapshot = dataclasses.replace(snapshot, errors=(failed,))
    full = capture_of(status(snapshot), snapshot, duration=1.0, finished=1.0)
    exporter = Exporter(lambda _last: full, interval=1.0)
    exporter.run_once()
    published = {
        f.name + ("_total" if f.type == "counter" else ""): set(f.samples[0].labels)
        for f in [
            *CaptureCollector(exporter, per_queue=True).collect(),
            *families(capture(DEMO), per_queue=True),  # unknown lag is left out above
        ]
        if f.samples
    }
    assert published == rows


def test_a_broadcasting_groups_lag_is_its_most_behind_clients_and_a_bound_is_left_out() -> None:
    """A real 4.9.8 capture: the slow client is 2,360 behind, the others keep up."""
    path = ROOT / "examples" / "broadcasting-slow-and-failing.json"
    g = (("group", "cache-invalidation-consumer"),)
    assert samples(capture(path))[("rmqlb_group_lag_messages", g)] == 2360
    snapshot = load_snapshot(path)
    group = snapshot.groups["cache-invalidation-consumer"]
    silent = dataclasses.replace(group.consumers[0], process_queues=None)  # did not answer
    partial = dataclasses.replace(
        snapshot,
        groups={group.name: dataclasses.replace(group, consumers=(silent, *group.consumers[1:]))},
    )
    got = samples(capture_of(status(partial), partial, duration=0.5, finished=1000.0))
    assert ("rmqlb_group_lag_messages", g) not in got  # a lower bound is not the lag
