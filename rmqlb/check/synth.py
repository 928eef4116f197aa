"""Turn a declared group into synthetic snapshots, one per consumer count to consider.

A group's consumer count is the sum of its members' replicas. Members scale up together, one
replica at a time in declaration order (round robin), from every member at its minimum to
every member at its maximum, so each total between ``sum(min)`` and ``sum(max)`` is one
:class:`Scenario`. Every total up to :data:`FULL_WALK` is considered; above it, the walk is
sampled: the totals next to each subscribed topic's readable queue count (``q-1, q, q+1``,
where idleness starts), ``q//k`` and ``q//k + 1`` for ``k`` up to 8 (where the split changes from
``k`` to ``k+1`` queues per consumer), ``2q``, a geometric ladder (x1.25) and the maximum.

Worked example: members ``api: 1..3`` and ``worker: 2`` give totals 3, 4, 5 with replicas
``(1, 2)``, ``(2, 2)``, ``(3, 2)``.

Client ids look real and say where they come from: ``10.<member#>.<i/256>.<i%256>@<member>-<i>``
(``IP@instanceName``), e.g. ``10.1.0.2@order-service-2``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rmqlb.check.decl import CheckConfig, GroupDecl, MemberDecl, TopicDecl
from rmqlb.errors import InputError
from rmqlb.model.snapshot import (
    RETRY_PREFIX,
    Consumer,
    Group,
    GroupOnBroker,
    MessageRequestMode,
    QueueData,
    Rebalance,
    RequestMode,
    Snapshot,
    Source,
    Subscription,
    TopicRoute,
)
from rmqlb.model.strategy import Avg, MachineRoomNearby, RoomTable, StrategySpec

FULL_WALK = 64
"""Every consumer count up to this one is checked; larger counts are sampled."""
LADDER = 1.25
SPLIT_BOUNDARIES = 8
SUB_VERSION_BASE = 1_700_000_000_000


@dataclass(frozen=True, slots=True)
class Scenario:
    """One consumer count of a group: the total and each member's replicas."""

    total: int
    replicas: tuple[int, ...]


def distribute(mins: tuple[int, ...], maxs: tuple[int, ...], total: int) -> tuple[int, ...]:
    """Each member's replicas when the group has ``total`` consumers (round-robin growth).

    >>> distribute((1, 2), (3, 2), 4)
    (2, 2)
    >>> distribute((0, 0, 0), (5, 1, 5), 6)
    (3, 1, 2)
    """
    extra = total - sum(mins)
    caps = [hi - lo for lo, hi in zip(mins, maxs, strict=True)]
    if extra < 0 or extra > sum(caps):
        raise ValueError(f"total {total} outside {sum(mins)}..{sum(maxs)}")
    # k full rounds give each member min(k, cap) more; find the largest k that fits.
    low, high = 0, max(caps, default=0)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(mid, c) for c in caps) <= extra:
            low = mid
        else:
            high = mid - 1
    grown = [min(low, c) for c in caps]
    left = extra - sum(grown)
    for i, cap in enumerate(caps):
        if left == 0:
            break
        if cap > grown[i]:
            grown[i] += 1
            left -= 1
    return tuple(lo + g for lo, g in zip(mins, grown, strict=True))


