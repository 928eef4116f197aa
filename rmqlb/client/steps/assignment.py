"""Broker-side assignment (5.x): what each broker reads when a client lets it assign queues,
and what it answers.

Only for a group with a client that lets the broker assign (``clientRebalance=false`` in its
running info, not orderly, not broadcasting): a group of 4.x or client-balanced clients costs
no request here. Then, on every master:

* GET_BROKER_CONFIG (once per broker): ``serverLoadBalancerEnable``,
  ``defaultMessageRequestMode``, ``defaultPopShareQueueNum`` (the broker's defaults for a
  (topic, group) with no mode of its own), and the version in the answer's header;
* GET_ALL_MESSAGE_REQUEST_MODE (once per broker): the (topic, group) modes set with
  ``mqadmin setConsumeMode``; a 4.x broker answers REQUEST_CODE_NOT_SUPPORTED: not applicable,
  not an error;
* GET_CONSUMER_LIST_BY_GROUP: the broker's own consumer list, which it allocates from;
* QUERY_ASSIGNMENT for each such client and each topic it subscribes that the broker hosts:
  what this broker would give it now (read-only: see the allowlist).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from rmqlb.model import (
    Assignment,
    BrokerConfig,
    Consumer,
    GroupOnBroker,
    MessageModel,
    MessageRequestMode,
    Rebalance,
    RequestMode,
    TopicRoute,
)
from rmqlb.model.snapshot import rebalance_from_properties
from rmqlb.model.strategy import MachineRoomNearby, StrategySpec, Unknown
from rmqlb.remoting.errors import RequestCodeNotSupported

if TYPE_CHECKING:
    from rmqlb.client.collector import Collector
    from rmqlb.remoting.assignment import QueueAssignment, RequestModeEntry

ModeTable = dict[tuple[str, str], MessageRequestMode]


def broker_assigned(consumer: Consumer) -> bool:
    """Whether the client lets the broker assign its queues, as it reports."""
    rebalance = consumer.rebalance or rebalance_from_properties(consumer.properties)
    return rebalance is Rebalance.BROKER


def strategy_name(spec: StrategySpec | None) -> str | None:
    """The name a 5.x client sends in QUERY_ASSIGNMENT (``AllocateMessageQueueStrategy
    .getName()``); ``None`` for a strategy whose name is not known (a custom class)."""
    if spec is None or isinstance(spec, Unknown):
        return None
    if isinstance(spec, MachineRoomNearby):
        inner = strategy_name(spec.inner)
        return None if inner is None else f"{spec.name}-{inner}"
    return spec.name


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _config(values: dict[str, str]) -> BrokerConfig:
    balance = values.get("serverLoadBalancerEnable")
    mode = values.get("defaultMessageRequestMode")
    return BrokerConfig(
        server_load_balancer_enable=None if balance is None else balance == "true",
        default_message_request_mode=RequestMode(mode) if mode in ("PULL", "POP") else None,
        default_pop_share_queue_num=_int_or_none(values.get("defaultPopShareQueueNum")),
        load_balance_poll_name_server_interval=_int_or_none(
            values.get("loadBalancePollNameServerInterval")
        ),
        channel_expired_timeout=_int_or_none(values.get("channelExpiredTimeout")),
    )


class BrokerAssignment:
    """Per-broker tables (config, request modes), each asked at most once per capture."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.configs: dict[str, asyncio.Task[None]] = {}
        self.modes: dict[str, asyncio.Task[ModeTable | None]] = {}

    def broker_config(self, name: str, addr: str) -> asyncio.Task[None]:
        """Read broker ``name``'s config (at ``addr``) into the collector's broker table, once
        per capture."""
        task = self.configs.get(addr)
        if task is None:
            task = self.configs[addr] = asyncio.ensure_future(self._read_config(name, addr))
        return task

    async def _read_config(self, name: str, addr: str) -> None:
        c = self.collector
        found = await c.try_request(
            c.label(addr),
            "GET_BROKER_CONFIG",
            partial(c.admin.broker_config, addr),
            broker=True,
        )
        if found is not None and name in c.brokers:
            values, version = found
            c.brokers[name] = replace(c.brokers[name], version=version, config=_config(values))

    def _request_modes(self, addr: str) -> asyncio.Task[ModeTable | None]:
        task = self.modes.get(addr)
        if task is None:
            task = self.modes[addr] = asyncio.ensure_future(self._read_modes(addr))
        return task

    async def _read_modes(self, addr: str) -> ModeTable | None:
        c = self.collector
        entries: list[RequestModeEntry] | None = await c.try_request(
            c.label(addr),
            "GET_ALL_MESSAGE_REQUEST_MODE",
            partial(c.admin.request_modes, addr),
            quiet=(RequestCodeNotSupported,),  # a 4.x broker: not applicable
            broker=True,
        )
        if entries is None:
            return None
        return {
            (e.topic, e.group): MessageRequestMode(RequestMode(e.mode), e.pop_share_queue_num)
            for e in entries
        }

    async def group(
        self,
        group: str,
        masters: Sequence[tuple[str, str]],
        model: MessageModel,
        consumers: Sequence[Consumer],
        routes: dict[str, TopicRoute | None],
    ) -> dict[str, GroupOnBroker]:
        """What every master knows and answers for ``group`` (empty: nobody lets a broker
        assign). ``routes``: the group's topics (subscribed and retry) and their routes."""
        assigned = [c for c in consumers if broker_assigned(c)]
        if not assigned:
            return {}
        out = await asyncio.gather(
            *(
                self._on_broker(
                    name, addr, group=group, model=model, assigned=assigned, routes=routes
                )
                for name, addr in masters
            )
        )
        return {name: on for (name, _), on in zip(masters, out, strict=True)}

    async def _on_broker(
        self,
        name: str,
        addr: str,
        *,
        group: str,
        model: MessageModel,
        assigned: Sequence[Consumer],
        routes: dict[str, TopicRoute | None],
    ) -> GroupOnBroker:
        c = self.collector
        hosted = sorted(
            topic
            for topic, route in routes.items()
            if route is not None and any(q.broker_name == name for q in route.queue_datas)
        )
        # each client as it asks: its own model (the brokers list the group's last heartbeat's)
        asks = [
            (consumer.client_id, topic, strategy_name(consumer.strategy), consumer.message_model)
            for consumer in assigned
            for topic in hosted
            if consumer.subscription(topic) is not None
        ]
        config_task = self.broker_config(name, addr)
        modes_task = self._request_modes(addr)
        ids_task = asyncio.ensure_future(
            c.try_request(
                c.label(addr),
                "GET_CONSUMER_LIST_BY_GROUP",
                partial(c.admin.consumer_ids, addr, group),
                broker=True,
                group=group,
            )
        )
        answers = await asyncio.gather(
            *(
                self._assignment(
                    addr, group=group, model=own or model, client_id=cid, topic=topic, strategy=s
                )
                for cid, topic, s, own in asks
            )
        )
        await config_task
        modes = await modes_task
        ids = await ids_task
        return GroupOnBroker(
            client_ids=tuple(ids) if ids is not None else None,
            request_modes=(
                None
                if modes is None
                else {t: m for (t, g), m in sorted(modes.items()) if g == group}
            ),
            assignments=tuple(a for a in answers if a is not None),
        )

    async def _assignment(
        self,
        addr: str,
        *,
        group: str,
        model: MessageModel,
        client_id: str,
        topic: str,
        strategy: str | None,
    ) -> Assignment | None:
        """One QUERY_ASSIGNMENT (``None``: not asked, or it failed: recorded)."""
        if strategy is None:
            return None
        c = self.collector

        async def ask(timeout: float) -> tuple[tuple[QueueAssignment, ...] | None]:
            # wrapped: "no assignment" (None) must not read as "the request failed"
            answer = await c.admin.query_assignment(
                addr,
                topic=topic,
                group=group,
                client_id=client_id,
                strategy_name=strategy,
                message_model=model.value,
                timeout=timeout,
            )
            return (answer,)

        found = await c.try_request(
            c.label(addr),
            "QUERY_ASSIGNMENT",
            ask,
            quiet=(RequestCodeNotSupported,),
            broker=True,
            group=group,
            topic=topic,
        )
        if found is None:
            return None
        answer = found[0]
        queues = None if answer is None else tuple(a.queue for a in answer)
        modes = {a.mode for a in answer or () if a.mode in ("PULL", "POP")}
        mode = RequestMode(modes.pop()) if len(modes) == 1 else None
        return Assignment(client_id, topic, strategy, mode, queues)
