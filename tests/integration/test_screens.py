"""Every report command through a terminal emulator at 80×24, 100×30 and 200×50.

Each command runs in a pseudo-terminal of that size (so Rich sees a terminal: colours,
tables, the ``--watch`` redraw) and its bytes are fed to ``pyte``. What an on-call reader
needs must hold at every size: no line wider than the screen or ending in spaces, client ids
and numbers whole, the findings shown, and under ``--watch`` the watch line, the findings and
the summary on the last screen.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest

pyte = pytest.importorskip("pyte")

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
SIXTEEN = ROOT / "examples" / "16-queues-3-consumers-rebalancing.json"
MIXED = ROOT / "examples" / "mixed-rebalance.json"
SIZES = [(80, 24), (100, 30), (200, 50)]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TOPIC = "OrderTopic"
IDS = [f"10.0.{n}.{n + 10}@{4000 + n}#95522008782{n:04d}" for n in range(3)]


def _sixty_four(path: Path) -> Path:
    """A 64-queue topic mid-rebalance: the third consumer joined, the second still holds its
    old half (32..63), so rows are moved, duplicated and unconsumed."""
    held = {IDS[0]: range(0, 22), IDS[1]: range(32, 64), IDS[2]: range(43, 64)}
    doc: dict[str, Any] = {
        "format": "rmqlb.snapshot/1",
        "capturedAt": "2026-11-22T12:00:00Z",
        "topics": {
            TOPIC: {
                "queueDatas": [
                    {"brokerName": "broker-a", "readQueueNums": 64, "writeQueueNums": 64, "perm": 6}
                ]
            }
        },
        "groups": {
            "order-consumer": {
                "messageModel": "CLUSTERING",
                "strategy": {"name": "AVG"},
                "consumers": [
                    {
                        "clientId": cid,
                        "subscriptions": [{"topic": TOPIC}],
                        "assigned": [
                            {"topic": TOPIC, "brokerName": "broker-a", "queueId": q} for q in qs
                        ],
                    }
                    for cid, qs in held.items()
                ],
                "offsets": [
                    {
                        "topic": TOPIC,
                        "brokerName": "broker-a",
                        "queueId": q,
                        "brokerOffset": 10_000 + q,
                        "consumerOffset": 9_000,
                    }
                    for q in range(64)
                ],
            }
        },
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _run(args: list[str], cols: int, rows: int) -> str:
    """The bytes ``rmqlb ARGS`` writes to a ``cols``×``rows`` terminal, as text."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "NAMESRV_ADDR"}}
    env.update(COLUMNS=str(cols), LINES=str(rows), TERM="xterm-256color")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rmqlb", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def _lines(raw: str) -> list[str]:
    return ANSI.sub("", raw).replace("\r", "").split("\n")


def _screen(raw: str, cols: int, rows: int) -> list[str]:
    screen = pyte.Screen(cols, rows)
    pyte.Stream(screen).feed(raw)
    return [line.rstrip() for line in screen.display]


def _ids(path: Path) -> set[str]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {c["clientId"] for g in doc["groups"].values() for c in g["consumers"]}


def _common_checks(lines: list[str], cols: int) -> None:
    for line in lines:
        assert len(line) <= cols, line
        assert line == line.rstrip(), f"trailing spaces: {line!r}"


@pytest.mark.slow
@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_status_fits(cols: int, rows: int) -> None:
    lines = _lines(_run(["status", "-d", str(DEMO)], cols, rows))
    _common_checks(lines, cols)
    doc = json.loads(DEMO.read_text(encoding="utf-8"))
    for group in doc["groups"]:
        row = next(line for line in lines if line.startswith(group + " "))
        assert "…" not in row  # names and numbers whole
    for number in ("3,546", "3,537", "4,210"):  # lag and stranded of the worst groups
        assert any(number in line for line in lines), number
    assert any("SUBSCRIPTION_INCONSISTENT" in line for line in lines)
    assert any(line.startswith("Summary:") for line in lines)
    # the footer never breaks inside a part
    assert not any(line.strip() in {"ms", "s"} for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize(("cols", "rows"), SIZES)
@pytest.mark.parametrize("which", ["demo", "16", "64", "mixed"])
def test_explain_fits(which: str, cols: int, rows: int, tmp_path: Path) -> None:
    path = {"demo": DEMO, "16": SIXTEEN, "mixed": MIXED}.get(which) or _sixty_four(
        tmp_path / "64.json"
    )
    lines = _lines(_run(["explain", "-d", str(path)], cols, rows))
    _common_checks(lines, cols)
    text = "\n".join(lines)
    for cid in _ids(path):
        assert cid in text, cid  # whole, on one line
    assert not [line for line in lines if "…" in line and not line.startswith("…")]
    assert "Findings for" in text and "Summary:" in text
    if cols >= 80:  # the queue table stays a table
        assert any(re.match(r"Queue +Expected +Actual +Status", line) for line in lines)
    if which == "mixed" and cols >= 200:  # who balances each client, when there is room
        assert any(re.search(r"Balanced by", line) for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize(("cols", "rows"), SIZES)
@pytest.mark.parametrize("which", ["demo", "16", "64"])
def test_explain_watch_keeps_the_findings_on_screen(
    which: str, cols: int, rows: int, tmp_path: Path
) -> None:
    path = {"demo": DEMO, "16": SIXTEEN}.get(which) or _sixty_four(tmp_path / "64.json")
    group = ["OrderGroup"] if which == "demo" else []
    raw = _run(["explain", "-d", str(path), *group, "--watch", "0.1", "--count", "2"], cols, rows)
    screen = _screen(raw, cols, rows)
    shown = "\n".join(screen)
    assert any(line.startswith("watching every") for line in screen), shown
    assert "Findings for" in shown and "Summary:" in shown and "Exit code" in shown, shown
    assert " ERROR " in shown, shown


@pytest.mark.slow
@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_status_watch_keeps_the_summary_on_screen(cols: int, rows: int) -> None:
    raw = _run(["status", "-d", str(DEMO), "--watch", "0.1", "--count", "2"], cols, rows)
    screen = _screen(raw, cols, rows)
    shown = "\n".join(screen)
    assert any(line.startswith("watching every") for line in screen), shown
    assert "OrderGroup" in shown and "SUBSCRIPTION_INCONSISTENT" in shown, shown
    assert "Summary:" in shown and "Exit code" in shown, shown


@pytest.mark.slow
@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_simulate_fits(cols: int, rows: int) -> None:
    lines = _lines(_run(["simulate", "--queues", "16", "--consumers", "3"], cols, rows))
    _common_checks(lines, cols)


@pytest.mark.slow
@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_offsets_fits(cols: int, rows: int) -> None:
    lines = _lines(_run(["offsets", "OrderGroup", "-d", str(DEMO)], cols, rows))
    _common_checks(lines, cols)
    text = "\n".join(lines)
    for cid in _ids(DEMO):
        if cid.startswith("10.0.1."):  # OrderGroup's clients
            assert cid in text, cid
    for number in ("1,500", "1,037", "1,534"):
        assert number in text, number
    assert "Totals: 7 queues, lag 3,546, 3 consumers online" in text


@pytest.mark.slow
@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_client_fits(cols: int, rows: int) -> None:
    stuck = ROOT / "examples" / "slow-and-stuck-consumers.json"
    cid = "10.0.5.11@7101#5120003391200"
    lines = _lines(_run(["client", cid, "-d", str(stuck)], cols, rows))
    _common_checks(lines, cols)
    assert any(cid in line for line in lines)
    assert any("PaymentEventTopic broker-a:0" in line and "9,080" in line for line in lines)
