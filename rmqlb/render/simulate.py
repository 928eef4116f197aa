"""``rmqlb simulate``'s output: one :mod:`rmqlb.render.blocks` document per case (the
allocation, the scale event and what moves, the strategy comparison), written as Rich
tables, plain text or Markdown; ``json`` writes the ``simulate --input`` contract.

Every format says the same thing because every format is written from the same blocks.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from rmqlb.humanize import count, plural
from rmqlb.model.queue import MessageQueue, queue_ranges
from rmqlb.render.blocks import Block, Column, Heading, Line, Table, to_text, write_rich
from rmqlb.render.formats import Output
from rmqlb.render.safe import escape_json_controls

if TYPE_CHECKING:
    from rich.console import Console

    from rmqlb.whatif.cases import Simulation
    from rmqlb.whatif.events import WhatIf
    from rmqlb.whatif.measure import Balance, Moves
    from rmqlb.whatif.running import RunningSimulation
    from rmqlb.whatif.steps import Step

IDLE_STYLE = "bold yellow"
ERROR_STYLE = "bold red"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) made one space."""
    return " ".join(text.split())


def _share(count: int, percent: float) -> str:
    """``56.2%``; a non-zero share that rounds to nothing reads ``<0.1%``, not ``0%``.

    >>> _share(1, 0.0), _share(9, 56.2)
    ('<0.1%', '56.2%')
    """
    return "<0.1%" if count and not percent else f"{percent:g}%"


def _holders(cids: Sequence[str]) -> str:
    return ", ".join(cids) if cids else "nobody"


def _balance_line(b: Balance) -> str:
    parts = [
        f"{plural(b.queues, 'queue')}, {plural(b.consumers, 'consumer')}: "
        f"min {b.min}, max {b.max} per consumer",
        f"{len(b.idle)} idle",
    ]
    if b.unassigned:
        parts.append(f"{plural(len(b.unassigned), 'queue')} held by nobody")
    if b.duplicated:
        held = "popped by several clients (POP's way)" if b.popped else "held more than once"
        parts.append(f"{plural(len(b.duplicated), 'queue')} {held}")
    return "; ".join(parts)


def _assignment(
    assignment: Mapping[str, Sequence[MessageQueue]],
    topics: bool,
    subscribers: frozenset[str] | None = None,
) -> Table:
    """Consumer, queues, count; consumers outside ``subscribers`` (when given) are marked:
    they take their share of the topic and consume none of it."""

    def name(cid: str) -> str:
        return cid if subscribers is None or cid in subscribers else f"{cid} (not subscribed)"

    rows = tuple(
        (name(cid), queue_ranges(qs, with_topic=topics) if qs else "(idle)", count(len(qs)))
        for cid, qs in assignment.items()
    )
    return Table(
        (Column("consumer", key=True), Column("queues", wrap=True), Column("count", "right")),
        rows,
        tuple(None if qs else IDLE_STYLE for qs in assignment.values()),
    )


def _moves_table(moves: Moves, topics: bool) -> Table | None:
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[MessageQueue]] = {}
    for move in moves.moved:
        groups.setdefault((move.before, move.after), []).append(move.queue)
    if not groups:
        return None
    columns = (
        Column("queues", wrap=True),
        Column("from", wrap=True, key=True),
        Column("to", wrap=True, key=True),
        Column("count", "right"),
    )
    rows = tuple(
        (queue_ranges(qs, with_topic=topics), _holders(b), _holders(a), count(len(qs)))
        for (b, a), qs in groups.items()
    )
    return Table(columns, rows)


def _scale_blocks(result: WhatIf, topics: bool) -> list[Block]:
    from rmqlb.whatif.measure import balance  # noqa: PLC0415

    event = result.scale
    assert event is not None
    change = []
    if event.added:
        change.append(f"+{len(event.added)} ({', '.join(event.added)})")
    if event.removed:
        change.append(f"-{len(event.removed)} ({', '.join(event.removed)})")
    blocks: list[Block] = [
        Heading(f"After {' and '.join(change)}"),
        _assignment(event.after, topics),
        Line(
            _balance_line(balance(dict(event.after), result.queues, popped=result.balance.popped))
        ),
    ]
    table = _moves_table(event.moves, topics)
    if table is not None:
        blocks += [Heading("Queues that move"), table]
    moves = event.moves
    blocks.append(
        Line(
            f"{moves.count} of {plural(moves.total, 'queue')} move "
            f"({_share(moves.count, moves.percent)})"
        )
    )
    return blocks


