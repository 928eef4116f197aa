"""Run the diagnosis engine over a declared config and point every finding at its line.

For each group, each consumer count to consider (:mod:`rmqlb.check.synth`) becomes a synthetic
snapshot, diagnosed by the same engine ``rmqlb explain`` uses. Each finding is mapped back to
the declaration it comes from, and findings that repeat across counts are merged into one
with the counts where they occur ("with >= 17 consumers: topic OrderTopic has 16 readable
queues for 17 consumers ..."):

================================  ==========================================================
finding                           points at
================================  ==========================================================
IDLE_CONSUMER                     ``replicas`` of the member(s) whose clients are idle
IMBALANCE                         the topic's queue count
SUBSCRIPTION_INCONSISTENT         the subscription (or ``subscriptions:``) of each member
                                  that differs from the group's majority
UNCONSUMED_QUEUE                  ``subscriptions:`` of the members that do not subscribe
                                  the topic (they swallow its queues), else the strategy
STRATEGY_INCONSISTENT             the member's ``strategy``
ALLOCATION_FAILED                 the ``strategy`` (the strategy would throw in every client)
NO_CONSUMERS                      the group's ``members:`` (or the group)
NO_ROUTE                          each subscription to a topic no input declares
BROKER_STRATEGY_UNKNOWN,          the group (``rebalance: broker``: 5.x broker-side
POP_SHARE_ALL, MIXED_REBALANCE    assignment)
================================  ==========================================================

Findings about actual assignments (mismatch, duplicates, lag, unreachable clients) cannot
come from a declared config and are dropped.

Every declared topic is also checked on its own, whether a group consumes it or not
(:mod:`rmqlb.diagnose.rules.topics`), as one case with no group:

================================  ==========================================================
finding                           points at
================================  ==========================================================
WRITE_EXCEEDS_READ                the broker's write count
QUEUE_NOT_READABLE                the broker's perm
QUEUE_NOT_WRITABLE                the broker's perm (its write count when that is 0)
NO_QUEUES                         the broker's queue count
TOPIC_NOT_ON_ALL_BROKERS          the topic
================================  ==========================================================

so the engine's per-group copies of the first two are dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from rmqlb.check.decl import CheckConfig, GroupDecl, Loc, MemberDecl, TopicDecl
from rmqlb.check.proven import range_proposals, target_of
from rmqlb.check.synth import Scenario, build_snapshot, scenarios, topic_route
from rmqlb.diagnose import DiagnoseOptions, diagnose
from rmqlb.diagnose.causes import finding_id
from rmqlb.diagnose.proposals import Problem
from rmqlb.diagnose.report import Code, Finding, Proposal, Report, Severity, TopicReport
from rmqlb.diagnose.rules.topics import TopicFinding, topic_findings
from rmqlb.errors import ExitCode
from rmqlb.failon import gate
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import Snapshot
from rmqlb.model.strategy import describe
from rmqlb.model.system import is_system_topic

DROPPED_CODES = frozenset(
    {
        Code.WRITE_EXCEEDS_READ,  # checked per topic, once (check_topic)
        Code.QUEUE_NOT_READABLE,
        Code.ASSIGNMENT_MISMATCH,
        Code.DUPLICATE_ASSIGNMENT,
        Code.CLIENT_UNREACHABLE,
        Code.LAG_SKEW,
    }
)

Diagnoser = Callable[[Snapshot, "float | None"], Report]


def engine_diagnoser(snapshot: Snapshot, max_imbalance: float | None) -> Report:
    """Diagnose with :func:`rmqlb.diagnose.diagnose` (the explain engine)."""
    # Proposals are proven over the whole replica range afterwards (rmqlb.check.proven).
    options = (
        DiagnoseOptions(proposals=False)
        if max_imbalance is None
        else DiagnoseOptions(max_imbalance=max_imbalance, proposals=False)
    )
    return diagnose(snapshot, options=options)


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """``max_imbalance`` feeds the engine's IMBALANCE threshold (None: its default);
    ``keep_allocations`` keeps every count's allocation for ``--explain-counts``."""

    max_imbalance: float | None = None
    keep_allocations: bool = False


