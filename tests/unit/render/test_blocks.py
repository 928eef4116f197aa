"""The one document model of plain and Markdown output."""

from __future__ import annotations

import re
from importlib.metadata import requires
from pathlib import Path

from wcwidth import wcswidth

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


def test_plain_columns_line_up_by_display_width_for_every_install() -> None:
    doc = [Table((Column("id"), Column("status")), (("127.0.0.1@北京", "ok"), ("c1", "moved")))]
    lines = to_text(doc, markdown=False).splitlines()
    starts = {wcswidth(line[: line.rindex(" ") + 1]) for line in lines if line.strip("- ")}
    assert len(starts) == 1, lines  # "status" starts in one display column on every row
    # tabulate measures display width only where wcwidth is installed: the package's own
    # dependency, not only a test tool's
    assert any(re.match(r"wcwidth\b", r) for r in requires("rmqlb") or [])


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
