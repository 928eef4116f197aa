"""The README's first screen is real output: ``rmqlb demo`` on a 100-column terminal.

The block after the ``readme-demo-status`` marker must equal what ``rmqlb demo`` prints
today up to the end of its ``status`` part, except the capture time (it varies by machine).
After an intended change, copy the new output into the README.
"""

from __future__ import annotations

import re

import pytest
from livehelpers import ROOT

from rmqlb.cli import run

pytestmark = pytest.mark.timeout(60)

MARKER = "<!-- readme-demo-status:"
SECONDS = re.compile(r"captured in (\d+(\.\d+)? (ms|s)|<1 ms|\.\.\.)")


def _readme_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    _, found, rest = text.partition(MARKER)
    assert found, "README has no readme-demo-status marker"
    lines = rest.splitlines()[1:]
    assert lines[0] == "```" and lines[1] == "$ rmqlb demo", lines[:2]
    return lines[2 : lines.index("```", 2)]


def test_the_readme_shows_what_rmqlb_demo_prints(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "LINES", "TERM", "COLORTERM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    assert run(["demo", "--no-color", "-o", "table"]) == 1
    out = capsys.readouterr().out.splitlines()
    status = out[: next(i for i, line in enumerate(out) if line.startswith("Exit code")) + 1]
    got = [SECONDS.sub("captured in X s", line.rstrip()) for line in status]
    want = [SECONDS.sub("captured in X s", line) for line in _readme_block()]
    assert got == want
