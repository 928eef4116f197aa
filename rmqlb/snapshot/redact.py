"""``--redact``: replace client ids, addresses and IPs with stable pseudonyms.

What is replaced, everywhere it occurs (ids, addresses, properties, capture errors, the
CONFIG and MACHINE_ROOM_NEARBY tables that are keyed by client id):

- client ids become ``client-0001``, ``client-0002``, ... numbered in **Java order** of the
  originals, so the sorted ``cidAll`` keeps its order and AVG / AVG_BY_CIRCLE /
  MACHINE_ROOM(_NEARBY) / CONFIG diagnoses of the redacted file equal the original's; a
  duplicated id stays duplicated. (CONSISTENT_HASH hashes the id itself: its *expected*
  column cannot survive redaction.)
- IPv4 addresses become addresses of the benchmarking range ``198.18.0.0/15``
  (``198.18.0.1``, ``198.18.0.2`` ...) and IPv6 addresses addresses of the documentation
  prefix ``2001:db8::/32`` (``2001:db8::1`` ...), ports kept (RocketMQ writes IPv6 peers
  without brackets: ``fe80::1:53412``); non-IP host names in address fields become
  ``host-1``, ``host-2`` ...

Topic, group and broker names, subscriptions, counts and offsets are kept: they are the
structure the diagnosis needs. The same input always gives the same output.

>>> from rmqlb.model import Consumer, Group, Snapshot
>>> snap = Snapshot(topics={}, groups={"G": Group("G", consumers=(
...     Consumer("10.0.0.9@1#2", client_addr="10.0.0.9:5000"), Consumer("10.0.0.5@7#8")))})
>>> [(c.client_id, c.client_addr) for c in redact(snap).groups["G"].consumers]
[('client-2', '198.18.0.1:5000'), ('client-1', None)]
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import Consumer, Group, GroupOnBroker, Snapshot, Source
from rmqlb.model.strategy import (
    Config,
    MachineRoomNearby,
    RoomTable,
    StrategySpec,
)

_IPV4 = re.compile(r"(?<![\d.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\d.])")
_PSEUDO_BASE = (198 << 24) | (18 << 16)
# A run of hex digits and colons (optionally with a %zone and a :port): maybe an IPv6
# address, maybe one followed by ``:port``; ``ipaddress`` decides in ``_ip6``.
_IPV6_TOKEN = re.compile(
    r"(?<![\w:.%])[0-9A-Fa-f]*:[0-9A-Fa-f:]*(?:%[\w.]+(?::\d{1,5})?)?(?![\w:.%])"
)


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text.split("%", 1)[0])
    except ValueError:
        return False
    return True


class _Redactor:
    def __init__(self, client_ids: Iterable[str]) -> None:
        distinct = sorted(set(client_ids), key=java_key)
        width = len(str(len(distinct)))
        self.clients = {cid: f"client-{i:0{width}d}" for i, cid in enumerate(distinct, 1)}
        self.ips: dict[str, str] = {}
        self.ips6: dict[str, str] = {}
        self.hosts: dict[str, str] = {}
        by_length = sorted(distinct, key=len, reverse=True)
        self._cid_pattern = (
            re.compile("|".join(re.escape(c) for c in by_length)) if by_length else None
        )

    def client(self, cid: str) -> str:
        return self.clients.get(cid) or self.text(cid)

    def _ip(self, match: re.Match[str]) -> str:
        ip = match.group(0)
        pseudo = self.ips.get(ip)
        if pseudo is None:
            n = _PSEUDO_BASE + len(self.ips) + 1
            pseudo = f"{n >> 24}.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"
            self.ips[ip] = pseudo
        return pseudo

    def _ip6(self, match: re.Match[str]) -> str:
        token = match.group(0)
        if token.count(":") < 2:
            return token
        address, zone, port = token, "", ""
        if "%" in token:
            address, _, zone = token.partition("%")
            zone, _, tail = zone.partition(":")
            port = ":" + tail if tail else ""
        elif not _is_ipv6(token):
            head, _, tail = token.rpartition(":")
            if not (tail.isdigit() and _is_ipv6(head)):
                return token
            address, port = head, ":" + tail
        if not _is_ipv6(address):
            return token
        pseudo = self.ips6.setdefault(address, f"2001:db8::{len(self.ips6) + 1:x}")
        return pseudo + (f"%{zone}" if zone else "") + port

    def text(self, value: str) -> str:
        """Scrub free text: whole client ids first, then any IPv4 and IPv6 address."""
        if self._cid_pattern is not None:
            value = self._cid_pattern.sub(lambda m: self.clients[m.group(0)], value)
        value = _IPV4.sub(self._ip, value)
        return _IPV6_TOKEN.sub(self._ip6, value) if ":" in value else value

    def addr(self, value: str) -> str:
        """An address ``host:port``: IPs as in :meth:`text`, other host names as ``host-N``."""
        scrubbed = self.text(value)
        if scrubbed != value:
            return scrubbed
        host, sep, port = value.rpartition(":")
        if not sep or not port.isdigit():
            host, port = value, ""
        if not host:
            return value
        pseudo = self.hosts.setdefault(host, f"host-{len(self.hosts) + 1}")
        return f"{pseudo}:{port}" if port else pseudo

    def strategy(self, spec: StrategySpec | None, all_ids: list[str]) -> StrategySpec | None:
        match spec:
            case Config(config=config):
                return replace(spec, config={self.client(cid): qs for cid, qs in config.items()})
            case MachineRoomNearby(inner=inner, consumer_rooms=rooms):
                table: dict[str, str] = {}
                for cid in all_ids:
                    room = rooms.resolve(cid)
                    if room is not None:
                        table[self.client(cid)] = room
                if isinstance(rooms, RoomTable):
                    for key, room in rooms.rooms.items():
                        table.setdefault(self.client(key), room)
                redacted_inner = self.strategy(inner, all_ids)
                assert redacted_inner is not None
                return replace(spec, inner=redacted_inner, consumer_rooms=RoomTable(table))
            case _:
                return spec

    def properties(self, props: Mapping[str, str]) -> dict[str, str]:
        return {key: self.text(value) for key, value in props.items()}

    def consumer(self, c: Consumer, all_ids: list[str]) -> Consumer:
        return replace(
            c,
            client_id=self.client(c.client_id),
            client_addr=self.addr(c.client_addr) if c.client_addr is not None else None,
            strategy=self.strategy(c.strategy, all_ids),
            properties=self.properties(c.properties),
            proxy=self.addr(c.proxy) if c.proxy is not None else None,
        )

    def on_broker(self, view: GroupOnBroker) -> GroupOnBroker:
        return replace(
            view,
            client_ids=None
            if view.client_ids is None
            else tuple(self.client(cid) for cid in view.client_ids),
            assignments=tuple(
                replace(a, client_id=self.client(a.client_id)) for a in view.assignments
            ),
        )

    def group(self, g: Group) -> Group:
        ids = [c.client_id for c in g.consumers]
        return replace(
            g,
            strategy=self.strategy(g.strategy, ids),
            consumers=tuple(self.consumer(c, ids) for c in g.consumers),
            on_brokers={name: self.on_broker(v) for name, v in g.on_brokers.items()},
        )


def _config_ids(spec: StrategySpec | None) -> list[str]:
    if isinstance(spec, Config):
        return list(spec.config)
    if isinstance(spec, MachineRoomNearby):
        ids = _config_ids(spec.inner)
        if isinstance(spec.consumer_rooms, RoomTable):
            ids.extend(spec.consumer_rooms.rooms)
        return ids
    return []


def redact(snapshot: Snapshot) -> Snapshot:
    """A copy of ``snapshot`` with client ids, addresses and IPs replaced (see module doc)."""
    ids: list[str] = []
    for g in snapshot.groups.values():
        ids.extend(_config_ids(g.strategy))
        for c in g.consumers:
            ids.append(c.client_id)
            ids.extend(_config_ids(c.strategy))
        for view in g.on_brokers.values():
            ids.extend(view.client_ids or ())
            ids.extend(a.client_id for a in view.assignments)
    r = _Redactor(ids)
    groups = {name: r.group(g) for name, g in snapshot.groups.items()}
    brokers = {
        name: replace(b, addrs={k: r.addr(v) for k, v in b.addrs.items()})
        for name, b in snapshot.brokers.items()
    }
    source = snapshot.source
    if source is not None:
        source = Source(
            tuple(r.addr(a) for a in source.namesrv),
            source.rmqlb,
            tuple(r.addr(a) for a in source.proxies),
        )
    errors = tuple(
        replace(e, target=r.addr(e.target) if e.target else e.target, message=r.text(e.message))
        for e in snapshot.errors
    )
    return replace(snapshot, groups=groups, brokers=brokers, source=source, errors=errors)
