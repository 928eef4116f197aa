"""Options shared by several commands (design §3 conventions), and the helpers that read them."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

if TYPE_CHECKING:
    from rich.console import Console


class Output(StrEnum):
    """``--output``: the four report formats."""

    table = "table"
    plain = "plain"
    markdown = "markdown"
    json = "json"


class FailOn(StrEnum):
    """``--fail-on``: the lowest severity that makes the exit code 1."""

    error = "error"
    warning = "warning"
    never = "never"


OutputOption = Annotated[
    Output | None,
    typer.Option(
        "--output",
        "-o",
        help="Report format; default: table on a terminal, plain otherwise.",
        case_sensitive=False,
    ),
]
ColorOption = Annotated[
    bool | None,
    typer.Option(
        "--color/--no-color",
        help="Force colours on or off (default: on for a terminal unless NO_COLOR is set).",
        show_default=False,
    ),
]
FailOnOption = Annotated[
    FailOn,
    typer.Option(
        "--fail-on", help="Exit 1 when a finding is at least this severe.", case_sensitive=False
    ),
]


def resolve_output(output: Output | None, stream: TextIO | None = None) -> Output:
    """The format to use: the flag, else ``table`` on a terminal and ``plain`` otherwise."""
    if output is not None:
        return output
    stream = stream or sys.stdout
    return Output.table if stream.isatty() else Output.plain


def use_color(color: bool | None, stream: TextIO | None = None) -> bool:
    """Colours on for a terminal unless ``NO_COLOR`` is set; ``--color/--no-color`` wins."""
    if color is not None:
        return color
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    return stream.isatty()


def make_console(
    color: bool | None, stream: TextIO | None = None, width: int | None = None
) -> Console:
    """A Rich console writing to ``stream`` (stdout by default) with the resolved colour rule."""
    from rich.console import Console

    stream = stream or sys.stdout
    on = use_color(color, stream)
    return Console(
        file=stream,
        no_color=not on,
        color_system="auto" if on else None,
        force_terminal=on if color is not None else None,
        width=width,
        highlight=False,
        soft_wrap=False,
    )
