r"""What a colour screen draws: lines without the spaces Rich pads them with.

Rich pads every line of a table or a padded block to the console's width; copied from a
terminal, or captured by a pipe, those spaces are noise. :class:`Trimmed` draws a renderable
line by line with the trailing blanks left off (a blank with a background colour, such as a
severity badge, is kept).

>>> from rich.console import Console
>>> from rich.padding import Padding
>>> console = Console(width=20, color_system=None)
>>> with console.capture() as cap:
...     console.print(Trimmed(Padding("ab", (0, 0, 0, 2))))
>>> cap.get()
'  ab\n'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rich.console import Console, ConsoleOptions, RenderableType

__all__ = ["Trimmed", "fit_height", "join_fitting", "lines_of", "trim"]


def trim(line: list[Segment]) -> list[Segment]:
    """``line`` without its trailing blanks (those with a background colour stay)."""
    out = list(line)
    while out:
        last = out[-1]
        if last.control or (last.style is not None and last.style.bgcolor is not None):
            break
        text = last.text.rstrip(" ")
        if text:
            out[-1] = Segment(text, last.style, last.control)
            break
        out.pop()
    return out


def lines_of(
    renderable: RenderableType, console: Console, options: ConsoleOptions
) -> list[list[Segment]]:
    """The renderable's lines as Rich would draw them at ``options``' width, trimmed."""
    return [
        trim(line) for line in console.render_lines(renderable, options, pad=False, new_lines=False)
    ]


class Trimmed:
    """``renderable`` drawn without trailing blanks on its lines."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for line in lines_of(self.renderable, console, options):
            yield from line
            yield Segment.line()


def join_fitting(parts: list[str], width: int, *, first: int = 0, sep: str = "; ") -> str:
    """``parts`` joined by ``sep`` on lines of at most ``width`` cells, broken only between
    parts (a part is never split; the first line has ``first`` cells taken already); the
    lines after the first are indented by two.

    >>> print(join_fitting(["5 groups", "10 consumers", "captured in 80 ms"], 35, first=9))
    5 groups; 10 consumers;
      captured in 80 ms
    """
    lines: list[str] = []
    line, used = "", first
    for i, part in enumerate(parts):
        piece = part + (sep.rstrip() if i < len(parts) - 1 else "")
        gap = " " if line else ""
        if line and used + len(gap) + len(piece) > width:
            lines.append(line)
            line, used = "  " + piece, 2 + len(piece)
        else:
            line += gap + piece
            used += len(gap) + len(piece)
    lines.append(line)
    return "\n".join(lines)


def fit_height(
    build: Callable[[int | None, bool], RenderableType], console: Console, height: int, most: int
) -> RenderableType:
    """``build(rows, brief)`` with the most rows per table (``None``: no cap; at most
    ``most`` matter) whose drawing is at most ``height`` lines on ``console``; when even no
    row is too tall, the same with ``brief`` (findings on one line each)."""

    def tall(renderable: RenderableType) -> int:
        return len(lines_of(renderable, console, console.options))

    full = build(None, False)
    if tall(full) <= height:
        return full
    brief = tall(build(0, False)) > height
    low, high = 0, most  # build(low) is the answer unless a taller cap fits
    while low < high:
        mid = (low + high + 1) // 2
        if tall(build(mid, brief)) <= height:
            low = mid
        else:
            high = mid - 1
    return build(low, brief)
