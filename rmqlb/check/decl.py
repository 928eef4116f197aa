"""Declared topics and groups, each remembering the file and line it came from.

These are what the readers (:mod:`rmqlb.check.yamlconf`, :mod:`rmqlb.check.brokerfiles`)
produce and what :mod:`rmqlb.check.synth` turns into synthetic snapshots. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rmqlb.model.snapshot import PERM_READ, PERM_WRITE, MessageModel
from rmqlb.model.strategy import StrategySpec

DEFAULT_PERM = PERM_READ | PERM_WRITE


@dataclass(frozen=True, slots=True, order=True)
class Loc:
    """A place in an input file: ``file`` as the user named it, ``line`` 1-based."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class BrokerQueues:
    """One broker's queues of a topic (a ``QueueData`` as declared)."""

    broker: str
    read: int
    write: int
    perm: int
    loc: Loc
    read_loc: Loc
    write_loc: Loc
    perm_loc: Loc


@dataclass(frozen=True, slots=True)
class TopicDecl:
    """A declared topic: its brokers' queue counts; ``queues_loc`` is where counts are set."""

    name: str
    brokers: tuple[BrokerQueues, ...]
    loc: Loc
    queues_loc: Loc

    @property
    def readable_queues(self) -> int:
        """How many queues a client puts in ``mqAll`` (readable brokers' ``read`` counts)."""
        return sum(b.read for b in self.brokers if b.perm & PERM_READ)


@dataclass(frozen=True, slots=True)
class SubscriptionDecl:
    """One ``topic: expression`` line of a member."""

    topic: str
    expression: str
    expression_type: str
    loc: Loc


@dataclass(frozen=True, slots=True)
class MemberDecl:
    """A deployment joining a group: ``replicas`` (a fixed count or ``min..max``) and what
    each replica subscribes to."""

    name: str
    min_replicas: int
    max_replicas: int
    subscriptions: tuple[SubscriptionDecl, ...]
    loc: Loc
    replicas_loc: Loc
    subscriptions_loc: Loc
    strategy: StrategySpec | None = None
    strategy_loc: Loc | None = None
    room: str | None = None
    #: Who assigns this member's queues when it differs from its group's ``rebalance``:
    #: ``False`` for a member that balances itself in a group the brokers assign (a client
    #: older than 5.0 left in it), ``True`` for the converse; ``None``: as the group.
    broker_assigned: bool | None = None

    def subscription(self, topic: str) -> SubscriptionDecl | None:
        """This member's subscription to ``topic``, if any."""
        for sub in self.subscriptions:
            if sub.topic == topic:
                return sub
        return None


@dataclass(frozen=True, slots=True)
class GroupDecl:
    """A consumer group. ``members_declared`` is False for a group only a broker file names
    (nobody said who joins it, so it cannot be checked)."""

    name: str
    loc: Loc
    members: tuple[MemberDecl, ...] = ()
    strategy: StrategySpec | None = None
    strategy_loc: Loc | None = None
    message_model: MessageModel = MessageModel.CLUSTERING
    members_declared: bool = True
    members_loc: Loc | None = None
    #: 5.x: the brokers assign the members' queues (``clientRebalance=false``), in POP mode
    #: with this share number when ``pop_share`` is given, else PULL.
    broker_assigned: bool = False
    pop_share: int | None = None

    def assigned_by_broker(self, member: MemberDecl) -> bool:
        """Whether the brokers assign ``member``'s queues (its own ``rebalance``, else the
        group's)."""
        return self.broker_assigned if member.broker_assigned is None else member.broker_assigned

    def topics(self) -> list[str]:
        """Every topic some member subscribes to, in declaration order."""
        seen: dict[str, None] = {}
        for member in self.members:
            for sub in member.subscriptions:
                seen.setdefault(sub.topic, None)
        return list(seen)


@dataclass(frozen=True, slots=True)
class CheckConfig:
    """Everything the input files declare, merged. ``cluster_brokers`` are the brokers whose
    own topics.json was given: taken together as one cluster (TOPIC_NOT_ON_ALL_BROKERS)."""

    topics: dict[str, TopicDecl] = field(default_factory=dict)
    groups: dict[str, GroupDecl] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    cluster_brokers: tuple[str, ...] = ()