@dataclass(frozen=True, slots=True)
class CheckFinding:
    """A finding at a place in an input file. ``counts`` are the consumer counts where it
    occurs (empty when it does not depend on them); ``group`` is ``None`` for a finding about
    a topic itself. ``id`` (``G/F1``, numbered per group in report order) and ``caused_by``
    link a consequence to its cause, as in ``explain``."""

    code: str
    severity: Severity
    loc: Loc
    group: str | None
    topic: str | None
    message: str
    hint: str
    counts: tuple[int, ...] = ()
    consumers: tuple[str, ...] = ()
    queues: tuple[MessageQueue, ...] = ()
    proposals: tuple[Proposal, ...] = ()
    id: str | None = None
    caused_by: str | None = None
    cause: tuple[str, str | None] | None = None  # (code, topic) of the cause, before ids


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One group x topic (``topic`` None: the group itself; ``group`` None: the topic itself),
    as one JUnit testcase."""

    group: str | None
    topic: str | None
    loc: Loc
    counts: tuple[int, ...]
    findings: tuple[CheckFinding, ...]
    skipped: bool = False  # nothing declares who joins the group: not checked


@dataclass(frozen=True, slots=True)
class CountAllocation:
    """The expected allocation of one topic at one consumer count."""

    total: int
    replicas: tuple[tuple[str, int], ...]
    assignments: tuple[tuple[str, str, tuple[MessageQueue, ...]], ...]  # cid, member, queues


@dataclass(frozen=True, slots=True)
class CountsTable:
    """``--explain-counts``: one group x topic over every considered count."""

    group: str
    topic: str
    strategy: str
    readable_queues: int
    rows: tuple[CountAllocation, ...]
    declared: bool = True


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Everything ``rmqlb check`` reports."""

    config: CheckConfig
    findings: tuple[CheckFinding, ...]
    cases: tuple[CaseResult, ...]
    counts: tuple[CountsTable, ...] = ()

    def exit_code(self, fail_on: str = "warning") -> ExitCode:
        """1 when a finding is at least ``fail_on`` severe (design §3), else 0."""
        return gate((f.severity for f in self.findings), fail_on)


def _check_key(f: CheckFinding) -> tuple[int, str, int, str, str]:
    return (-f.severity.rank, f.loc.file, f.loc.line, f.code, f.group or "")


def sort_check_findings(findings: Iterable[CheckFinding]) -> list[CheckFinding]:
    """Most severe first, then by file and line; a consequence right after its cause."""
    items = sorted(findings, key=_check_key)
    ids = {f.id for f in items if f.id is not None}
    children: dict[str, list[CheckFinding]] = {}
    roots: list[CheckFinding] = []
    for f in items:
        if f.caused_by is not None and f.caused_by in ids and f.caused_by != f.id:
            children.setdefault(f.caused_by, []).append(f)
        else:
            roots.append(f)
    out: list[CheckFinding] = []

    def walk(f: CheckFinding) -> None:
        out.append(f)
        for k in children.pop(f.id, []) if f.id is not None else []:
            walk(k)

    for f in roots:
        walk(f)
    for rest in children.values():
        out.extend(rest)
    return out


