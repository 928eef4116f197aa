"""Rules on a topic's own configuration, whoever consumes it (``rmqlb check`` runs them for
every topic of every input, with or without groups).

One finding per broker entry of the route, at most:

=========================  ========  =====================================================
code                       severity  when
=========================  ========  =====================================================
NO_QUEUES                  warning   the broker declares 0 read and 0 write queues (error
                                     when no broker of the topic has a queue)
QUEUE_NOT_READABLE         warning   its perm lacks read (4): its queues are never consumed
                                     (not for ``%DLQ%`` topics: 4.x creates them write-only)
WRITE_EXCEEDS_READ         error     ``writeQueueNums > readQueueNums``: queues ``>= read``
                                     are written and never read
QUEUE_NOT_WRITABLE         info      a readable broker whose perm lacks write (2), or with 0
                                     write queues: producers skip it, it only drains
                                     (warning when no broker of the topic takes writes)
TOPIC_NOT_ON_ALL_BROKERS   warning   the cluster's brokers are known (several broker files)
                                     and the topic is missing on some of them
=========================  ========  =====================================================

Worked example: ``LoyaltyTopic`` with ``readQueueNums 4, writeQueueNums 8, perm 6`` on
``broker-a`` gives WRITE_EXCEEDS_READ for ``broker-a:4..7``; a topic with ``perm 2`` gives
QUEUE_NOT_READABLE; both whether or not a consumer group subscribes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rmqlb.diagnose.report import Code, Severity
from rmqlb.diagnose.rules.route import (
    not_readable_text,
    update_target,
    write_exceeds_read_text,
)
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.queue import MERGED_BROKER, MessageQueue
from rmqlb.model.snapshot import (
    DLQ_PREFIX,
    PERM_READ,
    PERM_WRITE,
    RETRY_PREFIX,
    QueueData,
    TopicRoute,
)
from rmqlb.model.system import is_system_topic


@dataclass(frozen=True, slots=True)
class TopicFinding:
    """A finding about a topic itself; ``broker`` is the broker entry it is about (``None``
    for the topic as a whole)."""

    code: Code
    severity: Severity
    topic: str
    broker: str | None
    message: str
    hint: str
    queues: tuple[MessageQueue, ...] = ()
    about_write_count: bool = False  # QUEUE_NOT_WRITABLE from writeQueueNums 0, not perm


def _addr(addrs: Mapping[str, str], broker: str) -> str:
    return addrs.get(broker) or f"<{broker} address>"


def _takes_writes(perm: int, write: int) -> bool:
    return bool(perm & PERM_WRITE) and write > 0


def topic_findings(
    route: TopicRoute,
    *,
    cluster: Sequence[str] = (),
    addrs: Mapping[str, str] | None = None,
) -> list[TopicFinding]:
    """Every problem of ``route`` on its own (see the module docstring). ``cluster`` lists
    the brokers of the topic's cluster when known; ``addrs`` their addresses for the
    mqadmin commands of the hints."""
    topic = route.topic
    if is_system_topic(topic):
        return []
    addrs = addrs or {}
    datas = route.queue_datas
    out: list[TopicFinding] = []
    empty = [qd for qd in datas if qd.read_queue_nums == 0 and qd.write_queue_nums == 0]
    writable = [qd for qd in datas if _takes_writes(qd.perm, qd.write_queue_nums)]
    for qd in datas:
        broker, r, w, perm = qd.broker_name, qd.read_queue_nums, qd.write_queue_nums, qd.perm
        if r == 0 and w == 0:
            whole = len(empty) == len(datas)
            out.append(
                TopicFinding(
                    Code.NO_QUEUES,
                    Severity.error if whole else Severity.warning,
                    topic,
                    broker,
                    f"{topic} on {broker} has no queue (readQueueNums 0, writeQueueNums 0)"
                    + (
                        ": nothing can be sent to the topic or consumed from it"
                        if whole
                        else ": producers and consumers use only its other brokers there"
                    ),
                    f"give it queues: mqadmin updateTopic -t {topic} "
                    f"{update_target(broker, _addr(addrs, broker))} "
                    "-r <queues> -w <queues> (the same count on every broker of the topic), or "
                    f"delete it from {broker} (mqadmin deleteTopic)",
                )
            )
            continue
        if not perm & PERM_READ and not topic.startswith(DLQ_PREFIX):
            count = max(r, w)
            message, hint = not_readable_text(
                topic, broker, perm, count, _addr(addrs, broker), from_route=False
            )
            out.append(
                TopicFinding(
                    Code.QUEUE_NOT_READABLE,
                    Severity.warning,
                    topic,
                    broker,
                    message,
                    hint,
                    tuple(MessageQueue(topic, broker, i) for i in range(count)),
                )
            )
        elif perm & PERM_WRITE and w > r:
            message, hint, stranded = write_exceeds_read_text(
                topic, broker, r, w, _addr(addrs, broker)
            )
            out.append(
                TopicFinding(
                    Code.WRITE_EXCEEDS_READ, Severity.error, topic, broker, message, hint, stranded
                )
            )
        if perm & PERM_READ and not _takes_writes(perm, w):
            out.append(_not_writable(topic, qd, nowhere=not writable, addrs=addrs))
    out.extend(_missing_brokers(route, cluster))
    return out


def _not_writable(
    topic: str, qd: QueueData, *, nowhere: bool, addrs: Mapping[str, str]
) -> TopicFinding:
    broker, perm, read = qd.broker_name, qd.perm, qd.read_queue_nums
    why = f"perm {perm} (read-only)" if not perm & PERM_WRITE else "writeQueueNums 0"
    effect = (
        "no broker of the topic takes writes, so producers cannot send to it at all"
        if nowhere
        else "producers send only to its other brokers"
    )
    fix = (
        f"restore write permission: mqadmin updateTopicPerm -t {topic} "
        f"{update_target(broker, _addr(addrs, broker))} -p 6"
        if not perm & PERM_WRITE
        else f"give it write queues: mqadmin updateTopic -t {topic} "
        f"{update_target(broker, _addr(addrs, broker))} "
        + (
            "-r R -w R, R being its readQueueNums on one master"
            if broker == MERGED_BROKER
            else f"-r {read} -w {read}"
        )
    )
    return TopicFinding(
        Code.QUEUE_NOT_WRITABLE,
        Severity.warning if nowhere else Severity.info,
        topic,
        broker,
        f"{topic} on {broker} has {why}: its {plural(read, 'queue')} only drain, {effect}",
        f"if {broker} is being drained on purpose (write off, read on, until consumers catch "
        f"up) this is expected; otherwise {fix}",
        about_write_count=bool(perm & PERM_WRITE),
    )


def _missing_brokers(route: TopicRoute, cluster: Sequence[str]) -> list[TopicFinding]:
    topic = route.topic
    if len(cluster) < 2 or topic.startswith((RETRY_PREFIX, DLQ_PREFIX)) or topic in cluster:
        return []
    present = {qd.broker_name for qd in route.queue_datas}
    missing = sorted(set(cluster) - present, key=java_key)
    if not missing or not present:
        return []
    on = ", ".join(sorted(present, key=java_key))
    return [
        TopicFinding(
            Code.TOPIC_NOT_ON_ALL_BROKERS,
            Severity.warning,
            topic,
            None,
            f"{topic} is on {on} but not on {', '.join(missing)} of the same cluster: its "
            f"producers and consumers use only {on}, which carries all of its load and "
            "takes it down when it is down",
            f"create it on {', '.join(missing)} with the same queue counts (mqadmin updateTopic "
            f"-c <cluster> -t {topic} ..., or -b for each broker); if it is meant to live on "
            "some brokers only, this is expected",
        )
    ]
