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

A table whose every line of every cell fits its column (most of them) is drawn by
:class:`FittedTable`, segment for segment what Rich's table draws, at a fraction of its
cost; any other by Rich's :class:`~rich.table.Table`.

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
from typing import TYPE_CHECKING

from rich import box as rich_box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from rmqlb.render.column import Column

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["GAP", "Column", "FittedTable", "fit_table", "layout", "table_widths"]

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
    if not edge and title is None and not show_lines and _fits(shown, widths, cells):
        return FittedTable(shown, widths, cells, styles)
    return _rich_table(shown, widths, cells, styles, title=title, box=box, show_lines=show_lines)


def _fits(columns: Sequence[Column], widths: Sequence[int], rows: Sequence[Sequence[Text]]) -> bool:
    """Whether every header is one line and every line of every cell fits its column, as
    Rich lays them out unchanged (no tab, no justify or overflow of their own)."""
    for col, w in zip(columns, widths, strict=True):
        if "\n" in col.header or cell_len(col.header) > w:
            return False
    for row in rows:
        for cell, w in zip(row, widths, strict=True):
            plain = cell.plain
            if (
                "\t" in plain
                or cell.justify is not None
                or cell.overflow is not None
                or cell.no_wrap is not None
                or cell.end != "\n"
                or any(cell_len(line) > w for line in plain.split("\n"))
            ):
                return False
    return True


def _rich_table(
    shown: Sequence[Column],
    widths: Sequence[int],
    cells: Sequence[Sequence[Text]],
    styles: Sequence[str | None],
    *,
    title: Text | None = None,
    box: rich_box.Box = rich_box.SIMPLE_HEAD,
    show_lines: bool = False,
    show_header: bool = True,
) -> Table:
    """Rich's table of the laid-out columns."""
    from rich.table import Table  # noqa: PLC0415  (fitted tables, the most, draw without it)

    edge = box is not rich_box.SIMPLE_HEAD
    table = Table(
        box=box,
        header_style="bold",
        pad_edge=edge,
        padding=(0, 1) if edge else (0, 1, 0, 0),
        show_edge=edge,
        show_lines=show_lines,
        show_header=show_header,
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


class FittedTable:
    """An edgeless ``SIMPLE_HEAD`` table whose cells fit their columns line by line, drawn
    as Rich's :class:`~rich.table.Table` draws it, segment for segment (tests compare the
    two), without its general layout: each cell is justified and styled directly instead
    of going through a padding, a wrap and three passes over its lines. Where the console is
    narrower than the table (Rich would shrink its columns), Rich's table is drawn.
    """

    def __init__(
        self,
        columns: Sequence[Column],
        widths: Sequence[int],
        rows: Sequence[Sequence[Text]],
        styles: Sequence[str | None],
    ) -> None:
        self.columns, self.widths, self.rows, self.styles = columns, widths, rows, styles
        self.show_header = True

    def _rich(self) -> Table:
        return _rich_table(
            self.columns, self.widths, self.rows, self.styles, show_header=self.show_header
        )

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self._rich())

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        n = len(self.widths)
        # each column's width with its right padding (1 cell; none after the last column)
        padded = [w + (i < n - 1) for i, w in enumerate(self.widths)]
        if sum(padded) + n - 1 > options.max_width:
            yield self._rich()
            return
        box = rich_box.SIMPLE_HEAD.substitute(options, safe=console.safe_box)
        if not self.show_header:
            box = box.get_plain_headed_box()
        null = border = Style.null()  # Rich's table and border styles are none here
        new_line = Segment.line()
        # the vertical bars of the head, middle and foot rows (spaces here, '|' in ASCII)
        bars = [
            Segment(box.head_vertical, border),
            Segment(box.mid_vertical, border),
            Segment(box.foot_vertical, border),
        ]
        justify = [c.justify for c in self.columns]
        rows: list[tuple[list[Text], Style]] = []
        if self.show_header:
            rows.append(([Text(c.header) for c in self.columns], console.get_style("bold")))
        for row, name in zip(self.rows, self.styles, strict=True):
            rows.append((list(row), null if name is None else console.get_style(name)))
        last = len(rows) - 1
        for index, (cells, style) in enumerate(rows):
            header = self.show_header and index == 0
            bar = bars[0 if index == 0 else 2 if index == last else 1]
            if not bar.text.strip():  # a space takes the row's background
                bar = Segment(bar.text, (null if header else style).background_style + bar.style)
            drawn = [
                _cell_lines(console, cell, (self.widths[i], padded[i]), justify[i], style)
                for i, cell in enumerate(cells)
            ]
            height = max(map(len, drawn))
            for i, cell_lines in enumerate(drawn):  # a shorter cell gets blank lines below
                cell_lines.extend([[Segment(" " * padded[i], style)]] * (height - len(cell_lines)))
            for line_no in range(height):
                for i, lines in enumerate(drawn):
                    yield from lines[line_no]
                    if i < n - 1:
                        yield bar
                yield new_line
            if header:
                yield Segment(box.get_row(padded, "head", edge=False), border)
                yield new_line


def _cell_lines(
    console: Console, cell: Text, widths: tuple[int, int], justify: str, style: Style
) -> list[list[Segment]]:
    """One cell's lines as Rich's table draws a cell whose lines fit: each line justified
    to ``widths[0]`` as :meth:`rich.containers.Lines.justify` does, rendered as
    :class:`~rich.text.Text` renders lines, padded on the right to ``widths[1]``, with the
    cell's style under each segment's own."""
    width, padded = widths
    lines = cell.split("\n", allow_blank=True)
    for line in lines:
        if justify == "right":
            line.rstrip()
            line.truncate(width, overflow="fold")
            line.pad_left(width - cell_len(line.plain))
        else:
            line.truncate(width, overflow="fold", pad=True)
    rendered = Text("\n").join(lines).render(console, end="")
    pad = [Segment(" " * (padded - width), Style.null())] if padded > width else []
    out: list[list[Segment]] = []
    for segments in Segment.split_and_crop_lines(rendered, width, include_new_lines=False):
        padded_line = segments + pad
        out.append(list(Segment.apply_style(padded_line, style)) if style else padded_line)
    return out


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
        from rich.table import Table  # noqa: PLC0415  (see _rich_table)

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
