"""What the brokers assign the clients that let them (5.x ``clientRebalance=false``).

For the clients a broker balances (:func:`rmqlb.diagnose.balance.client_balance` says which),
:func:`broker_side` computes, per broker of the topic's route, what that broker's
``QueryAssignmentProcessor`` answers (:mod:`rmqlb.allocate.broker`): from the broker's own
consumer list when the snapshot has it (else the group's), the topic's route, and the
(topic, group)'s request mode there (read, else the broker's default, else Java's).

The client asks a broker picked at random at each rebalance, so when the brokers' answers
differ its queues flap between them: *expected* is then the answer it holds, if it holds one
of them, else the first broker's (Java order), and :attr:`BrokerSide.disagree` is set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rmqlb.allocate.broker import BrokerState, Queues, query_assignment, request_mode
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import (
    V5_0_0,
    Consumer,
    Group,
    MessageRequestMode,
    Rebalance,
    RequestMode,
    Snapshot,
    TopicRoute,
)
from rmqlb.model.strategy import StrategySpec


def strategy_name(spec: StrategySpec | None) -> str | None:
    """The name a client sends in QUERY_ASSIGNMENT (its strategy's ``getName()``)."""
    return None if spec is None else spec.name


@dataclass(frozen=True, slots=True)
class BrokerAnswer:
    """What one broker answers the broker-balanced clients of one topic.

    ``mode_read`` / ``list_read``: the request mode and the consumer list were read from
    the broker (else assumed: the default mode, the group's list). ``reported``: the
    broker's own QUERY_ASSIGNMENT answers, where the snapshot has them. ``balancer_off``:
    its config says ``serverLoadBalancerEnable=false`` (it answers every client the whole
    route of the topic).
    """

    broker: str
    mode: MessageRequestMode
    mode_read: bool
    client_ids: tuple[str, ...]
    list_read: bool
    answers: Mapping[str, Queues | None]
    reported: Mapping[str, Queues | None]
    balancer_off: bool = False


@dataclass(frozen=True, slots=True)
class BrokerSide:
    """Broker-side assignment of one (group, topic): the clients it covers, each broker's
    answers and what each client should hold (queue id -1 expanded)."""

    topic: str
    clients: tuple[str, ...]
    names: Mapping[str, str | None]
    brokers: tuple[BrokerAnswer, ...]
    expected: Mapping[str, list[MessageQueue] | None]
    disagree: bool

    @property
    def pop(self) -> bool:
        """Some broker serves the topic by POP: several holders per queue are normal."""
        return any(b.mode.mode is RequestMode.POP for b in self.brokers)

    @property
    def unassigned(self) -> list[str]:
        """The clients every broker answers without an assignment."""
        return [c for c in self.clients if self.expected.get(c) is None]


def expand(queues: Iterable[MessageQueue], mq_all: Sequence[MessageQueue]) -> list[MessageQueue]:
    """Queue id -1 as every queue of that broker in ``mq_all``; others as they are."""
    out: list[MessageQueue] = []
    seen: set[MessageQueue] = set()
    for mq in queues:
        group = (
            [q for q in mq_all if q.broker_name == mq.broker_name and q.topic == mq.topic]
            if mq.queue_id < 0
            else [mq]
        )
        for q in group:
            if q not in seen:
                seen.add(q)
                out.append(q)
    return out


def broker_side(
    snapshot: Snapshot,
    group: Group,
    *,
    consumers: Sequence[Consumer],
    balance: Mapping[str, Rebalance],
    topic: str,
    route: TopicRoute,
    mq_all: Sequence[MessageQueue],
    held: Mapping[str, frozenset[MessageQueue]],
    default_name: str | None,
) -> BrokerSide | None:
    """Broker-side assignment of ``topic`` (``None``: no subscriber lets a broker assign).

    ``held``: what each client holds of the topic (-1 expanded), where known;
    ``default_name``: the strategy name of a client that does not report one.
    """
    clients = tuple(
        dict.fromkeys(
            c.client_id
            for c in consumers
            if c.subscribes(topic) and balance.get(c.client_id) is Rebalance.BROKER
        )
    )
    brokers_of_route = {qd.broker_name for qd in route.queue_datas}
    if not clients or all(_before_5(snapshot, b) for b in brokers_of_route):
        return None  # a 4.x broker cannot answer: the clients fall back to balancing themselves
    names = {cid: _name_of(consumers, cid, default_name) for cid in clients}
    group_ids = tuple(
        c.client_id for c in consumers if balance.get(c.client_id) is not Rebalance.PROXY
    )
    # brokers whose queues of the topic some client pops: the mode there is POP
    popped = {
        mq.broker_name
        for c in consumers
        if c.subscribes(topic)
        for mq in c.pop_assigned or ()
        if mq.topic == topic
    }
    brokers: list[BrokerAnswer] = []
    for broker in sorted(brokers_of_route, key=java_key):
        view = group.on_brokers.get(broker)
        info = snapshot.brokers.get(broker)
        config = info.config if info is not None else None
        set_mode = None
        mode_read = view is not None and view.request_modes is not None
        if view is not None and view.request_modes is not None:
            set_mode = view.request_modes.get(topic)
        mode = request_mode(topic, set_mode, config)
        if not mode_read and broker in popped and mode.mode is RequestMode.PULL:
            share = config.default_pop_share_queue_num if config is not None else None
            mode = MessageRequestMode(RequestMode.POP, -1 if share is None else share)
        list_read = view is not None and view.client_ids is not None
        ids = (
            tuple(view.client_ids)
            if view is not None and view.client_ids is not None
            else group_ids
        )
        enabled = config.server_load_balancer_enable if config is not None else None
        state = BrokerState(tuple(mq_all), ids, mode, enabled is not False)
        answers = {cid: query_assignment(state, cid, names[cid]) for cid in clients}
        reported = {
            a.client_id: a.queues
            for a in (view.assignments if view is not None else ())
            if a.topic == topic
        }
        brokers.append(
            BrokerAnswer(
                broker, mode, mode_read, ids, list_read, answers, reported, enabled is False
            )
        )
    expected: dict[str, list[MessageQueue] | None] = {}
    disagree = False
    for cid in clients:
        options = [_expanded(b.answers[cid], mq_all) for b in brokers]
        distinct = {None if o is None else frozenset(o) for o in options}
        if len(distinct) > 1:
            disagree = True
        mine = held.get(cid)
        chosen = options[0] if options else None
        if mine is not None:
            chosen = next((o for o in options if o is not None and frozenset(o) == mine), chosen)
        expected[cid] = chosen
    return BrokerSide(topic, clients, names, tuple(brokers), expected, disagree)


def _before_5(snapshot: Snapshot, broker: str) -> bool:
    """The broker is known to run a version before 5.0 (no QUERY_ASSIGNMENT)."""
    info = snapshot.brokers.get(broker)
    return info is not None and info.version is not None and info.version < V5_0_0


def _expanded(queues: Queues | None, mq_all: Sequence[MessageQueue]) -> list[MessageQueue] | None:
    return None if queues is None else expand(queues, mq_all)


def _name_of(consumers: Sequence[Consumer], cid: str, default: str | None) -> str | None:
    for c in consumers:
        if c.client_id == cid and c.strategy is not None:
            return strategy_name(c.strategy)
    return default
