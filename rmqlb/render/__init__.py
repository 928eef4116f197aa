"""The presentation layer: everything any command shows is laid out here.

Explain reports: one :class:`Renderer` per :class:`Output` format, chosen through the
closed enum::

    Output.table    -> rmqlb.render.rich.RichRenderer      colour tables (Rich)
    Output.wide     -> the same, every column (the CLI sets RenderOptions.wide)
    Output.plain    -> rmqlb.render.text.PlainRenderer     plain text (blocks.py)
    Output.markdown -> rmqlb.render.text.MarkdownRenderer  GitHub Markdown (blocks.py)
    Output.json     -> rmqlb.render.json.JsonRenderer      the rmqlb.report/1 contract

The other commands and the shared pieces::

    simulate.py   simulate's cases          blocks.py    headings, lines, tables -> any format
    status.py     status's overview         table.py     Rich tables that never cut an id
    check.py      check's findings, counts  safe.py      control characters made visible
    ci.py         JUnit XML, annotations    failures.py  failed requests, listed once
    audit.py      audit's summary           watch.py     explain --watch between polls
    html.py       audit's HTML report       changes.py   what changed between polls

Every plain and Markdown table comes from :mod:`rmqlb.render.blocks`.

Shared wording (counts, durations) is :mod:`rmqlb.humanize`; queue ranges are spelled by
:func:`rmqlb.model.queue.queue_ranges`; the exit code by :mod:`rmqlb.failon`.

Renderers write to an injected Rich ``Console`` or text stream and never create a console of
their own at import time. This package imports nothing heavy: the implementations (Rich,
tabulate) load when :func:`get_renderer` first asks for them.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Protocol, assert_never

from rmqlb.render.formats import Output
from rmqlb.render.options import LARGE_TOPIC_QUEUES, RenderOptions

if TYPE_CHECKING:
    from rich.console import Console

    from rmqlb.diagnose.report import Report

__all__ = [
    "LARGE_TOPIC_QUEUES",
    "Output",
    "RenderOptions",
    "Renderer",
    "get_renderer",
    "render",
]


class Renderer(Protocol):
    """Writes one report in one format to a console or a stream."""

    def render(self, report: Report, target: Console | IO[str], options: RenderOptions) -> None:
        """Write ``report`` to ``target``."""


def get_renderer(fmt: Output) -> Renderer:
    """The renderer for ``fmt``; every :class:`Output` member has one (mypy checks the match
    is exhaustive through ``assert_never``)."""
    # Imported here so ``rmqlb --help`` never loads Rich tables or tabulate.
    if fmt is Output.table or fmt is Output.wide:
        from rmqlb.render.rich import RichRenderer  # noqa: PLC0415

        return RichRenderer()
    if fmt is Output.plain:
        from rmqlb.render.text import PlainRenderer  # noqa: PLC0415

        return PlainRenderer()
    if fmt is Output.markdown:
        from rmqlb.render.text import MarkdownRenderer  # noqa: PLC0415

        return MarkdownRenderer()
    if fmt is Output.json:
        from rmqlb.render.json import JsonRenderer  # noqa: PLC0415

        return JsonRenderer()
    assert_never(fmt)


def render(
    report: Report,
    fmt: Output,
    target: Console | IO[str],
    options: RenderOptions | None = None,
) -> None:
    """Write ``report`` in format ``fmt`` to ``target``."""
    get_renderer(fmt).render(report, target, options or RenderOptions())