def _compare_blocks(result: WhatIf, joiner: str | None) -> list[Block]:
    from rmqlb.model.strategy import describe  # noqa: PLC0415
    from rmqlb.whatif.events import leaver  # noqa: PLC0415

    assert result.compare is not None
    rows: list[tuple[str, ...]] = []
    styles: list[str | None] = []
    notes: list[str] = []

    def cell(moves: Moves | None, error: str | None, label: str, what: str) -> str:
        if moves is not None:
            return f"{moves.count} ({_share(moves.count, moves.percent)})"
        if error is None:
            return "-"
        notes.append(f"{label} {what}: error: {one_line(error)}")
        return "error"

    for row in result.compare:
        label = describe(row.strategy)
        if row.balance is None:
            rows.append((label, "error", "-", "-", "-", "-", "-"))
            notes.append(f"{label}: error: {one_line(row.error or '')}")
            styles.append(ERROR_STYLE)
            continue
        b = row.balance
        rows.append(
            (
                label,
                count(b.min),
                count(b.max),
                count(len(b.idle)),
                count(len(b.unassigned)),
                cell(row.moved_on_add, row.add_error, label, "+1"),
                cell(row.moved_on_remove, row.remove_error, label, "-1"),
            )
        )
        styles.append(IDLE_STYLE if b.idle or b.unassigned else None)
    numbers = ("min", "max", "idle", "unassigned", "moved +1", "moved -1")
    columns = (Column("strategy"), *(Column(n, "right") for n in numbers))
    gone = leaver(result.consumers) or "nobody"
    return [
        Heading(f"Strategies compared (+1 adds {joiner}, -1 removes {gone})"),
        Table(columns, tuple(rows), tuple(styles)),
        *(Line(note) for note in notes),
    ]


def simulation_blocks(sim: Simulation, multi: bool) -> list[Block]:
    """One case as blocks: its allocation, then the scale event and the comparison if any.
    A case that failed is one red line (prefixed with its label among several cases)."""
    if sim.result is None:
        prefix = f"{sim.label}: " if multi else ""
        return [Line(f"{prefix}error: {one_line(sim.error or '')}", ERROR_STYLE)]
    result = sim.result
    topics = len({q.topic for q in result.queues}) > 1
    blocks: list[Block] = [
        Heading(sim.label),
        _assignment(result.assignment, topics),
        Line(_balance_line(result.balance)),
    ]
    if result.scale is not None:
        blocks += _scale_blocks(result, topics)
    if result.compare is not None:
        blocks += _compare_blocks(result, sim.joiner)
    return blocks


# --------------------------------------------------------------------------- a running group


def _actual_line(sim: RunningSimulation) -> Line:
    """Whether the clients hold the start's allocation right now."""
    actual, expected = sim.start.actual, sim.steps[0].assignment
    if actual is None or expected is None:
        return Line("what each client holds right now is not known: the start is what they compute")
    held = {(mq, cid) for cid, qs in actual.items() for mq in qs}
    want = {(mq, cid) for cid, qs in expected.items() for mq in qs}
    differ = len({mq for mq, _ in held ^ want})
    if not differ:
        return Line("the clients hold exactly this right now")
    return Line(
        f"right now the clients hold {plural(differ, 'queue')} otherwise (a rebalance in "
        "progress, or a problem: see rmqlb explain); the steps start from what they compute",
        IDLE_STYLE,
    )


def _step_line(step: Step) -> Line:
    moves = step.moves
    if moves is None:
        return Line("no comparison: an allocation fails")
    parts = [
        f"{moves.count} of {plural(moves.total, 'queue')} change owner "
        f"({_share(moves.count, moves.percent)})"
    ]
    if step.new_queues:
        parts.append(f"{plural(step.new_queues, 'new queue')} get a first owner")
    if step.gone_queues:
        parts.append(f"{plural(step.gone_queues, 'queue')} removed")
    return Line("; ".join(parts))


