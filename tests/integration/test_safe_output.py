"""No command lets a name from a cluster or a file drive the terminal.

Every snapshot, config and fleet here carries group, topic, broker and client names with an
OSC title, a screen clear, an OSC 52 clipboard write, C1 controls and DEL. Each command, in
each format, must print them with the control characters made visible (JSON: as escapes that
decode back to the very names), on stdout and on stderr.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from rmqlb.cli import run
from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import parse_snapshot

OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
CLIPBOARD = "\x1b]52;c;ZWNobyBvd25lZA==\x07"
C1 = "\x9b31m\x9d0;t\x9c\x7f"

GROUP = f"grp{OSC_TITLE}"
TOPIC = f"Order{CLEAR}Topic"
BROKER = f"broker{C1}-a"
CID_1 = f"10.0.0.1@a{CLIPBOARD}"
CID_2 = f"10.0.0.2@b{C1}"
CID_3 = "10.0.0.3@c\x00\x08\x0b\x0c\x0d\x1f"
NAMESRV = f"evil{OSC_TITLE}:9876"

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SGR = re.compile("\x1b\\[[0-9;]*m")
FORMATS = ("table", "plain", "markdown", "json")


def assert_terminal_safe(text: str) -> None:
    """No C0 control but newline and tab, no DEL, no C1 control."""
    found = RAW.search(text)
    assert found is None, (
        f"raw {found.group()!r} at {found.start()}: "
        f"{text[max(0, found.start() - 60) : found.start() + 20]!r}"
    )


def assert_shown_escaped(text: str) -> None:
    """The evil names are there, visibly: the test cannot pass by leaving them out."""
    assert "\\x1b" in text, text[:2000]


def evil_snapshot(captured_at: str = "2026-11-22T12:00:00Z") -> dict[str, Any]:
    """Names full of control sequences; one consumer holds nothing, one is unknown, one
    request failed: every table, finding and the partial-data section shows a name."""
    return {
        "format": "rmqlb.snapshot/1",
        "capturedAt": captured_at,
        "source": {"namesrv": [NAMESRV]},
        "topics": {
            TOPIC: {
                "queueDatas": [
                    {"brokerName": BROKER, "readQueueNums": 4, "writeQueueNums": 8, "perm": 6}
                ]
            }
        },
        "groups": {
            GROUP: {
                "consumers": [
                    {
                        "clientId": CID_1,
                        "subscriptions": [{"topic": TOPIC, "subString": f"Tag{CLEAR}"}],
                    },
                    {
                        "clientId": CID_2,
                        "subscriptions": [{"topic": TOPIC, "subString": "*"}],
                        "assigned": [],
                    },
                    {
                        "clientId": CID_3,
                        "subscriptions": [{"topic": TOPIC, "subString": "*"}],
                        "assigned": [{"topic": TOPIC, "brokerName": BROKER, "queueId": 3}],
                    },
                ]
            }
        },
        "errors": [
            {"target": f"10.0.0.9:10911{CLEAR}", "request": "GET_CONSUME_STATS", "message": C1}
        ],
    }


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "NAMESRV_ADDR", "RMQLB_TRACEBACK", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def snap(tmp_path: Path) -> Path:
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(evil_snapshot()), encoding="utf-8")
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _check_streams(fmt: str, out: str, err: str, color: bool = False) -> None:
    assert_terminal_safe(SGR.sub("", out) if color else out)
    assert_terminal_safe(err)
    if fmt != "json":
        assert_shown_escaped(out)


@pytest.mark.parametrize("fmt", FORMATS)
def test_explain(snap: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, err = _run(capsys, "explain", "--dump", str(snap), "-o", fmt)
    assert code == 1, err
    _check_streams(fmt, out, err)
    if fmt == "json":
        doc = json.loads(out)
        assert doc["groups"][0]["group"] == GROUP
        ids = {c["clientId"] for c in doc["groups"][0]["topics"][0]["consumers"]}
        assert ids == {CID_1, CID_2, CID_3}


@pytest.mark.parametrize("fmt", FORMATS)
def test_status(snap: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, err = _run(capsys, "status", "--dump", str(snap), "-o", fmt)
    assert code == 1, err
    _check_streams(fmt, out, err)
    if fmt == "json":
        assert GROUP in {line["group"] for line in json.loads(out)["groups"]}


def test_explain_table_in_colour(snap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "explain", "--dump", str(snap), "-o", "table", "--color")
    assert code == 1, err
    assert SGR.search(out)  # colour is on: the only escapes are rmqlb's own SGR codes
    _check_streams("table", out, err, color=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_explain_watch_off_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    from rmqlb.cli import watch as watch_module

    path = tmp_path / "evil.json"
    first = evil_snapshot()
    second = evil_snapshot()
    for c in second["groups"][GROUP]["consumers"]:
        c["assigned"] = [{"topic": TOPIC, "brokerName": BROKER, "queueId": 0}]
    path.write_text(json.dumps(first), encoding="utf-8")

    def next_poll(_seconds: float) -> None:
        path.write_text(json.dumps(second), encoding="utf-8")

    monkeypatch.setattr(watch_module, "sleep", next_poll)
    _, out, err = _run(
        capsys, "explain", "--dump", str(path), "--watch", "1", "--count", "2", "-o", fmt
    )
    assert "poll 2" in out or '"poll": 2' in out
    _check_streams(fmt, out, err)


@pytest.mark.parametrize("fmt", ["table", "plain"])
def test_explain_watch_redraw(snap: Path, fmt: str) -> None:
    """The terminal redraw, driven directly, with a failed second poll echoing a name."""
    import io

    from rich.console import Console

    from rmqlb.cli import watch as watch_module
    from rmqlb.cli.explain import ExplainWatch
    from rmqlb.diagnose import diagnose
    from rmqlb.errors import InputError
    from rmqlb.render import Output, RenderOptions
    from rmqlb.snapshot import load_snapshot

    def failing_poll() -> Any:
        raise InputError(f"cannot read {CID_2}")

    polls = iter([lambda: diagnose(load_snapshot(snap)), failing_poll])
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system=None)
    watch_module.watch(
        lambda: next(polls)(),  # noqa: PLW0108  (a fresh call per poll)
        ExplainWatch(Output(fmt), RenderOptions()),
        console,
        json_output=False,
        interval=1.0,
        count=2,
        redraw=True,
    )
    text = re.sub("\x1b\\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())  # Live's cursor moves
    text = text.replace("\r", "")
    assert "poll 2 failed" in text
    _check_streams(fmt, text, "")


def test_bad_snapshot_error_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = evil_snapshot()
    doc["groups"][GROUP]["consumers"][0]["assigned"] = [
        {"topic": TOPIC, "brokerName": BROKER, "queueId": CLEAR}
    ]
    path = tmp_path / f"bad{CLEAR}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = _run(capsys, "explain", "--dump", str(path))
    assert code == 2
    assert out == ""
    assert err.startswith("rmqlb: error: ") and "\\x1b" in err
    assert_terminal_safe(err)


def test_error_echoing_a_file_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "explain", "--dump", str(tmp_path / f"gone{OSC_TITLE}.json"))
    assert code == 2
    assert "\\x1b" in err
    assert_terminal_safe(err)


# ----- simulate ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_simulate_flags(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    argv = ["simulate", "--queues", "4", "--broker", BROKER, "--topic", TOPIC, "-o", fmt]
    argv += ["--consumer-id", CID_1, "--consumer-id", CID_2, "--add-id", CID_3]
    argv += ["--remove", CID_1]
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    _check_streams(fmt, out, err)
    if fmt == "json":
        assert set(json.loads(out)["assignments"]) == {CID_1, CID_2}


@pytest.mark.parametrize("fmt", FORMATS)
def test_simulate_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    queues = [{"brokerName": BROKER, "queueId": i} for i in range(3)]
    cases = [
        {"id": f"ok{CLEAR}", "topic": TOPIC, "queues": queues, "consumers": [CID_1, CID_2],
         "strategy": {"name": "AVG"}},
        {"id": f"throws{OSC_TITLE}", "topic": TOPIC, "queues": queues, "consumers": [CID_1],
         "strategy": {"name": "CONFIG", "config": {CID_2: []}}},
        {"id": f"bad{C1}", "topic": TOPIC, "queues": [], "consumers": [CID_3],
         "strategy": {"name": f"NOPE{CLEAR}"}},
    ]  # fmt: skip
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases), encoding="utf-8")
    code, out, err = _run(capsys, "simulate", "--input", str(path), "-o", fmt, "--compare")
    assert code == 2  # one case is invalid
    _check_streams(fmt, out, err)
    assert "\\x1b" in err or "\\x9b" in err


# ----- check ---------------------------------------------------------------------------------

CHECK_YAML = """\
version: 1
topics:
  "Order\\e[2JTopic":
    queues: 4
