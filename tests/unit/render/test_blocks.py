"""The one document model of plain and Markdown output."""

from __future__ import annotations

import re
from pathlib import Path

import rmqlb
from rmqlb.render.blocks import Cell, Column, Heading, Line, Table, to_text

PACKAGE = Path(rmqlb.__file__).parent


def test_only_the_blocks_module_lays_out_text_tables() -> None:
    importers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"^\s*(from|import) tabulate\b", path.read_text("utf-8"), re.MULTILINE)
    )
    assert importers == ["render/blocks.py"]


def test_markdown_escapes_names_but_not_text_given_as_markdown() -> None:
    doc = [
        Heading("G*1 <b>", 1, md="G `*`"),
        Heading("T*1"),
        Line("a|b `c`"),
        Line("x", md="**x**"),
        Table(
            (Column("id", code=True), Column("note"), Column("status")),
            (("c|1\nc`2", "*new*", Cell("bad", "**bad**")), ("-", "", "ok")),
        ),
    ]
    assert to_text(doc, markdown=True) == (
        "## G `*`\n\n### T\\*1\n\na\\|b \\`c\\`\n\n**x**\n\n"
        "| id                | note    | status   |\n"
        "|:------------------|:--------|:---------|\n"
        "| `c\\|1`<br>``c`2`` | \\*new\\* | **bad**  |\n"
        "| -                 |         | ok       |\n"  # nobody is not an identifier
    )


def test_spaced_plain_underlines_headings_and_separates_blocks() -> None:
    doc = [Heading("Top", 1), Heading("Part", 2), Heading("Sub", 3), Line("a\nb"), Line("c")]
    assert to_text(doc, markdown=False, spaced=True) == (
        "Top\n===\n\nPart\n----\n\nSub\n\na\nb\n\nc\n"
    )
    assert to_text(doc, markdown=False) == "Top\n\nPart\n\nSub\na\nb\nc\n"
