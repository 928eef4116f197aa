"""Golden-file render tests: every hand-built report in every format, fixed width and colours.

Regenerate after an intended change with ``RMQLB_UPDATE_GOLDEN=1 pytest tests/unit/render``
and review the diff of ``tests/data/golden/``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from report_builders import large_report, rebalance_report, settled_report
from rich.console import Console

from rmqlb.diagnose.report import Report
from rmqlb.render import Output, RenderOptions, render
from rmqlb.render.changes import diff_reports

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden"
UPDATE = os.environ.get("RMQLB_UPDATE_GOLDEN") == "1"

# name -> (format, colour, file extension)
VARIANTS: dict[str, tuple[Output, bool, str]] = {
    "table-color": (Output.table, True, "ansi"),
    "table": (Output.table, False, "txt"),
    "plain": (Output.plain, False, "txt"),
    "markdown": (Output.markdown, False, "md"),
    "json": (Output.json, False, "json"),
}

_RICH_ENV = (
    "NO_COLOR",
    "FORCE_COLOR",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "COLUMNS",
    "LINES",
    "TERM",
    "COLORTERM",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich reads these; golden output must not depend on the developer's terminal."""
    for name in _RICH_ENV:
        monkeypatch.delenv(name, raising=False)


def fixed_console(buffer: io.StringIO, color: bool) -> Console:
    """A console whose output depends on nothing but its arguments."""
    if color:
        return Console(width=100, file=buffer, color_system="truecolor", force_terminal=True)
    return Console(width=100, file=buffer, color_system=None, force_terminal=False)


def render_text(
    report: Report, fmt: Output, color: bool, options: RenderOptions | None = None
) -> str:
    """``report`` rendered as the CLI would, into a string."""
    buffer = io.StringIO()
    target = fixed_console(buffer, color) if fmt is Output.table else buffer
    render(report, fmt, target, options)
    return buffer.getvalue()


def check_golden(name: str, text: str) -> None:
    """Compare with ``tests/data/golden/<name>`` (or rewrite it when regenerating)."""
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    if not path.exists():
        pytest.fail(f"golden file {name} is missing; run with RMQLB_UPDATE_GOLDEN=1 to create it")
    expected = path.read_bytes().decode("utf-8")
    assert text == expected, f"{name} differs; review and regenerate with RMQLB_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_golden(named_report: tuple[str, Report], variant: str) -> None:
    name, report = named_report
    fmt, color, ext = VARIANTS[variant]
    check_golden(f"{name}.{variant}.{ext}", render_text(report, fmt, color))


@pytest.mark.parametrize("variant", ["table-color", "table", "plain", "markdown"])
def test_golden_watch_changes(variant: str) -> None:
    """The report after a rebalance settled, marked against the poll before it."""
    fmt, color, ext = VARIANTS[variant]
    before, after = rebalance_report(), settled_report()
    options = RenderOptions(changes=diff_reports(before, after))
    check_golden(f"watch.{variant}.{ext}", render_text(after, fmt, color, options))


@pytest.mark.parametrize("variant", ["table", "plain", "markdown"])
def test_golden_all_queues(variant: str) -> None:
    fmt, color, ext = VARIANTS[variant]
    text = render_text(large_report(), fmt, color, RenderOptions(all_queues=True))
    check_golden(f"large-all-queues.{variant}.{ext}", text)


def test_colour_variant_has_ansi_and_plain_variant_has_none(
    named_report: tuple[str, Report],
) -> None:
    _, report = named_report
    assert "\x1b[" in render_text(report, Output.table, color=True)
    for fmt in Output:
        assert "\x1b[" not in render_text(report, fmt, color=False)