def considered_totals(low: int, high: int, interesting: Iterable[int] = ()) -> list[int]:
    """The consumer counts to check between ``low`` and ``high`` (see the module docstring).

    >>> considered_totals(1, 5)
    [1, 2, 3, 4, 5]
    >>> considered_totals(60, 200, [100])
    [60, 61, 62, 63, 64, 80, 99, 100, 101, 125, 156, 195, 200]
    >>> considered_totals(60, 300, [160])
    [60, 61, 62, 63, 64, 80, 81, 100, 125, 156, 159, 160, 161, 195, 244, 300]
    """
    keep = set(range(low, min(high, FULL_WALK) + 1))
    if high > FULL_WALK:
        for q in interesting:
            keep.update((q - 1, q, q + 1, q * 2))
            for k in range(2, SPLIT_BOUNDARIES + 1):  # where q/n crosses k queues each
                keep.update((q // k, q // k + 1))
        step = float(FULL_WALK)
        while step < high:
            step *= LADDER
            keep.add(round(step))
        keep.add(high)
    return sorted(t for t in keep if low <= t <= high)


def scenarios(group: GroupDecl, interesting: Iterable[int] = ()) -> list[Scenario]:
    """The scenarios of ``group`` to diagnose (none for a group without members)."""
    if not group.members:
        return []
    mins = tuple(m.min_replicas for m in group.members)
    maxs = tuple(m.max_replicas for m in group.members)
    return [
        Scenario(total, distribute(mins, maxs, total))
        for total in considered_totals(sum(mins), sum(maxs), interesting)
    ]


def client_id(member_index: int, member: MemberDecl, replica: int) -> str:
    """A realistic, deterministic client id (``IP@instanceName``)."""
    return f"10.{member_index + 1}.{replica // 256}.{replica % 256}@{member.name}-{replica}"


def effective_strategy(group: GroupDecl, member: MemberDecl) -> StrategySpec:
    """What a member's clients run: its own strategy, else the group's, else Java's AVG."""
    return member.strategy or group.strategy or Avg()


def topic_route(topic: TopicDecl) -> TopicRoute:
    """The NameServer route the declared topic would have."""
    return TopicRoute(
        topic.name,
        tuple(QueueData(b.broker, b.read, b.write, b.perm) for b in topic.brokers),
    )


def _with_rooms(spec: StrategySpec, rooms: dict[str, str]) -> StrategySpec:
    if (
        isinstance(spec, MachineRoomNearby)
        and isinstance(spec.consumer_rooms, RoomTable)
        and not spec.consumer_rooms.rooms
    ):
        return MachineRoomNearby(spec.inner, spec.broker_rooms, RoomTable(rooms))
    return spec


def _declared_modes(group: GroupDecl, topics: dict[str, TopicRoute]) -> dict[str, GroupOnBroker]:
    """The request mode a broker-assigned group declares, on every broker of its topics (its
    retry topics stay PULL, as on the broker)."""
    modes: dict[str, dict[str, MessageRequestMode]] = {}
    for name, route in topics.items():
        for qd in route.queue_datas:
            per_broker = modes.setdefault(qd.broker_name, {})
            if group.pop_share is not None and not name.startswith(RETRY_PREFIX):
                per_broker[name] = MessageRequestMode(RequestMode.POP, group.pop_share)
    return {broker: GroupOnBroker(request_modes=m) for broker, m in modes.items()}


def build_snapshot(
    config: CheckConfig, group: GroupDecl, scenario: Scenario
) -> tuple[Snapshot, dict[str, MemberDecl]]:
    """The snapshot of ``group`` at ``scenario``, and which member each client id belongs to.

    Only the group's declared subscribed topics are routed (an undeclared topic has no route,
    as in a real cluster). Consumers carry no actual assignment (``assigned=None``).
    """
    owners: dict[str, MemberDecl] = {}
    rooms: dict[str, str] = {}
    for index, (member, count) in enumerate(zip(group.members, scenario.replicas, strict=True)):
        for replica in range(count):
            cid = client_id(index, member, replica)
            owners[cid] = member
            if member.room is not None:
                rooms[cid] = member.room
    consumers: list[Consumer] = []
    for cid, member in owners.items():
        index = group.members.index(member)
        subs = tuple(
            Subscription(s.topic, s.expression_type, s.expression, SUB_VERSION_BASE + index)
            for s in member.subscriptions
        )
        strategy = _with_rooms(effective_strategy(group, member), rooms)
        consumers.append(
            Consumer(
                client_id=cid,
                subscriptions=subs,
                strategy=strategy,
                rebalance=(
                    Rebalance.BROKER if group.assigned_by_broker(member) else Rebalance.CLIENT
                ),
            )
        )
    group_strategy = None if group.strategy is None else _with_rooms(group.strategy, rooms)
    topics = {
        name: topic_route(config.topics[name]) for name in group.topics() if name in config.topics
    }
    snapshot_group = Group(
        name=group.name,
        message_model=group.message_model,
        consume_type="CONSUME_PASSIVELY",
        strategy=group_strategy,
        consumers=tuple(consumers),
        on_brokers=(
            _declared_modes(group, topics)
            if any(map(group.assigned_by_broker, group.members))
            else {}
        ),
    )
    snapshot = Snapshot(
        topics=topics, groups={group.name: snapshot_group}, source=Source(rmqlb="check")
    )
    return snapshot, owners


def declared_snapshot(config: CheckConfig, group: str | None, replicas: int | None) -> Snapshot:
    """The group a check config declares (``group``: its name, needed when several declare
    members) at ``replicas`` consumers (default: its maximum), as a snapshot: where
    ``simulate --check-config`` starts."""
    from rmqlb.diagnose.lookup import not_found  # noqa: PLC0415

    declared = [g for g in config.groups.values() if g.members_declared]
    if group is None:
        if len(declared) != 1:
            names = ", ".join(g.name for g in declared) or "none"
            raise InputError(f"name the group to simulate with --group (declared: {names})")
        chosen = declared[0]
    else:
        found = config.groups.get(group)
        if found is None or not found.members_declared:
            raise not_found(group, [g.name for g in declared], "in the check config")
        chosen = found
    mins = tuple(m.min_replicas for m in chosen.members)
    maxs = tuple(m.max_replicas for m in chosen.members)
    total = sum(maxs) if replicas is None else replicas
    if not sum(mins) <= total <= sum(maxs):
        raise InputError(
            f"--replicas {total}: {chosen.name} runs {sum(mins)}..{sum(maxs)} consumers"
        )
    snapshot, _ = build_snapshot(config, chosen, Scenario(total, distribute(mins, maxs, total)))
    return snapshot
