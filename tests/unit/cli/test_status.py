"""``rmqlb status --dump`` end to end, in process: formats, filters, exit codes, --watch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stalled_polls import poll_doc

from rmqlb.cli import run
from rmqlb.cli import watch as watch_module
from rmqlb.snapshot import load_snapshot, snapshot_to_json

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"


def status(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["status", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def demo_doc() -> dict[str, Any]:
    return snapshot_to_json(load_snapshot(DEMO))


def write(tmp_path: Path, doc: dict[str, Any], name: str = "snap.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def groups_of(out: str) -> list[str]:
    return [g["group"] for g in json.loads(out)["groups"]]


def test_every_format_and_explains_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = status(capsys, "--dump", str(DEMO), "-o", "json")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    assert doc["exitCode"] == 1 and doc["captureSeconds"] is None
    for fmt in ("table", "plain", "markdown"):
        fmt_code, text, fmt_err = status(capsys, "--dump", str(DEMO), "-o", fmt)
        assert (fmt_code, fmt_err) == (1, "")
        assert all(g in text for g in groups_of(out)), fmt
        assert "Exit code 1" in text.replace("**", "")
    # the same exit code as explain over the same groups
    assert run(["explain", "--dump", str(DEMO), "-o", "json"]) == 1
    capsys.readouterr()
    assert status(capsys, "--dump", str(DEMO), "--fail-on", "never")[0] == 0
    assert (
        status(capsys, "--dump", str(DEMO), "-g", "InventoryGroup", "--fail-on", "warning")[0] == 0
    )
    assert status(capsys, "--dump", str(DEMO), "-g", "AuditGroup", "--fail-on", "warning")[0] == 1


def test_filters(capsys: pytest.CaptureFixture[str]) -> None:
    dump = ["--dump", str(DEMO), "-o", "json"]
    assert groups_of(status(capsys, *dump, "-t", "ShipmentTopic")[1]) == ["ShipmentGroup"]
    assert groups_of(status(capsys, *dump, "--topic", "AuditTopic")[1]) == ["AuditGroup"]
    assert groups_of(status(capsys, *dump, "*Group", "-g", "Order*", "--problems")[1]) == [
        "OrderGroup",
        "ShipmentGroup",
        "AuditGroup",
    ]
    assert groups_of(status(capsys, *dump, "Inv*", "Notify?roup")[1]) == [
        "NotifyGroup",
        "InventoryGroup",
    ]
    code, out, _ = status(capsys, *dump, "nothing-*")
    assert code == 0 and groups_of(out) == []
    _, out, _ = status(capsys, "--dump", str(DEMO), "nothing-*", "-o", "plain")
    assert "No consumer group matched." in out


def test_a_typo_in_a_snapshot_is_exit_2_with_did_you_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = status(capsys, "--dump", str(DEMO), "-g", "AuditGrop")
    assert (code, out) == (2, "")
    assert err == (
        "rmqlb: error: group 'AuditGrop' does not exist in the snapshot (5 groups known); "
        "did you mean 'AuditGroup'?\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --dump FILE or -n/--namesrv ADDR"),
        (["--dump", str(DEMO), "-n", "127.0.0.1:1"], "not both"),
        (["--dump", str(DEMO), "--count", "2"], "--count only makes sense with --watch"),
        (["--dump", "-", "--watch", "1"], "--watch cannot re-read stdin"),
    ],
)
def test_usage_errors(
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    code, _, err = status(capsys, *args)
    assert code == 2 and message in err and err.count("\n") == 1


def _rewrite_between_polls(
    monkeypatch: pytest.MonkeyPatch, path: Path, docs: list[dict[str, Any]]
) -> None:
    calls: list[float] = []

    def fake_sleep(seconds: float) -> None:
        calls.append(seconds)
        path.write_text(json.dumps(docs[len(calls) - 1]), encoding="utf-8")

    monkeypatch.setattr(watch_module, "sleep", fake_sleep)


def _retired_group_back_online() -> dict[str, Any]:
    doc = demo_doc()
    doc["groups"]["AuditGroup"]["consumers"] = [
        {
            "clientId": "10.0.5.51@7001#1",
            "subscriptions": ["AuditTopic"],
            "assigned": [
                {"topic": "AuditTopic", "brokerName": "broker-b", "queueId": q} for q in range(4)
            ],
        }
    ]
    return doc


def test_watch_off_a_terminal_prints_the_overview_then_only_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, demo_doc())
    _rewrite_between_polls(monkeypatch, path, [demo_doc(), _retired_group_back_online()])
    code, out, err = status(
        capsys, "--dump", str(path), "--watch", "1", "--count", "3", "-o", "plain"
    )
    assert (code, err) == (1, "")
    first, _, rest = out.partition("poll ")
    assert "Consumer groups · 5" in first
    # poll 2 changed nothing and says so in one line; poll 3 says what changed
    assert rest.startswith("2 at ") and ": 0 groups changed, 0 new, 0 gone\npoll 3 at " in rest
    assert "1 group changed, 0 new, 0 gone" in rest
    assert (
        "  group AuditGroup: consumers 0 -> 1; strategy - -> AVG; worst warning NO_CONSUMERS -> "
        "none; findings 0 errors, 1 warning -> 0 errors, 0 warnings; stranded queues 4 -> 0\n"
    ) in rest
    assert "Summary:" not in rest


def test_watch_json_emits_change_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, demo_doc())
    _rewrite_between_polls(monkeypatch, path, [_retired_group_back_online()])
    code, out, _ = status(capsys, "--dump", str(path), "--watch", "1", "--count", "2", "-o", "json")
    assert code == 1
    first, end = json.JSONDecoder().raw_decode(out)
    assert first["format"] == "rmqlb.status/1"
    change = json.loads(out[end:].strip())
    assert change["format"] == "rmqlb.status-changes/1" and change["poll"] == 2
    assert [(g["group"], g["kind"]) for g in change["groups"]] == [("AuditGroup", "changed")]


def test_watch_on_a_terminal_redraws_and_marks_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from rich.console import Console

    from rmqlb.cli.status import StatusWatch
    from rmqlb.diagnose.status import status as summarize
    from rmqlb.render import Output
    from rmqlb.render.status import StatusOptions

    path = write(tmp_path, demo_doc())
    _rewrite_between_polls(monkeypatch, path, [_retired_group_back_online()])
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system=None)
    code = watch_module.watch(
        lambda: summarize(load_snapshot(path)),
        StatusWatch(Output.table, StatusOptions()),
        console,
        json_output=False,
        interval=1.0,
        count=2,
        redraw=True,
    )
    assert code == 1
    text = buffer.getvalue()
    assert "poll 1" in text and "1 group changed (marked *), 0 new, 0 gone" in text
    assert "AuditGroup *" in text and "* changed since the last poll" in text


def test_json_has_no_sentinels_and_rounded_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    """``strategy`` is null where the table shows ``-``; keys do not depend on flags."""
    from pathlib import Path

    demo = Path(__file__).resolve().parents[3] / "rmqlb" / "data" / "demo-snapshot.json"
    assert run(["status", "--dump", str(demo), "-o", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    by_group = {g["group"]: g for g in doc["groups"]}
    assert by_group["NotifyGroup"]["strategy"] is None
    assert "-" not in {g["strategy"] for g in doc["groups"]}
    assert run(["status", "--dump", str(demo), "-o", "json", "--problems"]) == 1
    problems = json.loads(capsys.readouterr().out)
    assert problems.keys() == doc.keys()
    assert problems["groups"][0].keys() == doc["groups"][0].keys()


def test_wide_is_the_table_with_more_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, wide, err = status(capsys, "--dump", str(DEMO), "-o", "wide", "--no-color")
    assert (code, err) == (1, "")
    _, table, _ = status(capsys, "--dump", str(DEMO), "-o", "table", "--no-color")
    assert "Last consumed" in wide and "Last consumed" not in table
    assert "45 min ago, 2026-11-22T11:15:00Z" in wide


@pytest.mark.parametrize(
    ("by", "order"),
    [
        ("worst", ["OrderGroup", "ShipmentGroup", "AuditGroup", "NotifyGroup", "InventoryGroup"]),
        ("lag", ["AuditGroup", "OrderGroup", "ShipmentGroup", "InventoryGroup", "NotifyGroup"]),
        (
            "stranded",
            ["AuditGroup", "OrderGroup", "ShipmentGroup", "InventoryGroup", "NotifyGroup"],
        ),
        ("tps", ["InventoryGroup", "OrderGroup", "ShipmentGroup", "NotifyGroup", "AuditGroup"]),
        ("name", ["AuditGroup", "InventoryGroup", "NotifyGroup", "OrderGroup", "ShipmentGroup"]),
    ],
)
def test_sort_by_and_no_headers(
    by: str, order: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = status(capsys, "--dump", str(DEMO), "--sort-by", by, "--no-headers")
    assert (code, err) == (1, "")
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[0] for r in rows] == order  # rows only: no title, column names or footer
    assert all(len(r) == len(rows[0]) for r in rows)
    assert groups_of(status(capsys, "--dump", str(DEMO), "--sort-by", by, "-o", "json")[1]) == order


def test_no_headers_table_is_rows_and_findings_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    _, out, _ = status(capsys, "--dump", str(DEMO), "-o", "table", "--no-headers", "--no-color")
    lines = out.splitlines()
    assert lines[0].startswith("OrderGroup ") and len(lines) == 9
    assert not any(w in out for w in ("Consumer groups", "Summary:", "Exit code", "─"))
    assert not any(line.startswith("Group ") for line in lines)


def test_a_bad_sort_key_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = status(capsys, "--dump", str(DEMO), "--sort-by", "size")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "worst, lag, stranded, tps, name" in err


def test_watch_ranks_a_group_with_a_queue_that_stood_still_for_a_minute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, poll_doc(0, [10] * 4))
    _rewrite_between_polls(monkeypatch, path, [poll_doc(61, [50, 50, 10, 50])])
    code, out, _ = status(capsys, "--dump", str(path), "--watch", "61", "--count", "2")
    assert "QUEUE_STALLED" in out.partition("poll 2 at ")[2]
    assert code == 1