groups:
  "grp\\e]0;pwned\\a":
    members:
      "svc\\x9b31m":
        replicas: 6
        subscriptions:
          "Order\\e[2JTopic": "Tag\\e]52;c;aGk=\\a"
      other:
        replicas: 1
        subscriptions:
          "Order\\e[2JTopic": "*"
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / f"evil{C1}.yaml"
    path.write_text(CHECK_YAML, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("counts", [False, True])
def test_check(config: Path, capsys: pytest.CaptureFixture[str], fmt: str, counts: bool) -> None:
    argv = ["check", "-o", fmt, "--no-color", str(config)]
    code, out, err = _run(capsys, *argv, *(["--explain-counts"] if counts else []))
    assert code == 1, err
    _check_streams(fmt, out, err)
    if fmt == "json":
        doc = json.loads(out)
        assert any(f["group"] == GROUP for f in doc["findings"])


def test_check_junit_annotations_and_job_summary(
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit = tmp_path / "junit.xml"
    code, out, err = _run(capsys, "check", "-o", "plain", "--junit", str(junit), str(config))
    assert code == 1, err
    assert "::warning " in out or "::error " in out
    _check_streams("plain", out, err)
    xml = junit.read_text(encoding="utf-8")
    ET.fromstring(xml)  # well-formed: XML 1.0 cannot hold raw C0 controls at all
    assert_terminal_safe(xml)
    assert "\\x1b" in xml
    text = summary.read_text(encoding="utf-8")
    assert_terminal_safe(text)
    assert_shown_escaped(text)


def test_check_error_echoing_a_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CHECK_YAML.replace("replicas: 6", 'replicas: "x\\e[2J"'), encoding="utf-8")
    code, out, err = _run(capsys, "check", "-o", "plain", str(path))
    assert code == 2
    assert out == ""
    assert_terminal_safe(err)


# ----- audit ---------------------------------------------------------------------------------


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    root = tmp_path / "fleet"
    root.mkdir()
    for minute in range(4):
        doc = evil_snapshot(f"2026-11-22T12:0{minute}:00Z")
        (root / f"snap-{minute}.json").write_text(json.dumps(doc), encoding="utf-8")
    (root / f"broken{CLEAR}.json").write_text("{", encoding="utf-8")
    return root


@pytest.mark.parametrize("fmt", FORMATS)
def test_audit(fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    report = tmp_path / "report.html"
    argv = ["audit", str(fleet), "--engine", "local", "-o", fmt, "--report", str(report)]
    code, out, err = _run(capsys, *argv)
    assert code == 1, err
    assert "skipped" in err  # the broken file, named on stderr
    _check_streams(fmt, out, err)
    if fmt == "json":
        assert any(f["group"] == GROUP for f in json.loads(out)["findings"])
    page = report.read_text(encoding="utf-8")
    # plotly.js itself (inlined) holds binary literals: check what is not script
    assert_terminal_safe(re.sub("(?s)<script.*?</script>", "", page))
    assert "\\x1b" in page
    body = page[page.index("<h2>Top") :]
    assert "<script" not in body.split("</table>")[0]
    assert "grp\\x1b]0;pwned\\x07" in body


# ----- live: dump, explain -n, serve ---------------------------------------------------------


@pytest.fixture
def cluster_addr() -> Any:
    snapshot = parse_snapshot(evil_snapshot(), source="evil")
    with FakeClusterThread(snapshot) as fake:
        yield fake.namesrv_addr


def test_dump_to_stdout_and_its_summary(
    cluster_addr: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "dump", "-n", cluster_addr, "--timeout", "2")
    assert code in (0, 4), err
    assert_terminal_safe(out)
    assert_terminal_safe(err)
    doc = json.loads(out)
    assert GROUP in doc["groups"]
    assert {c["clientId"] for c in doc["groups"][GROUP]["consumers"]} == {CID_1, CID_2, CID_3}


@pytest.mark.parametrize("fmt", FORMATS)
def test_explain_live(cluster_addr: str, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, err = _run(capsys, "explain", "-n", cluster_addr, "-o", fmt, "--timeout", "2")
    assert code == 1, err
    _check_streams(fmt, out, err)


def test_serve_banner(snap: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "rmqlb", "serve", str(snap), "--port", "0",
         "--fault", f"broker-down={BROKER}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    banner = "".join(lines)
    assert "broker" in banner and "\\x9b" in banner, banner
    assert_terminal_safe(banner)
    assert_terminal_safe(err)
