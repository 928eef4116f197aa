"""The JSON text of a report's queue rows: where their keys are defined, and written fast.

A big topic has 100,000 queue rows. Building a dict per row (and one per offsets object)
for a serializer took longer than decoding the snapshot. Here each row is one f-string: a
name, client id or held list is escaped once per distinct value, a ``lastConsumed`` time
formatted once per distinct timestamp, integers written as Python writes them. The text is
what :func:`rmqlb.jsontext.dumps` writes for the same rows as objects (tests compare the two
on every example); a row holding a value of another type than the model's is written by
``dumps``, value by value, into the same template (:func:`_row`, which the loop inlines: a
test compares the two on every row).

>>> from rmqlb.model import MessageQueue
>>> from rmqlb.diagnose.report import QueueRow, QueueStatus
>>> row = QueueRow(MessageQueue("T", "b", 0), "c1", ("c1",), QueueStatus.ok, 7)
>>> queue_rows_text((row,))[:66]
'[{"brokerName":"b","queueId":0,"expected":"c1","actual":["c1"],"st'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from json.encoder import encode_basestring
from typing import Any

from rmqlb.diagnose.report import QueueRow, QueueStatus, row_fields
from rmqlb.jsontext import dumps, iso_ms

_quote: Callable[[str], str] = encode_basestring  # json.dumps(s, ensure_ascii=False), in C
_NULL = "null"


def _row(  # noqa: PLR0917  (one parameter per key, in document order)
    broker: str, queue_id: str, expected: str, actual: str, status: str, lag: str, offsets: str
) -> str:
    """One queue row from the JSON texts of its values: the keys, in document order."""
    return (
        f'{{"brokerName":{broker},"queueId":{queue_id},"expected":{expected},'
        f'"actual":{actual},"status":{status},"lag":{lag},"offsets":{offsets}}}'
    )


def _offsets(high: str, committed: str, low: str, lag_from: str, last_consumed: str) -> str:
    """A row's ``offsets`` from the JSON texts of its values. ``lagFrom`` is "committed",
    or "min" when the group never committed an offset for the queue (``committed`` null)."""
    return (
        f'{{"max":{high},"committed":{committed},"min":{low},"lagFrom":{lag_from},'
        f'"lastConsumed":{last_consumed}}}'
    )


_FROM_COMMITTED, _FROM_MIN = _quote("committed"), _quote("min")
_STATUS_TEXTS = {id(s): _quote(s.value) for s in QueueStatus}


def _value_text(value: Any) -> str:
    """The compact JSON text of one value, as ``dumps`` writes it in a document."""
    return dumps([value])[1:-1]


def _text(value: Any) -> str:
    """The JSON text of a string, a null or a tuple of strings (names and held lists)."""
    if value is None:
        return _NULL
    if type(value) is str:
        return _quote(value)
    if type(value) is tuple and all(type(v) is str for v in value):
        return "[" + ",".join(map(_quote, value)) + "]"
    return _value_text(value)


def _checked_row(r: QueueRow) -> str:
    """A row whose values are not all of the model's types, each written by ``dumps``."""
    o = r.offset
    offsets = _NULL
    if o is not None:
        committed = o.committed
        offsets = _offsets(
            _value_text(o.broker_offset),
            _value_text(o.consumer_offset if committed else None),
            _value_text(o.min_offset),
            _FROM_COMMITTED if committed else _FROM_MIN,
            _value_text(iso_ms(o.last_timestamp or None)),
        )
    status = r.status.value if isinstance(r.status, QueueStatus) else r.status
    return _row(
        _value_text(r.queue.broker_name),
        _value_text(r.queue.queue_id),
        _value_text(r.expected),
        _value_text(None if r.actual is None else list(r.actual)),
        _value_text(status),
        _value_text(r.lag),
        offsets,
    )


def _time_text(epoch_ms: int) -> str:
    return _text(iso_ms(epoch_ms or None))


def queue_rows_text(rows: Sequence[QueueRow]) -> str:
    """The JSON array of ``rows`` in the report document (``queues`` of a topic)."""
    out: list[str] = []
    write_queue_rows(rows, out)
    return "".join(out)


def write_queue_rows(rows: Sequence[QueueRow], out: list[str]) -> None:
    """Append the pieces of the JSON array of ``rows`` to ``out``, for the caller to join
    once with the rest of the document (the array of a big topic is tens of megabytes: no
    copy of it is made on the way).

    A row of the model's types is one f-string: :func:`_row` with :func:`_offsets` (or null)
    inlined, integers formatted in it, the other values' texts made once per distinct value;
    any other row is written by :func:`_checked_row`. Tests compare the two.
    """
    texts: dict[Any, str] = {}  # names and held lists (hashable, of one type per field)
    times: dict[int, str] = {}
    statuses = _STATUS_TEXTS
    committed_text, min_text = _FROM_COMMITTED, _FROM_MIN
    out.append("[")
    start = len(out)
    append = out.append  # each row followed by ","
    for mq, expected, actual, state, lag, o in row_fields(rows):
        queue_id, broker = mq.queue_id, mq.broker_name
        status = statuses.get(id(state))
        if (
            type(queue_id) is not int
            or (lag is not None and type(lag) is not int)
            or type(broker) is not str
            or (expected is not None and type(expected) is not str)
            or (actual is not None and type(actual) is not tuple)
            or status is None
        ):
            append(_checked_row(QueueRow(mq, expected, actual, state, lag, o)) + ",")
            continue
        b = texts.get(broker)
        if b is None:
            b = texts[broker] = _text(broker)
        e = texts.get(expected)
        if e is None:
            e = texts[expected] = _text(expected)
        a = texts.get(actual)
        if a is None:
            a = texts[actual] = _text(actual)
        g = _NULL if lag is None else lag
        if o is None:
            append(
                f'{{"brokerName":{b},"queueId":{queue_id},"expected":{e},"actual":{a},'
                f'"status":{status},"lag":{g},"offsets":null}},'
            )
            continue
        high, low, consumer, last = (
            o.broker_offset,
            o.min_offset,
            o.consumer_offset,
            o.last_timestamp,
        )
        if (
            type(high) is not int
            or type(consumer) is not int
            or type(last) is not int
            or (low is not None and type(low) is not int)
        ):
            append(_checked_row(QueueRow(mq, expected, actual, state, lag, o)) + ",")
            continue
        time = times.get(last)
        if time is None:
            time = times[last] = _time_text(last)
        n = _NULL if low is None else low
        c: int | str
        if consumer >= 0:
            c, f = consumer, committed_text
        else:  # never committed: lag from the min offset
            c, f = _NULL, min_text
        append(
            f'{{"brokerName":{b},"queueId":{queue_id},"expected":{e},"actual":{a},'
            f'"status":{status},"lag":{g},"offsets":{{"max":{high},"committed":{c},'
            f'"min":{n},"lagFrom":{f},"lastConsumed":{time}}}}},'
        )
    if len(out) > start:
        out[-1] = out[-1][:-1]
    out.append("]")


def object_parts(fields: dict[str, Any], key: str) -> tuple[str, str]:
    """The compact JSON text of object ``fields`` before and after the value of ``key``
    (the entries around it written by ``dumps``), for a value written as text between."""
    keys = list(fields)
    at = keys.index(key)
    before = {k: fields[k] for k in keys[:at]}
    after = {k: fields[k] for k in keys[at + 1 :]}
    head = "{" + (dumps(before)[1:-1] + "," if before else "") + _quote(key) + ":"
    return head, ("," + dumps(after)[1:-1] if after else "") + "}"
