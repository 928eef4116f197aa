"""Bidi, invisible and separator characters from a cluster or a file never reach the
terminal raw: every format, stdout and stderr; JSON keeps the exact text as escapes."""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest
from runner import ROOT

from rmqlb.cli import run
from rmqlb.render.safe import cap, escape_controls, escape_json_controls

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
# a reversed client id, a zero-width space in a group, a line separator in a topic
RAW = {"10.0.1.10@": "10.0.1.10@\u202eevil\u2066", "OrderGroup": "Order\u200bGroup"}
HOSTILE = ("\u202e", "\u2066", "\u200b", "\u2028", "\ufeff")


def test_every_format_character_and_separator_is_escaped() -> None:
    unsafe = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")
    ]
    assert unsafe
    for char in unsafe:
        shown = escape_controls(f"a{char}b")
        assert char not in shown, hex(ord(char))
        assert json.loads(escape_json_controls(json.dumps(char, ensure_ascii=False))) == char


def test_escapes_name_the_code_point() -> None:
    assert escape_controls("pod-\u202e7") == "pod-\\u202e7"
    assert escape_controls("\U000e0041") == "\\U000e0041"
    assert escape_controls("a\x1bb\x85") == "a\\x1bb\\x85"
    assert escape_json_controls('"\U000e0041"') == '"\\udb40\\udc41"'


def test_a_long_text_is_capped_with_its_size() -> None:
    assert cap("r" * 15_000_000) == "r" * 200 + "… (15,000,000 characters in all)"
    assert cap("short") == "short"


@pytest.fixture
def hostile_dump(tmp_path: Path) -> Path:
    text = DEMO.read_text()
    for old, new in RAW.items():
        text = text.replace(old, new)
    path = tmp_path / "hostile.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["table", "plain", "markdown", "json"])
@pytest.mark.parametrize("command", ["explain", "status"])
def test_no_hostile_character_reaches_stdout_or_stderr(
    command: str, fmt: str, hostile_dump: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [command, "--dump", str(hostile_dump), "-o", fmt]
    if command == "explain":
        args.append("--all-groups")
    assert run(args) in (0, 1, 4)
    captured = capsys.readouterr()
    for char in HOSTILE:
        assert char not in captured.out + captured.err, (hex(ord(char)), fmt)
    if fmt == "json":
        assert "Order\u200bGroup" in json.dumps(json.loads(captured.out), ensure_ascii=False)
    else:
        assert "Order\\u200bGroup" in captured.out


def test_an_error_echoing_a_name_is_escaped(
    hostile_dump: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["explain", "--dump", str(hostile_dump), "Order\u202eGroup"]) == 2
    err = capsys.readouterr().err
    assert "\u202e" not in err and "\u200b" not in err
    assert "Order\\u202eGroup" in err
