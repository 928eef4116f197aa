r"""The document model every text output is written from: headings, lines and tables, laid
out as Rich tables, plain text or GitHub Markdown from one description.

Plain text and Markdown never draw boxes: plain tables are tabulate's ``simple`` layout,
Markdown ones GitHub pipe tables (aligned as the plain columns are). Rich tables go through
:func:`rmqlb.render.table.fit_table`, so identifiers are never cut. Every string is shown
through :func:`rmqlb.render.safe.safe` (control characters visible), and Markdown escapes
every string it is not given already written as Markdown (``md=``), so a name cannot open
emphasis, HTML or a table cell.

Plain text has two layouts. The default packs blocks under bare headings, a blank line only
before each heading (what ``simulate`` and ``audit`` print); ``spaced`` leaves a blank line
after every block and underlines headings, ``=`` at level 1 and ``-`` at level 2 (the
reports of ``explain``, ``status`` and ``check``):

>>> doc = [Heading("Fleet"), Table((Column("group", code=True), Column("n", justify="right")),
...        (("G1", "3"), ("G2|x", "10"))), Line("2 groups")]
>>> print(to_text(doc, markdown=False))
Fleet
group      n
-------  ---
G1         3
G2|x      10
2 groups
<BLANKLINE>
>>> print(to_text(doc, markdown=False, spaced=True))
Fleet
-----
<BLANKLINE>
group      n
-------  ---
G1         3
G2|x      10
<BLANKLINE>
2 groups
<BLANKLINE>
>>> print(to_text(doc, markdown=True))
### Fleet
<BLANKLINE>
| group   |   n |
|:--------|----:|
| `G1`    |   3 |
| `G2\|x` |  10 |
<BLANKLINE>
2 groups
<BLANKLINE>
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rmqlb.render.column import Column
from rmqlb.render.safe import safe

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "Block",
    "Cell",
    "Column",
    "Heading",
    "Line",
    "Table",
    "code_span",
    "md_escape",
    "to_text",
    "write_rich",
]

_MD_SPECIAL = re.compile(r"([\\`*<|])")
_BACKTICKS = re.compile("`+")


def md_escape(text: str) -> str:
    r"""``text`` with what Markdown would read as emphasis, HTML, code or a table cell's
    border escaped.

    >>> print(md_escape("a*b <c> | `d`"))
    a\*b \<c> \| \`d\`
    """
    return _MD_SPECIAL.sub(r"\\\1", text)


def code_span(text: str) -> str:
    """``text`` as a Markdown code span, fenced by more backticks than it holds in a row.

    >>> code_span("G1"), code_span("a`b")
    ('`G1`', '``a`b``')
    """
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    fence = "`" * (longest + 1)
    return f"{fence}{pad}{text}{pad}{fence}"


@dataclass(frozen=True, slots=True)
class Cell:
    """A table cell whose Markdown is not its escaped text (emphasis, a code span inside
    words): ``md`` is written as it is."""

    text: str
    md: str


@dataclass(frozen=True, slots=True)
class Heading:
    """A title: ``level`` 1 heads a document (Markdown ``##``), 2 a section (``###``), 3 a
    part of one (``####``). ``md`` is the title written as Markdown, when it needs more
    than escaping."""

    text: str
    level: Literal[1, 2, 3] = 2
    md: str | None = None


@dataclass(frozen=True, slots=True)
class Line:
    """A line of text, or several kept together (one paragraph or list in Markdown);
    ``style`` is a Rich style used only by the colour output, ``md`` the text written as
    Markdown when it needs more than escaping. An empty line is a blank line."""

    text: str
    style: str | None = None
    md: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """Rows of cells under columns; ``styles`` per row (Rich only)."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[str | Cell, ...], ...]
    styles: tuple[str | None, ...] = field(default=())


Block = Heading | Line | Table

_RULES = {1: "=", 2: "-"}


def _plain(cell: str | Cell) -> str:
    return cell.text if isinstance(cell, Cell) else cell


def _md_cell(cell: str | Cell, column: Column) -> str:
    """A cell as Markdown: lines joined by ``<br>`` (a pipe table row is one line)."""
    if isinstance(cell, Cell):
        return cell.md
    if column.code:
        lines = [line if line in ("", "-") else code_span(line) for line in cell.split("\n")]
        return "<br>".join(line.replace("|", "\\|") for line in lines)
    return "<br>".join(md_escape(line) for line in cell.split("\n"))


def _table(table: Table, markdown: bool) -> str:
    from tabulate import tabulate  # noqa: PLC0415  (not at CLI start-up)

    columns = table.columns
    if markdown:
        rows = [[_md_cell(c, k) for c, k in zip(row, columns, strict=True)] for row in table.rows]
    else:
        rows = [[_plain(c) for c in row] for row in table.rows]
    return tabulate(
        rows,
        headers=[c.header for c in columns],
        tablefmt="pipe" if markdown else "simple",
        colalign=[c.justify for c in columns],
        disable_numparse=True,
    )


def to_text(blocks: Sequence[Block], *, markdown: bool, spaced: bool = False) -> str:
    """The blocks as plain text or GitHub Markdown, ending in a newline (see the module
    docstring for the two plain layouts; Markdown leaves a blank line after every block)."""
    out: list[str] = []

    def blank() -> None:
        if out and out[-1] != "":
            out.append("")

    after = [""] if markdown or spaced else []
    for block in safe(list(blocks)):
        if isinstance(block, Heading):
            blank()
            if markdown:
                title = block.md if block.md is not None else md_escape(block.text)
                out += ["#" * (block.level + 1) + " " + title, ""]
            elif spaced:
                rule = _RULES.get(block.level)
                out += [block.text, *([rule * len(block.text)] if rule else []), ""]
            else:
                out.append(block.text)
        elif isinstance(block, Line):
            if not block.text:
                blank()
            elif markdown:
                out += [block.md if block.md is not None else md_escape(block.text), ""]
            else:
                out += [block.text, *after]
        else:
            out += [_table(block, markdown), *after]
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
            rows = [[Text(_plain(cell)) for cell in row] for row in block.rows]
            console.print(
                fit_table(block.columns, rows, console.width, row_styles=block.styles or None)
            )
        fresh = False