def link_check_findings(group: str, findings: Sequence[CheckFinding]) -> list[CheckFinding]:
    """Number the findings of ``group`` (``G/F1`` ... causes first, as explain does) and point
    each consequence at its cause, with its cause's fix instead of a fix of its own. A
    finding whose cause was not reported (a code check drops) stands alone."""
    keys = {(f.code, f.topic) for f in findings}

    def is_root(f: CheckFinding) -> bool:
        return f.cause is None or f.cause not in keys or f.cause == (f.code, f.topic)

    roots = sorted((f for f in findings if is_root(f)), key=_check_key)
    effects = sorted((f for f in findings if not is_root(f)), key=_check_key)
    out: list[CheckFinding] = []
    taken: set[int] = set()
    for root in roots:
        cause = replace(root, id=finding_id(group, len(out) + 1), cause=None)
        out.append(cause)
        for i, effect in enumerate(effects):
            if i in taken or effect.cause != (root.code, root.topic):
                continue
            taken.add(i)
            out.append(
                replace(
                    effect,
                    id=finding_id(group, len(out) + 1),
                    caused_by=cause.id,
                    hint=check_consequence_hint(cause),
                    proposals=(),
                    cause=None,
                )
            )
    return out


def check_consequence_hint(cause: CheckFinding) -> str:
    """The fix of a consequence in a check: its cause's, named by id."""
    return f"caused by {cause.code} ({cause.id}) at {cause.loc}: fixing that clears this too"


# --------------------------------------------------------------------------- locations


def _members_of(consumers: Sequence[str], owners: dict[str, MemberDecl]) -> list[MemberDecl]:
    out: dict[str, MemberDecl] = {}
    for cid in consumers:
        member = owners.get(cid)
        if member is not None:
            out.setdefault(member.name, member)
    return list(out.values())


def _signature(member: MemberDecl, topic: str | None) -> object:
    if topic is None:
        return frozenset(s.topic for s in member.subscriptions)
    sub = member.subscription(topic)
    return None if sub is None else (sub.expression_type, sub.expression)


def _differing_members(members: Sequence[MemberDecl], topic: str | None) -> list[MemberDecl]:
    """Members whose subscription differs from the most common one (ties: the first)."""
    signatures = [_signature(m, topic) for m in members]
    counts = Counter(signatures)
    best = max(counts.values(), default=0)
    reference = next(s for s in signatures if counts[s] == best) if signatures else None
    return [m for m, s in zip(members, signatures, strict=True) if s != reference]


def _subscription_loc(member: MemberDecl, topic: str | None) -> Loc:
    sub = member.subscription(topic) if topic is not None else None
    return sub.loc if sub is not None else member.subscriptions_loc


def locate(
    finding: Finding,
    group: GroupDecl,
    config: CheckConfig,
    owners: dict[str, MemberDecl],
) -> list[Loc]:
    """Where in the inputs ``finding`` comes from (one place or more, never none)."""
    topic = config.topics.get(finding.topic) if finding.topic is not None else None
    present = _members_of(list(owners), owners)
    fallback = group.loc
    locs: list[Loc] = []
    code = finding.code
    if code == Code.IDLE_CONSUMER:
        members = _members_of(finding.consumers, owners) or present
        locs = [m.replicas_loc for m in members]
    elif code == Code.IMBALANCE:
        locs = [topic.queues_loc] if topic is not None else []
    elif code == Code.SUBSCRIPTION_INCONSISTENT:
        locs = [
            _subscription_loc(m, finding.topic) for m in _differing_members(present, finding.topic)
        ]
    elif code == Code.UNCONSUMED_QUEUE:
        if finding.topic is not None:
            locs = [m.subscriptions_loc for m in present if m.subscription(finding.topic) is None]
        if not locs and group.strategy_loc is not None:
            locs = [group.strategy_loc]
    elif code == Code.STRATEGY_INCONSISTENT:
        locs = [m.strategy_loc for m in present if m.strategy_loc is not None]
        if not locs and group.strategy_loc is not None:
            locs = [group.strategy_loc]
    elif code == Code.NO_ROUTE and finding.topic is not None:
        subs = [m.subscription(finding.topic) for m in group.members]
        locs = [sub.loc for sub in subs if sub is not None]
    elif code == Code.ALLOCATION_FAILED:
        locs = [m.strategy_loc for m in present if m.strategy_loc is not None]
        if group.strategy_loc is not None:
            locs.append(group.strategy_loc)
    elif code == Code.MIXED_REBALANCE:  # the members whose rebalance is not the group's
        locs = [m.loc for m in present if m.broker_assigned is not None] or [group.loc]
    elif code in (
        Code.BROADCASTING,
        Code.POP_MODE,
        Code.PROXY_CLIENTS,
        Code.BROKER_REBALANCE,
        Code.BROKER_STRATEGY_UNKNOWN,
        Code.POP_SHARE_ALL,
    ):
        locs = [group.loc]
    elif code == Code.NO_CONSUMERS:
        locs = [group.members_loc] if group.members_loc is not None else []
    return sorted(set(locs)) or [fallback]


