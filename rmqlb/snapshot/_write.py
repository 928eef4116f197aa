"""Write a :class:`~rmqlb.model.Snapshot` as ``rmqlb.snapshot/1`` JSON.

The output is canonical: shorthand topics are written out in full (``queueDatas``), fields
that are unknown (``None``) are left out, and :func:`~rmqlb.snapshot.parse_snapshot` of the
result gives back an equal snapshot.
"""

from __future__ import annotations

from typing import Any

from rmqlb.model.queue import MessageQueue
from rmqlb.model.snapshot import (
    BrokerInfo,
    CaptureError,
    Consumer,
    ConsumeStatus,
    Group,
    GroupConfig,
    ProcessQueueState,
    QueueData,
    QueueOffset,
    Snapshot,
    TopicRoute,
)
from rmqlb.model.strategy import strategy_to_json
from rmqlb.snapshot._parse import SNAPSHOT_FORMAT


def _queue(mq: MessageQueue) -> dict[str, Any]:
    return {"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id}


def _queue_data(qd: QueueData) -> dict[str, Any]:
    out: dict[str, Any] = {
        "brokerName": qd.broker_name,
        "readQueueNums": qd.read_queue_nums,
        "writeQueueNums": qd.write_queue_nums,
        "perm": qd.perm,
    }
    if qd.topic_sys_flag:
        out["topicSysFlag"] = qd.topic_sys_flag
    return out


def _topic(route: TopicRoute) -> dict[str, Any]:
    return {"queueDatas": [_queue_data(qd) for qd in route.queue_datas]}


def _broker(info: BrokerInfo) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if info.cluster is not None:
        out["cluster"] = info.cluster
    out["addrs"] = {str(k): v for k, v in sorted(info.addrs.items())}
    return out


def _consumer(c: Consumer) -> dict[str, Any]:
    out: dict[str, Any] = {"clientId": c.client_id}
    optional: dict[str, Any] = {
        "clientAddr": c.client_addr,
        "language": c.language,
        "version": c.version,
        "strategy": strategy_to_json(c.strategy) if c.strategy is not None else None,
        "consumeOrderly": c.consume_orderly,
        "consumeType": c.consume_type,
        "startTime": c.start_time,
    }
    out.update((k, v) for k, v in optional.items() if v is not None)
    out["subscriptions"] = [
        {
            "topic": s.topic,
            "expressionType": s.expression_type,
            "subString": s.sub_string,
            "subVersion": s.sub_version,
        }
        for s in c.subscriptions
    ]
    if c.assigned is not None:
        out["assigned"] = [_queue(q) for q in c.assigned]
    if c.pop_assigned is not None:
        out["popAssigned"] = [_queue(q) for q in c.pop_assigned]
    if c.properties:
        out["properties"] = dict(c.properties)
    if c.process_queues is not None:
        out["processQueues"] = [process_queue_json(pq) for pq in c.process_queues]
    if c.status:
        out["status"] = {topic: consume_status_json(st) for topic, st in c.status.items()}
    return out


def process_queue_json(pq: ProcessQueueState) -> dict[str, Any]:
    """One held queue's state, as the snapshot (and the report) write it."""
    return {
        **_queue(pq.queue),
        "cachedMsgCount": pq.cached_msg_count,
        "cachedMsgSizeInMiB": pq.cached_msg_size_mib,
        "commitOffset": pq.commit_offset,
        "lastPullTimestamp": pq.last_pull_timestamp,
        "lastConsumeTimestamp": pq.last_consume_timestamp,
        "locked": pq.locked,
        "lastLockTimestamp": pq.last_lock_timestamp,
        "dropped": pq.dropped,
    }


def consume_status_json(st: ConsumeStatus) -> dict[str, Any]:
    """A client's consume statistics of one topic, as the snapshot (and the report) write them."""
    return {
        "pullRT": st.pull_rt,
        "pullTPS": st.pull_tps,
        "consumeRT": st.consume_rt,
        "consumeOKTPS": st.consume_ok_tps,
        "consumeFailedTPS": st.consume_failed_tps,
        "consumeFailedMsgs": st.consume_failed_msgs,
    }


def _offset(o: QueueOffset) -> dict[str, Any]:
    out = {
        **_queue(o.queue),
        "brokerOffset": o.broker_offset,
        "consumerOffset": o.consumer_offset,
        "lastTimestamp": o.last_timestamp,
    }
    if o.min_offset is not None:
        out["minOffset"] = o.min_offset
    return out


def _config(c: GroupConfig) -> dict[str, Any]:
    return {
        "consumeEnable": c.consume_enable,
        "notifyConsumerIdsChangedEnable": c.notify_consumer_ids_changed_enable,
        "retryMaxTimes": c.retry_max_times,
        "consumeMessageOrderly": c.consume_message_orderly,
    }


def _group(g: Group) -> dict[str, Any]:
    out: dict[str, Any] = {"messageModel": g.message_model.value}
    if g.consume_type is not None:
        out["consumeType"] = g.consume_type
    if g.strategy is not None:
        out["strategy"] = strategy_to_json(g.strategy)
    out["consumers"] = [_consumer(c) for c in g.consumers]
    if g.offsets:
        out["offsets"] = [_offset(o) for o in g.offsets]
    if g.configs:
        out["configs"] = {broker: _config(c) for broker, c in g.configs.items()}
    return out


def _error(e: CaptureError) -> dict[str, Any]:
    out: dict[str, Any] = {"target": e.target, "request": e.request, "message": e.message}
    if e.group is not None:
        out["group"] = e.group
    if e.topic is not None:
        out["topic"] = e.topic
    return out


def snapshot_to_json(snapshot: Snapshot) -> dict[str, Any]:
    """The JSON document of ``snapshot`` (a plain dict, ready for ``json.dumps``)."""
    out: dict[str, Any] = {"format": SNAPSHOT_FORMAT}
    if snapshot.captured_at is not None:
        out["capturedAt"] = snapshot.captured_at
    if snapshot.source is not None:
        source: dict[str, Any] = {"namesrv": list(snapshot.source.namesrv)}
        if snapshot.source.rmqlb is not None:
            source["rmqlb"] = snapshot.source.rmqlb
        out["source"] = source
    if snapshot.brokers:
        out["brokers"] = {name: _broker(b) for name, b in snapshot.brokers.items()}
    out["topics"] = {name: _topic(t) for name, t in snapshot.topics.items()}
    out["groups"] = {name: _group(g) for name, g in snapshot.groups.items()}
    if snapshot.errors:
        out["errors"] = [_error(e) for e in snapshot.errors]
    return out
