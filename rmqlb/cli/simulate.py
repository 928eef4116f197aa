"""``rmqlb simulate``: what-if allocation (to be completed: tables, --compare, --add/--remove)."""

from __future__ import annotations

from typing import Annotated

import typer

from rmqlb.cli.app import app


@app.command()
def simulate(
    queues: Annotated[int, typer.Option("--queues", help="Queues per broker.")] = 16,
    consumers: Annotated[int, typer.Option("--consumers", help="Number of consumers.")] = 3,
    strategy: Annotated[str, typer.Option("--strategy", help="Strategy spec.")] = "AVG",
) -> int:
    """Show how a strategy splits queues among consumers."""
    from rmqlb.allocate import allocate
    from rmqlb.model import MessageQueue
    from rmqlb.model.strategy import parse_strategy_spec

    spec = parse_strategy_spec(strategy)
    mqs = [MessageQueue("TopicTest", "broker-a", i) for i in range(queues)]
    cids = [f"consumer-{i}" for i in range(consumers)]
    for cid, got in allocate(spec, mqs, cids).items():
        typer.echo(f"{cid}: {len(got)}")
    return 0
