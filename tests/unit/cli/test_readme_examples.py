"""The console examples in the READMEs are real output.

Each ``$ rmqlb ...`` line of a fenced block followed by output is run; every line it shows
must appear in the real output, in order (an excerpt may leave lines out; ``...`` marks
where). A command without ``-o`` shows what a terminal 100 columns wide shows: the table.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rmqlb.cli import run

ROOT = Path(__file__).resolve().parents[3]
READMES = ("README.md", "examples/README.md")


def _examples(name: str) -> list[tuple[str, list[str]]]:
    """(command, shown lines) for every command of a fenced block that shows output."""
    out: list[tuple[str, list[str]]] = []
    fenced = (ROOT / name).read_text(encoding="utf-8").split("```")[1::2]
    for block in fenced:
        command: str | None = None
        shown: list[str] = []
        for line in [*block.splitlines(), "$ end"]:
            if line.startswith("$ "):
                if command is not None and any(s.strip() for s in shown):
                    out.append((command, shown))
                command = line[2:] if line.startswith("$ rmqlb ") else None
                shown = []
            elif command is not None:
                shown.append(line)
    return out


CASES = [
    pytest.param(command, shown, id=f"{name}: {command}")
    for name in READMES
    for command, shown in _examples(name)
]


def test_the_readmes_have_examples_to_check() -> None:
    assert len(CASES) >= 5


@pytest.mark.parametrize(("command", "shown"), CASES)
def test_readme_example_is_real_output(
    command: str,
    shown: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("NO_COLOR", raising=False)
    argv = shlex.split(command, comments=True)[1:]
    if "-o" not in argv and "--output" not in argv:
        argv += ["-o", "table", "--no-color"]
    run(argv)
    out = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    at = 0
    for line in (s.rstrip() for s in shown):
        if line in ("...", ""):
            continue
        assert line in out[at:], f"{line!r} is not in the output of {command} (after line {at})"
        at = out.index(line, at) + 1
