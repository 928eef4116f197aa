"""The rule families. Each rule is a pure function returning findings.

- group rules ``(GroupContext, [TopicContext], topic_filter) -> [Finding]`` see the whole
  group (modes, membership, duplicate ids, unreachable clients, missing consumers);
- topic rules ``(TopicContext) -> [Finding]`` see one (group, topic).

Families: :mod:`.modes` (BROADCASTING, PROXY_CLIENTS, QUEUES_UNREPORTED), :mod:`.brokerside` (5.x
broker-side assignment: BROKER_REBALANCE, POP_MODE, BROKER_STRATEGY_UNKNOWN, POP_SHARE_ALL,
SERVER_LOAD_BALANCER_OFF, BROKERS_DISAGREE, MIXED_REBALANCE), :mod:`.membership`
(NO_CONSUMERS, PROXY_CONSUMED, DUPLICATE_CLIENT_ID, CLIENT_UNREACHABLE, SUBSCRIPTION_INCONSISTENT,
STRATEGY_INCONSISTENT, PROXY_LIST_SPLIT, BROKERS_DISAGREE for clients that balance
themselves), :mod:`.route`
(NO_ROUTE, WRITE_EXCEEDS_READ, QUEUE_NOT_READABLE, STATIC_TOPIC_OLD_CLIENT),
:mod:`.allocation` (ALLOCATION_FAILED, IDLE_CONSUMER, IMBALANCE, UNCONSUMED_QUEUE from the
expected side), :mod:`.actual` (UNCONSUMED_QUEUE held by nobody, DUPLICATE_ASSIGNMENT,
ASSIGNMENT_MISMATCH), :mod:`.stale` (STALE_ALLOCATION), :mod:`.lag` (LAG_SKEW),
:mod:`.health` (CONSUMER_STALLED, FLOW_CONTROLLED, CONSUME_FAILING, ORDERLY_LOCK_LOST,
POP_RETRY_TOO_LONG),
:mod:`.stalled` (QUEUE_STALLED, over two polls), :mod:`.configs` (CONSUME_DISABLED),
:mod:`.deadletters` (DEAD_LETTERS) and :mod:`.broadcast`
(BROADCAST_LAG).
:mod:`rmqlb.diagnose.causes` then links consequences to their causes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rmqlb.diagnose.context import GroupContext, TopicContext
from rmqlb.diagnose.report import Finding
from rmqlb.diagnose.rules import (
    actual,
    allocation,
    broadcast,
    brokerside,
    configs,
    deadletters,
    health,
    lag,
    membership,
    modes,
    route,
    stale,
    stalled,
)

GroupRule = Callable[[GroupContext, Sequence[TopicContext], str | None], list[Finding]]
TopicRule = Callable[[TopicContext], list[Finding]]

GROUP_RULES: tuple[GroupRule, ...] = (
    modes.check_modes,
    brokerside.check_balance,
    membership.check_no_consumers,
    membership.check_duplicate_client_ids,
    membership.check_unreachable,
    configs.check_configs,
    deadletters.check_dead_letters,
    stale.check_stale,
)

TOPIC_RULES: tuple[TopicRule, ...] = (
    route.check_route,
    route.check_static_topic,
    membership.check_subscriptions,
    membership.check_strategies,
    membership.check_proxy_lists,
    membership.check_message_models,
    brokerside.check_broker_topic,
    membership.check_broker_lists,
    allocation.check_allocation,
    actual.check_actual,
    lag.check_lag,
    health.check_health,
    stalled.check_stalled_queues,
    broadcast.check_broadcast_lag,
)

__all__ = ["GROUP_RULES", "TOPIC_RULES", "GroupRule", "TopicRule"]