def running_blocks(sim: RunningSimulation) -> list[Block]:
    """A running group's what-if as blocks: as it is, then every step and what it moves."""
    from rmqlb.model.snapshot import is_logical_broker  # noqa: PLC0415
    from rmqlb.model.strategy import describe  # noqa: PLC0415
    from rmqlb.whatif.steps import overall  # noqa: PLC0415

    start = sim.start
    subs = start.subscribers
    subscribing = sum(1 for c in dict.fromkeys(start.consumers) if c in subs)
    who = "" if subscribing == len(set(start.consumers)) else f" ({subscribing} subscribe)"
    static = all(map(is_logical_broker, start.brokers))
    where = (
        plural(len(start.queues), "logical queue")
        if static and start.brokers
        else f"{plural(len(start.queues), 'queue')} on {plural(len(start.brokers), 'broker')}"
    )
    blocks: list[Block] = [
        Heading(
            f"{start.group} / {start.topic} ({sim.source}): {where}, "
            f"{plural(len(start.consumers), 'consumer')}{who}, {describe(start.strategy)}"
        )
    ]
    for n, step in enumerate(sim.steps):
        if n:
            blocks.append(Heading(f"Step {n}: {step.change}"))
        if step.assignment is None or step.balance is None:
            blocks.append(Line(f"error: {one_line(step.error or '')}", ERROR_STYLE))
            continue
        joined = frozenset(step.consumers) - frozenset(start.consumers)  # they subscribe too
        held = _assignment(step.assignment, False, subs | joined)
        blocks += [held, Line(_balance_line(step.balance))]
        if n == 0:
            blocks.append(_actual_line(sim))
            continue
        moved = None if step.moves is None else _moves_table(step.moves, False)
        if moved is not None:
            blocks.append(moved)
        blocks.append(_step_line(step))
    total = overall(sim.steps)
    if len(sim.steps) > 2 and total is not None:
        blocks.append(
            Line(
                f"In all: {total.count} of {plural(total.total, 'queue')} that exist before and "
                f"after change owner ({_share(total.count, total.percent)})"
            )
        )
    if sim.compare is not None and sim.compare.compare is not None:
        blocks += _compare_blocks(sim.compare, sim.joiner)
    return blocks


def running_json(sim: RunningSimulation) -> str:
    """One running what-if as one JSON line (see ``docs/simulate.md``)."""
    from rmqlb.whatif.documents import plan_to_json, what_if_to_json  # noqa: PLC0415
    from rmqlb.whatif.steps import overall  # noqa: PLC0415

    start = sim.start
    doc = plan_to_json(
        f"{start.group}/{start.topic}",
        sim.steps,
        {
            "group": start.group,
            "topic": start.topic,
            "source": sim.source,
            "subscribers": sorted(start.subscribers),
        },
    )
    total = overall(sim.steps)
    doc["moved"] = (
        None
        if total is None
        else {"count": total.count, "total": total.total, "percent": total.percent}
    )
    doc["compare"] = (
        None if sim.compare is None else what_if_to_json(None, sim.compare).get("compare")
    )
    return escape_json_controls(json.dumps(doc, ensure_ascii=False)) + "\n"


def write_running(
    sims: Sequence[RunningSimulation],
    fmt: Output,
    console: Console | None = None,
    out: IO[str] | None = None,
) -> None:
    """Every running what-if in ``fmt``: Rich on ``console``, the others on ``out``."""
    stream = out or sys.stdout
    if fmt is Output.json:
        stream.writelines(running_json(s) for s in sims)
        return
    blocks: list[Block] = []
    for n, sim in enumerate(sims):
        if n:
            blocks.append(Line(""))
        blocks += running_blocks(sim)
    if fmt is Output.table:
        assert console is not None
        write_rich(blocks, console)
    else:
        stream.write(to_text(blocks, markdown=fmt is Output.markdown))


def simulation_json(sim: Simulation, contract: bool = True) -> str:
    """One case as one line of the ``simulate --input`` contract, terminal-safe; not
    ``contract`` (a flag-driven run): the ``rmqlb.simulate/1`` document."""
    from rmqlb.whatif.documents import simulate_document, what_if_to_json  # noqa: PLC0415

    if not contract:
        doc: dict[str, Any] = simulate_document(sim.id, sim.result, sim.error)
    elif sim.result is None:
        doc = {"id": sim.id, "error": sim.error}
    else:
        doc = what_if_to_json(sim.id, sim.result)
    return escape_json_controls(json.dumps(doc, ensure_ascii=False)) + "\n"


def write_simulations(
    sims: Sequence[Simulation],
    fmt: Output,
    console: Console | None = None,
    out: IO[str] | None = None,
    *,
    contract: bool = True,
) -> None:
    """Every case in ``fmt``: Rich on ``console``, the others on ``out`` (stdout by default).
    A single case that failed prints nothing here: its error goes to stderr alone.
    ``contract``: JSON as the ``--input`` answers; else ``rmqlb.simulate/1`` documents."""
    stream = out or sys.stdout
    if fmt is Output.json:
        stream.writelines(simulation_json(s, contract) for s in sims)
        return
    multi = len(sims) > 1
    if not multi and sims[0].result is None:
        return
    blocks: list[Block] = []
    for n, sim in enumerate(sims):
        if n:
            blocks.append(Line(""))
        blocks += simulation_blocks(sim, multi)
    if fmt is Output.table:
        assert console is not None
        write_rich(blocks, console)
    else:
        stream.write(to_text(blocks, markdown=fmt is Output.markdown))
