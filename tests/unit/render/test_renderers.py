"""Renderer selection, row filtering, client ids and the JSON contract."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
from report_builders import (
    C1,
    C2,
    REPORTS,
    idle_report,
    large_report,
    queues,
    topic_report,
)
from report_contract import assert_report_contract
from rich.console import Console

from rmqlb.diagnose import diagnose
from rmqlb.diagnose.report import (
    GroupReport,
    InferenceStatus,
    QueueStatus,
    Report,
    StrategyInference,
    exit_code,
)
from rmqlb.render import LARGE_TOPIC_QUEUES, Output, RenderOptions, get_renderer, render
from rmqlb.snapshot import load_snapshot

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _render(report: Report, fmt: Output, width: int = 100, **options: bool) -> str:
    buffer = io.StringIO()
    rich = fmt in (Output.table, Output.wide)
    target = Console(width=width, file=buffer, color_system=None) if rich else buffer
    render(report, fmt, target, RenderOptions(**options))  # type: ignore[arg-type]
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", list(Output))
def test_every_output_format_has_a_renderer(fmt: Output) -> None:
    renderer = get_renderer(fmt)
    assert callable(renderer.render)
    text = _render(idle_report(), fmt)
    assert "OrderTopic" in text
    assert text.endswith("\n")


def test_renderers_accept_a_console_and_a_stream() -> None:
    for fmt in Output:
        via_stream = _render(idle_report(), fmt)
        buffer = io.StringIO()
        render(idle_report(), fmt, Console(file=buffer, width=100, color_system=None))
        assert buffer.getvalue() == via_stream


def _sized_report(n: int) -> Report:
    mqs = queues("T", "broker-a", n)
    half = n // 2
    # C2 never rebalanced: holds nothing, so its half is unconsumed.
    topic = topic_report("T", mqs, {C1: mqs[:half], C2: mqs[half:]}, {C1: mqs[:half], C2: []})
    return Report((GroupReport("G", "CLUSTERING", "AVG", (topic,)),), ())


@pytest.mark.parametrize("fmt", [Output.table, Output.plain, Output.markdown])
def test_large_topics_hide_ok_rows_unless_all_queues(fmt: Output) -> None:
    small, large = LARGE_TOPIC_QUEUES, LARGE_TOPIC_QUEUES + 2
    text = _render(_sized_report(small), fmt)
    assert "hidden" not in text
    assert text.count("broker-a:") == small

    text = _render(_sized_report(large), fmt)
    ok_rows = large // 2
    assert f"{ok_rows} of {large} queues are ok" in text
    shown = [line for line in text.splitlines() if "broker-a:" in line]
    assert len(shown) == large - ok_rows
    assert all("unconsumed" in line for line in shown)

    text = _render(_sized_report(large), fmt, all_queues=True)
    assert "hidden" not in text
    assert text.count("broker-a:") == large


LONG_ID = "172.16.254.101@PID#31337#1700000000123456789@unit-blue"


def _long_id_report() -> Report:
    mqs = queues("T", "broker-a", 2)
    topic = topic_report("T", mqs, {LONG_ID: mqs, C2: []}, {LONG_ID: mqs, C2: []})
    return Report((GroupReport("G", "CLUSTERING", "AVG", (topic,)),), ())


def test_client_ids_are_shown_whole_on_one_line_when_they_fit() -> None:
    for fmt in Output:
        text = _render(_long_id_report(), fmt, width=160)
        assert LONG_ID in text, fmt


def _ids_whole(text: str, ids: list[str], width: int) -> None:
    lines = text.splitlines()
    assert "…" not in text
    assert all(len(line.rstrip()) <= width for line in lines), max(map(len, lines))
    for cid in ids:
        assert any(cid in line for line in lines), cid


@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize("name", ["long", "rebalance", "idle", "subscription", "large"])
def test_client_ids_never_wrap_or_shrink(width: int, name: str) -> None:
    """Whole ids on one line at 80 and 160 columns: other columns give way, or the table
    is stacked (one record per row)."""
    report = _long_id_report() if name == "long" else REPORTS[name]()
    text = _render(report, Output.table, width=width)
    ids = {c.client_id for g in report.groups for t in g.topics for c in t.consumers}
    _ids_whole(text, sorted(ids), width)
    stacked = "Client ID" not in text
    if width == 160:
        assert not stacked  # wide enough for every table of these reports
    if name == "long" and width == 80:
        assert stacked
        # the record's heading, then its fields: its short name in the queue table first
        assert f"{LONG_ID}   # c1   Subscribes yes" in text


def test_stacked_rows_keep_every_value() -> None:
    """At 80 columns the queue table stays a table, naming the consumers c1, c2 (their ids
    do not fit beside each other); the consumer records below spell the ids out."""
    text = _render(_long_id_report(), Output.table, width=80)
    assert "Client ID" not in text
    assert re.search(r"^broker-a:0 +c1 +c1 +ok$", text, re.MULTILINE)
    record = text[text.rindex(LONG_ID) :].split(C2)[0]  # the consumer record of LONG_ID
    fields = " ".join(record.split())
    for pair in ("Subscribes yes", "Strategy AVG", "Expected 2", "Actual 2"):
        assert pair in fields
    idle = " ".join(text[text.rindex(C2) :].split("Findings")[0].split())
    assert "Expected 0" in idle and "Note idle" in idle


@pytest.mark.parametrize("fmt", [Output.table, Output.plain, Output.markdown])
def test_an_id_on_several_connections_is_one_actual_line_with_its_count(fmt: Output) -> None:
    """A client id the broker lists twice holds its queues once per connection: the cell
    shows the id once with the count (a closed connection listed again would otherwise look
    like two holders, and 128 of them fill a screen); JSON keeps every entry."""
    report = diagnose(load_snapshot(EXAMPLES / "duplicate-client-id.json"))
    text = _render(report, fmt, width=160, all_queues=True)
    rows = [line for line in text.splitlines() if "broker-a:4" in line]
    assert rows and all("10.0.7.90@1 (2 connections)" in line for line in rows), rows
    (row,) = [r for r in json.loads(_render(report, Output.json))["groups"][0]["topics"][0]
              ["queues"] if r["queueId"] == 4]  # fmt: skip
    assert row["actual"] == ["10.0.7.90@1", "10.0.7.90@1"]


def test_idle_consumer_is_flagged_in_every_text_format() -> None:
    for fmt in (Output.table, Output.plain, Output.markdown):
        line = next(x for x in _render(idle_report(), fmt).splitlines() if C2 in x and "AVG" in x)
        assert "idle" in line


def test_markdown_escapes_pipes_so_tables_stay_intact() -> None:
    cid = "10.0.0.9@weird|name"
    mqs = queues("T", "broker-a", 1)
    topic = topic_report("T", mqs, {cid: mqs}, {cid: mqs})
    report = Report((GroupReport("G", "CLUSTERING", "AVG", (topic,)),), ())
    lines = _render(report, Output.markdown).splitlines()

    def cells(line: str) -> int:
        return len(re.split(r"(?<!\\)\|", line))

    header = lines.index(next(x for x in lines if x.startswith("| queue")))
    assert cells(lines[header + 2]) == cells(lines[header])
    assert "weird\\|name" in lines[header + 2]


def test_partial_report_says_how_much_is_missing() -> None:
    """The failed requests themselves are listed on stderr by the command, not here."""
    report = large_report()
    for fmt in (Output.table, Output.plain, Output.markdown):
        text = _render(report, fmt)
        assert "partial data: 1 request failed while capturing (listed on stderr)" in text
        assert "GET_CONSUMER_RUNNING_INFO" not in text.replace("\\_", "_")
        assert "Exit code 4" in text.replace("**", "")


@pytest.mark.parametrize("fail_on", ["error", "warning", "never"])
def test_json_follows_the_contract(named_report: tuple[str, Report], fail_on: str) -> None:
    _, report = named_report
    buffer = io.StringIO()
    render(report, Output.json, buffer, RenderOptions(fail_on=fail_on))
    doc = json.loads(buffer.getvalue())
    assert_report_contract(doc)
    assert doc["exitCode"] == int(exit_code(report, fail_on))
    rows = [q for g in doc["groups"] for t in g["topics"] for q in t["queues"]]
    assert len(rows) == sum(len(t.queues) for g in report.groups for t in g.topics)


def test_json_keeps_every_row_of_large_topics() -> None:
    doc = json.loads(_render(large_report(), Output.json))
    assert len(doc["groups"][0]["topics"][0]["queues"]) == 48
    statuses = {q["status"] for q in doc["groups"][0]["topics"][0]["queues"]}
    assert statuses == {QueueStatus.ok.value, QueueStatus.unknown.value}


def test_render_options_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RenderOptions().all_queues = True  # type: ignore[misc]


@pytest.mark.parametrize("fmt", [Output.table, Output.plain, Output.markdown])
def test_large_groups_show_only_remarkable_consumers(fmt: Output) -> None:
    n = LARGE_TOPIC_QUEUES + 8
    cids = [f"10.0.0.{i}@{i}" for i in range(n)]
    mqs = queues("T", "broker-a", n - 1)  # one queue short: the last consumer is idle
    expected = {c: mqs[i : i + 1] for i, c in enumerate(cids)}
    topic = topic_report("T", mqs, expected, dict(expected))
    report = Report((GroupReport("G", "CLUSTERING", "AVG", (topic,)),), ())
    text = _render(report, fmt)
    shown = [line for line in text.splitlines() if "10.0.0." in line and "yes" in line]
    assert len(shown) == 1 and cids[-1] in shown[0] and "idle" in shown[0]
    assert f"{n - 1} of {n} consumers hold what they should" in text
    text = _render(report, fmt, all_queues=True)
    assert sum(1 for line in text.splitlines() if "10.0.0." in line and "yes" in line) == n


def test_json_is_compact_unless_pretty() -> None:
    buffer = io.StringIO()
    render(idle_report(), Output.json, buffer, RenderOptions(pretty_json=False))
    assert buffer.getvalue().count("\n") == 1
    pretty = _render(idle_report(), Output.json)
    assert pretty.count("\n") > 10
    assert json.loads(pretty) == json.loads(buffer.getvalue())


def test_names_are_never_read_as_rich_markup() -> None:
    odd = ["10.0.0.1@[/bold]x", "10.0.0.2@[red]y[/red]"]
    mqs = queues("T[b]", "broker-[i]a", 2)
    topic = topic_report("T[b]", mqs, {odd[0]: mqs[:1], odd[1]: mqs[1:]}, {odd[0]: mqs, odd[1]: []})
    report = Report((GroupReport("G[/]", "CLUSTERING", "AVG", (topic,)),), ())
    text = _render(report, Output.table, width=160)
    for name in (*odd, "T[b]", "broker-[i]a:0", "G[/]"):
        assert name in text


def _inferred_report(status: InferenceStatus, note: str) -> Report:
    inference = StrategyInference(status, "virtualNodeCnt", 5, 10, 3, "1..1024", note)
    report = idle_report()
    (group,) = report.groups
    return dataclasses.replace(report, groups=(dataclasses.replace(group, inference=inference),))


@pytest.mark.parametrize("fmt", [Output.table, Output.plain, Output.markdown])
def test_the_inference_note_follows_the_group_header(fmt: Output) -> None:
    note = "virtual nodes: 5, inferred * from <3> | clients; pass "
    note += "`--strategy CONSISTENT_HASH:vnodes=5`"
    text = _render(_inferred_report(InferenceStatus.inferred, note), fmt, width=300)
    lines = text.splitlines()
    (at,) = [i for i, line in enumerate(lines) if "virtual nodes: 5" in line]
    assert "Group" in "\n".join(lines[:at]) and "Topic" not in "\n".join(lines[:at])
    if fmt is Output.markdown:  # escaped like any text, the option kept as a code span
        assert lines[at] == (
            "_note: virtual nodes: 5, inferred \\* from \\<3> \\| clients; pass "
            "`--strategy CONSISTENT_HASH:vnodes=5`_"
        )
    else:
        assert lines[at].strip() == f"note: {note}"
    assert "virtual nodes" not in _render(idle_report(), fmt)  # no note when nothing inferred


def test_an_assumed_parameter_note_is_yellow_an_inferred_one_cyan() -> None:
    def styles(status: InferenceStatus) -> str:
        buffer = io.StringIO()
        console = Console(width=200, file=buffer, color_system="truecolor", force_terminal=True)
        render(_inferred_report(status, "virtual nodes: x"), Output.table, console)
        line = next(li for li in buffer.getvalue().splitlines() if "virtual nodes" in li)
        return line

    assert "\x1b[33m" in styles(InferenceStatus.assumed)  # yellow
    assert "\x1b[36m" in styles(InferenceStatus.inferred)  # cyan
