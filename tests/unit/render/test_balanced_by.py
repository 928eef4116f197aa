"""The explain consumer table says who balances each client (itself, a broker or a Proxy)
and whether the client reported it; the column shows when a broker or a Proxy balances one
of the group's clients, or with -o wide, and gives way on a narrow screen."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from rmqlb.diagnose import diagnose
from rmqlb.render import Output, render
from rmqlb.render.options import RenderOptions
from rmqlb.snapshot import load_snapshot

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _text(name: str, output: Output = Output.plain, *, wide: bool = False) -> str:
    buffer = io.StringIO()
    report = diagnose(load_snapshot(EXAMPLES / name))
    render(report, output, buffer, RenderOptions(wide=wide))
    return buffer.getvalue()


def _table(name: str, width: int) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None)
    render(diagnose(load_snapshot(EXAMPLES / name)), Output.table, console, RenderOptions())
    return buffer.getvalue()


def _row(text: str, client_id: str) -> str:
    """The client's first consumer-table row (it starts with the id and says it subscribes)."""
    return next(
        line
        for line in text.splitlines()
        if line.lstrip("| `").startswith(client_id) and " yes " in line
    )


@pytest.mark.parametrize("output", [Output.plain, Output.markdown])
def test_mixed_group_says_who_balances_each_client(output: Output) -> None:
    text = _text("mixed-rebalance.json", output)
    assert "balanced by" in text
    assert "client (inferred)" in _row(text, "10.0.0.5@5101")  # a 4.9.8 client cannot ask
    assert "broker " in _row(text, "10.0.0.6@5102")  # reported: clientRebalance=false
    assert "(inferred)" not in _row(text, "10.0.0.6@5102")


def test_a_group_every_client_balances_itself_shows_it_only_wide() -> None:
    assert "balanced by" not in _text("16-queues-2-consumers.json")
    wide = _text("16-queues-2-consumers.json", wide=True)
    assert "balanced by" in wide


def test_the_color_table_shows_the_column_and_it_gives_way_when_narrow() -> None:
    assert "Balanced by" in _table("broker-assigned-pull.json", 200)
    narrow = _table("broker-assigned-pull.json", 80)
    assert "Balanced by" not in narrow
    assert all(len(line) <= 80 for line in narrow.splitlines())


def test_a_grpc_client_is_not_called_idle_nor_expected_to_hold_nothing(tmp_path: Path) -> None:
    """A gRPC client pops what its Proxy gives it: no allocation predicts a count for it, so
    its row shows ``-`` expected and no ``idle`` note (in plain text and the colour table)."""
    doc = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": 4}},
        "groups": {
            "G": {
                "consumers": [
                    {"clientId": "10.0.0.7@1", "subscriptions": ["T"], "rebalance": "proxy"}
                ]
            }
        },
    }
    path = tmp_path / "grpc.json"
    path.write_text(json.dumps(doc))
    report = diagnose(load_snapshot(path))
    for output in (Output.plain, Output.table):
        buffer = io.StringIO()
        target = (
            Console(file=buffer, width=200, color_system=None) if output is Output.table else buffer
        )
        render(report, output, target, RenderOptions())
        row = _row(buffer.getvalue(), "10.0.0.7@1")
        assert "idle" not in row
        assert row.split()[3] == "-"  # client id, subscribes, strategy, expected
