"""Write a :class:`~rmqlb.model.Snapshot` as ``rmqlb.snapshot/1`` JSON, as the spec says.

The writer walks the records of :mod:`rmqlb.snapshot.spec`: each field's value is read from
its model attribute and written under its key, in the spec's order. Values that are unknown
(``None``) are left out, and so are the ``sparse`` fields when empty or zero. Two values
have a JSON form of their own: a strategy (written by :func:`strategy_to_json`, which also
reads it back) and broker ids (numbers in the model, keys of ``addrs`` in JSON, written in
order).

The output is canonical: shorthand topics are written out in full (``queueDatas``, the first
form the spec allows), and :func:`~rmqlb.snapshot.parse_snapshot` of the result gives back
an equal snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from operator import attrgetter
from typing import Any

from rmqlb.model.snapshot import ConsumeStatus, ProcessQueueState, Snapshot
from rmqlb.model.strategy import strategy_to_json
from rmqlb.snapshot import spec

Encoder = Callable[[Any], Any]
#: One field as the writer uses it: key, how to read the value from the model object, how to
#: write it (``None``: as it is), whether it is left out when empty or zero.
_Step = tuple[str, Encoder, Encoder | None, bool]

#: Records with a JSON form of their own, by name.
_OWN_FORM: dict[str, Encoder] = {spec.Strategy.__name__: strategy_to_json}
_WRITERS: dict[type[spec.Record], Callable[[Any], dict[str, Any]]] = {}


def _writer(rec: type[spec.Record]) -> Callable[[Any], dict[str, Any]]:
    """The function writing ``rec`` (made once per record; a record may contain itself)."""
    known = _WRITERS.get(rec)
    if known is not None:
        return known
    steps: list[_Step] = []

    def write(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, get, encode, sparse in steps:
            value = get(obj)
            if value is None or (sparse and not value):
                continue
            out[key] = value if encode is None else encode(value)
        return out

    _WRITERS[rec] = write
    for f in rec.fields:
        get = _constant(f.type.value) if isinstance(f.type, spec.Const) else attrgetter(f.attr)
        steps.append((f.key, get, _encoder(f.type), f.sparse))
    return write


def _constant(value: Any) -> Encoder:
    return lambda _obj: value


def _encoder(t: spec.Type) -> Encoder | None:
    """How a model value of JSON type ``t`` is written (``None``: as it is)."""
    match t:
        case spec.Ref(record=name) if name in _OWN_FORM:
            return _OWN_FORM[name]
        case spec.Ref():
            return _writer(spec.record(t))
        case spec.ArrayOf(item=item):
            item_encoder = _encoder(item)
            if item_encoder is None:
                return list
            return lambda values: list(map(item_encoder, values))
        case spec.MapOf(key_pattern=pattern) if pattern is not None:
            return lambda mapping: {str(k): v for k, v in sorted(mapping.items())}
        case spec.MapOf(value=value):
            each = _encoder(value)
            return dict if each is None else lambda m: {k: each(v) for k, v in m.items()}
        case spec.AnyOf(options=options):
            return _encoder(options[0])
        case spec.Choice():
            return _plain
    return None


def _plain(value: Any) -> Any:
    """An enum member as its JSON value."""
    return value.value if isinstance(value, Enum) else value


def write_record(rec: type[spec.Record], obj: Any) -> dict[str, Any]:
    """The JSON object of record ``rec`` for model object ``obj``."""
    return _writer(rec)(obj)


def process_queue_json(pq: ProcessQueueState) -> dict[str, Any]:
    """One held queue's state, as the snapshot (and the report) write it."""
    return write_record(spec.ProcessQueue, pq)


def consume_status_json(st: ConsumeStatus) -> dict[str, Any]:
    """A client's consume statistics of one topic, as the snapshot (and the report) write them."""
    return write_record(spec.ConsumeStatus, st)


def snapshot_to_json(snapshot: Snapshot) -> dict[str, Any]:
    """The JSON document of ``snapshot`` (a plain dict, ready for ``json.dumps``)."""
    return write_record(spec.Snapshot, snapshot)
