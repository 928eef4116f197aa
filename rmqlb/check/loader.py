"""Read every input file, detect what it is by content, and merge the declarations.

Several files at once is the normal case: a broker's ``topics.json`` and
``subscriptionGroup.json`` say which topics and groups exist; an rmqlb YAML says who joins each
group (members, replica ranges, subscriptions). Rules:

- a topic declared in several files gets the union of its brokers; one broker declared twice
  for one topic is an error;
- a group declared in YAML replaces the bare entry a broker file gives it; two YAML files may
  each add members to one group, but not the same member, nor different strategies.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import yaml

from rmqlb.check.brokerfiles import is_broker_file, read_broker_json
from rmqlb.check.decl import CheckConfig, GroupDecl, TopicDecl
from rmqlb.check.jsonlines import JsonSyntaxError, parse_with_lines
from rmqlb.check.jsonlines import Path as JsonPath
from rmqlb.check.yamlconf import compose, config_from_node, looks_like_check_config
from rmqlb.errors import InputError
from rmqlb.fileio import InputKind, read_input

NOT_AN_INPUT = (
    "not a check input: expected an rmqlb config (top-level topics: and/or groups:), a broker "
    "topics.json / subscriptionGroup.json, or an mqadmin metadata.json"
)


def _fallback_broker(index: int) -> str:
    letters = string.ascii_lowercase
    return f"broker-{letters[index]}" if index < len(letters) else f"broker-{index + 1}"


def read_text(path: str) -> str:
    """A file's text (UTF-8, BOM tolerated), read by the one input rule
    (:func:`rmqlb.fileio.read_input`); unreadable files become InputError."""
    data = read_input(path, InputKind.CONFIG)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}:1: not UTF-8 text ({exc.reason})") from None


_TAGS = {bool: "bool", int: "int", float: "float", str: "str", type(None): "null"}


def json_to_node(value: Any, lines: dict[JsonPath, int], path: JsonPath = ()) -> yaml.Node:
    """Decoded JSON as the YAML nodes the config reader walks, marked with the JSON lines
    (so an rmqlb config written as JSON, tabs and all, reads like its YAML twin)."""
    mark = mark_of(lines, path)
    if isinstance(value, dict):
        pairs = [
            (
                yaml.ScalarNode("tag:yaml.org,2002:str", key, mark_of(lines, (*path, key))),
                json_to_node(item, lines, (*path, key)),
            )
            for key, item in value.items()
        ]
        return yaml.MappingNode("tag:yaml.org,2002:map", pairs, mark, mark)
    if isinstance(value, list):
        items = [json_to_node(item, lines, (*path, i)) for i, item in enumerate(value)]
        return yaml.SequenceNode("tag:yaml.org,2002:seq", items, mark, mark)
    tag = _TAGS.get(type(value), "str")
    text = json.dumps(value) if tag in ("bool", "null", "float") else str(value)
    return yaml.ScalarNode(f"tag:yaml.org,2002:{tag}", text, mark, mark)


def mark_of(lines: dict[JsonPath, int], path: JsonPath) -> yaml.Mark:
    """A YAML mark at the JSON line of ``path``."""
    return yaml.Mark("<json>", 0, lines.get(path, 1) - 1, 0, None, 0)


def read_one(text: str, file: str, unnamed_brokers: int = 0) -> tuple[CheckConfig, bool]:
    """Read one file's text; returns its declarations and whether it used a fallback broker
    name (so the next unnamed topics.json gets the next letter)."""
    if text.lstrip().startswith("{"):
        try:
            value, lines = parse_with_lines(text)
        except JsonSyntaxError as exc:
            if file.lower().endswith(".json"):
                raise InputError(f"{file}:{exc.line}: invalid JSON: {exc}") from None
        else:
            if is_broker_file(value):
                fallback = _fallback_broker(unnamed_brokers)
                config = read_broker_json(value, lines, file, fallback)
                used = any(b.broker == fallback for t in config.topics.values() for b in t.brokers)
                return config, used
            node = json_to_node(value, lines)
            if looks_like_check_config(node):
                return config_from_node(node, file), False
            raise InputError(f"{file}:1: {NOT_AN_INPUT}")
    root = compose(text, file)
    if root is None:
        raise InputError(f"{file}:1: empty file: {NOT_AN_INPUT}")
    if not looks_like_check_config(root):
        line = root.start_mark.line + 1
        raise InputError(f"{file}:{line}: {NOT_AN_INPUT}")
    return config_from_node(root, file), False


def _merge_topic(old: TopicDecl, new: TopicDecl) -> TopicDecl:
    known = {b.broker: b for b in old.brokers}
    for broker in new.brokers:
        if broker.broker in known:
            raise InputError(
                f"{broker.loc}: topic {new.name} on broker {broker.broker} is already declared "
                f"at {known[broker.broker].loc}"
            )
    return replace(old, brokers=old.brokers + new.brokers)


def _merge_group(old: GroupDecl, new: GroupDecl) -> GroupDecl:
    if not new.members_declared:
        return old
    if not old.members_declared:
        return new
    names = {m.name: m for m in old.members}
    for member in new.members:
        if member.name in names:
            raise InputError(
                f"{member.loc}: member {member.name} of group {new.name} is already declared "
                f"at {names[member.name].loc}"
            )
    if old.strategy is not None and new.strategy is not None and old.strategy != new.strategy:
        raise InputError(
            f"{new.strategy_loc}: group {new.name} has another strategy at {old.strategy_loc}"
        )
    if old.message_model != new.message_model:
        raise InputError(
            f"{new.loc}: group {new.name} is {new.message_model} here but "
            f"{old.message_model} at {old.loc}"
        )
    strategy, strategy_loc = (
        (old.strategy, old.strategy_loc)
        if old.strategy is not None
        else (new.strategy, new.strategy_loc)
    )
    return replace(
        old,
        members=old.members + new.members,
        strategy=strategy,
        strategy_loc=strategy_loc,
        members_loc=old.members_loc or new.members_loc,
    )


def merge(configs: Sequence[CheckConfig]) -> CheckConfig:
    """Merge per-file declarations (see the module docstring for the rules)."""
    topics: dict[str, TopicDecl] = {}
    groups: dict[str, GroupDecl] = {}
    files: list[str] = []
    cluster: dict[str, None] = {}
    for config in configs:
        files.extend(config.files)
        cluster.update(dict.fromkeys(config.cluster_brokers))
        for name, topic in config.topics.items():
            topics[name] = _merge_topic(topics[name], topic) if name in topics else topic
        for name, group in config.groups.items():
            groups[name] = _merge_group(groups[name], group) if name in groups else group
    return CheckConfig(topics, groups, tuple(files), tuple(cluster))


def load_files(paths: Sequence[str]) -> CheckConfig:
    """Read, detect and merge ``paths``; any problem is a one-line InputError."""
    if not paths:
        raise InputError("no input files")
    configs: list[CheckConfig] = []
    unnamed = 0
    for path in paths:
        config, used_fallback = read_one(read_text(path), path, unnamed)
        unnamed += used_fallback
        configs.append(config)
    return merge(configs)
