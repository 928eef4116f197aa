"""``rmqlb status`` rendered: golden files of the demo cluster in every format, marks for
partial data and ``--watch`` changes, and what changes between two polls."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
from test_render_golden import VARIANTS, check_golden, fixed_console

from rmqlb.diagnose.status import StatusReport, status
from rmqlb.model import CaptureError
from rmqlb.render import Output
from rmqlb.render.changes import describe_status_changes, diff_status
from rmqlb.render.status import StatusOptions, render_status, stranded_text
from rmqlb.snapshot import load_snapshot, parse_snapshot, snapshot_to_json

DEMO = Path(__file__).resolve().parents[3] / "rmqlb" / "data" / "demo-snapshot.json"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM", "COLORTERM"):
        monkeypatch.delenv(name, raising=False)


def demo() -> StatusReport:
    return status(load_snapshot(DEMO))


def text(
    report: StatusReport, fmt: Output, color: bool, options: StatusOptions | None = None
) -> str:
    buffer = io.StringIO()
    target = fixed_console(buffer, color) if fmt is Output.table else buffer
    render_status(report, fmt, target, options)
    return buffer.getvalue()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_golden_demo(variant: str) -> None:
    fmt, color, ext = VARIANTS[variant]
    check_golden(f"status-demo.{variant}.{ext}", text(demo(), fmt, color))


def test_every_format_renders_and_only_the_colour_table_has_ansi() -> None:
    report = demo()
    for fmt in Output:
        out = text(report, fmt, color=False)
        assert "\x1b[" not in out
        assert "OrderGroup" in out and "AuditGroup" in out
    assert "\x1b[" in text(report, Output.table, color=True)


def test_table_never_cuts_names_or_numbers_only_messages() -> None:
    out = text(demo(), Output.table, color=False)
    lines = out.splitlines()
    assert all(len(line) <= 100 for line in lines)
    row = next(line for line in lines if line.startswith("OrderGroup"))
    assert row.split() == [
        "OrderGroup",
        "CLUSTERING",
        "AVG",
        "3",
        "2",
        "6",
        "3,546",
        "3,537",
        "176.1",
    ]
    finding = lines[lines.index(row) + 1]
    assert finding.startswith(
        "   error  SUBSCRIPTION_INCONSISTENT RefundTopic [OrderGroup/F1, causes 1]: 1 of 3"
    )
    assert finding.endswith("…")


def test_plain_is_one_line_per_group_with_the_whole_message() -> None:
    out = text(demo(), Output.plain, color=False)
    (row,) = [line for line in out.splitlines() if line.startswith("AuditGroup")]
    assert "warning NO_CONSUMERS" in row
    assert row.endswith("it leaves 4,210 messages unconsumed on 1 topic: AuditTopic (4,210)")


def test_the_tps_column_is_left_out_when_no_client_reports_a_rate() -> None:
    doc = snapshot_to_json(load_snapshot(DEMO))
    for g in doc["groups"].values():
        for c in g["consumers"]:
            c.pop("status", None)
    report = status(parse_snapshot(doc))
    assert not report.show_tps
    for fmt in (Output.table, Output.plain, Output.markdown):
        out = text(report, fmt, color=False)
        assert "TPS" not in out.upper().split("SUMMARY")[0], fmt
        assert "msg/s" not in out
    assert json.loads(text(report, Output.json, False))["groups"][0]["consumeTps"] is None


def test_partial_lines_are_marked_and_the_failures_listed() -> None:
    snap = load_snapshot(DEMO)
    errors = tuple(
        CaptureError("broker-b (10.0.0.3:10911)", "GET_CONSUME_STATS", f"timed out {i}", group=g)
        for i, g in enumerate(["ShipmentGroup"] * 12)
    )
    report = status(dataclasses.replace(snap, errors=errors))
    out = text(report, Output.plain, color=False)
    assert "ShipmentGroup !" in out and "OrderGroup !" not in out
    assert "! some data of this group could not be captured" in out
    assert "partial data: 12 requests failed" in out
    # the failed requests themselves go to stderr (the command), once: none on stdout
    assert "(listed on stderr)" in out and "timed out" not in out
    assert "Summary: 5 groups, 2 with errors, 1 with warnings, 1 partial; 10 consumers" in out
    doc = json.loads(text(report, Output.json, False))
    assert len(doc["errors"]) == 12
    assert len(doc["groups"][1]["partial"]) == 12 and doc["groups"][0]["partial"] == []


def test_stranded_cells() -> None:
    from rmqlb.diagnose.status import Stranded

    line = demo().lines[0]
    cases = {
        Stranded(): "0",
        Stranded(3, 3537, 0): "3,537",
        Stranded(2, 0, 2): "?",
        Stranded(3, 40, 1): "40+",
    }
    for stranded, expected in cases.items():
        assert stranded_text(dataclasses.replace(line, stranded=stranded)) == expected


def test_changes_between_polls() -> None:
    before = demo()
    doc = snapshot_to_json(load_snapshot(DEMO))
    # ShipmentGroup's rolling deploy ends (everyone on AVG_BY_CIRCLE, holding its share);
    # AuditGroup is deleted; a new group appears.
    ship = doc["groups"]["ShipmentGroup"]
    for c in ship["consumers"]:
        c["strategy"] = {"name": "AVG_BY_CIRCLE"}
    ship["consumers"][0]["assigned"] = [
        {"topic": "ShipmentTopic", "brokerName": b, "queueId": q}
        for b, q in (("broker-a", 0), ("broker-a", 3), ("broker-b", 2))
    ] + [{"topic": "%RETRY%ShipmentGroup", "brokerName": "broker-a", "queueId": 0}]
    ship["consumers"][1]["assigned"] = [
        {"topic": "ShipmentTopic", "brokerName": b, "queueId": q}
        for b, q in (("broker-a", 1), ("broker-b", 0), ("broker-b", 3))
    ]
    del doc["groups"]["AuditGroup"]
    doc["groups"]["NewGroup"] = {"consumers": []}
    after = status(parse_snapshot(doc))
    changes = diff_status(before, after)
    assert describe_status_changes(changes) == [
        # the stranded lag now sits with one client: LAG_SKEW is what remains
        "group ShipmentGroup: strategy mixed -> AVG_BY_CIRCLE; worst error STRATEGY_INCONSISTENT"
        " -> warning LAG_SKEW; findings 4 errors, 1 warning -> 0 errors, 1 warning; "
        "stranded queues 2 -> 0",
        "group NewGroup: new (worst warning NO_CONSUMERS)",
        "group AuditGroup: gone",
    ]
    assert changes.changed("ShipmentGroup") and changes.changed("NewGroup")
    assert not changes.changed("OrderGroup") and not changes.changed("AuditGroup")
    assert diff_status(after, after).empty
    out = text(after, Output.plain, False, StatusOptions(changes=changes))
    assert "ShipmentGroup *" in out and "NewGroup *" in out and "OrderGroup *" not in out
    assert "* changed since the last poll" in out
    assert "gone since the last poll: AuditGroup" in out


def _wide(width: int, wide: bool = True) -> list[str]:
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(width=width, file=buffer, color_system=None, force_terminal=False)
    render_status(demo(), Output.table, console, StatusOptions(wide=wide))
    return buffer.getvalue().splitlines()


def test_wide_adds_findings_versions_and_last_consumed() -> None:
    lines = _wide(200)
    head = lines[1].split()
    assert head[-4:] == ["E/W/I", "Versions", "Last", "consumed"]
    rows = {line.split()[0]: line for line in lines[3:] if line[:1].isalpha()}
    assert rows["OrderGroup"].endswith("2/1/0  V4_9_8       5 s ago, 2026-11-22T11:59:55Z")
    assert rows["AuditGroup"].split()[-6:] == [
        "0/1/0",
        "-",
        "45",
        "min",
        "ago,",
        "2026-11-22T11:15:00Z",
    ]
    assert rows["NotifyGroup"].endswith("0/0/1  V4_9_8                               never")
    # the default table has none of them
    assert not {"E/W/I", "Versions"} & set(_wide(200, wide=False)[1].split())


@pytest.mark.parametrize(
    ("width", "kept"),
    [(120, {"E/W/I", "Versions", "Last"}), (100, {"E/W/I", "Versions"}), (80, {"E/W/I"})],
)
def test_wide_columns_give_way_after_model_and_strategy(width: int, kept: set[str]) -> None:
    lines = _wide(width)
    head = set(lines[1].split())
    assert {"Model", "Strategy"}.isdisjoint(head)
    assert {"E/W/I", "Versions", "Last"} & head == kept
    assert {"Group", "Lag", "Stranded"} <= head
    assert all(len(line) <= width and line == line.rstrip() for line in lines)
