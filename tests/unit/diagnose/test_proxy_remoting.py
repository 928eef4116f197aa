"""Remoting clients connected through a 5.1+ Proxy's remoting port: they balance themselves
over the Proxy's lists, which is told from a gRPC client by the retry topic they subscribe."""

from __future__ import annotations

from pathlib import Path

from diagnose_builders import codes, consumer, group, only, run

from rmqlb.diagnose import Code, diagnose
from rmqlb.diagnose.balance import (
    THROUGH_PROXY,
    client_balance,
    is_proxy_client,
    through_proxy_remoting,
)
from rmqlb.model import Rebalance
from rmqlb.model.snapshot import Consumer, Group, Subscription
from rmqlb.render._view import consumer_note
from rmqlb.render.client import balance_text, find_clients, held_unknown
from rmqlb.render.offsets import offsets_view
from rmqlb.snapshot import load_snapshot

T, G, PROXY = "T", "G", "127.0.0.1:8081"
RETRY = f"%RETRY%{G}"
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "proxy-remoting-clients.json"


def _client(cid: str, *topics: str, **extra: object) -> Consumer:
    return Consumer(cid, tuple(Subscription(t) for t in topics), **extra)  # type: ignore[arg-type]


def test_a_proxy_listed_client_subscribing_a_retry_topic_balances_itself() -> None:
    remoting = _client("10.0.0.5@pc1", T, RETRY, proxy=PROXY)
    grpc = _client("10.0.0.6@g1", T, proxy=PROXY)
    assert through_proxy_remoting(remoting) and not is_proxy_client(remoting)
    assert not through_proxy_remoting(grpc) and is_proxy_client(grpc)
    empty = Group(G)
    assert client_balance(remoting, empty) == (Rebalance.CLIENT, THROUGH_PROXY)
    assert client_balance(grpc, empty) == (Rebalance.PROXY, None)


def test_reported_popping_or_a_grpc_id_form_is_a_grpc_client_whatever_it_subscribes() -> None:
    reported = _client("10.0.0.5@pc1", T, RETRY, proxy=PROXY, rebalance=Rebalance.PROXY)
    grpc_id = _client("host-1@4242@0@lmr3x9k2ab", T, RETRY, proxy=PROXY)
    for c in (reported, grpc_id):
        assert not through_proxy_remoting(c) and is_proxy_client(c)
        assert client_balance(c, Group(G))[0] is Rebalance.PROXY
    # not listed by a Proxy: an ordinary remoting client
    assert not through_proxy_remoting(_client("10.0.0.5@pc1", T, RETRY))


def test_three_remoting_clients_through_a_proxy_on_two_queues() -> None:
    report = run(
        {T: {"queues": 2}},
        {G: group(*(consumer(f"10.0.0.{i}@pc", T, RETRY, proxy=PROXY) for i in (1, 2, 3)))},
        extra={"source": {"namesrv": ["10.0.0.1:9876"], "proxies": [PROXY]}},
    )
    assert codes(report) == ["IDLE_CONSUMER", "PROXY_CLIENTS", "NO_ROUTE"]
    assert only(report, Code.IDLE_CONSUMER).consumers == ("10.0.0.3@pc",)
    through = only(report, Code.PROXY_CLIENTS)
    assert through.message.startswith(
        f"3 of 3 consumers of {G} are remoting clients connected through the Proxy {PROXY} "
    )
    assert "(rmqlb's expected queues assume AVG: no client reported its strategy)" in (
        through.message
    )
    retry = only(report, Code.NO_ROUTE)
    assert retry.topic == RETRY and "its retry topic, which has no route yet" in retry.message
    (table,) = [t for t in report.groups[0].topics if t.topic == T]
    assert [(c.expected, c.actual, c.balanced_by) for c in table.consumers] == [
        (1, None, Rebalance.CLIENT),
        (1, None, Rebalance.CLIENT),
        (0, None, Rebalance.CLIENT),
    ]
    assert [consumer_note(c, table) for c in table.consumers] == ["via Proxy", "via Proxy", "idle"]


def test_the_retry_topic_of_a_group_not_all_through_a_proxy_is_told_as_before() -> None:
    report = run(
        {T: {"queues": 2}},
        {
            G: group(
                consumer("10.0.0.1@pc", T, RETRY, proxy=PROXY),
                consumer("10.0.0.2@direct", T, RETRY),
            )
        },
        extra={"source": {"namesrv": ["10.0.0.1:9876"], "proxies": [PROXY]}},
    )
    retry = only(report, Code.NO_ROUTE)
    assert retry.hint.startswith(f"the brokers create {RETRY} at a heartbeat of a client")


def test_offsets_say_why_the_holders_through_a_proxy_are_unknown() -> None:
    snapshot = load_snapshot(EXAMPLE)
    assert "CLIENT_UNREACHABLE" not in codes(diagnose(snapshot))
    view = offsets_view(snapshot, "IG")
    assert view.holders_unknown == (
        "5 clients connect through a Proxy, which relays no running-info request"
    )


def test_the_client_view_says_it_balances_itself_via_its_proxy() -> None:
    (view,) = find_clients(load_snapshot(EXAMPLE), "127.0.0.1@i1", None)
    assert balance_text(view) == f"client via 127.0.0.1:45012 (inferred: {THROUGH_PROXY})"
    assert held_unknown(view) == (
        "unknown (connected through a Proxy, which relays no running-info request)"
    )