# --------------------------------------------------------------------------- merging


@dataclass
class _Seen:
    first: Finding
    severity: Severity
    counts: list[int] = field(default_factory=list)
    cause: tuple[str, str | None] | None = None


def _ranges(counts: Sequence[int], considered: Sequence[int]) -> str:
    """Describe ``counts`` (a subset of ``considered``) compactly.

    >>> _ranges([17, 18, 19], [16, 17, 18, 19])
    '>= 17'
    >>> _ranges([3, 4, 9], [3, 4, 5, 9, 10])
    '3..4, 9'
    >>> _ranges([0], [0, 1, 2, 3])  # one count is that count, not "<= 0"
    '0'
    """
    if len(counts) == 1:
        return str(counts[0])
    if (
        counts
        and counts[-1] == considered[-1]
        and considered[considered.index(counts[0]) :] == list(counts)
    ):
        return f">= {counts[0]}"
    if counts and counts[0] == considered[0] and considered[: len(counts)] == list(counts):
        return f"<= {counts[-1]}"
    runs: list[list[int]] = []
    position = {c: i for i, c in enumerate(considered)}
    for c in counts:
        if runs and position[c] == position[runs[-1][-1]] + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}..{r[-1]}" for r in runs)


def _merge(
    seen: dict[tuple[str, str | None, Loc], _Seen],
    considered: Sequence[int],
    group: GroupDecl,
    prove: Callable[[str, str | None, tuple[str, ...]], tuple[tuple[Proposal, ...], str]],
) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    for (code, topic, loc), entry in seen.items():
        counts = tuple(entry.counts)
        message, hint = entry.first.message, entry.first.hint
        if code == Code.NO_ROUTE and topic is not None:
            message, hint = _not_declared(group, topic)
        # a consequence's fix is its cause's (set when the findings are linked)
        proposals, proven = ((), "") if entry.cause else prove(code, topic, entry.first.consumers)
        hint = proven or hint
        if len(considered) > 1 and list(counts) != list(considered):
            message = f"with {_ranges(counts, considered)} consumers: {message}"
        out.append(
            CheckFinding(
                code=code,
                severity=entry.severity,
                loc=loc,
                group=entry.first.group,
                topic=topic,
                message=message,
                hint=hint,
                counts=counts if len(considered) > 1 else (),
                consumers=entry.first.consumers,
                queues=entry.first.queues,
                proposals=proposals,
                cause=entry.cause,
            )
        )
    return out


# --------------------------------------------------------------------------- allocations


def _allocation(
    scenario: Scenario, group: GroupDecl, topic: TopicReport, owners: dict[str, MemberDecl]
) -> CountAllocation:
    held: dict[str, list[MessageQueue]] = {row.client_id: [] for row in topic.consumers}
    label = {
        row.client_id: (owners[row.client_id].name if row.client_id in owners else "?")
        + ("" if row.subscribes else " (not subscribed)")
        for row in topic.consumers
    }
    for row in topic.queues:
        if row.expected is not None:
            held.setdefault(row.expected, []).append(row.queue)
    return CountAllocation(
        total=scenario.total,
        replicas=tuple((m.name, n) for m, n in zip(group.members, scenario.replicas, strict=True)),
        assignments=tuple(
            (cid, label.get(cid, "?"), tuple(queues)) for cid, queues in held.items()
        ),
    )


