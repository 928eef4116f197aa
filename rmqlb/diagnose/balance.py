"""Who balances each client: itself (every 4.x client; a 5.x one by default), a broker
(5.x ``clientRebalance=false``: QUERY_ASSIGNMENT, see :mod:`rmqlb.diagnose.brokerside`) or a
5.x Proxy (gRPC), reported or inferred; and the signs that a group no broker lists a consumer
of is consumed through a Proxy.
"""

from __future__ import annotations

from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import (
    RETRY_PREFIX,
    V5_0_0,
    Consumer,
    Group,
    QueueOffset,
    Rebalance,
    RequestMode,
    Snapshot,
    rebalance_from_properties,
    subscribes_retry,
)
from rmqlb.model.system import is_system_group

#: ``consumeType`` of a pop consumer.
POP_CONSUME_TYPE = "CONSUME_POP"


def through_proxy_remoting(consumer: Consumer) -> bool:
    """A remoting client connected through a 5.1+ Proxy's remoting port: listed by the Proxy,
    not reported as popping through it, not of a gRPC client's id form, and subscribing a
    retry topic (a remoting push consumer subscribes its group's ``%RETRY%`` topic; a gRPC
    client none; a Proxy lists the group's subscriptions, not each client's). It
    balances itself over the route and consumer list the Proxy gives it; the Proxy relays no
    request for its running info, so what it holds stays unknown."""
    return (
        consumer.proxy is not None
        and consumer.rebalance is not Rebalance.PROXY
        and not _grpc_client_id(consumer.client_id)
        and subscribes_retry(consumer.subscriptions)
    )


def _grpc_client_id(client_id: str) -> bool:
    """The id form of RocketMQ's 5.x gRPC clients: ``hostname@pid@index@<base36 time>``."""
    parts = client_id.split("@")
    return (
        len(parts) == 4
        and parts[1].isdigit()
        and parts[2].isdigit()
        and parts[3].isalnum()
        and parts[3].islower()
    )


def is_proxy_client(consumer: Consumer) -> bool:
    """A 5.x gRPC client, which pops through its Proxy: listed by a Proxy (unless
    :func:`through_proxy_remoting`), or of a gRPC client's id form."""
    if consumer.rebalance is Rebalance.PROXY:
        return True
    if consumer.proxy is not None:
        return not through_proxy_remoting(consumer)
    return _grpc_client_id(consumer.client_id)


#: Why a client a Proxy listed balances itself.
THROUGH_PROXY = (
    "a remoting client connected through the Proxy: it subscribes the retry topic, which no "
    "gRPC client does"
)


#: Why a pull consumer is taken to balance itself (only a push consumer can ask a broker).
PULLS_ITSELF = (
    "a pull consumer balances itself over what it subscribe()s, or pulls what its application "
    "assign()s"
)


def client_balance(consumer: Consumer, group: Group) -> tuple[Rebalance, str | None]:
    """Who balances ``consumer``, and why rmqlb thinks so when the client did not report it
    (``None``: reported).

    Not reported: a client a Proxy listed pops through it unless it is a remoting client
    (:func:`through_proxy_remoting`); a gRPC client by its id; a client holding pop queues,
    or a group of ``CONSUME_POP``, by the broker (only QUERY_ASSIGNMENT hands out POP
    queues); a pull consumer, or a client older than 5.0, balances itself (it cannot ask);
    any other balances itself, Java's default.
    """
    if consumer.rebalance is not None:
        return consumer.rebalance, None
    reported = rebalance_from_properties(consumer.properties)
    if reported is not None:
        return reported, None
    if through_proxy_remoting(consumer):
        return Rebalance.CLIENT, THROUGH_PROXY
    if consumer.proxy is not None:
        return Rebalance.PROXY, None
    if is_proxy_client(consumer):
        return Rebalance.PROXY, "its client id is a gRPC client's"
    if consumer.pop_assigned or POP_CONSUME_TYPE in (consumer.consume_type, group.consume_type):
        return Rebalance.BROKER, "it holds POP queues, which only the broker assigns"
    if consumer.pulls_actively:
        return Rebalance.CLIENT, PULLS_ITSELF
    if consumer.version is not None and consumer.version < V5_0_0:
        return Rebalance.CLIENT, "a client older than 5.0 cannot ask the broker"
    return Rebalance.CLIENT, "clientRebalance not reported: Java's default, true"


#: A group whose last consumed message is at most this old (before the capture) is being
#: consumed.
RECENT_MS = 10 * 60_000


def consumed_recently(offset: QueueOffset, now_ms: int) -> bool:
    """Whether a message of the offset's queue was consumed within :data:`RECENT_MS` before
    ``now_ms``."""
    stamp = offset.last_timestamp
    return bool(stamp) and now_ms - stamp <= RECENT_MS


def proxy_evidence(snapshot: Snapshot, group: Group, now_ms: int | None) -> list[str]:
    """Why a group no broker lists a consumer of is being consumed anyway (empty: no sign).

    5.x gRPC clients consume through a Proxy, and a 5.x broker does not list them
    (GET_CONSUMER_CONNECTION_LIST answers 206): only offsets move. Signs: a message consumed
    within :data:`RECENT_MS` of the capture, a fetch rate its brokers count, a POP request
    mode set for the group, clients a Proxy listed.
    """
    out: list[str] = []
    tps = group.broker_consume_tps
    if tps:
        out.append(f"its brokers count it fetching {tps:,.1f} messages/s (consumeTps)")
    if now_ms is not None:
        recent = [o for o in group.offsets if consumed_recently(o, now_ms)]
        if recent:
            newest = max(o.last_timestamp for o in recent)
            seconds = max(0, now_ms - newest) // 1000
            out.append(
                f"its last consumed message was stored {seconds} s before the capture "
                f"({plural_queues(len(recent))} consumed within {RECENT_MS // 60_000} min)"
            )
    pop_topics = sorted(
        {
            topic
            for view in group.on_brokers.values()
            for topic, mode in (view.request_modes or {}).items()
            if mode.mode is RequestMode.POP
        },
        key=java_key,
    )
    if pop_topics:
        out.append(f"a POP request mode is set for it on {', '.join(pop_topics)}")
    return out


def consumed_invisibly(snapshot: Snapshot, group: Group, now_ms: int | None) -> bool:
    """Whether a group no broker lists a consumer of is consumed through a Proxy: a POP
    request mode is set for it, or it shows recent consumption (:func:`proxy_evidence`)
    while no broker is known to run 4.x and it has no ``%RETRY%`` topic (push consumers
    create one at their first heartbeat: a group that has one and no consumer listed had
    remoting clients that just stopped, not gRPC clients). Never for one of RocketMQ's own
    groups: the brokers consume with some of them themselves (the POP revive service)."""
    if is_system_group(group.name):
        return False
    evidence = proxy_evidence(snapshot, group, now_ms)
    if not evidence:
        return False
    if any(e.startswith("a POP request mode") for e in evidence):
        return True
    if any(b.version is not None and b.version < V5_0_0 for b in snapshot.brokers.values()):
        return False
    return RETRY_PREFIX + group.name not in snapshot.topics


def plural_queues(n: int) -> str:
    return f"{n} queue" if n == 1 else f"{n} queues"


def five_x(snapshot: Snapshot) -> bool:
    """Some broker of the snapshot runs 5.0 or later (its version is known)."""
    return any(b.version is not None and b.version >= V5_0_0 for b in snapshot.brokers.values())
