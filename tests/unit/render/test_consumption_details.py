"""Queue rows carry the committed offset and how long ago the last consumed message was
stored; client rows carry address, version and consume rates; --all-queues adds each held
queue's cached messages and last pull."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from rmqlb.diagnose import diagnose
from rmqlb.model import (
    Consumer,
    ConsumeStatus,
    Group,
    MessageQueue,
    ProcessQueueState,
    QueueData,
    QueueOffset,
    Snapshot,
    Subscription,
    TopicRoute,
)
from rmqlb.model.snapshot import NEVER_COMMITTED
from rmqlb.render import Output, render
from rmqlb.render.options import RenderOptions
from rmqlb.snapshot import load_snapshot

NOW = 1_795_000_000_000  # 2026-11-18T11:06:40Z, the capture time below
Q = [MessageQueue("T", "broker-a", i) for i in range(2)]


def _snapshot() -> Snapshot:
    consumer = Consumer(
        "10.0.0.5@1",
        (Subscription("T"),),
        client_addr="10.0.0.5:50001",
        version=401,
        assigned=tuple(Q),
        process_queues=(
            ProcessQueueState(Q[0], cached_msg_count=7, last_pull_timestamp=NOW - 3000),
        ),
        status={"T": ConsumeStatus(consume_ok_tps=12.5, consume_failed_tps=0.5)},
    )
    return Snapshot(
        topics={"T": TopicRoute("T", (QueueData("broker-a", 2, 2),))},
        groups={
            "G": Group(
                "G",
                consumers=(consumer,),
                offsets=(
                    QueueOffset(Q[0], 100, 90, NOW - 65_000, 0),
                    QueueOffset(Q[1], 30, NEVER_COMMITTED, 0, 10),
                ),
            )
        },
        captured_at="2026-11-18T11:06:40Z",
    )


def _plain(all_queues: bool) -> str:
    buffer = io.StringIO()
    report = diagnose(_snapshot())
    render(report, Output.plain, buffer, RenderOptions(all_queues=all_queues))
    return buffer.getvalue()


def _row(text: str, first: str) -> list[str]:
    """The cells of the row starting with ``first`` (cells are two or more spaces apart)."""
    (line,) = [line for line in text.splitlines() if line.startswith(first)]
    return re.split(r"\s{2,}", line.strip())


def test_captured_at_is_the_reference_time() -> None:
    from rmqlb.render._view import captured_ms

    assert captured_ms("2026-11-18T11:06:40Z") == NOW


def test_queue_rows_say_committed_or_never_and_the_last_consumed_age() -> None:
    text = _plain(all_queues=False)
    assert "committed" in text and "last consumed" in text
    assert _row(text, "broker-a:0")[-3:] == ["10", "90", "1 min ago"]
    assert _row(text, "broker-a:1")[-3:] == ["20", "never", "never"]  # lag from the min offset


def test_client_rows_say_where_it_runs_and_how_fast_it_consumes() -> None:
    text = _plain(all_queues=False)
    row = _row(text, "10.0.0.5@1")
    assert "10.0.0.5:50001" in row
    assert "V4_9_4" in row  # version 401 by name
    assert row[-2:] == ["12.5", "0.5"]  # consume OK and failed TPS


@pytest.mark.parametrize("all_queues", [False, True])
def test_all_queues_adds_the_holders_process_queue_state(all_queues: bool) -> None:
    text = _plain(all_queues)
    assert ("cached" in text) is all_queues
    assert ("last pull" in text) is all_queues
    if all_queues:
        assert _row(text, "broker-a:0")[-2:] == ["7", "3 s ago"]


@pytest.mark.parametrize("fmt", [Output.plain, Output.table])
def test_a_broadcasting_clients_own_lag_has_a_column_while_its_queues_have_none(
    fmt: Output,
) -> None:
    """No queue of a BROADCASTING group has a lag of the group's; each client has its own
    (a real 4.9.8 capture): the consumer table shows it, the queue table no lag column."""
    from pathlib import Path

    from rmqlb.snapshot import load_snapshot

    example = (
        Path(__file__).resolve().parents[3] / "examples" / "broadcasting-slow-and-failing.json"
    )
    buffer = io.StringIO()
    report = diagnose(load_snapshot(example))
    if fmt is Output.table:
        from rich.console import Console

        target: object = Console(file=buffer, width=160, color_system=None)
    else:
        target = buffer
    render(report, fmt, target, RenderOptions())  # type: ignore[arg-type]
    text = buffer.getvalue()
    queue_header = next(line for line in text.splitlines() if "expected" in line.lower())
    assert "lag" not in queue_header.lower()
    rows = {
        line.split()[0]: re.split(r"\s{2,}", line.strip())
        for line in text.splitlines()
        if line.startswith("127.0.0.1@node-")
    }
    assert rows["127.0.0.1@node-2"][5] == "2,360"
    assert rows["127.0.0.1@node-1"][5] == "0"


@pytest.mark.parametrize("output", [Output.plain, Output.markdown])
def test_a_group_nobody_consumes_points_to_its_offsets(tmp_path: Path, output: Output) -> None:
    """No client subscribes a topic, so there is no table to draw: the line that says so
    gives its lag and where it is listed queue by queue (nothing to point at without lag)."""
    offsets = [
        {"topic": "T", "brokerName": "broker-a", "queueId": i, "brokerOffset": 30,
         "consumerOffset": 5}
        for i in range(2)
    ]  # fmt: skip
    route = {"queueDatas": [{"brokerName": "broker-a", "readQueueNums": 2, "writeQueueNums": 2}]}
    groups = {"Idle": {"offsets": offsets}, "Empty": {}}
    doc = {"format": "rmqlb.snapshot/1", "topics": {"T": route}, "groups": groups}
    path = tmp_path / "idle.json"
    path.write_text(json.dumps(doc))
    buffer = io.StringIO()
    render(diagnose(load_snapshot(path)), output, buffer, RenderOptions())
    text = buffer.getvalue()
    assert "No topic to allocate for this group. Its lag, 50, queue by queue: rmqlb offsets" in text
    assert "No topic to allocate for this group.\n" in text  # Empty: nothing more to say
    table = io.StringIO()
    console = Console(file=table, width=200, color_system=None)
    render(diagnose(load_snapshot(path)), Output.table, console, RenderOptions())
    assert "Its lag, 50, queue by queue: rmqlb offsets Idle" in table.getvalue()
