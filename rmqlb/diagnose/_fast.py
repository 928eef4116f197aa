"""Fast constructors for the frozen dataclasses built by the hundred thousand.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (to get
around its own frozen ``__setattr__``): about 0.45 µs per ``MessageQueue``. Writing the slots
through their descriptors on a bare instance gives the same, equal, still-frozen object in
about half the time. Only for values already validated; a test checks every builder against
the real constructor.

>>> from rmqlb.model import MessageQueue
>>> q = MessageQueue("T", "broker-a", 3)
>>> new_rows([q], ["c1"], [("c1",)], [QueueStatus.ok], None) == [
...     QueueRow(q, "c1", ("c1",), QueueStatus.ok, None)]
True
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat

from rmqlb.diagnose.report import ConsumerRow, QueueRow, QueueStatus
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import Consumer, QueueOffset, Rebalance
from rmqlb.snapshot._fast import setter

_new = object.__new__
_row_queue = setter(QueueRow, "queue")
_row_expected = setter(QueueRow, "expected")
_row_actual = setter(QueueRow, "actual")
_row_status = setter(QueueRow, "status")
_row_lag = setter(QueueRow, "lag")
_row_offset = setter(QueueRow, "offset")


_sink: deque[object] = deque(maxlen=0)
_consume: Callable[[Iterable[object]], None] = _sink.extend


def new_rows(  # noqa: PLR0917  (one column per field, in field order)
    queues: Sequence[MessageQueue],
    expected: Iterable[str | None],
    actual: Iterable[tuple[str, ...] | None],
    status: Iterable[QueueStatus],
    lag: Iterable[int | None] | None,
    offsets: Iterable[QueueOffset | None] | None = None,
) -> list[QueueRow]:
    """``[QueueRow(*fields) for fields in zip(queues, expected, actual, status, lag,
    offsets)]`` (``lag``/``offsets`` ``None``: ``None`` in every row), column by column: the
    loops run in C. The columns must be as long as ``queues``."""
    n = len(queues)
    rows: list[QueueRow] = list(map(_new, repeat(QueueRow, n)))
    _consume(map(_row_queue, rows, queues))
    _consume(map(_row_expected, rows, expected))
    _consume(map(_row_actual, rows, actual))
    _consume(map(_row_status, rows, status))
    _consume(map(_row_lag, rows, repeat(None, n) if lag is None else lag))
    _consume(map(_row_offset, rows, repeat(None, n) if offsets is None else offsets))
    return rows


_crow_id = setter(ConsumerRow, "client_id")
_crow_subscribes = setter(ConsumerRow, "subscribes")
_crow_strategy = setter(ConsumerRow, "strategy")
_crow_expected = setter(ConsumerRow, "expected")
_crow_actual = setter(ConsumerRow, "actual")
_crow_lag = setter(ConsumerRow, "lag")
_crow_consumer = setter(ConsumerRow, "consumer")
_crow_balanced_by = setter(ConsumerRow, "balanced_by")
_crow_balance_inferred = setter(ConsumerRow, "balance_inferred")


def new_consumer_row(  # noqa: PLR0917  (one parameter per field, in field order)
    client_id: str,
    subscribes: bool,
    strategy: str | None,
    expected: int,
    actual: int | None,
    lag: int | None,
    consumer: Consumer | None = None,
    balanced_by: Rebalance = Rebalance.CLIENT,
    balance_inferred: str | None = None,
) -> ConsumerRow:
    """``ConsumerRow(client_id, subscribes, strategy, expected, actual, lag, consumer,
    balanced_by, balance_inferred)``, faster."""
    row: ConsumerRow = _new(ConsumerRow)
    _crow_id(row, client_id)
    _crow_subscribes(row, subscribes)
    _crow_strategy(row, strategy)
    _crow_expected(row, expected)
    _crow_actual(row, actual)
    _crow_lag(row, lag)
    _crow_consumer(row, consumer)
    _crow_balanced_by(row, balanced_by)
    _crow_balance_inferred(row, balance_inferred)
    return row
