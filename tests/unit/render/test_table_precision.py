"""Within one column a table prints rates with one decimal (``43.0`` beside ``176.1``) and
counts with thousands separators, in every output format."""

from __future__ import annotations

import io
import re

import pytest

from rmqlb.diagnose import diagnose
from rmqlb.model import (
    Consumer,
    ConsumeStatus,
    Group,
    MessageQueue,
    QueueData,
    QueueOffset,
    Snapshot,
    Subscription,
    TopicRoute,
)
from rmqlb.render import Output, render
from rmqlb.render.options import RenderOptions

Q = [MessageQueue("T", "broker-a", i) for i in range(2)]


def _snapshot() -> Snapshot:
    def consumer(n: int, tps: float, failed: float) -> Consumer:
        return Consumer(
            f"10.0.0.{n}@1",
            (Subscription("T"),),
            client_addr=f"10.0.0.{n}:50001",
            assigned=(Q[n - 1],),
            status={"T": ConsumeStatus(consume_ok_tps=tps, consume_failed_tps=failed)},
        )

    return Snapshot(
        topics={"T": TopicRoute("T", (QueueData("broker-a", 2, 2),))},
        groups={
            "G": Group(
                "G",
                consumers=(consumer(1, 176.06, 0.0), consumer(2, 43.0, 1.25)),
                offsets=(
                    QueueOffset(Q[0], 1_250_000, 1_245_790, 0, 0),
                    QueueOffset(Q[1], 800, 790, 0, 0),
                ),
            )
        },
        captured_at="2026-11-18T11:06:40Z",
    )


def _text(output: Output) -> str:
    buffer = io.StringIO()
    render(diagnose(_snapshot()), output, buffer, RenderOptions())
    return buffer.getvalue()


def _cells(text: str, first: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.strip("| `").startswith(first))
    return [c.strip("`") for c in re.split(r"\s{2,}|\s*\|\s*", line.strip()) if c]


@pytest.mark.parametrize("output", [Output.plain, Output.markdown])
def test_rates_have_one_decimal_and_counts_separators(output: Output) -> None:
    text = _text(output)
    assert _cells(text, "10.0.0.1@1")[-2:] == ["176.1", "0.0"]
    assert _cells(text, "10.0.0.2@1")[-2:] == ["43.0", "1.2"]
    assert "4,210" in _cells(text, "broker-a:0")  # the lag
    assert "1,245,790" in _cells(text, "broker-a:0")  # the committed offset
    assert "10" in _cells(text, "broker-a:1")
