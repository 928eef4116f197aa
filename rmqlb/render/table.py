r"""Rich tables that never cut an identifier: the one table builder of every command.

Client ids, group and topic names, ``file:line`` locations are what a reader copies into the
next command, so they are never wrapped, folded or shortened with an ellipsis. The builder
lays the table out itself:

1. every column at its natural width when the table fits;
2. else the columns that may wrap (``Column(wrap=True)``: notes, queue lists, messages) give
   way, down to their longest word, widest first;
3. else the columns that may go (``Column(give_way=N)``) are dropped, lowest ``N`` first,
   until the rest fits;
4. else the table is *stacked*: one record per row, the first cell as its heading, the
   short cells as ``Header value`` pairs after it, and each identifier on a line of its own.

A word is never broken in any column; text is wrapped only at spaces.

>>> from rich.console import Console
>>> console = Console(width=60, color_system=None)
>>> rows = [[Text("10.0.0.5@12345#8814520316744000"), Text("6"), Text("mismatch")]]
>>> columns = [Column("Client ID", key=True), Column("Queues", justify="right"), Column("Note")]
>>> with console.capture() as cap:
...     console.print(fit_table(columns, rows, width=60))
>>> print("\n".join(line.rstrip() for line in cap.get().splitlines()))
Client ID                        Queues  Note
─────────────────────────────────────────────────
10.0.0.5@12345#8814520316744000       6  mismatch
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

from rmqlb.render.column import Column

__all__ = ["GAP", "Column", "fit_table", "layout", "table_widths"]

GAP = 2
"""Columns of an edgeless ``SIMPLE_HEAD`` table are two cells apart (pad, rule)."""
PAIR_GAP = 3
"""Cells between two ``Header value`` pairs of a stacked record."""


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


def layout(
    columns: Sequence[Column], rows: Sequence[Sequence[Text]], width: int, *, edge: bool = False
) -> tuple[list[int], list[int]] | None:
    """The columns kept (their indices) and their widths for a table ``width`` cells wide,
    the columns that give way dropped lowest ``give_way`` first; None: it must be stacked.

    >>> cols = [Column("id"), Column("a", give_way=2), Column("b", give_way=1)]
    >>> rows = [[Text("abcdef"), Text("xx"), Text("yyy")]]
    >>> layout(cols, rows, 15), layout(cols, rows, 12), layout(cols, rows, 9), layout(cols, rows, 5)
    (([0, 1, 2], [6, 2, 3]), ([0, 1], [6, 2]), ([0], [6]), None)
    """
    order = [i for _, i in sorted((c.give_way, i) for i, c in enumerate(columns) if c.give_way)]
    kept = list(range(len(columns)))
    while True:
        n = len(kept)
        # edgeless: pad, rule between columns; boxed: padding both sides, n + 1 rules
        overhead = 3 * n + 1 if edge else GAP * (n - 1)
        shown = [columns[i] for i in kept]
        widths = table_widths(shown, [[row[i] for i in kept] for row in rows], width - overhead)
        if widths is not None:
            return kept, widths
        if not order:
            return None
        kept.remove(order.pop(0))


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
    """The rows as a table ``width`` cells wide at most, dropping the columns that give way
    as needed, or stacked (with every column) when even the others cannot fit."""
    styles = list(row_styles) if row_styles is not None else [None] * len(rows)
    edge = box is not rich_box.SIMPLE_HEAD
    fitted = layout(columns, rows, width, edge=edge)
    if fitted is None:
        return _stacked(columns, rows, styles, title, width)
    kept, widths = fitted
    shown = [columns[i] for i in kept]
    cells = [[row[i] for i in kept] for row in rows]
    table = Table(
        box=box,
        header_style="bold",
        pad_edge=edge,
        padding=(0, 1) if edge else (0, 1, 0, 0),
        show_edge=edge,
        show_lines=show_lines,
        title=title,
        title_justify="left",
    )
    for col, w in zip(shown, widths, strict=True):
        # a Text header: a str one would be parsed as Rich markup and emoji codes on every
        # draw (and load Rich's emoji table), which plain header words never hold
        table.add_column(Text(col.header), justify=col.justify, width=w, overflow="fold")
    for row, style in zip(cells, styles, strict=True):
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
            if line + PAIR_GAP + pair > width:
                heading.append("\n ")
                line = 1
            heading.append(" " * PAIR_GAP + col.header + " ", style="dim")
            heading.append_text(Text(" ").join(cell.split("\n")))
            line += PAIR_GAP + pair
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
    beside = 2 + label + PAIR_GAP
    longest = max(cell_len(w) for _, cell in keys for w in cell.plain.split())
    if longest + beside <= width:
        grid = Table.grid(padding=(0, PAIR_GAP, 0, 0), pad_edge=False)
        grid.add_column(style="dim", no_wrap=True, min_width=label)
        grid.add_column(overflow="fold")
        for header, cell in keys:
            grid.add_row(Text(header), cell, style=style)
        return [Padding(grid, (0, 0, 0, 2))]
    out: list[RenderableType] = []
    for header, cell in keys:
        out += [Text("  " + header, style="dim"), Padding(cell, (0, 0, 0, 4), style=style or "")]
    return out
