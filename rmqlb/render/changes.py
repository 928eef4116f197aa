"""What changed between two polls of ``explain --watch``.

Pure: compares two :class:`~rmqlb.diagnose.report.Report` objects and says which queues
changed hands and which findings appeared or cleared. Renderers use it to mark rows; the
non-terminal watch mode prints :func:`describe_changes` and nothing else.

Example: a third consumer joins a 16-queue AVG group that held 8 + 8. After the next
rebalance the three clients hold 6 + 5 + 5, so ``diff_reports(before, after).queues`` lists
queues 6..15 (their owner changed), and a DUPLICATE_ASSIGNMENT seen while the clients were
still rebalancing shows in ``cleared_findings``. Identical reports give no change:

>>> from rmqlb.diagnose.report import Report
>>> diff_reports(Report((), ()), Report((), ())).empty
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rmqlb.diagnose.report import Finding, Report
from rmqlb.diagnose.status import GroupStatus, StatusReport
from rmqlb.model.queue import MessageQueue, queue_ranges

QueueKey = tuple[str, str, MessageQueue]
FindingKey = tuple[str, str, str, tuple[str, ...], tuple[MessageQueue, ...]]


def finding_key(f: Finding) -> FindingKey:
    """A finding's identity across polls: code, group, topic, consumers and queues.

    The message is left out on purpose: it carries numbers (lag, counts) that move on every
    poll without the problem itself changing.
    """
    return (f.code.value, f.group, f.topic or "", f.consumers, f.queues)


@dataclass(frozen=True, slots=True)
class QueueChange:
    """One queue whose actual owner(s) changed; ``None`` = unknown, absent = not in the poll."""

    group: str
    topic: str
    queue: MessageQueue
    before: tuple[str, ...] | None
    after: tuple[str, ...] | None
    kind: str = "moved"  # "moved", "added" (new in the route) or "removed"


@dataclass(frozen=True, slots=True)
class ReportChanges:
    """The difference between two consecutive reports."""

    queues: tuple[QueueChange, ...] = ()
    new_findings: tuple[Finding, ...] = ()
    cleared_findings: tuple[Finding, ...] = ()
    _queue_keys: frozenset[QueueKey] = field(default=frozenset(), repr=False, compare=False)
    _new_keys: frozenset[FindingKey] = field(default=frozenset(), repr=False, compare=False)

    @property
    def empty(self) -> bool:
        """Nothing changed."""
        return not (self.queues or self.new_findings or self.cleared_findings)

    def queue_changed(self, group: str, topic: str, queue: MessageQueue) -> bool:
        """Whether this queue's owner changed since the last poll."""
        return (group, topic, queue) in self._queue_keys

    def finding_is_new(self, f: Finding) -> bool:
        """Whether this finding was absent from the last poll."""
        return finding_key(f) in self._new_keys


def _owners(report: Report) -> dict[QueueKey, tuple[str, ...] | None]:
    out: dict[QueueKey, tuple[str, ...] | None] = {}
    for g in report.groups:
        for t in g.topics:
            for row in t.queues:
                out[(g.group, t.topic, row.queue)] = (
                    tuple(sorted(row.actual)) if row.actual is not None else None
                )
    return out


def diff_reports(before: Report, after: Report) -> ReportChanges:
    """Queues whose actual owners differ (or that appeared/disappeared) and findings that
    are new in ``after`` or gone from it."""
    old, new = _owners(before), _owners(after)
    changes: list[QueueChange] = []
    for key, owners in new.items():
        if key not in old:
            changes.append(QueueChange(key[0], key[1], key[2], None, owners, "added"))
        elif old[key] != owners:
            changes.append(QueueChange(key[0], key[1], key[2], old[key], owners))
    for key, owners in old.items():
        if key not in new:
            changes.append(QueueChange(key[0], key[1], key[2], owners, None, "removed"))
    old_f = {finding_key(f): f for f in before.findings}
    new_f = {finding_key(f): f for f in after.findings}
    added = tuple(f for k, f in new_f.items() if k not in old_f)
    cleared = tuple(f for k, f in old_f.items() if k not in new_f)
    return ReportChanges(
        queues=tuple(changes),
        new_findings=added,
        cleared_findings=cleared,
        _queue_keys=frozenset((c.group, c.topic, c.queue) for c in changes),
        _new_keys=frozenset(finding_key(f) for f in added),
    )


def _owners_text(owners: tuple[str, ...] | None) -> str:
    if owners is None:
        return "unknown"
    return ", ".join(owners) if owners else "nobody"


