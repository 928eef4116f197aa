"""Readers for the broker's own config files and mqadmin's export, with line numbers.

- ``topics.json`` (a broker's ``store/config/topics.json``, or ``mqadmin exportMetadata -b``):
  ``{"dataVersion": ..., "topicConfigTable": {topic: {readQueueNums, writeQueueNums, perm}}}``
  for **one** broker;
- ``subscriptionGroup.json``: ``{"dataVersion": ..., "subscriptionGroupTable": {group: ...}}``;
- ``metadata.json`` (``mqadmin exportMetadata -c CLUSTER``): ``topicConfigTable`` +
  ``subscriptionGroupTable`` + ``exportTime``, where mqadmin has **summed** each topic's queue
  counts over the cluster's masters; per-broker layout is lost, so the topic is modelled as one
  broker named :data:`MERGED_BROKER` with the summed counts.

The files are standard JSON (fastjson pretty output); they are parsed with
:mod:`rmqlb.check.jsonlines` so every topic and group keeps its line. A topics.json does not
say which broker wrote it: the name is inferred from the broker's self-named topics (5.x
``rmq_sys_SYNC_BROKER_MEMBER_<name>``; 4.x the topic the broker creates under its own name with
one queue and the inherit bit), else the files get ``broker-a``, ``broker-b``... in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rmqlb.check.decl import DEFAULT_PERM, BrokerQueues, CheckConfig, GroupDecl, Loc, TopicDecl
from rmqlb.check.jsonlines import Path
from rmqlb.errors import InputError
from rmqlb.model.queue import MERGED_BROKER
from rmqlb.model.snapshot import PERM_INHERIT
from rmqlb.model.system import SYSTEM_TOPICS, is_system_group

SYNC_MEMBER_PREFIX = "rmq_sys_SYNC_BROKER_MEMBER_"


def is_broker_file(value: Any) -> bool:
    """Whether decoded JSON looks like a broker config file or an mqadmin export."""
    return isinstance(value, Mapping) and (
        "topicConfigTable" in value or "subscriptionGroupTable" in value
    )


def is_cluster_export(value: Mapping[str, Any]) -> bool:
    """``mqadmin exportMetadata -c``: counts summed over masters (it adds ``exportTime``)."""
    return "exportTime" in value and "dataVersion" not in value


def infer_broker_name(table: Mapping[str, Any]) -> str | None:
    """The broker that wrote a topics.json, from the topics it creates under its own name.

    >>> infer_broker_name({"rmq_sys_SYNC_BROKER_MEMBER_broker-b": {}, "T": {}})
    'broker-b'
    >>> infer_broker_name({"DefaultCluster": {"perm": 7, "readQueueNums": 16,
    ...     "writeQueueNums": 16}, "broker-a": {"perm": 7, "readQueueNums": 1,
    ...     "writeQueueNums": 1}})
    'broker-a'
    """
    for name in table:
        if name.startswith(SYNC_MEMBER_PREFIX) and len(name) > len(SYNC_MEMBER_PREFIX):
            return name[len(SYNC_MEMBER_PREFIX) :]
    candidates = [
        name
        for name, cfg in table.items()
        if isinstance(cfg, Mapping)
        and name not in SYSTEM_TOPICS
        and not name.startswith(("%", "rmq_sys_"))
        and isinstance(cfg.get("perm"), int)
        and cfg["perm"] & PERM_INHERIT
        and cfg.get("readQueueNums") == 1
        and cfg.get("writeQueueNums") == 1
    ]
    return candidates[0] if len(candidates) == 1 else None


def _count(
    cfg: Mapping[str, Any],
    key: str,
    default: int,
    path: Path,
    *,
    lines: dict[Path, int],
    file: str,
) -> tuple[int, Loc]:
    value = cfg.get(key, default)
    line = lines.get((*path, key), lines.get(path, 1))
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{file}:{line}: {'.'.join(map(str, (*path, key)))}: expected an integer")
    return value, Loc(file, line)


def read_broker_json(
    value: Mapping[str, Any], lines: dict[Path, int], file: str, fallback_broker: str
) -> CheckConfig:
    """Topics and groups of one broker file (``lines`` from :mod:`rmqlb.check.jsonlines`)."""
    topics: dict[str, TopicDecl] = {}
    groups: dict[str, GroupDecl] = {}
    cluster: tuple[str, ...] = ()
    table = value.get("topicConfigTable")
    if table is not None:
        if not isinstance(table, Mapping):
            line = lines.get(("topicConfigTable",), 1)
            raise InputError(f"{file}:{line}: topicConfigTable: expected an object")
        if is_cluster_export(value):
            broker = MERGED_BROKER
        else:
            broker = infer_broker_name(table) or fallback_broker
            cluster = (broker,)
        for name, cfg in table.items():
            path: Path = ("topicConfigTable", name)
            loc = Loc(file, lines.get(path, 1))
            if not isinstance(cfg, Mapping):
                raise InputError(f"{loc}: topicConfigTable.{name}: expected an object")
            read, read_loc = _count(cfg, "readQueueNums", 16, path, lines=lines, file=file)
            write, write_loc = _count(cfg, "writeQueueNums", 16, path, lines=lines, file=file)
            perm, perm_loc = _count(cfg, "perm", DEFAULT_PERM, path, lines=lines, file=file)
            queues = BrokerQueues(broker, read, write, perm, loc, read_loc, write_loc, perm_loc)
            topics[name] = TopicDecl(name, (queues,), loc, read_loc)
    groups_table = value.get("subscriptionGroupTable")
    if groups_table is not None:
        if not isinstance(groups_table, Mapping):
            line = lines.get(("subscriptionGroupTable",), 1)
            raise InputError(f"{file}:{line}: subscriptionGroupTable: expected an object")
        for name in groups_table:
            if is_system_group(name):
                continue
            loc = Loc(file, lines.get(("subscriptionGroupTable", name), 1))
            groups[name] = GroupDecl(name, loc, members_declared=False)
    return CheckConfig(topics, groups, (file,), cluster)
