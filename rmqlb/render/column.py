"""A table column as every output describes it (plain, Markdown, Rich), in a module of its
own: the colour table builder (:mod:`rmqlb.render.table`) needs only this of
:mod:`rmqlb.render.blocks`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Column"]


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header, alignment, whether it may wrap at spaces, a minimum width;
    ``key`` marks identifiers (client ids), which get a line each when a table is stacked;
    ``code`` shows each line of a cell as a code span in Markdown (but ``-``: nobody);
    ``give_way`` is the order in which a colour table drops the column when the console is
    too narrow (1 first; 0 never)."""

    header: str
    justify: Literal["left", "right"] = "left"
    wrap: bool = False
    min_width: int = 0
    key: bool = False
    code: bool = False
    give_way: int = 0
