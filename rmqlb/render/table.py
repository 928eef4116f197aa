r"""Rich tables that never cut an identifier: the one table builder of every command.

Client ids, group and topic names, ``file:line`` locations are what a reader copies into the
next command, so they are never wrapped, folded or shortened with an ellipsis. The builder
lays the table out itself:

1. every column at its natural width when the table fits;
2. else the columns that may wrap (``Column(wrap=True)``: notes, queue lists, messages) give
   way, down to their longest word, widest first;
3. else the table is *stacked*: one record per row, the first cell as its heading, the
   short cells as ``Header value`` pairs after it, and each identifier on a line of its own.

A word is never broken in any column; text is wrapped only at spaces.

>>> from rich.console import Console
>>> console = Console(width=60, color_system=None)
>>> rows = [[Text("10.0.0.5@12345#8814520316744000"), Text("6"), Text("mismatch")]]
>>> columns = [Column("Client ID", key=True), Column("Queues", justify="right"), Column("Note")]
>>> with console.capture() as cap:
...     console.print(fit_table(columns, rows, width=60))
>>> print("\n".join(line.rstrip() for line in cap.get().splitlines()))
Client ID                         Queues   Note
───────────────────────────────────────────────────
10.0.0.5@12345#8814520316744000        6   mismatch
>>> with console.capture() as cap:
...     console.print(fit_table(columns, rows, width=40))
>>> print("\n".join(line.rstrip() for line in cap.get().splitlines()))
10.0.0.5@12345#8814520316744000
    Queues 6   Note mismatch
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box as rich_box
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from rmqlb.render.blocks import Column

__all__ = ["GAP", "Column", "fit_table", "table_widths"]

GAP = 3
"""Columns of an edgeless ``SIMPLE_HEAD`` table are three cells apart (pad, rule, pad)."""


def _lines(cell: Text) -> list[str]:
    return cell.plain.split("\n")


def _natural(column: Column, cells: Sequence[Text]) -> int:
    widths = [cell_len(line) for c in cells for line in _lines(c)]
    return max(cell_len(column.header), column.min_width, *widths)


def _narrowest(column: Column, cells: Sequence[Text], natural: int) -> int:
    if not column.wrap:
        return natural
    words = [cell_len(w) for c in cells for line in _lines(c) for w in line.split()]
    header = max((cell_len(w) for w in column.header.split()), default=0)
    return min(natural, max(header, column.min_width, *words, 1))


def table_widths(
    columns: Sequence[Column], rows: Sequence[Sequence[Text]], budget: int
) -> list[int] | None:
    """Column widths summing to at most ``budget`` (the cells left once padding and rules
    are paid) without breaking a word, or None: the table must be stacked.

    >>> cols = [Column("id"), Column("note", wrap=True)]
    >>> rows = [[Text("abcdef"), Text("two words")]]
    >>> table_widths(cols, rows, 20), table_widths(cols, rows, 12), table_widths(cols, rows, 10)
    ([6, 9], [6, 6], None)
    """
    cells = [[row[i] for row in rows] for i in range(len(columns))]
    natural = [_natural(col, cs) for col, cs in zip(columns, cells, strict=True)]
    narrowest = [_narrowest(col, cs, n) for col, cs, n in zip(columns, cells, natural, strict=True)]
    if sum(natural) <= budget:
        return natural
    if sum(narrowest) > budget:
        return None
    widths = list(natural)
    excess = sum(widths) - budget
    while excess > 0:  # the widest column that can still give way gives one cell
        i = max((i for i in range(len(widths)) if widths[i] > narrowest[i]), key=widths.__getitem__)
        widths[i] -= 1
        excess -= 1
    return widths


def fit_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Text]],
    width: int,
    *,
    row_styles: Sequence[str | None] | None = None,
    title: Text | None = None,
    box: rich_box.Box = rich_box.SIMPLE_HEAD,
    show_lines: bool = False,
) -> RenderableType:
    """The rows as a table ``width`` cells wide at most, or stacked when it cannot fit."""
    styles = list(row_styles) if row_styles is not None else [None] * len(rows)
    edge = box is not rich_box.SIMPLE_HEAD
    n = len(columns)
    # edgeless: pad, rule, pad between columns; boxed: padding both sides, n + 1 rules
    overhead = 3 * n + 1 if edge else GAP * (n - 1)
    widths = table_widths(columns, rows, width - overhead)
    if widths is None:
        return _stacked(columns, rows, styles, title, width)
    table = Table(
        box=box,
        header_style="bold",
        pad_edge=edge,
        show_edge=edge,
        show_lines=show_lines,
        title=title,
        title_justify="left",
    )
    for col, w in zip(columns, widths, strict=True):
        table.add_column(col.header, justify=col.justify, width=w, overflow="fold")
    for row, style in zip(rows, styles, strict=True):
        table.add_row(*row, style=style)
    return table


def _stacked(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Text]],
    styles: Sequence[str | None],
    title: Text | None,
    width: int,
) -> RenderableType:
    """One record per row. Its heading is the first cell, followed by ``Header value`` pairs
    of the short columns while the line has room (then on indented lines); each ``key``
    column gets a line of its own below, its values aligned. Text wraps at spaces only, so
    an identifier is broken only if it is wider than the console itself."""
    out: list[RenderableType] = [title] if title is not None else []
    label = max((cell_len(c.header) for c in columns[1:] if c.key), default=0)
    for row, style in zip(rows, styles, strict=True):
        heading = Text(style=style or "")
        heading.append_text(row[0].copy())
        heading.stylize("bold", 0, len(heading))
        line = cell_len(heading.plain)
        keys: list[tuple[str, Text]] = []
        for col, cell in zip(columns[1:], row[1:], strict=True):
            if not cell.plain:
                continue
            if col.key:
                keys.append((col.header, cell))
                continue
            pair = cell_len(col.header) + 1 + cell_len(cell.plain)
            if line + GAP + pair > width:
                heading.append("\n ")
                line = 1
            heading.append(" " * GAP + col.header + " ", style="dim")
            heading.append_text(Text(" ").join(cell.split("\n")))
            line += GAP + pair
        out.append(heading)
        out += _key_lines(keys, label, width, style)
    return Group(*out)


def _key_lines(
    keys: list[tuple[str, Text]], label: int, width: int, style: str | None
) -> list[RenderableType]:
    """The identifier fields of a stacked record: ``Header   value`` with the values
    aligned, or, when the longest word would not fit beside its header, each header on a
    line and its value under it, indented by four."""
    if not keys:
        return []
    beside = 2 + label + GAP
    longest = max(cell_len(w) for _, cell in keys for w in cell.plain.split())
    if longest + beside <= width:
        grid = Table.grid(padding=(0, GAP, 0, 0), pad_edge=False)
        grid.add_column(style="dim", no_wrap=True, min_width=label)
        grid.add_column(overflow="fold")
        for header, cell in keys:
            grid.add_row(Text(header), cell, style=style)
        return [Padding(grid, (0, 0, 0, 2))]
    out: list[RenderableType] = []
    for header, cell in keys:
        out += [Text("  " + header, style="dim"), Padding(cell, (0, 0, 0, 4), style=style or "")]
    return out