# --------------------------------------------------------------------------- the check


def _not_declared(group: GroupDecl, topic: str) -> tuple[str, str]:
    """Message and hint of NO_ROUTE in a config: the topic is declared nowhere."""
    members = [m.name for m in group.members if m.subscription(topic) is not None]
    who = ", ".join(members) or "nobody"
    return (
        f"{topic} is subscribed in {group.name} (by {who}) but no input declares it: "
        "without a route its clients consume nothing from it",
        f"declare {topic} under topics: (or pass the broker's topics.json), or fix the "
        "subscription's topic name",
    )


def _topic_not_declared(group: GroupDecl, topic: str) -> list[CheckFinding]:
    """NO_ROUTE when the engine did not report it (e.g. a broadcasting group)."""
    message, hint = _not_declared(group, topic)
    return [
        CheckFinding(
            code=Code.NO_ROUTE.value,
            severity=Severity.warning,
            loc=sub.loc,
            group=group.name,
            topic=topic,
            message=message,
            hint=hint,
        )
        for sub in (m.subscription(topic) for m in group.members)
        if sub is not None
    ]


def _undeclared_members_finding(group: GroupDecl) -> CheckFinding:
    return CheckFinding(
        code=Code.NO_CONSUMERS.value,
        severity=Severity.info,
        loc=group.loc,
        group=group.name,
        topic=None,
        message=(
            f"group {group.name} exists on the broker but no config declares its members: "
            "not checked"
        ),
        hint=f"declare {group.name} with its members under groups: in an rmqlb YAML",
    )


def check_group(
    config: CheckConfig,
    group: GroupDecl,
    options: CheckOptions,
    diagnoser: Diagnoser,
) -> tuple[list[CaseResult], list[CountsTable]]:
    """Check one group: its cases (one per subscribed topic, plus the group itself when it
    has group-level findings or no topics) and, on request, its allocation tables."""
    topics = group.topics()
    if not group.members_declared:
        finding = _undeclared_members_finding(group)
        return [CaseResult(group.name, None, group.loc, (), (finding,), skipped=True)], []
    interesting = [config.topics[t].readable_queues for t in topics if t in config.topics]
    walk = scenarios(group, interesting)
    considered = [s.total for s in walk]
    seen: dict[tuple[str, str | None, Loc], _Seen] = {}
    engine_topics: set[str | None] = set()
    rows: dict[str, list[CountAllocation]] = {t: [] for t in topics}
    strategy_label = describe(group.strategy) if group.strategy is not None else "AVG"
    # A group without members is still diagnosed once (the engine reports NO_CONSUMERS).
    steps: list[Scenario | None] = list(walk) or [None]
    for step in steps:
        snapshot, owners = build_snapshot(config, group, step or Scenario(0, ()))
        report = diagnoser(snapshot, options.max_imbalance)
        by_id = {f.id: f for f in report.findings if f.id is not None}
        for raw in report.findings:
            if raw.code in DROPPED_CODES or raw.group != group.name:
                continue
            cause = by_id.get(raw.caused_by) if raw.caused_by is not None else None
            engine_topics.add(raw.topic)
            for loc in locate(raw, group, config, owners):
                key = (raw.code.value, raw.topic, loc)
                entry = seen.get(key)
                if entry is None:
                    entry = seen[key] = _Seen(raw, raw.severity)
                if cause is not None and cause.code not in DROPPED_CODES and entry.cause is None:
                    entry.cause = (cause.code.value, cause.topic)
                elif raw.severity.rank > entry.severity.rank:
                    entry.severity = raw.severity
                if step is not None and step.total not in entry.counts:
                    entry.counts.append(step.total)
        if options.keep_allocations and step is not None:
            for group_report in report.groups:
                if group_report.group != group.name:
                    continue
                strategy_label = group_report.strategy
                for topic_report in group_report.topics:
                    if topic_report.topic in rows and not topic_report.retry:
                        rows[topic_report.topic].append(
                            _allocation(step, group, topic_report, owners)
                        )
    threshold = options.max_imbalance or DiagnoseOptions().max_imbalance
    proven: dict[tuple[str, str | None, Problem | None], tuple[tuple[Proposal, ...], str]] = {}

    def prove(
        code: str, topic: str | None, consumers: tuple[str, ...]
    ) -> tuple[tuple[Proposal, ...], str]:
        target = target_of(code, consumers)
        if topic is None or target is None:
            return (), ""
        key = (code, topic, target)
        if key not in proven:
            proven[key] = range_proposals(config, group, topic, target, threshold)
        return proven[key]

    findings = _merge(seen, considered, group, prove)
    for topic in topics:
        if topic not in config.topics and topic not in engine_topics:
            findings.extend(_topic_not_declared(group, topic))
    findings = link_check_findings(group.name, findings)
    by_topic: dict[str | None, list[CheckFinding]] = {}
    for finding in findings:
        by_topic.setdefault(finding.topic if finding.topic in topics else None, []).append(finding)
    cases = [
        CaseResult(
            group.name,
            t,
            group.loc,
            tuple(considered),
            tuple(sort_check_findings(by_topic.get(t, []))),
        )
        for t in topics
    ]
    if not topics or None in by_topic:
        cases.append(
            CaseResult(
                group.name,
                None,
                group.loc,
                tuple(considered),
                tuple(sort_check_findings(by_topic.get(None, []))),
            )
        )
    tables = []
    if options.keep_allocations:
        for topic in topics:
            decl = config.topics.get(topic)
            tables.append(
                CountsTable(
                    group.name,
                    topic,
                    strategy_label,
                    decl.readable_queues if decl is not None else 0,
                    tuple(rows[topic]),
                    declared=decl is not None,
                )
            )
    return cases, tables


