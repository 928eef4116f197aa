"""Reader for rmqlb's own check config (YAML), keeping the line of every declaration.

The file is composed into PyYAML nodes (not constructed into plain dicts) so that each value
still carries its ``start_mark``; every problem is reported as one line,
``file:line: path: problem``, raised as :class:`~rmqlb.errors.InputError` (exit 2).

The format (documented in ``docs/check.md``, JSON Schema in ``rmqlb/data/check.schema.json``)::

    version: 1
    topics:
      OrderTopic:
        queues: 8                      # read = write = 8 on every broker
        brokers: [broker-a, broker-b]  # default [broker-a]
    groups:
      OrderGroup:
        strategy: AVG
        rebalance: broker              # 5.x clientRebalance=false (default: client)
        popShareQueueNum: 1            # with rebalance: broker: POP with this share
        members:
          order-service:
            replicas: 3..12            # or a fixed count
            subscriptions:
              OrderTopic: "TagA || TagB"
          legacy-4x:
            replicas: 1
            rebalance: client          # this member balances itself (a 4.x client)
            subscriptions:
              OrderTopic: "TagA || TagB"
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from rmqlb.check.decl import (
    DEFAULT_PERM,
    BrokerQueues,
    CheckConfig,
    GroupDecl,
    Loc,
    MemberDecl,
    SubscriptionDecl,
    TopicDecl,
)
from rmqlb.errors import InputError
from rmqlb.model.snapshot import MessageModel
from rmqlb.model.strategy import (
    Config,
    MachineRoomNearby,
    Params,
    RoomPattern,
    RoomTable,
    StrategySpec,
    Unknown,
    parse_strategy_spec,
    strategy_from_json,
    with_params,
)
from rmqlb.yamlio import UniqueKeyLoader

MAX_QUEUES = 65536
"""Largest queue count accepted for one broker of one topic."""
MAX_REPLICAS = 10000
"""Largest replica count accepted for one member."""
DEFAULT_BROKER = "broker-a"
BROKER_ROOM_PATTERN = r"^([^@]+)@"
"""Rooms of brokers named ``room@name`` (the MACHINE_ROOM convention)."""

TOP_KEYS = ("version", "topics", "groups")
TOPIC_KEYS = ("queues", "read", "write", "perm", "brokers")
BROKER_KEYS = ("queues", "read", "write", "perm")
GROUP_KEYS = ("strategy", "messageModel", "rebalance", "popShareQueueNum", "members")
MEMBER_KEYS = ("replicas", "subscriptions", "strategy", "room", "rebalance")
SUBSCRIPTION_KEYS = ("type", "expression")
EXPRESSION_TYPES = ("TAG", "SQL92")
PERM_WORDS = {"rw": 6, "r": 4, "w": 2, "none": 0}

_RANGE = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+)\s*$")
_INT_TAG = "tag:yaml.org,2002:int"
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return {
        _INT_TAG: "an integer",
        _STR_TAG: "a string",
        _NULL_TAG: "nothing",
        "tag:yaml.org,2002:bool": "a boolean",
        "tag:yaml.org,2002:float": "a number",
    }.get(node.tag, "a scalar")


class _Reader:
    """Walks composed nodes of one file, turning problems into ``file:line:`` errors."""

    def __init__(self, file: str) -> None:
        self.file = file

    def loc(self, node: yaml.Node) -> Loc:
        return Loc(self.file, node.start_mark.line + 1)

    def error(self, node: yaml.Node, path: str, problem: str) -> InputError:
        return InputError(f"{self.loc(node)}: {path}: {problem}")

    def pairs(
        self, node: yaml.Node, path: str, allowed: tuple[str, ...] | None
    ) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
        """The ``(key, key node, value node)`` of a mapping, rejecting unknown/duplicate keys."""
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, path, f"expected a mapping, found {_kind(node)}")
        seen: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _NULL_TAG:
                raise self.error(key_node, path, "expected a name as key")
            key = str(key_node.value)
            where = f"{path}.{key}" if path else key
            if key in seen:
                raise self.error(
                    key_node, where, f"duplicate key (first at line {self.loc(seen[key]).line})"
                )
            seen[key] = key_node
            if allowed is not None and key not in allowed:
                raise self.error(
                    key_node, where, f"unknown key {key!r} (expected one of: {', '.join(allowed)})"
                )
            yield key, key_node, value_node

    def integer(self, node: yaml.Node, path: str, low: int, high: int) -> int:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _INT_TAG:
            raise self.error(node, path, f"expected an integer, found {_kind(node)}")
        value = yaml.SafeLoader("").construct_object(node)
        if not isinstance(value, int) or not low <= value <= high:
            raise self.error(node, path, f"{node.value} is out of range {low}..{high}")
        return value

    def string(self, node: yaml.Node, path: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _STR_TAG:
            raise self.error(node, path, f"expected a string, found {_kind(node)}")
        return str(node.value)

    def perm(self, node: yaml.Node, path: str) -> int:
        if isinstance(node, yaml.ScalarNode) and node.tag == _STR_TAG:
            word = str(node.value).strip().lower()
            if word in PERM_WORDS:
                return PERM_WORDS[word]
            raise self.error(
                node, path, f"unknown perm {node.value!r} (expected 0..7, rw, r, w or none)"
            )
        return self.integer(node, path, 0, 7)

    # ----------------------------------------------------------------- topics

    def counts(
        self,
        node: yaml.Node,
        path: str,
        inherited: dict[str, tuple[int, Loc]],
        allowed: tuple[str, ...],
    ) -> dict[str, tuple[int, Loc]]:
        """``queues``/``read``/``write``/``perm`` of a topic or broker mapping, with the
        topic's values as defaults."""
        out = dict(inherited)
        own: dict[str, tuple[int, Loc]] = {}
        for key, key_node, value in self.pairs(node, path, allowed):
            where = f"{path}.{key}"
            if key == "brokers":
                continue
            if key == "perm":
                own["perm"] = (self.perm(value, where), self.loc(key_node))
            else:
                own[key] = (self.integer(value, where, 0, MAX_QUEUES), self.loc(key_node))
        if "queues" in own and ("read" in own or "write" in own):
            raise self.error(node, path, "give either queues or read/write, not both")
        if "queues" in own:
            out["read"] = out["write"] = own.pop("queues")
        elif "read" in own and "write" not in own:
            out["read"] = own.pop("read")
            if "write" not in out:
                out["write"] = out["read"]
        elif "write" in own and "read" not in own:
            out["write"] = own.pop("write")
            if "read" not in out:
                out["read"] = out["write"]
        out.update(own)
        return out

    def topic(self, name: str, key_node: yaml.Node, node: yaml.Node) -> TopicDecl:
        path = f"topics.{name}"
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, path, f"expected a mapping, found {_kind(node)}")
        topic_loc = self.loc(key_node)
        base = self.counts(node, path, {"perm": (DEFAULT_PERM, topic_loc)}, TOPIC_KEYS)
        brokers_node: yaml.Node | None = None
        for key, _, value in self.pairs(node, path, TOPIC_KEYS):
            if key == "brokers":
                brokers_node = value
        queues_loc = base["read"][1] if "read" in base else topic_loc
        entries: list[tuple[str, Loc, dict[str, tuple[int, Loc]], yaml.Node]] = []
        if brokers_node is None:
            entries.append((DEFAULT_BROKER, topic_loc, base, node))
        elif isinstance(brokers_node, yaml.SequenceNode):
            if not brokers_node.value:
                raise self.error(brokers_node, f"{path}.brokers", "needs at least one broker")
            seen: set[str] = set()
            for i, item in enumerate(brokers_node.value):
                broker = self.string(item, f"{path}.brokers[{i}]")
                if broker in seen:
                    raise self.error(item, f"{path}.brokers[{i}]", f"broker {broker} listed twice")
                seen.add(broker)
                entries.append((broker, self.loc(item), base, item))
        else:
            pairs = list(self.pairs(brokers_node, f"{path}.brokers", None))
            if not pairs:
                raise self.error(brokers_node, f"{path}.brokers", "needs at least one broker")
            for broker, b_key, b_value in pairs:
                where = f"{path}.brokers.{broker}"
                b_loc = self.loc(b_key)
                if isinstance(b_value, yaml.MappingNode):
                    counts = self.counts(b_value, where, base, BROKER_KEYS)
                elif isinstance(b_value, yaml.ScalarNode) and b_value.tag == _INT_TAG:
                    count = self.integer(b_value, where, 0, MAX_QUEUES)
                    counts = {**base, "read": (count, b_loc), "write": (count, b_loc)}
                else:
                    raise self.error(
                        b_value,
                        where,
                        f"expected a queue count or a mapping, found {_kind(b_value)}",
                    )
                entries.append((broker, b_loc, counts, b_value))
        brokers: list[BrokerQueues] = []
        for broker, b_loc, counts, b_node in entries:
            if "read" not in counts:
                raise self.error(
                    b_node,
                    path if b_node is node else f"{path}.brokers.{broker}",
                    "no queue count: give queues (or read and write)",
                )
            (read, read_loc), (write, write_loc) = counts["read"], counts["write"]
            perm, perm_loc = counts["perm"]
            brokers.append(
                BrokerQueues(broker, read, write, perm, b_loc, read_loc, write_loc, perm_loc)
            )
        return TopicDecl(name, tuple(brokers), topic_loc, queues_loc)

    # ----------------------------------------------------------------- groups

    def strategy(self, node: yaml.Node, path: str) -> StrategySpec:
        try:
            if isinstance(node, yaml.MappingNode):
                raw = yaml.SafeLoader("").construct_object(node, deep=True)
                # a declaration states the strategy as constructed: Java's defaults apply
                spec = with_params(strategy_from_json(raw, path), Params.GIVEN)
            else:
                text = self.string(node, path)
                name = text.partition(":")[0].strip().upper().replace("-", "_")
                if name == "MACHINE_ROOM_NEARBY":
                    spec = parse_strategy_spec(
                        text, RoomPattern(BROKER_ROOM_PATTERN), RoomTable({})
                    )
                else:
                    spec = parse_strategy_spec(text, config={})
        except InputError as exc:
            raise self.error(node, path, str(exc)) from None
        if isinstance(spec, Config | Unknown):
            raise self.error(
                node,
                path,
                f"{spec.name} cannot be checked (per-client queue lists or a custom class)",
            )
        return spec

    def subscriptions(self, node: yaml.Node, path: str) -> tuple[SubscriptionDecl, ...]:
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL_TAG:
            return ()
        out: list[SubscriptionDecl] = []
        for topic, key_node, value in self.pairs(node, path, None):
            where = f"{path}.{topic}"
            expr_type = "TAG"
            if isinstance(value, yaml.ScalarNode) and value.tag == _NULL_TAG:
                expression = "*"
            elif isinstance(value, yaml.MappingNode):
                fields = {k: v for k, _, v in self.pairs(value, where, SUBSCRIPTION_KEYS)}
                expression = "*"
                if "expression" in fields:
                    expression = self.string(fields["expression"], f"{where}.expression")
                if "type" in fields:
                    expr_type = self.string(fields["type"], f"{where}.type").upper()
                    if expr_type not in EXPRESSION_TYPES:
                        raise self.error(fields["type"], f"{where}.type", "expected TAG or SQL92")
            else:
                expression = self.string(value, where)
            out.append(
                SubscriptionDecl(topic, expression.strip() or "*", expr_type, self.loc(key_node))
            )
        return tuple(out)

    def replicas(self, node: yaml.Node, path: str) -> tuple[int, int]:
        if isinstance(node, yaml.ScalarNode) and node.tag == _INT_TAG:
            count = self.integer(node, path, 0, MAX_REPLICAS)
            return count, count
        if isinstance(node, yaml.ScalarNode) and node.tag == _STR_TAG:
            match = _RANGE.match(str(node.value))
            if match is None:
                raise self.error(
                    node, path, f"expected a count or a range like 3..12, found {node.value!r}"
                )
            low, high = int(match.group(1)), int(match.group(2))
            if low > high:
                raise self.error(node, path, f"range {low}..{high} is empty (min > max)")
            if high > MAX_REPLICAS:
                raise self.error(node, path, f"{high} replicas is above the limit {MAX_REPLICAS}")
            return low, high
        raise self.error(node, path, f"expected a count or a range like 3..12, found {_kind(node)}")

    def member(self, group: str, name: str, key_node: yaml.Node, node: yaml.Node) -> MemberDecl:
        path = f"groups.{group}.members.{name}"
        fields = {k: (kn, v) for k, kn, v in self.pairs(node, path, MEMBER_KEYS)}
        for required in ("replicas", "subscriptions"):
            if required not in fields:
                raise self.error(node, path, f"missing {required}")
        r_key, r_value = fields["replicas"]
        low, high = self.replicas(r_value, f"{path}.replicas")
        s_key, s_value = fields["subscriptions"]
        subs = self.subscriptions(s_value, f"{path}.subscriptions")
        strategy = strategy_loc = room = None
        if "strategy" in fields:
            st_key, st_value = fields["strategy"]
            strategy = self.strategy(st_value, f"{path}.strategy")
            strategy_loc = self.loc(st_key)
        if "room" in fields:
            room = self.string(fields["room"][1], f"{path}.room")
        broker_assigned = None
        if "rebalance" in fields:
            broker_assigned = self.rebalance(fields["rebalance"][1], f"{path}.rebalance")
        return MemberDecl(
            name=name,
            min_replicas=low,
            max_replicas=high,
            subscriptions=subs,
            loc=self.loc(key_node),
            replicas_loc=self.loc(r_key),
            subscriptions_loc=self.loc(s_key),
            strategy=strategy,
            strategy_loc=strategy_loc,
            room=room,
            broker_assigned=broker_assigned,
        )

    def rebalance(self, node: yaml.Node, path: str) -> bool:
        """``client`` or ``broker``: whether the brokers assign the queues."""
        text = self.string(node, path).lower()
        if text not in ("client", "broker"):
            raise self.error(node, path, "expected client or broker")
        return text == "broker"

    def group(self, name: str, key_node: yaml.Node, node: yaml.Node) -> GroupDecl:
        path = f"groups.{name}"
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL_TAG:
            return GroupDecl(name, self.loc(key_node))
        strategy: StrategySpec | None = None
        strategy_loc = members_loc = None
        model = MessageModel.CLUSTERING
        members: list[MemberDecl] = []
        broker_assigned = False
        pop_share: int | None = None
        for key, k_node, value in self.pairs(node, path, GROUP_KEYS):
            where = f"{path}.{key}"
            if key == "rebalance":
                broker_assigned = self.rebalance(value, where)
            elif key == "popShareQueueNum":
                pop_share = self.integer(value, where, -MAX_REPLICAS, MAX_REPLICAS)
            elif key == "strategy":
                strategy = self.strategy(value, where)
                strategy_loc = self.loc(k_node)
            elif key == "messageModel":
                text = self.string(value, where).upper()
                if text not in MessageModel.__members__:
                    raise self.error(value, where, "expected CLUSTERING or BROADCASTING")
                model = MessageModel(text)
            else:
                members_loc = self.loc(k_node)
                if isinstance(value, yaml.ScalarNode) and value.tag == _NULL_TAG:
                    continue
                for m_name, m_key, m_value in self.pairs(value, where, None):
                    members.append(self.member(name, m_name, m_key, m_value))
        if isinstance(strategy, MachineRoomNearby):
            table = strategy.consumer_rooms
            given = not isinstance(table, RoomTable) or bool(table.rooms)
            for member in members:
                if member.room is None and not given:
                    raise InputError(
                        f"{member.loc}: {path}.members.{member.name}: MACHINE_ROOM_NEARBY needs "
                        "a room: for every member"
                    )
        if pop_share is not None and not broker_assigned:
            raise InputError(
                f"{self.loc(node)}: {path}.popShareQueueNum: POP is assigned by the broker: "
                "add rebalance: broker"
            )
        return GroupDecl(
            name=name,
            loc=self.loc(key_node),
            members=tuple(members),
            strategy=strategy,
            strategy_loc=strategy_loc,
            message_model=model,
            members_loc=members_loc,
            broker_assigned=broker_assigned,
            pop_share=pop_share,
        )

    def config(self, root: yaml.Node) -> CheckConfig:
        topics: dict[str, TopicDecl] = {}
        groups: dict[str, GroupDecl] = {}
        for key, _, value in self.pairs(root, "", TOP_KEYS):
            if key == "version":
                if self.integer(value, "version", 0, 1000) != 1:
                    raise self.error(value, "version", "only version 1 is known")
            elif key == "topics":
                if isinstance(value, yaml.ScalarNode) and value.tag == _NULL_TAG:
                    continue
                for name, k_node, v_node in self.pairs(value, "topics", None):
                    topics[name] = self.topic(name, k_node, v_node)
            elif not (isinstance(value, yaml.ScalarNode) and value.tag == _NULL_TAG):
                for name, k_node, v_node in self.pairs(value, "groups", None):
                    groups[name] = self.group(name, k_node, v_node)
        return CheckConfig(topics, groups, (self.file,))


