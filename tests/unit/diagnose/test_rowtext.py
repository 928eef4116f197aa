"""The report's text is the text of its document: the queue rows written directly equal the
rows built as objects and written by pydantic-core, byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from rmqlb.diagnose import diagnose
from rmqlb.diagnose._rowtext import _checked_row, queue_rows_text
from rmqlb.diagnose.report import (
    QueueRow,
    QueueRows,
    QueueStatus,
    Report,
    _document_json,
    _group_json,
    _topic_json,
    report_to_text,
)
from rmqlb.jsontext import iso_ms
from rmqlb.model import MessageQueue, QueueOffset
from rmqlb.snapshot import load_snapshot

EXAMPLES = sorted((Path(__file__).parents[3] / "examples").glob("*.json"))


def _row_object(r: QueueRow) -> dict[str, Any]:
    """A queue row as an object, written out here independently of the writer."""
    o = r.offset
    offsets = None
    if o is not None:
        offsets = {
            "max": o.broker_offset,
            "committed": o.consumer_offset if o.consumer_offset >= 0 else None,
            "min": o.min_offset,
            "lagFrom": "committed" if o.consumer_offset >= 0 else "min",
            "lastConsumed": iso_ms(o.last_timestamp or None),
        }
    return {
        "brokerName": r.queue.broker_name,
        "queueId": r.queue.queue_id,
        "expected": r.expected,
        "actual": None if r.actual is None else list(r.actual),
        "status": r.status.value,
        "lag": r.lag,
        "offsets": offsets,
    }


def _reference_text(report: Report, fail_on: str) -> str:
    """The whole document built as objects and written by pydantic-core."""
    document = _document_json(
        report,
        fail_on,
        [
            _group_json(
                g, [_topic_json(g, t, [_row_object(r) for r in t.queues]) for t in g.topics]
            )
            for g in report.groups
        ],
    )
    return to_json(document).decode()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_report_text_is_the_documents_text_on_every_example(path: Path) -> None:
    report = diagnose(load_snapshot(path))
    for fail_on in ("error", "warning"):
        assert report_to_text(report, fail_on) == _reference_text(report, fail_on)


_NAMES = st.text(max_size=4) | st.sampled_from(["broker-a", "c1@1", "é\u2028", 'q"\\\x01\x7f'])
_LONGS = st.integers(-(2**63), 2**63 - 1)


@st.composite
def _rows(draw: st.DrawFn) -> QueueRow:
    mq = MessageQueue("T", draw(_NAMES), draw(st.integers(0, 2**31)))
    offset = draw(
        st.none()
        | st.builds(
            QueueOffset,
            st.just(mq),
            _LONGS,
            st.sampled_from([-1, 0]) | st.integers(-1, 2**63 - 1),  # -1: never committed
            st.integers(0, 253_402_300_799_999) | st.just(0),
            st.none() | st.integers(0, 2**63 - 1),
        )
    )
    return QueueRow(
        mq,
        draw(st.none() | _NAMES),
        draw(st.none() | st.tuples() | st.lists(_NAMES, max_size=3).map(tuple)),
        draw(st.sampled_from(list(QueueStatus))),
        draw(st.none() | _LONGS),
        offset,
    )


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_rows(), max_size=6))
def test_rows_text_equals_pydantic_core(rows: list[QueueRow]) -> None:
    assert queue_rows_text(tuple(rows)) == to_json([_row_object(r) for r in rows]).decode()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_rows(), max_size=6))
def test_the_inlined_row_is_the_checked_rows_template(rows: list[QueueRow]) -> None:
    """The loop's f-string and the checked path (``_row``, ``_offsets``) write one text."""
    checked = "[" + ",".join(map(_checked_row, rows)) + "]"
    assert queue_rows_text(tuple(rows)) == checked


def test_a_value_of_another_type_is_written_as_its_json() -> None:
    """Types the model does not give (a bool, a float) take the checked path: same text."""
    mq = MessageQueue("T", "b", True)  # type: ignore[arg-type]
    odd = QueueRow(mq, "c1", ["c1"], QueueStatus.ok, 2.5)  # type: ignore[arg-type]
    offset = QueueOffset(MessageQueue("T", "b", 1), 10, 4, 0, True)  # type: ignore[arg-type]
    plain = QueueRow(MessageQueue("T", "b", 1), None, None, QueueStatus.unknown, None, offset)
    rows = (odd, plain)
    assert queue_rows_text(rows) == to_json([_row_object(r) for r in rows]).decode()


def _columns(rows: list[QueueRow]) -> QueueRows:
    """``rows`` held as columns, as the engine hands them over."""
    return QueueRows(
        [r.queue for r in rows],
        [r.expected for r in rows],
        [r.actual for r in rows],
        [r.status for r in rows],
        [r.lag for r in rows],
        [r.offset for r in rows],
    )


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_rows(), max_size=6))
def test_rows_held_as_columns_are_the_rows(rows: list[QueueRow]) -> None:
    """Written from the columns or from the rows built of them, one text; equal to the
    tuple of the rows either way round, with its hash, length and items."""
    held = _columns(rows)
    text = queue_rows_text(held)  # from the columns: no row built yet
    assert held == tuple(rows) and tuple(rows) == held and held == _columns(rows)
    assert hash(held) == hash(tuple(rows)) and len(held) == len(rows)
    assert list(held) == rows and held[:] == tuple(rows)
    assert text == queue_rows_text(held) == queue_rows_text(tuple(rows))  # now from the rows
    assert [r.lag for r in rows] == list(held.lags())


def test_rows_without_lag_or_offsets_hold_none() -> None:
    mq = MessageQueue("T", "b", 0)
    held = QueueRows([mq], ["c1"], [("c1",)], [QueueStatus.ok])
    assert held == (QueueRow(mq, "c1", ("c1",), QueueStatus.ok),)
    assert list(held.lags()) == [None] and held[0].offset is None
    with pytest.raises(ValueError, match="different lengths"):
        QueueRows([mq], [], [], [])