def _topic_loc(decl: TopicDecl, found: TopicFinding) -> Loc:
    broker = next((b for b in decl.brokers if b.broker == found.broker), None)
    if broker is None:
        return decl.loc
    if found.code is Code.WRITE_EXCEEDS_READ or found.about_write_count:
        return broker.write_loc
    if found.code in (Code.QUEUE_NOT_READABLE, Code.QUEUE_NOT_WRITABLE):
        return broker.perm_loc
    return broker.read_loc


def check_topic(config: CheckConfig, decl: TopicDecl) -> CaseResult | None:
    """The topic on its own (see the module docstring); ``None`` for a built-in topic (or
    the topic a broker names after itself)."""
    if is_system_topic(decl.name) or decl.name in config.cluster_brokers:
        return None
    found = topic_findings(topic_route(decl), cluster=config.cluster_brokers)
    findings = [
        CheckFinding(
            code=f.code.value,
            severity=f.severity,
            loc=_topic_loc(decl, f),
            group=None,
            topic=decl.name,
            message=f.message,
            hint=f.hint,
            queues=f.queues,
        )
        for f in found
    ]
    return CaseResult(None, decl.name, decl.loc, (), tuple(sort_check_findings(findings)))


def run_check(
    config: CheckConfig,
    options: CheckOptions | None = None,
    diagnoser: Diagnoser | None = None,
) -> CheckResult:
    """Check every declared topic and group (see the module docstring)."""
    options = options or CheckOptions()
    diagnose_fn = diagnoser or engine_diagnoser
    cases: list[CaseResult] = [
        case
        for case in (check_topic(config, decl) for decl in config.topics.values())
        if case is not None
    ]
    tables: list[CountsTable] = []
    for group in config.groups.values():
        group_cases, group_tables = check_group(config, group, options, diagnose_fn)
        cases.extend(group_cases)
        tables.extend(group_tables)
    findings = sort_check_findings(f for case in cases for f in case.findings)
    return CheckResult(config, tuple(findings), tuple(cases), tuple(tables))
