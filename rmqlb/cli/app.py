"""The Typer application object; command modules register on it.

Only typer is imported here: every command imports what it needs (rich tables, pydantic,
asyncio, pyspark) inside its own function, so ``rmqlb --help`` stays fast.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="rmqlb",
    help=(
        "Diagnose Apache RocketMQ consumer load balancing: which consumer should hold which "
        "queue, which one does, and why they differ."
    ),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
