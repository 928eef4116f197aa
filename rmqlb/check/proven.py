"""Proven fix proposals over a declared group's whole replica range.

``rmqlb explain`` proves a proposal at the one consumer count a running group has; a declared
group has a range of counts (``replicas: 16..24``), and a proposal must hold at every one of
them. This module describes a declared (group, topic) as a
:class:`~rmqlb.diagnose.proposals.Subject` whose populations are exactly the synthetic client
ids :mod:`rmqlb.check.synth` gives each count ``rmqlb check`` considers: every count up to 64,
and above that the sampled ones, resampled around the proposed queue count. So applying a
proposal to the config and checking again allocates exactly what the proof allocated.

Replica proposals change one member: the one with the largest maximum among those that
subscribe the topic (the first on a tie); the others keep their ranges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rmqlb.check.decl import CheckConfig, GroupDecl, MemberDecl
from rmqlb.check.synth import client_id, considered_totals, distribute, effective_strategy
from rmqlb.check.yamlconf import MAX_REPLICAS
from rmqlb.diagnose.proposals import (
    Population,
    Problem,
    Subject,
    Wording,
    find_proposals,
    proposals_hint,
)
from rmqlb.diagnose.report import Code, Proposal
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MERGED_BROKER
from rmqlb.model.snapshot import PERM_READ
from rmqlb.model.strategy import StrategySpec

TARGETS = {Code.IDLE_CONSUMER: Problem.IDLE, Code.IMBALANCE: Problem.IMBALANCE}


def target_of(code: str, consumers: Sequence[str]) -> Problem | None:
    """The problem a finding is about when a count can fix it (UNCONSUMED_QUEUE only when
    the strategy hands queues to nobody, not to a non-subscriber)."""
    if code == Code.UNCONSUMED_QUEUE:
        return None if consumers else Problem.NOBODY
    return TARGETS.get(Code(code)) if code in Code.__members__ else None


def expected_strategy(group: GroupDecl) -> StrategySpec | None:
    """The strategy the engine computes *expected* with, when the members agree on it."""
    if group.strategy is not None:
        return group.strategy
    specs = {effective_strategy(group, m) for m in group.members}
    return specs.pop() if len(specs) == 1 else None


def varied_member(group: GroupDecl, topic: str) -> int | None:
    """The index of the member whose replicas a proposal changes."""
    members = [i for i, m in enumerate(group.members) if m.subscription(topic) is not None]
    if not members:
        return None
    return max(members, key=lambda i: (group.members[i].max_replicas, -i))


class _Walk:
    """The populations of one (group, topic), cached by each member's replicas."""

    def __init__(self, config: CheckConfig, group: GroupDecl, topic: str, member: int) -> None:
        self.group = group
        self.topic = topic
        self.member = member
        self.others = [
            config.topics[t].readable_queues
            for t in group.topics()
            if t in config.topics and t != topic
        ]
        self.cache: dict[tuple[int, ...], Population] = {}

    def population(self, replicas: tuple[int, ...]) -> Population:
        found = self.cache.get(replicas)
        if found is None:
            ids: list[str] = []
            subscribers: set[str] = set()
            for index, (member, count) in enumerate(zip(self.group.members, replicas, strict=True)):
                mine = [client_id(index, member, r) for r in range(count)]
                ids.extend(mine)
                if member.subscription(self.topic) is not None:
                    subscribers.update(mine)
            found = Population(tuple(sorted(ids, key=java_key)), frozenset(subscribers))
            self.cache[replicas] = found
        return found

    def _ranges(self, span: tuple[int, int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        members: Sequence[MemberDecl] = self.group.members
        mins = [m.min_replicas for m in members]
        maxs = [m.max_replicas for m in members]
        mins[self.member], maxs[self.member] = span
        return tuple(mins), tuple(maxs)

    def counts(self, span: tuple[int, int], readable: int) -> list[int]:
        """The consumer counts ``rmqlb check`` considers with this member's ``span``."""
        mins, maxs = self._ranges(span)
        return considered_totals(sum(mins), sum(maxs), [*self.others, readable])

    def __call__(self, span: tuple[int, int], readable: int) -> list[Population]:
        mins, maxs = self._ranges(span)
        return [self.population(distribute(mins, maxs, t)) for t in self.counts(span, readable)]


def range_proposals(
    config: CheckConfig,
    group: GroupDecl,
    topic: str,
    target: Problem,
    threshold: float,
) -> tuple[tuple[Proposal, ...], str]:
    """The proposals that remove ``target`` at every count of ``group``'s range, and the
    hint stating them (``((), "")`` when none is proven or the search does not apply)."""
    decl = config.topics.get(topic)
    spec = expected_strategy(group)
    member = varied_member(group, topic)
    if decl is None or spec is None or member is None:
        return (), ""
    readable = sorted(
        ((b.broker, b.read) for b in decl.brokers if b.perm & PERM_READ),
        key=lambda item: java_key(item[0]),
    )
    varied = group.members[member]
    walk = _Walk(config, group, topic, member)
    subject = Subject(
        topic,
        tuple(b for b, _ in readable),
        tuple(r for _, r in readable),
        spec,
        (varied.min_replicas, varied.max_replicas),
        threshold,
        walk,
        member=varied.name,
        max_replicas=MAX_REPLICAS,
        counts=walk.counts,
    )
    found = find_proposals(subject, target)
    # one member: its replicas are the group's, no member to name in the text
    found_text = tuple(replace(p, member=None) for p in found) if len(group.members) == 1 else found
    merged = [b for b, _ in readable] == [MERGED_BROKER]
    wording = Wording(
        topic, group.name, len(readable), spec, check=True, target=target, merged=merged
    )
    return found, proposals_hint(found_text, wording)
