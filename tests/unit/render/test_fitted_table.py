"""The fitted table draws exactly what Rich's table draws: segment for segment, over
generated tables (styles, spans, row backgrounds, wide characters, spaces at either end,
cells of several lines, no header, a console narrower than the table, an ASCII console)
and every example's report."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from rmqlb.diagnose import diagnose
from rmqlb.render.column import Column
from rmqlb.render.options import RenderOptions
from rmqlb.render.rich import build
from rmqlb.render.table import FittedTable, fit_table
from rmqlb.snapshot import load_snapshot

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.json"))
STYLES = ["", "bold", "dim", "red", "cyan on blue", "bold red", "italic", "on grey23", "reverse"]
CHARS = st.sampled_from([*"ab xyz0:-.@#\n", "界", "é", "ｗ"])
WORDS = st.text(CHARS, max_size=12)


@st.composite
def cells(draw: st.DrawFn) -> Text:
    text = Text(draw(WORDS), style=draw(st.sampled_from(STYLES)))
    for _ in range(draw(st.integers(0, 2))):
        if text.plain:
            start = draw(st.integers(0, len(text.plain) - 1))
            end = draw(st.integers(start + 1, len(text.plain)))
            text.stylize(draw(st.sampled_from(STYLES[1:])), start, end)
    return text


def segments(console: Console, renderable: object) -> list[object]:
    return list(console.render(renderable, console.options))  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_it_draws_what_rich_draws(data: st.DataObject) -> None:
    n, rows = data.draw(st.integers(1, 5)), data.draw(st.integers(0, 6))
    columns = [
        Column(data.draw(st.text(CHARS, min_size=1, max_size=8)).strip() or "h",
               justify=data.draw(st.sampled_from(["left", "right"])))
        for _ in range(n)
    ]  # fmt: skip
    body = [[data.draw(cells()) for _ in range(n)] for _ in range(rows)]
    styles = [data.draw(st.sampled_from([None, *STYLES])) for _ in range(rows)]
    table = fit_table(columns, body, data.draw(st.integers(10, 120)), row_styles=styles)
    if not isinstance(table, FittedTable):
        return
    table.show_header = data.draw(st.booleans())
    console_width = data.draw(st.integers(5, 130))  # narrower: Rich's own table is drawn
    colors = data.draw(st.sampled_from([None, "standard", "truecolor"]))
    encoding = data.draw(st.sampled_from(["utf-8", "ascii"]))  # ascii: Rich's ASCII box
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    console = Console(file=out, width=console_width, color_system=colors, force_terminal=True)
    assert segments(console, table) == segments(console, table._rich())


def test_every_examples_tables_are_drawn_as_rich_draws_them() -> None:
    drawn: list[FittedTable] = []
    for path in EXAMPLES:
        report = diagnose(load_snapshot(path))
        for width in (60, 120):
            console = Console(file=io.StringIO(), width=width, color_system="truecolor")
            group = build(report, RenderOptions(), width)
            tables = [r for r in group.renderables if isinstance(r, FittedTable)]
            drawn += tables
            for table in tables:
                assert segments(console, table) == segments(console, table._rich()), path
    assert len(drawn) > 40
