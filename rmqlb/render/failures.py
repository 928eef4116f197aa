"""The requests that failed during a capture, listed once: one line per distinct failure.

A broker that is down fails every request sent to it, once per group; listing each request
buries the one fact that matters. Failures of one target with one message share a line that
counts the requests, and the peer's address is not repeated when the target names it.

>>> from rmqlb.model.snapshot import CaptureError
>>> down = "broker-b (10.0.0.2:10911)"
>>> errors = [CaptureError(down, r, "10.0.0.2:10911: connection refused")
...           for r in ("GET_CONSUME_STATS", "GET_CONSUMER_CONNECTION_LIST", "GET_CONSUME_STATS")]
>>> for line in failure_lines(errors): print(line)
broker-b (10.0.0.2:10911): connection refused (GET_CONSUME_STATS x2, GET_CONSUMER_CONNECTION_LIST)
>>> failure_summary(errors)
'3 requests failed while capturing'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rmqlb.humanize import plural
from rmqlb.model.snapshot import CaptureError

__all__ = ["failure_lines", "failure_summary"]


def _message(target: str, message: str) -> str:
    """``message`` without a leading ``peer: `` when ``target`` already names that peer."""
    peer, sep, rest = message.partition(": ")
    return rest if sep and peer and peer in target else message


def failure_lines(errors: Sequence[CaptureError]) -> list[str]:
    """One line per (target, message), in first-seen order, with the requests counted."""
    seen: dict[tuple[str, str], Counter[str]] = {}
    for e in errors:
        seen.setdefault((e.target, _message(e.target, e.message)), Counter())[e.request] += 1
    lines = []
    for (target, message), requests in seen.items():
        names = ", ".join(f"{r} x{n}" if n > 1 else r for r, n in requests.items())
        lines.append(f"{target}: {message} ({names})")
    return lines


def failure_summary(errors: Sequence[CaptureError]) -> str:
    """``3 requests failed while capturing``."""
    return f"{plural(len(errors), 'request')} failed while capturing"
