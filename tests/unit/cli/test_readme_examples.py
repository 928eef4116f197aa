"""The console examples in the READMEs are real output.

Each ``$ rmqlb ...`` command that reads no cluster (``\\`` continues it) of a fenced block
followed by output is run; every line it shows must appear in the real output, in order (an
excerpt may leave lines out; ``...`` marks where, and a line ending in ``...`` is cut short).
A command without ``-o`` shows what a terminal 100 columns wide shows: the table.
"""

from __future__ import annotations

import glob
import shlex
from pathlib import Path

import pytest

from rmqlb.cli import run

ROOT = Path(__file__).resolve().parents[3]
READMES = (
    "README.md",
    "examples/README.md",
    "docs/explain.md",
    "docs/simulate.md",
    "docs/check.md",
)


def _live(command: str) -> bool:
    """Whether ``command`` asks a cluster (its output was captured from the kit)."""
    words = shlex.split(command, comments=True)
    return any(w in ("-n", "--namesrv", "--proxy") or w.startswith("--namesrv=") for w in words)


def _examples(name: str) -> list[tuple[str, list[str]]]:
    """(command, shown lines) for every command of a fenced block that shows output."""
    out: list[tuple[str, list[str]]] = []
    fenced = (ROOT / name).read_text(encoding="utf-8").split("```")[1::2]
    for block in fenced:
        command: str | None = None
        shown: list[str] = []
        lines = iter([*block.splitlines(), "$ end"])
        for raw in lines:
            line = raw
            while line.startswith("$ ") and line.endswith("\\"):  # a continued command
                line = line[:-1] + next(lines).strip()
            if line.startswith("$ "):
                if command is not None and any(s.strip() for s in shown):
                    out.append((command, shown))
                command = line[2:] if line.startswith("$ rmqlb ") and not _live(line) else None
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
    argv = [
        match
        for word in shlex.split(command, comments=True)[1:]
        for match in (sorted(glob.glob(word)) if "*" in word else [word])
    ]
    if "-o" not in argv and "--output" not in argv:
        argv += ["-o", "table", "--no-color"]
    run(argv)
    out = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    at = 0
    for line in (s.rstrip() for s in shown):
        if line in ("...", ""):
            continue
        # a line cut short with "..." matches the real line it starts
        found = [
            i
            for i in range(at, len(out))
            if out[i] == line or (line.endswith("...") and out[i].startswith(line[:-3]))
        ]
        assert found, f"{line!r} is not in the output of {command} (after line {at})"
        at = found[0] + 1