def _runs(changes: tuple[QueueChange, ...]) -> list[tuple[QueueChange, int]]:
    """Consecutive queue ids of one broker with the same change, as (first change, last id)."""
    runs: list[tuple[QueueChange, int]] = []
    for c in changes:
        if runs:
            first, last = runs[-1]
            if (
                (first.group, first.topic, first.queue.broker_name, first.kind)
                == (c.group, c.topic, c.queue.broker_name, c.kind)
                and (first.before, first.after) == (c.before, c.after)
                and c.queue.queue_id == last + 1
            ):
                runs[-1] = (first, c.queue.queue_id)
                continue
        runs.append((c, c.queue.queue_id))
    return runs


def describe_changes(changes: ReportChanges) -> list[str]:
    """One plain line per change; consecutive queues that changed alike share a line:
    ``queue G T broker-a:11..15: c2 -> c2, c3``."""
    lines: list[str] = []
    for c, last in _runs(changes.queues):
        run = [replace(c.queue, queue_id=i) for i in range(c.queue.queue_id, last + 1)]
        where = f"{c.group} {c.topic} {queue_ranges(run)}"
        if c.kind == "added":
            lines.append(f"queue {where}: new in the route, held by {_owners_text(c.after)}")
        elif c.kind == "removed":
            lines.append(f"queue {where}: gone from the route (was {_owners_text(c.before)})")
        else:
            lines.append(f"queue {where}: {_owners_text(c.before)} -> {_owners_text(c.after)}")
    for f in changes.new_findings:
        topic = f" {f.topic}" if f.topic else ""
        lines.append(f"new {f.severity.value} {f.code.value} {f.group}{topic}: {f.message}")
    for f in changes.cleared_findings:
        topic = f" {f.topic}" if f.topic else ""
        lines.append(f"cleared {f.code.value} {f.group}{topic}")
    return lines


# ----- rmqlb status --watch ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineChange:
    """One group whose overview line changed: ``kind`` is ``added``, ``removed`` or
    ``changed``; ``what`` says how (``consumers 3 -> 2``, ``worst none -> error CODE``)."""

    group: str
    kind: str
    what: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StatusChanges:
    """The difference between two consecutive ``rmqlb status`` polls.

    Lag and consume rate move on every poll of a busy cluster: they are shown, never
    reported as a change. What counts is membership, strategy, the worst finding, the
    finding counts, stranded queues and partial data.
    """

    lines: tuple[LineChange, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing changed."""
        return not self.lines

    @property
    def removed(self) -> tuple[LineChange, ...]:
        """Groups gone since the last poll."""
        return tuple(c for c in self.lines if c.kind == "removed")

    def changed(self, group: str) -> bool:
        """Whether ``group``'s line is new or changed since the last poll."""
        return any(c.group == group and c.kind != "removed" for c in self.lines)


def _worst(line: GroupStatus) -> str:
    worst = line.worst
    return "none" if worst is None else f"{worst.severity.value} {worst.code.value}"


def _counts(line: GroupStatus) -> str:
    e = sum(1 for f in line.findings if f.severity.value == "error")
    w = sum(1 for f in line.findings if f.severity.value == "warning")
    return f"{e} error{'s' if e != 1 else ''}, {w} warning{'s' if w != 1 else ''}"


def _line_changes(before: GroupStatus, after: GroupStatus) -> list[str]:
    what: list[str] = []
    for label, old, new in (
        ("consumers", str(before.consumers), str(after.consumers)),
        ("strategy", before.strategy, after.strategy),
        ("worst", _worst(before), _worst(after)),
        ("findings", _counts(before), _counts(after)),
        ("stranded queues", str(before.stranded.queues), str(after.stranded.queues)),
        (
            "data",
            "partial" if before.partial else "complete",
            "partial" if after.partial else "complete",
        ),
    ):
        if old != new:
            what.append(f"{label} {old} -> {new}")
    return what


def diff_status(before: StatusReport, after: StatusReport) -> StatusChanges:
    """Groups that appeared, disappeared or whose line changed (see :class:`StatusChanges`)."""
    old = {s.group: s for s in before.lines}
    new = {s.group: s for s in after.lines}
    out: list[LineChange] = []
    for name, line in new.items():
        if name not in old:
            out.append(LineChange(name, "added", (f"worst {_worst(line)}",)))
            continue
        what = _line_changes(old[name], line)
        if what:
            out.append(LineChange(name, "changed", tuple(what)))
    out += [LineChange(name, "removed") for name in old if name not in new]
    return StatusChanges(tuple(out))


def describe_status_changes(changes: StatusChanges) -> list[str]:
    """One plain line per changed group: ``group G: consumers 3 -> 2; worst none -> ...``."""
    lines: list[str] = []
    for c in changes.lines:
        if c.kind == "added":
            lines.append(f"group {c.group}: new ({'; '.join(c.what)})")
        elif c.kind == "removed":
            lines.append(f"group {c.group}: gone")
        else:
            lines.append(f"group {c.group}: {'; '.join(c.what)}")
    return lines
