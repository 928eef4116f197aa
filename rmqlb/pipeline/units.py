"""The per-snapshot and per-group work of the audit, as plain Python shared by both engines.

Two steps, each a pure function of its input row so Spark can run it in executors
(``mapInArrow``) and the local engine in a loop, with the very same code:

1. :func:`split_record` turns one input record (a whole snapshot file, or one JSON Lines
   line) into work units: one per group, keyed by ``(cluster, capturedAt, group)``, each
   carrying a *sub-snapshot* — the group plus the routes of the topics it touches (its
   subscriptions, the assigned queues, its offsets and its retry topic ``%RETRY%<group>``).
2. :func:`diagnose_unit` parses a unit with :func:`rmqlb.snapshot.parse_snapshot` and runs
   :func:`rmqlb.diagnose.diagnose` on it — the engine behind ``rmqlb explain`` — so the audit
   and ``explain`` can never disagree. It returns one ``group`` row (totals and the
   assignment fingerprint) plus one ``finding`` row per finding.

:func:`audit_record` does both for one record with one parse and one diagnosis of the whole
snapshot (the same rows, cheaper); both engines call it. The per-group functions remain its
fallback for records with a bad part, and the Spark path for a few very large records.

Every row is a tuple in :data:`ROW_FIELDS` order (``kind`` first). Worked example: a snapshot
of cluster ``ns1:9876`` captured at ``2026-11-22T12:00:00Z`` with groups ``G1`` and ``G2``
gives one ``snapshot`` marker row and two ``unit`` rows; diagnosing ``G1``'s unit with one
``IDLE_CONSUMER`` on ``T`` gives a ``group`` row and a ``finding`` row
``("finding", "ns1:9876", 1795348800000, "2026-11-22T12:00:00Z", "G1", "T",
"IDLE_CONSUMER", "warning", 0, 0, None, path, None)``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from pydantic_core import PydanticSerializationError, to_json

from rmqlb.fileio import parse_json
from rmqlb.model.snapshot import RETRY_PREFIX, Snapshot
from rmqlb.snapshot import spec

# -- the snapshot keys the audit slices raw documents by (named by the format's spec) ------

_S = spec.Snapshot
_FORMAT, _CAPTURED_AT, _SOURCE, _BROKERS, _TOPICS, _GROUPS = (
    f.key for f in (_S.format, _S.captured_at, _S.source, _S.brokers, _S.topics, _S.groups)
)
_NAMESRV = spec.Source.namesrv.key
_CONSUMERS, _OFFSETS = spec.Group.consumers.key, spec.Group.offsets.key
#: A consumer's lists naming topics: subscriptions (objects, or plain topic names) and queues.
_TOPIC_LISTS = tuple(
    f.key for f in (spec.Consumer.subscriptions, spec.Consumer.assigned, spec.Consumer.pop_assigned)
)
# subscriptions, queues and offsets name their topic under one key
(_TOPIC,) = {spec.Subscription.topic.key, spec.QueueRef.topic.key, spec.QueueOffset.topic.key}
_QUEUE_DATAS, _BROKER_NAME = spec.TopicRoute.queue_datas.key, spec.QueueData.broker_name.key

# -- row layouts -------------------------------------------------------------------------

KIND_SNAPSHOT: Final = "snapshot"  # one per input snapshot (counts snapshots)
KIND_UNIT: Final = "unit"  # one per (snapshot, group): the work of step 2
KIND_GROUP: Final = "group"  # one per diagnosed unit: totals and fingerprint
KIND_FINDING: Final = "finding"  # one per finding of a diagnosed unit
KIND_ERROR: Final = "error"  # an input record or unit that could not be used

#: Step 1 output: ``(kind, cluster, ts, capturedAt, group, unit, path, error)``.
UNIT_FIELDS: Final = ("kind", "cluster", "ts", "captured_at", "group", "unit", "path", "error")
UNIT_DDL: Final = (
    "kind string, cluster string, ts long, captured_at string, `group` string, unit string, "
    "path string, error string"
)

#: Step 2 output.
ROW_FIELDS: Final = (
    "kind",
    "cluster",
    "ts",
    "captured_at",
    "group",
    "topic",
    "code",
    "severity",
    "unconsumed",
    "lag",
    "fingerprint",
    "path",
    "error",
)
ROW_DDL: Final = (
    "kind string, cluster string, ts long, captured_at string, `group` string, topic string, "
    "code string, severity string, unconsumed long, lag long, fingerprint string, "
    "path string, error string"
)

#: What every occurrence of one unit content shares: ``(kind, topic, code, severity,
#: unconsumed, lag, fingerprint, error)`` — a :data:`Row` without cluster, time, group and
#: path. An ``error`` holds the whole message with :data:`WHERE_TOKEN` for the occurrence.
Verdict = tuple[
    str, str | None, str | None, str | None, int | None, int | None, str | None, str | None
]
#: Stands for the occurrence (path, capturedAt, group) in a shared error message.
WHERE_TOKEN: Final = "\x00occurrence\x00"

#: ``unit`` is the sub-snapshot as JSON text (to cross a Spark stage) or, inside one
#: process, as the decoded dict itself (no encode/decode round trip).
UnitRow = tuple[
    str,
    str | None,
    int | None,
    str | None,
    str | None,
    str | dict[str, Any] | None,
    str,
    str | None,
]
Row = tuple[
    str,
    str | None,
    int | None,
    str | None,
    str | None,
    str | None,
    str | None,
    str | None,
    int | None,
    int | None,
    str | None,
    str | None,
    str | None,
]


def unreadable(path: str, why: str) -> UnitRow:
    """The ``error`` unit of an input file neither engine could read (``why``)."""
    return (KIND_ERROR, None, None, None, None, None, path, why)


def _marker_row(  # noqa: PLR0917  (mirrors the positional Row tuple)
    kind: str,
    cluster: str | None,
    ts: int | None,
    captured_at: str | None,
    group: str | None,
    path: str | None,
    message: str | None,
) -> Row:
    """A row that marks a snapshot or an error: no topic, code or counts."""
    return (
        kind,
        cluster,
        ts,
        captured_at,
        group,
        None,
        None,
        None,
        None,
        None,
        None,
        path,
        message,
    )


UNKNOWN_CLUSTER: Final = "(unknown)"
#: rmqlb documents that are not snapshots: skipped silently, so ``--out`` may live inside
#: the audited directory.
OTHER_FORMATS: Final = frozenset({"rmqlb.audit/1", "rmqlb.fleet-manifest/1", "rmqlb.report/1"})
SEVERITY_RANK: Final = {"error": 2, "warning": 1, "info": 0}
RANK_SEVERITY: Final = {v: k for k, v in SEVERITY_RANK.items()}
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

Diagnoser = Callable[[Snapshot], Any]
"""``snapshot -> Report``: :func:`rmqlb.diagnose.diagnose` unless a caller injects one."""

Parser = Callable[[Any, str], Snapshot]
"""``(decoded JSON, source) -> Snapshot``: :func:`rmqlb.snapshot.parse_snapshot` by default."""


# -- keys ----------------------------------------------------------------------------------


def parse_captured_at(value: object) -> tuple[int, str]:
    """``capturedAt`` -> (epoch milliseconds, normalised UTC ISO-8601 text).

    Ordering uses the milliseconds; the text is for people. A time without an offset is
    taken as UTC. ``"2026-11-22T13:00:00+01:00"`` -> ``(1795348800000,
    "2026-11-22T12:00:00Z")``. Raises ``ValueError`` for anything else.
    """
    if not isinstance(value, str) or not value:
        raise ValueError("snapshot has no capturedAt (needed to order snapshots)")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"capturedAt {value!r} is not an ISO-8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    millis = (moment - _EPOCH) // timedelta(milliseconds=1)
    spec = "seconds" if moment.microsecond == 0 else "milliseconds"
    text = moment.replace(tzinfo=None).isoformat(timespec=spec) + "Z"
    return millis, text


def normalise_path(path: str) -> str:
    """A local path or a ``file:`` URI (as Spark reports it) -> one comparable form.

    ``file:///data/a%20b.json`` and ``/data/a b.json`` both give ``/data/a b.json``; other
    URIs (``s3a://bucket/x.json``) are kept as they are.
    """
    from urllib.parse import unquote  # noqa: PLC0415

    if path.startswith("file:"):
        rest = path[len("file:") :]
        if rest.startswith("//"):
            rest = rest[2:]
        return unquote(rest)
    return path


def cluster_key(data: dict[str, Any], path: str, cluster_from: re.Pattern[str] | None) -> str:
    """The cluster a snapshot belongs to.

    With ``--cluster-from`` the first group of the pattern searched in the input path
    (``/dumps/(\\w+)/`` on ``/dumps/prod-eu/1.json`` -> ``prod-eu``); otherwise, or when
    the path does not match, the snapshot's ``source.namesrv`` sorted and joined with ``;``
    (RocketMQ's separator); else ``(unknown)``.
    """
    if cluster_from is not None:
        match = cluster_from.search(path)
        if match is not None and match.group(1):
            return match.group(1)
    source = data.get(_SOURCE)
    if isinstance(source, dict):
        namesrv = source.get(_NAMESRV)
        if isinstance(namesrv, str) and namesrv:
            namesrv = namesrv.split(";")
        if isinstance(namesrv, list):
            addrs = sorted(str(a) for a in namesrv if a)
            if addrs:
                return ";".join(addrs)
    return UNKNOWN_CLUSTER


# -- step 1: records -> units ---------------------------------------------------------------


def _group_topics(name: str, group: dict[str, Any]) -> list[str]:
    """Every topic a group touches: subscriptions, assigned queues, offsets, retry topic."""
    topics: dict[str, None] = {}
    consumers = group.get(_CONSUMERS)
    for consumer in consumers if isinstance(consumers, list) else ():
        if not isinstance(consumer, dict):
            continue
        for key in _TOPIC_LISTS:
            items = consumer.get(key)
            for item in items if isinstance(items, list) else ():
                if isinstance(item, str):  # shorthand subscription: "TopicA"
                    topics[item] = None
                elif isinstance(item, dict) and isinstance(item.get(_TOPIC), str):
                    topics[item[_TOPIC]] = None
    offsets = group.get(_OFFSETS)
    for item in offsets if isinstance(offsets, list) else ():
        if isinstance(item, dict) and isinstance(item.get(_TOPIC), str):
            topics[item[_TOPIC]] = None
    topics[RETRY_PREFIX + name] = None
    return list(topics)


def _route_brokers(route: object) -> set[str]:
    if not isinstance(route, dict):
        return set()
    datas = route.get(_QUEUE_DATAS)
    return {
        str(qd[_BROKER_NAME])
        for qd in (datas if isinstance(datas, list) else ())
        if isinstance(qd, dict) and _BROKER_NAME in qd
    }


def sub_snapshot(data: dict[str, Any], name: str) -> dict[str, Any]:
    """The part of a decoded snapshot that group ``name`` needs, as a snapshot of its own.

    Keeps ``format``, ``capturedAt``, ``source``, the group, the routes of the topics it
    touches (topics absent from the snapshot stay absent, exactly as in the whole snapshot)
    and the brokers of those routes. Diagnosing it gives the same findings for ``name`` as
    diagnosing the whole snapshot restricted to ``name``.
    """
    group = data[_GROUPS][name]
    all_topics = data.get(_TOPICS) or {}
    topics = {t: all_topics[t] for t in _group_topics(name, group) if t in all_topics}
    unit: dict[str, Any] = {_FORMAT: data.get(_FORMAT), _TOPICS: topics, _GROUPS: {name: group}}
    for key in (_CAPTURED_AT, _SOURCE):
        if key in data:
            unit[key] = data[key]
    brokers = data.get(_BROKERS)
    if isinstance(brokers, dict):
        wanted = set().union(*(_route_brokers(r) for r in topics.values())) if topics else set()
        unit[_BROKERS] = {b: v for b, v in brokers.items() if b in wanted}
    return unit


_Head = tuple[dict[str, Any], str, str, int, str]
"""A usable record: (decoded snapshot, normalised path, cluster, ts, capturedAt)."""


def _read_record(
    text: str, path: str, cluster_from: re.Pattern[str] | None
) -> _Head | list[UnitRow]:
    """Decode and check one input record: its head, or the rows it gives instead
    (none for a blank line or another rmqlb document, one ``error`` row when unusable)."""
    path = normalise_path(path)
    if not text.strip():
        return []
    try:
        data = decode_json(text)
    except (ValueError, RecursionError) as exc:
        return [(KIND_ERROR, None, None, None, None, None, path, f"invalid JSON: {exc}")]
    if not isinstance(data, dict):
        return [(KIND_ERROR, None, None, None, None, None, path, "not a JSON object")]
    if data.get(_FORMAT) in OTHER_FORMATS:
        return []  # an audit's own summary.json, a fleet manifest, an explain report
    groups = data.get(_GROUPS)
    if not isinstance(groups, dict) or not isinstance(data.get(_TOPICS), dict):
        return [
            (
                KIND_ERROR,
                None,
                None,
                None,
                None,
                None,
                path,
                "not an rmqlb snapshot (no topics/groups)",
            )
        ]
    try:
        ts, captured_at = parse_captured_at(data.get(_CAPTURED_AT))
    except ValueError as exc:
        return [(KIND_ERROR, None, None, None, None, None, path, str(exc))]
    return data, path, cluster_key(data, path, cluster_from), ts, captured_at


def decode_json(text: str) -> Any:
    """One record's JSON by the one JSON reading (:func:`rmqlb.fileio.parse_json`: no
    duplicate key, no lone surrogate); raises a ``ValueError`` that says why."""
    return parse_json(text)


def split_record(
    text: str, path: str, cluster_from: re.Pattern[str] | None = None, *, encode: bool = True
) -> list[UnitRow]:
    """One input record (a JSON snapshot) -> a ``snapshot`` marker row and one ``unit`` row
    per group, or a single ``error`` row when the record is not a usable snapshot.

    Blank records (empty JSON Lines lines) give no rows at all. With ``encode=False`` the
    units carry their sub-snapshot dicts instead of JSON text (same process only).
    """
    head = _read_record(text, path, cluster_from)
    if isinstance(head, list):
        return head
    data, path, cluster, ts, captured_at = head
    rows: list[UnitRow] = [(KIND_SNAPSHOT, cluster, ts, captured_at, None, None, path, None)]
    for name in data[_GROUPS]:
        part = sub_snapshot(data, name)
        unit = json.dumps(part, separators=(",", ":"), ensure_ascii=False) if encode else part
        rows.append((KIND_UNIT, cluster, ts, captured_at, name, unit, path, None))
    return rows


def audit_record(
    text: str,
    path: str,
    cluster_from: re.Pattern[str] | None = None,
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
    verdicts: dict[str, list[Verdict]] | None = None,
) -> list[Row]:
    """Steps 1 and 2 for one record: exactly ``diagnose_units(split_record(...))``, cheaper.

    The record is decoded once; its snapshot is parsed and diagnosed once as a whole
    (:func:`whole_view`) and the report split by group, instead of building, parsing and
    diagnosing one sub-snapshot per group. The diagnosis of a group depends only on the
    group, the routes of the topics it touches, their brokers and ``source`` (all present,
    unchanged, in both), so the rows are the same. Should anything of the whole fail (one
    bad group, a bad route no group uses), the record falls back to the per-group path,
    which isolates the failing group exactly as before. With an injected ``parser`` or
    ``diagnoser`` the per-group path is always used.

    With ``verdicts`` (a cache shared by the records of one audit, keyed by
    :func:`unit_key`) a group whose unit content was diagnosed before is not diagnosed
    again: its verdict is placed at this occurrence (same rows); only the other groups are
    parsed and diagnosed, together.
    """
    head = _read_record(text, path, cluster_from)
    if isinstance(head, list):
        return list(diagnose_units(head))
    data, path, cluster, ts, captured_at = head
    rows: list[Row] = [_marker_row(KIND_SNAPSHOT, cluster, ts, captured_at, None, path, None)]
    injected = parser is not None or diagnoser is not None
    if verdicts is not None and not injected:
        for name, verdict in _cached_verdicts(data, verdicts).items():
            rows.extend(verdict_rows(verdict, cluster, ts, captured_at, name, path))
        return rows
    if not injected:
        whole = _diagnose_whole(data, data[_GROUPS])
        if whole is not None:
            for name, verdict in whole.items():
                rows.extend(verdict_rows(verdict, cluster, ts, captured_at, name, path))
            return rows
    for name in data[_GROUPS]:
        rows.extend(
            diagnose_unit(
                cluster,
                ts,
                captured_at,
                name,
                sub_snapshot(data, name),
                path=path,
                parser=parser,
                diagnoser=diagnoser,
            )
        )
    return rows


def _cached_verdicts(
    data: dict[str, Any], verdicts: dict[str, list[Verdict]]
) -> dict[str, list[Verdict]]:
    """Every group's verdict, from ``verdicts`` when its unit content is known, else by
    diagnosing the unknown ones (whole, then group by group on failure) and adding them."""
    keys: dict[str, str] = {}
    missing: dict[str, dict[str, Any]] = {}
    for name in data[_GROUPS]:
        unit = sub_snapshot(data, name)
        key = keys[name] = unit_key(unit)
        if key not in verdicts:
            missing[name] = unit
    if missing:
        found = _diagnose_whole(data, missing)
        if found is None:
            found = {name: diagnose_verdict(name, unit) for name, unit in missing.items()}
        for name, verdict in found.items():
            verdicts[keys[name]] = verdict
    return {name: verdicts[key] for name, key in keys.items()}


def unit_text(unit: dict[str, Any]) -> str:
    """The canonical text of a work unit: its JSON without ``capturedAt``, the one part
    of a unit that changes with every capture and plays no part in its diagnosis (the
    occurrence carries it). Equal texts give equal verdicts."""
    return json.dumps(_keyed_part(unit), separators=(",", ":"), ensure_ascii=False)


def unit_key(unit: dict[str, Any]) -> str:
    """Content hash (SHA-1, hex) of a work unit without ``capturedAt``: the dedup key.

    Hashes the unit's compact JSON as pydantic-core writes it (several times faster than
    :func:`unit_text`; NaN and Infinity kept as such, so distinct units stay distinct), or
    :func:`unit_text`'s bytes for the rare unit it refuses (a lone surrogate, which no
    UTF-8 that pydantic-core writes can contain: the two never collide).
    """
    part = _keyed_part(unit)
    try:
        data = to_json(part)
    except PydanticSerializationError:
        data = json.dumps(part, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def _keyed_part(unit: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in unit.items() if k != _CAPTURED_AT}


def whole_view(data: dict[str, Any]) -> dict[str, Any]:
    """The decoded snapshot with exactly the keys :func:`sub_snapshot` keeps (so, e.g.,
    capture ``errors`` play no part in either), none of them filtered."""
    view: dict[str, Any] = {
        _FORMAT: data.get(_FORMAT),
        _TOPICS: data.get(_TOPICS) or {},
        _GROUPS: data[_GROUPS],
    }
    for key in (_CAPTURED_AT, _SOURCE):
        if key in data:
            view[key] = data[key]
    if isinstance(data.get(_BROKERS), dict):
        view[_BROKERS] = data[_BROKERS]
    return view


def _diagnose_whole(data: dict[str, Any], names: Iterable[str]) -> dict[str, list[Verdict]] | None:
    """The verdicts of groups ``names`` of a record from one parse and one diagnosis of the
    snapshot restricted to them, or ``None`` when either fails (the caller then goes group
    by group)."""
    from rmqlb.diagnose import DiagnoseOptions, diagnose  # noqa: PLC0415
    from rmqlb.snapshot import parse_snapshot  # noqa: PLC0415

    view = whole_view(data)
    view[_GROUPS] = {name: data[_GROUPS][name] for name in names}
    try:
        snapshot = parse_snapshot(view, "<record>")
        report = diagnose(snapshot, options=DiagnoseOptions(proposals=False))
    except Exception:  # the per-group path reports it, group by group
        return None
    by_group = {g.group: g for g in report.groups}
    findings: dict[str, list[Any]] = {}
    for f in report.findings:  # stable: each group keeps the order diagnose gives it
        findings.setdefault(f.group, []).append(f)
    verdicts: dict[str, list[Verdict]] = {}
    for name in view[_GROUPS]:
        group_report = by_group.get(name)
        if group_report is None:  # cannot happen with diagnose(); stay exact if it does
            return None
        verdicts[name] = _group_verdict(
            totals=_topic_totals((group_report,)),
            group_lag=group_report.total_lag()[0],
            findings=findings.get(name, []),
            fingerprint=assignment_fingerprint(snapshot, name),
        )
    return verdicts


# -- step 2: units -> rows ------------------------------------------------------------------


def assignment_fingerprint(snapshot: Snapshot, group: str) -> str | None:
    """A short hash of who actually holds which queue in ``group`` (``None``: unknown).

    Consumers whose assignment is unknown are left out; when none is known there is no
    fingerprint. Two snapshots with the same queue -> client mapping have the same
    fingerprint whatever the order of consumers or queues in the files.
    """
    entries: list[str] = []
    known = False
    for consumer in snapshot.groups[group].consumers:
        if consumer.assigned is None:
            continue
        known = True
        entries.extend(
            f"{q.topic}\x00{q.broker_name}\x00{q.queue_id}\x00{consumer.client_id}"
            for q in consumer.assigned
        )
    if not known:
        return None
    digest = hashlib.sha1("\n".join(sorted(entries)).encode("utf-8"), usedforsecurity=False)
    return digest.hexdigest()[:16]


def _topic_totals(groups: Iterable[Any]) -> dict[str, tuple[int, int | None]]:
    """Per topic of the group reports: (unconsumed queues, total lag or ``None`` when
    unknown; a BROADCASTING group's: its most behind client's)."""
    totals: dict[str, tuple[int, int | None]] = {}
    for group in groups:
        for topic in group.topics:
            unconsumed = sum(1 for row in topic.queues if row.status.value == "unconsumed")
            if group.broadcasting:  # its queues have no lag; its most behind client's (as status)
                totals[topic.topic] = (unconsumed, topic.worst_client_lag()[0])
                continue
            lags = [row.lag for row in topic.queues if row.lag is not None]
            totals[topic.topic] = (unconsumed, sum(lags) if lags else None)
    return totals


def _default_parser(data: Any, source: str) -> Snapshot:
    from rmqlb.snapshot import parse_snapshot  # noqa: PLC0415

    return parse_snapshot(data, source)


def _default_diagnoser(snapshot: Snapshot) -> Any:
    from rmqlb.diagnose import DiagnoseOptions, diagnose  # noqa: PLC0415

    # The audit keeps codes and counts, never hints: no proposal search.
    return diagnose(snapshot, options=DiagnoseOptions(proposals=False))


def diagnose_unit(
    cluster: str,
    ts: int,
    captured_at: str,
    group: str,
    unit: str | dict[str, Any],
    *,
    path: str | None = None,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
) -> list[Row]:
    """Diagnose one work unit: a ``group`` row plus one ``finding`` row per finding.

    A unit that does not parse or makes the engine fail yields one ``error`` row naming
    the input and the group; the rest of the fleet is still audited.
    """
    where = where_text(path, captured_at, group)
    verdict = diagnose_verdict(group, unit, where=where, parser=parser, diagnoser=diagnoser)
    return verdict_rows(verdict, cluster, ts, captured_at, group, path)


def diagnose_verdict(
    group: str,
    unit: str | dict[str, Any],
    *,
    where: str = WHERE_TOKEN,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
) -> list[Verdict]:
    """The rows of one unit without their occurrence (cluster, time, path): what every
    occurrence of the same unit content shares. An error keeps its whole message, with
    ``where`` in it (by default :data:`WHERE_TOKEN`, replaced per occurrence)."""
    parse = parser or _default_parser
    run = diagnoser or _default_diagnoser
    try:
        snapshot = parse(json.loads(unit) if isinstance(unit, str) else unit, where)
        report = run(snapshot)
    except Exception as exc:  # one bad group must not stop a fleet audit
        message = str(exc) or type(exc).__name__
        return [(KIND_ERROR, None, None, None, None, None, None, message)]
    findings = [f for f in report.findings if f.group == group]
    mine = [g.total_lag()[0] for g in report.groups if g.group == group]
    return _group_verdict(
        totals=_topic_totals(report.groups),
        group_lag=mine[0] if mine else None,
        findings=findings,
        fingerprint=assignment_fingerprint(snapshot, group),
    )


def where_text(path: str | None, captured_at: str, group: str) -> str:
    """How an error names the occurrence of a unit: ``/d/s.json [2026-...Z] group G``."""
    return f"{path or '<input>'} [{captured_at}] group {group}"


def verdict_rows(  # noqa: PLR0917  (an occurrence is these five keys)
    verdict: Iterable[Verdict],
    cluster: str,
    ts: int,
    captured_at: str,
    group: str,
    path: str | None,
) -> list[Row]:
    """A verdict placed at one occurrence: full rows, an error's :data:`WHERE_TOKEN`
    replaced by the occurrence and its message cut to the first line."""
    rows: list[Row] = []
    for kind, topic, code, severity, unconsumed, lag, fingerprint, shared in verdict:
        error = None
        if shared is not None:
            error = shared.replace(WHERE_TOKEN, where_text(path, captured_at, group))
            error = error.splitlines()[0]
        rows.append(
            (
                kind,
                cluster,
                ts,
                captured_at,
                group,
                topic,
                code,
                severity,
                unconsumed,
                lag,
                fingerprint,
                path,
                error,
            )
        )
    return rows


def _group_verdict(
    *,
    totals: dict[str, tuple[int, int | None]],
    group_lag: int | None,
    findings: list[Any],
    fingerprint: str | None,
) -> list[Verdict]:
    """A diagnosed group's ``group`` row and ``finding`` rows, without their occurrence;
    ``group_lag`` is the group report's (:meth:`GroupReport.total_lag`), as explain and
    status state it."""
    group_unconsumed = sum(u for u, _ in totals.values())
    worst = max((SEVERITY_RANK[f.severity.value] for f in findings), default=None)
    verdict: list[Verdict] = [
        (
            KIND_GROUP,
            None,
            None,
            RANK_SEVERITY[worst] if worst is not None else None,
            group_unconsumed,
            group_lag,
            fingerprint,
            None,
        )
    ]
    for f in findings:
        unconsumed, lag = (
            totals.get(f.topic, (0, None)) if f.topic else (group_unconsumed, group_lag)
        )
        verdict.append(
            (KIND_FINDING, f.topic, f.code.value, f.severity.value, unconsumed, lag, None, None)
        )
    return verdict


def diagnose_units(
    units: Iterable[UnitRow],
    *,
    parser: Parser | None = None,
    diagnoser: Diagnoser | None = None,
) -> Iterator[Row]:
    """Step 2 over step 1's rows: units are diagnosed, markers and errors pass through."""
    for kind, cluster, ts, captured_at, group, unit, path, error in units:
        if kind == KIND_UNIT:
            assert cluster is not None and ts is not None and captured_at is not None
            assert group is not None and unit is not None
            yield from diagnose_unit(
                cluster, ts, captured_at, group, unit, path=path, parser=parser, diagnoser=diagnoser
            )
        else:
            yield _marker_row(kind, cluster, ts, captured_at, group, path, error)
