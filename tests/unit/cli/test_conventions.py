"""Conventions every command shares (design §3): ``--fail-on``, ``-o/--output``, ``--out``,
bare ``rmqlb``, completion."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rmqlb.cli import COMMANDS, run
from rmqlb.failon import FailOn, gate

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

BROADCASTING_YAML = """\
version: 1
topics:
  T:
    queues: 4
groups:
  G:
    messageModel: BROADCASTING
    members:
      svc:
        replicas: 2
        subscriptions:
          T: "*"
"""


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "NAMESRV_ADDR", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("fail_on", list(FailOn))
@pytest.mark.parametrize("severity", ["error", "warning", "info"])
def test_the_gate(fail_on: FailOn, severity: str) -> None:
    ranks = {"error": 2, "warning": 1, "info": 0, "never": 3}
    fails = ranks[severity] >= ranks[fail_on.value]
    assert fail_on.fails(severity) is fails
    assert int(gate([severity], fail_on)) == (1 if fails else 0)
    assert int(gate([severity], fail_on, partial=True)) == (1 if fails else 4)
    assert int(gate([], fail_on, partial=True)) == 4


@pytest.mark.parametrize("fail_on", list(FailOn))
def test_every_command_accepts_every_fail_on_value(
    fail_on: FailOn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An info-only input on each command with --fail-on: exit 1 only for ``info``."""
    config = tmp_path / "broadcasting.yaml"
    config.write_text(BROADCASTING_YAML, encoding="utf-8")
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    doc = json.loads((EXAMPLES / "broadcasting.json").read_text(encoding="utf-8"))
    for minute in range(3):
        doc["capturedAt"] = f"2026-11-22T12:0{minute}:00Z"
        (fleet / f"s{minute}.json").write_text(json.dumps(doc), encoding="utf-8")
    expected = 1 if fail_on is FailOn.info else 0
    runs = {
        "explain": ["explain", "--dump", str(EXAMPLES / "broadcasting.json")],
        "check": ["check", str(config)],
        "audit": ["audit", str(fleet), "--engine", "local"],
    }
    for name, argv in runs.items():
        code = run([*argv, "-o", "json", "--fail-on", fail_on.value])
        out, err = capsys.readouterr()
        assert code == expected, (name, err)
        severities = {f["severity"] for f in json.loads(out)["findings"]}
        assert severities == {"info"}, name


def test_fail_on_refuses_other_values(capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["explain", "--dump", str(EXAMPLES / "healthy.json"), "--fail-on", "notice"])
    assert code == 2
    assert "error, warning, info, never" in capsys.readouterr().err.replace("'", "")


def test_bare_rmqlb_shows_the_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Usage: rmqlb")
    for command in ("explain", "simulate", "dump", "check", "audit", "serve", "demo", "exporter"):
        assert f"  {command} " in out
    assert err == ""


