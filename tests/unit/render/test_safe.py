"""``rmqlb.render.safe``: which characters are escaped, and how results are walked."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field

from hypothesis import given
from hypothesis import strategies as st

from rmqlb.diagnose.report import (
    Code,
    Finding,
    GroupReport,
    QueueRow,
    QueueRows,
    QueueStatus,
    Report,
    Severity,
)
from rmqlb.model.queue import MessageQueue
from rmqlb.render.safe import escape_controls, escape_json_controls, safe

CONTROLS = [chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if chr(c) not in "\n\t"]


def has_controls(text: str) -> bool:
    """C0 (but newline and tab), DEL, C1, and Unicode's Cf, Zl and Zp characters."""
    return any(ch in CONTROLS or unicodedata.category(ch) in ("Cf", "Zl", "Zp") for ch in text)


def test_every_c0_c1_and_del_is_escaped_but_newline_and_tab() -> None:
    for ch in CONTROLS:
        assert escape_controls(f"a{ch}b") == f"a\\x{ord(ch):02x}b"
    assert escape_controls("line\n\tindented") == "line\n\tindented"
    assert escape_controls("héllo ✓ 𝄞 \xa0") == "héllo ✓ 𝄞 \xa0"  # printable non-ASCII stays


@given(st.text())
def test_escaped_text_holds_no_control_character(text: str) -> None:
    shown = escape_controls(text)
    assert not has_controls(shown)
    assert all(ch not in shown for ch in CONTROLS)
    if not has_controls(text):
        assert shown == text


@given(st.text())
def test_json_escapes_mean_the_same_string(text: str) -> None:
    document = json.dumps({"name": text}, ensure_ascii=False)
    shown = escape_json_controls(document)
    assert json.loads(shown) == {"name": text}
    assert not has_controls(shown)


@dataclass(frozen=True, slots=True)
class _Row:
    name: str
    count: int
    tags: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)


def test_safe_rebuilds_only_what_holds_controls() -> None:
    clean = _Row("ok", 1, ("a",))
    dirty = _Row("bad\x1b]0;t\x07", 2, ("x\x9b",), {"k\x1b": ["v\x07"]})
    rows = (clean, dirty)
    shown = safe(rows)
    assert shown[0] is clean
    assert shown[1] == _Row("bad\\x1b]0;t\\x07", 2, ("x\\x9b",), {"k\\x1b": ["v\\x07"]})
    assert rows[1].name == "bad\x1b]0;t\x07"  # the input is untouched


def test_clean_data_comes_back_as_the_same_object() -> None:
    report = Report(
        (GroupReport("G", "CLUSTERING", "AVG", ()),),
        (Finding(Code.NO_CONSUMERS, Severity.warning, "G", "m", "h", "T", ("c",)),),
    )
    assert safe(report) is report


def test_safe_walks_reports_enums_sets_and_queues() -> None:
    queue = MessageQueue("T\x1b", "broker\x85", 0)
    finding = Finding(Code.IDLE_CONSUMER, Severity.warning, "G\x07", "m", "h", None, ("c\x1b",))
    report = Report((GroupReport("G\x07", "CLUSTERING", "AVG", ()),), (finding,))
    shown = safe({"report": report, "queues": frozenset({queue})})
    (shown_queue,) = shown["queues"]
    assert shown_queue == MessageQueue("T\\x1b", "broker\\x85", 0)
    shown_finding = shown["report"].findings[0]
    assert shown_finding.code is Code.IDLE_CONSUMER and shown_finding.severity is Severity.warning
    assert (shown_finding.group, shown_finding.consumers) == ("G\\x07", ("c\\x1b",))


def test_queue_rows_held_as_columns_are_walked() -> None:
    """The engine's queue rows (columns, not a tuple) are escaped like a tuple of rows."""
    clean = QueueRow(MessageQueue("T", "broker-a", 0), "c1", ("c1",), QueueStatus.ok, 3)
    bad = MessageQueue("T", "b\x9b31m", 1)
    rows = QueueRows(
        [clean.queue, bad], ["c1", "c\x1b"], [("c1",), None], [QueueStatus.ok] * 2, [3, None]
    )
    escaped = safe(rows)
    assert escaped == (
        clean,
        QueueRow(MessageQueue("T", "b\\x9b31m", 1), "c\\x1b", None, QueueStatus.ok, None),
    )
    assert escaped[0] is rows[0]  # a clean row is kept as it is
    clean_rows = QueueRows([clean.queue], ["c1"], [("c1",)], [QueueStatus.ok], [3])
    assert safe(clean_rows) is clean_rows
