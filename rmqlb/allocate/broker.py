"""Broker-side assignment: what a 5.x broker's ``QueryAssignmentProcessor`` answers a client.

A 5.x push consumer with ``clientRebalance=false`` (not orderly, not broadcasting) asks a
broker of the topic for its queues (QUERY_ASSIGNMENT, a broker picked at random from the
topic's route at each rebalance) instead of computing them. The broker answers from **its
own** consumer list of the group and **its own** cached route of the topic, with the
(topic, group)'s request mode on it:

- ``serverLoadBalancerEnable=false``: every queue of the route, to every client;
- the strategy is looked up by the name the client sends: the broker knows only ``AVG`` and
  ``AVG_BY_CIRCLE``; any other name gets no assignment (``None``: the client keeps what it
  had, or nothing);
- PULL: the named strategy, computed for the asking client alone (a client missing from the
  broker's list gets nothing);
- POP (``allocate4Pop``) with share number N and c clients in the broker's list: N <= 0 or
  N >= c - 1 gives every broker of the route as queue id -1 (pop every queue there);
  otherwise, when c <= queues, the client's own share plus the shares of the next N clients
  of the sorted list (wrapping round); when c > queues, one queue each, ``index % queues``;
- the mode of a (topic, group) no mode was set for is the broker's
  ``defaultMessageRequestMode`` (with ``defaultPopShareQueueNum`` when POP), except retry
  topics, always PULL;
- where Java throws inside the allocation (an empty route, an empty consumer list, an empty
  client id), or the route or the group is unknown to the broker, the answer carries no
  assignment.

5.0.0 and 5.1.4 compute the same (5.1.4 changed only imports and the strategies' logger).

Worked example: topic T with 4 queues on broker-a, POP with share 1, clients c0 < c1 < c2
(AVG gives c0 a:0 a:1, c1 a:2, c2 a:3)::

    c0 -> own a:0 a:1 + c1's a:2          = a:0 a:1 a:2
    c1 -> own a:2     + c2's a:3          = a:2 a:3
    c2 -> own a:3     + c0's a:0 a:1      = a:0 a:1 a:3

>>> qs = tuple(MessageQueue("T", "broker-a", i) for i in range(4))
>>> state = BrokerState(qs, ("c0", "c1", "c2"), MessageRequestMode(RequestMode.POP, 1))
>>> [q.label() for q in query_assignment(state, "c2", "AVG") or ()]
['broker-a:0', 'broker-a:1', 'broker-a:3']

With share 2 (>= 3 - 1) every client gets ``broker-a:-1``, the whole broker; a name the
broker does not know gets no assignment:

>>> pop_all = BrokerState(qs, ("c0", "c1", "c2"), MessageRequestMode(RequestMode.POP, 2))
>>> [q.label() for q in query_assignment(pop_all, "c0", "AVG") or ()]
['broker-a:-1']
>>> query_assignment(state, "c0", "CONSISTENT_HASH") is None
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rmqlb.allocate.avg import avg_block
from rmqlb.errors import AllocationError
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import WHOLE_BROKER, MessageQueue, queue_sort_key
from rmqlb.model.snapshot import (
    BROKER_DEFAULTS,
    RETRY_PREFIX,
    BrokerConfig,
    MessageRequestMode,
    RequestMode,
)

#: The strategy names ``QueryAssignmentProcessor`` registers (``getName()`` of
#: ``AllocateMessageQueueAveragely`` and ``AllocateMessageQueueAveragelyByCircle``).
BROKER_STRATEGY_NAMES = ("AVG", "AVG_BY_CIRCLE")
#: ``Character.isWhitespace`` (what commons-lang ``StringUtils.isBlank`` tests each char with):
#: the Unicode space separators but the no-break ones, and these controls.
_JAVA_WHITESPACE_CONTROLS = frozenset("\t\n\v\f\r\x1c\x1d\x1e\x1f")
_NO_BREAK_SPACES = frozenset("\u00a0\u2007\u202f")

Queues = tuple[MessageQueue, ...]


class _NoAssignment(Exception):
    """Java threw inside the allocation: the broker answers without an assignment."""


@dataclass(frozen=True, slots=True)
class BrokerState:
    """What one broker assigns a (topic, group) from.

    ``queues``: the readable queues of its cached route of the topic (``None``: it has no
    route); ``client_ids``: its consumer list of the group (``None``: the group is not known
    there); ``mode``: the (topic, group)'s request mode on it (see :func:`request_mode`).
    """

    queues: Sequence[MessageQueue] | None
    client_ids: Sequence[str] | None
    mode: MessageRequestMode = field(default_factory=MessageRequestMode)
    server_load_balancer_enable: bool = True


def request_mode(
    topic: str, set_mode: MessageRequestMode | None, config: BrokerConfig | None = None
) -> MessageRequestMode:
    """The mode a broker serves (``topic``, group) with: the one set for it, else PULL for a
    retry topic, else the broker's default (unknown config values: the Java defaults).

    >>> request_mode("%RETRY%G", None, BrokerConfig(default_message_request_mode=RequestMode.POP))
    MessageRequestMode(mode=<RequestMode.PULL: 'PULL'>, pop_share_queue_num=0)
    >>> request_mode("T", None, BrokerConfig(default_message_request_mode=RequestMode.POP))
    MessageRequestMode(mode=<RequestMode.POP: 'POP'>, pop_share_queue_num=-1)
    """
    if set_mode is not None:
        return set_mode
    if topic.startswith(RETRY_PREFIX):
        return MessageRequestMode(RequestMode.PULL)
    config = config or BROKER_DEFAULTS
    mode = config.default_message_request_mode or BROKER_DEFAULTS.default_message_request_mode
    assert mode is not None
    if mode is not RequestMode.POP:
        return MessageRequestMode(mode)
    share = config.default_pop_share_queue_num
    if share is None:
        share = BROKER_DEFAULTS.default_pop_share_queue_num
    assert share is not None
    return MessageRequestMode(mode, share)


def query_assignment(
    state: BrokerState, client_id: str, strategy_name: str | None, broadcasting: bool = False
) -> Queues | None:
    """The queues the broker answers ``client_id`` (``None``: no assignment), sorted.

    ``strategy_name`` is the name the client sends (its strategy's ``getName()``; ``None``
    when it has none, which the broker cannot look up either).
    """
    mq_set = state.queues
    if broadcasting or mq_set is None:
        return None if mq_set is None else _distinct(mq_set)
    if not state.server_load_balancer_enable:
        return _distinct(mq_set)
    if state.client_ids is None:
        return None
    mq_all = sorted(set(mq_set), key=queue_sort_key)
    cid_all = sorted(state.client_ids, key=java_key)
    if strategy_name not in BROKER_STRATEGY_NAMES:
        return None
    try:
        if state.mode.mode is RequestMode.POP:
            result = _allocate4pop(
                strategy_name, client_id, mq_all, cid_all, state.mode.pop_share_queue_num
            )
        else:
            result = _strategy(strategy_name, client_id, mq_all, cid_all)
    except _NoAssignment:
        return None
    return _distinct(result)


def query_all(
    state: BrokerState, strategy_names: Mapping[str, str | None], broadcasting: bool = False
) -> dict[str, Queues | None]:
    """:func:`query_assignment` for every client that asks: client id -> its strategy name."""
    return {
        cid: query_assignment(state, cid, name, broadcasting)
        for cid, name in strategy_names.items()
    }


def _distinct(queues: Iterable[MessageQueue]) -> Queues:
    """A Java ``HashSet`` of queues, as a sorted tuple."""
    return tuple(sorted(set(queues), key=queue_sort_key))


def _strategy(
    name: str, client_id: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
) -> list[MessageQueue]:
    """``AllocateMessageQueueAveragely`` / ``...ByCircle.allocate`` for one client, with
    ``AbstractAllocateMessageQueueStrategy.check`` before it."""
    if not client_id or not mq_all or not cid_all:
        raise _NoAssignment
    if client_id not in cid_all:
        return []
    index = cid_all.index(client_id)
    if name == "AVG":
        start, size = avg_block(len(mq_all), len(cid_all), index)
        return list(mq_all[start : start + size])
    return list(mq_all[index :: len(cid_all)])


def _allocate4pop(
    name: str, client_id: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], share: int
) -> list[MessageQueue]:
    """``QueryAssignmentProcessor.allocate4Pop``."""
    if share <= 0 or share >= len(cid_all) - 1:
        return [MessageQueue(mq.topic, mq.broker_name, WHOLE_BROKER) for mq in mq_all]
    if len(cid_all) <= len(mq_all):
        result = _strategy(name, client_id, mq_all, cid_all)
        if client_id in cid_all:
            index = cid_all.index(client_id)
            for _ in range(share):
                index = (index + 1) % len(cid_all)
                result += _strategy(name, cid_all[index], mq_all, cid_all)
        return result
    # more clients than queues: the processor's own ``allocate``, one queue each
    if _java_blank(client_id) or not mq_all or not cid_all:
        raise _NoAssignment
    if client_id not in cid_all:
        return []
    return [mq_all[cid_all.index(client_id) % len(mq_all)]]


def _java_blank(text: str) -> bool:
    """``StringUtils.isBlank``: empty, or only ``Character.isWhitespace`` characters."""
    return all(_java_whitespace(ch) for ch in text)


def _java_whitespace(ch: str) -> bool:
    if ch in _JAVA_WHITESPACE_CONTROLS:
        return True
    if ch in _NO_BREAK_SPACES:
        return False
    return ch.isspace() and ch not in "\x85"  # U+0085 is a control, not a separator, in Java


def broker_allocate(
    strategy_name: str,
    queues: Sequence[MessageQueue],
    consumers: Sequence[str],
    mode: MessageRequestMode,
) -> dict[str, list[MessageQueue]]:
    """What one broker with this route and consumer list answers every client (a client id
    listed twice, once), queue id -1 written out as every queue of that broker, in Java
    order; the whole-group form ``simulate`` uses.

    Raises :class:`~rmqlb.errors.AllocationError` where the broker answers without an
    assignment (a strategy it does not know, an empty route or list).

    >>> qs = [MessageQueue("T", "broker-a", i) for i in range(2)]
    >>> pop = MessageRequestMode(RequestMode.POP, -1)
    >>> {c: [q.label() for q in v] for c, v in broker_allocate("AVG", qs, ["x", "y"], pop).items()}
    {'x': ['broker-a:0', 'broker-a:1'], 'y': ['broker-a:0', 'broker-a:1']}
    """
    if strategy_name not in BROKER_STRATEGY_NAMES:
        raise AllocationError(
            "the broker's QueryAssignmentProcessor knows only "
            f"{' and '.join(BROKER_STRATEGY_NAMES)}: a client asking with {strategy_name} "
            "gets no assignment"
        )
    state = BrokerState(tuple(queues), tuple(consumers), mode)
    route = sorted(set(queues), key=queue_sort_key)
    out: dict[str, list[MessageQueue]] = {}
    for cid in sorted(set(consumers), key=java_key):
        got = query_assignment(state, cid, strategy_name)
        if got is None:
            raise AllocationError(
                "the broker answers without an assignment (an empty route or consumer list, "
                "or an empty client id)"
            )
        expanded: list[MessageQueue] = []
        for mq in got:
            if mq.queue_id == WHOLE_BROKER:
                expanded += [q for q in route if q.broker_name == mq.broker_name]
            else:
                expanded.append(mq)
        out[cid] = sorted(set(expanded), key=queue_sort_key)
    return out