def test_completion_is_offered(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(["--help"]) == 0
    assert "--install-completion" in capsys.readouterr().out
    # typer's own switch: take the shell from the argument, not from the parent process
    # (under make that is sh, which has no completion)
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    assert run(["--show-completion", "bash"]) == 0
    assert "_rmqlb_completion" in capsys.readouterr().out


def test_completion_completes_commands_and_choices() -> None:
    import os
    import subprocess
    import sys

    def complete(words: str) -> list[str]:
        env = dict(os.environ, _RMQLB_COMPLETE="complete_bash", COMP_WORDS=words)
        env["COMP_CWORD"] = str(len(words.split(" ")) - 1)
        done = subprocess.run(
            [sys.executable, "-m", "rmqlb"], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.split()

    assert complete("rmqlb ex") == ["explain", "exporter"]
    assert complete("rmqlb expo") == ["exporter"]
    assert complete("rmqlb explain --fail-on ") == ["error", "warning", "info", "never"]
    assert complete("rmqlb check -o ") == ["table", "wide", "plain", "markdown", "json"]
    assert complete("rmqlb status -o ")[-1] == "openmetrics"


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("snap.json", "to write the snapshot to a file use --out snap.json"),
        ("json.txt", "use --out json.txt"),
        ("table", "JSON only"),
    ],
)
def test_dump_output_is_a_format_and_files_go_to_out(
    value: str,
    needle: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["dump", "-n", "127.0.0.1:1", "-o", value]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing named after a format


def test_every_output_option_is_a_format() -> None:
    """``-o/--output`` takes a format on every command that has it; files are ``--out``."""
    import typer.main

    from rmqlb.cli import app, load_commands

    load_commands()
    group = typer.main.get_command(app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if "-o" in param.opts or "--output" in param.opts:
                assert set(param.opts) == {"-o", "--output"}, name
                assert param.metavar in (None, "json") or "json" in str(param.type), name
            for opt in param.opts:
                assert opt not in ("--output-file", "--file"), name


LONG = "172.16.254.101@PID#31337#1700000000123456789@unit-blue"
BOXES = {chr(c) for c in range(0x2500, 0x2580)}


@pytest.fixture
def long_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Argument lists, one per command, whose output shows long identifiers (run them in
    ``tmp_path``, the fixture's working directory)."""
    monkeypatch.chdir(tmp_path)
    snap = json.loads((EXAMPLES / "16-queues-3-consumers-rebalancing.json").read_text())
    group = snap["groups"]["order-consumer"]
    for c in group["consumers"]:
        c["clientId"] = c["clientId"].replace("10.0.0.", LONG[:-10] + ".")
    snap["groups"] = {f"order-consumer-{LONG}": group}
    snap["source"] = {"namesrv": [f"{LONG}:9876"]}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(snap), encoding="utf-8")
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for minute in range(3):
        snap["capturedAt"] = f"2026-11-22T12:0{minute}:00Z"
        (fleet / f"s{minute}.json").write_text(json.dumps(snap), encoding="utf-8")
    deep = Path("d" * 50) / "imbalance.yaml"  # relative: 65 characters
    (tmp_path / deep.parent).mkdir()
    (tmp_path / deep).write_text((EXAMPLES / "check/imbalance.yaml").read_text(), "utf-8")
    ids = [c["clientId"] for c in group["consumers"]]
    return {
        "explain": ["explain", "--dump", str(path)],
        "simulate": ["simulate", "--queues", "8", *[f"--consumer-id={i}" for i in ids]],
        "check": ["check", "--explain-counts", str(deep)],
        "audit": ["audit", str(fleet), "--engine", "local"],
        "explain ids": [*ids, f"order-consumer-{LONG}"],
        "simulate ids": ids,
        "check ids": [f"{deep}:5", "10.1.0.9@invoice-service-9"],
        "audit ids": [f"order-consumer-{LONG}", f"{LONG}:9876"],
    }


@pytest.mark.parametrize("command", ["explain", "simulate", "check", "audit"])
@pytest.mark.parametrize("fmt", ["plain", "markdown"])
def test_plain_and_markdown_never_draw_boxes(
    long_named: dict[str, list[str]], capsys: pytest.CaptureFixture[str], command: str, fmt: str
) -> None:
    run([*long_named[command], "-o", fmt])
    out = capsys.readouterr().out
    assert out.strip()
    assert not BOXES & set(out), sorted(BOXES & set(out))


@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize("command", ["explain", "simulate", "check", "audit"])
def test_rich_tables_never_wrap_or_cut_an_identifier(
    long_named: dict[str, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    width: int,
) -> None:
    """Whole on one line, at 80 and at 160 columns, in every command's Rich tables."""
    monkeypatch.setenv("COLUMNS", str(width))
    run([*long_named[command], "-o", "table", "--no-color"])
    out = capsys.readouterr().out
    assert "…" not in out
    lines = out.splitlines()
    names = long_named[f"{command} ids"]
    for name in names:
        assert any(name in line for line in lines), (name, out[:3000])
    for line in lines:
        assert len(line.rstrip()) <= width, line
        # a line showing the start of a name shows a whole name: none is wrapped or cut
        starts = [n for n in names if n[:16] in line]
        assert not starts or any(n in line for n in starts), line


def _options_of(name: str) -> dict[str, tuple[tuple[str, ...], str | None, object]]:
    """``{parameter: (flags, help, default)}`` of command ``name``."""
    import typer.main

    from rmqlb.cli import app, load_commands

    load_commands()
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    return {
        p.name: (tuple(p.opts), getattr(p, "help", None), p.default)
        for p in command.params
        if p.name
    }


def test_live_and_display_options_are_declared_once() -> None:
    """Every live command takes the same connection options, every report command the same
    output options: declared once (``Connection``, ``Display``), never re-typed per command."""
    from dataclasses import fields

    from rmqlb.cli.options import Connection, Display

    live = [f.name for f in fields(Connection)]
    display = [f.name for f in fields(Display)]
    reference = _options_of("explain")
    for name in ("status", "dump", "simulate", "exporter"):
        options = _options_of(name)
        for option in live:
            assert options[option] == reference[option], (name, option)
    for name in ("status", "simulate", "demo", "audit", "check"):
        options = _options_of(name)
        for option in display:
            if name == "status" and option == "output":  # StatusDisplay: also openmetrics
                assert options[option][0] == reference[option][0]
                continue
            assert options[option] == reference[option], (name, option)


def test_a_grouped_option_reaches_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``--timeout`` given to a command arrives in its ``Connection`` (checked where it is
    validated: a NameServer address that is not host:port is refused before any request)."""
    assert run(["status", "-n", "no-port", "--timeout", "0.5"]) == 2
    assert "expected host:port" in capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_value_is_named_in_help(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Options show what they take (``-n ADDR``, ``--timeout SECONDS``, ``--tls-ca FILE``),
    never typer's type placeholders (``<str>``, ``<float range>``, ``<path>``)."""
    monkeypatch.setenv("COLUMNS", "200")
    assert run([command, "--help"]) == 0
    placeholders = re.findall(r"<[a-z ]+>", capsys.readouterr().out)
    assert not placeholders, f"rmqlb {command} --help shows {placeholders}"
