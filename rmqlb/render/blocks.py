r"""A small document model shared by the summaries of ``simulate`` and ``audit``: headings,
lines and tables, written as Rich tables, plain text or Markdown from one description.

Plain text and Markdown never draw boxes: plain tables are tabulate's ``simple`` layout,
Markdown ones GitHub pipe tables. Rich tables go through :func:`rmqlb.render.table.fit_table`,
so identifiers are never cut. Every string is shown through :func:`rmqlb.render.safe.safe`.

>>> doc = [Heading("Fleet"), Table((Column("group", key=True), Column("n", justify="right")),
...        (("G1", "3"), ("G2|x", "10"))), Line("2 groups")]
>>> print(to_text(doc, markdown=False))
Fleet
group      n
-------  ---
G1         3
G2|x      10
2 groups
<BLANKLINE>
>>> print(to_text(doc, markdown=True))
### Fleet
<BLANKLINE>
| group   |   n |
|---------|-----|
| G1      |   3 |
| G2\|x   |  10 |
<BLANKLINE>
2 groups
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rmqlb.render.safe import safe

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Block", "Column", "Heading", "Line", "Table", "to_text", "write_rich"]


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header, alignment, whether it may wrap at spaces, a minimum width;
    ``key`` marks identifiers (client ids), which get a line each when a table is stacked."""

    header: str
    justify: Literal["left", "right"] = "left"
    wrap: bool = False
    min_width: int = 0
    key: bool = False


@dataclass(frozen=True, slots=True)
class Heading:
    """A section title."""

    text: str


@dataclass(frozen=True, slots=True)
class Line:
    """A line of text; ``style`` is a Rich style used only by the colour output."""

    text: str
    style: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """Rows of cells under columns; ``styles`` per row (Rich only)."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    styles: tuple[str | None, ...] = field(default=())
    title: str | None = None


Block = Heading | Line | Table


def to_text(blocks: Sequence[Block], *, markdown: bool) -> str:
    """The blocks as plain text or GitHub Markdown, ending in a newline.

    Plain: a blank line before each heading but the first, tables and lines packed under it.
    Markdown: ``### `` headings, a blank line after every block.
    """
    from tabulate import tabulate  # noqa: PLC0415  (not at CLI start-up)

    out: list[str] = []

    def blank() -> None:
        if out and out[-1] != "":
            out.append("")

    for block in safe(list(blocks)):
        if isinstance(block, Heading):
            if markdown:
                out += [f"### {block.text}", ""]
            else:
                blank()
                out.append(block.text)
        elif isinstance(block, Line):
            if not block.text:
                blank()
                continue
            out += [block.text, *([""] if markdown else [])]
        else:
            if block.title is not None:
                out.append(f"**{block.title}**" if markdown else block.title)
            rows = block.rows
            if markdown:
                rows = tuple(tuple(c.replace("|", "\\|") for c in row) for row in rows)
            out.append(
                tabulate(
                    rows,
                    headers=[c.header for c in block.columns],
                    tablefmt="github" if markdown else "simple",
                    colalign=[c.justify for c in block.columns],
                    disable_numparse=True,
                )
            )
            if markdown:
                out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def write_rich(blocks: Sequence[Block], console: Console) -> None:
    """The blocks on a Rich console: bold headings (a blank line before each but the first),
    tables fitted to the console's width."""
    from rich.text import Text  # noqa: PLC0415

    from rmqlb.render.table import fit_table  # noqa: PLC0415

    fresh = True  # at the start, or just after a blank line
    for block in safe(list(blocks)):
        if isinstance(block, Heading):
            if not fresh:
                console.print()
            console.print(Text(block.text, style="bold"))
        elif isinstance(block, Line):
            console.print(Text(block.text, style=block.style or ""))
            fresh = not block.text
            continue
        else:
            rows = [[Text(cell) for cell in row] for row in block.rows]
            title = Text(block.title, style="bold") if block.title is not None else None
            console.print(
                fit_table(
                    block.columns,
                    rows,
                    console.width,
                    row_styles=block.styles or None,
                    title=title,
                )
            )
        fresh = False