def compose(text: str, file: str) -> yaml.Node | None:
    """Compose one YAML document into nodes; bad YAML becomes a one-line InputError."""
    try:
        return yaml.compose(text, Loader=UniqueKeyLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = " ".join(" ".join(p.split()) for p in (exc.context, exc.problem) if p)
        if "alias" in problem:
            problem += ' (quote a "*" tag expression)'
        raise InputError(f"{file}:{line}: invalid YAML: {problem}") from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise InputError(
            f"{file}:{line}: invalid YAML: unacceptable character #x{exc.character:04x}"
            if isinstance(exc.character, int)
            else f"{file}:{line}: invalid YAML: {exc.reason}"
        ) from None
    except RecursionError:
        raise InputError(f"{file}:1: invalid YAML: nested too deeply") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise InputError(f"{file}:1: invalid YAML: {' '.join(str(exc).split())}") from None


def config_from_node(root: yaml.Node, file: str) -> CheckConfig:
    """Read an already composed check config."""
    return _Reader(file).config(root)


def looks_like_check_config(root: Any) -> bool:
    """Whether a composed root node is a mapping with ``topics`` or ``groups``."""
    return isinstance(root, yaml.MappingNode) and any(
        isinstance(k, yaml.ScalarNode) and k.value in ("topics", "groups") for k, _ in root.value
    )
