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


def _queues(*ids: int) -> list[dict[str, object]]:
    return [{"topic": T, "brokerName": "broker-a", "queueId": i} for i in ids]


def test_clients_through_a_proxy_and_the_others_allocate_over_two_lists() -> None:
    """A 5.1+ Proxy answers its remoting clients with its own clients (here a gRPC client
    and p1), the brokers list only n1 and n2 (seen on the 5.1.4 kit): n1 and n2 share the 4
    queues between them and hold them, p1 takes its AVG share of the Proxy's list (the
    first half), so those queues are read twice. PROXY_LIST_SPLIT (an error) names p1 and
    the queues; *expected* is what each list gives (before: one list of all three, and a
    STALE_ALLOCATION warning blaming a rebalance)."""
    grpc = "host-1@4242@0@lmr3x9k2ab"
    report = run(
        {T: {"queues": 4}},
        {
            G: group(
                consumer("10.0.0.1@n1", T, RETRY, assigned=_queues(0, 1)),
                consumer("10.0.0.2@n2", T, RETRY, assigned=_queues(2, 3)),
                consumer("10.0.0.3@p1", T, RETRY, proxy=PROXY),
                consumer(grpc, T, proxy=PROXY),
            )
        },
        extra={"source": {"namesrv": ["10.0.0.1:9876"], "proxies": [PROXY]}},
    )
    split = [f for f in report.findings if f.code is Code.PROXY_LIST_SPLIT and f.topic == T]
    assert len(split) == 1
    (found,) = split
    assert found.severity.value == "error"
    assert found.consumers == ("10.0.0.3@p1",)
    assert [q.label() for q in found.queues] == ["broker-a:0", "broker-a:1"]
    assert found.message.startswith(
        f"the consumers of {G} that balance themselves allocate {T} over 2 consumer lists: "
        f"10.0.0.1@n1, 10.0.0.2@n2 over the brokers' list (2 clients); 10.0.0.3@p1 over the "
        f"Proxy {PROXY}'s (2 clients)."
    )
    assert "2 of 4 queues are allocated twice (broker-a:0, broker-a:1)" in found.message
    assert found.hint.startswith(
        f"connect every consumer of {G} the same way: either 10.0.0.3@p1 to the NameServer, "
        f"like the 2 others, or those (10.0.0.1@n1, 10.0.0.2@n2) through the Proxy {PROXY}"
    )
    for code in (Code.STALE_ALLOCATION, Code.ASSIGNMENT_MISMATCH):
        assert code not in {f.code for f in report.findings}
    (table,) = [t for t in report.groups[0].topics if t.topic == T]
    assert {c.consumer.client_id: c.expected for c in table.consumers} == {
        grpc: 0,  # the Proxy pops for it: it takes no share by a strategy
        "10.0.0.1@n1": 2,
        "10.0.0.2@n2": 2,
        "10.0.0.3@p1": 2,  # AVG over [p1, grpc] (Java order): the first half
    }
    assert [(r.expected, r.status.value) for r in table.queues] == [
        ("10.0.0.1@n1", "ok"), ("10.0.0.1@n1", "ok"), ("10.0.0.2@n2", "ok"), ("10.0.0.2@n2", "ok")
    ]  # fmt: skip


def test_one_list_when_every_client_balancing_itself_is_on_one_side() -> None:
    """Only gRPC clients through the Proxy beside the brokers' clients (none balancing
    itself through it), or only clients through the Proxy: one list, no PROXY_LIST_SPLIT."""
    for consumers in (
        [consumer("10.0.0.1@n1", T, RETRY), consumer("host-1@4242@0@lmr3x9k2ab", T, proxy=PROXY)],
        [
            consumer("10.0.0.3@p1", T, RETRY, proxy=PROXY),
            consumer("10.0.0.4@p2", T, RETRY, proxy=PROXY),
        ],
    ):
        report = run(
            {T: {"queues": 4}},
            {G: group(*consumers)},
            extra={"source": {"namesrv": ["10.0.0.1:9876"], "proxies": [PROXY]}},
        )
        assert Code.PROXY_LIST_SPLIT not in {f.code for f in report.findings}


def test_a_proxys_remoting_clients_allocate_over_its_list_with_its_grpc_clients() -> None:
    """The Proxy answers GET_CONSUMER_LIST_BY_GROUP with every client it serves of the
    group, its gRPC clients included (on the 5.1.4 kit a remoting client beside a gRPC one
    allocated over both and held half): *expected* of the remoting client is its share of
    that list, though no strategy gives the gRPC client a queue (it pops)."""
    grpc = "host-1@4242@0@lmr3x9k2ab"
    report = run(
        {T: {"queues": 4}},
        {G: group(consumer("10.0.0.3@p1", T, RETRY, proxy=PROXY), consumer(grpc, T, proxy=PROXY))},
        extra={"source": {"namesrv": ["10.0.0.1:9876"], "proxies": [PROXY]}},
    )
    (table,) = [t for t in report.groups[0].topics if t.topic == T]
    assert {c.consumer.client_id: c.expected for c in table.consumers} == {
        "10.0.0.3@p1": 2,  # AVG over [p1, grpc] (Java order): the first half
        grpc: 0,
    }
    assert [r.expected for r in table.queues] == ["10.0.0.3@p1", "10.0.0.3@p1", None, None]
    assert Code.PROXY_LIST_SPLIT not in {f.code for f in report.findings}


def test_remoting_clients_of_two_proxies_each_take_every_queue() -> None:
    """Each Proxy answers with its own clients: p1 through one and p2 through another
    allocate over [p1] and [p2], so each takes every queue, PROXY_LIST_SPLIT names both
    Proxies and the fix is one Proxy (or the NameServer) for all."""
    other = "127.0.0.1:9081"
    report = run(
        {T: {"queues": 2}},
        {
            G: group(
                consumer("10.0.0.3@p1", T, RETRY, proxy=PROXY),
                consumer("10.0.0.4@p2", T, RETRY, proxy=other),
            )
        },
        extra={"source": {"namesrv": ["10.0.0.1:9876"], "proxies": [PROXY, other]}},
    )
    (found,) = [f for f in report.findings if f.code is Code.PROXY_LIST_SPLIT and f.topic == T]
    assert found.consumers == ("10.0.0.3@p1", "10.0.0.4@p2")
    assert found.message.startswith(
        f"the consumers of {G} that balance themselves allocate {T} over 2 consumer lists: "
        f"10.0.0.3@p1 over the Proxy {PROXY}'s (1 client); 10.0.0.4@p2 over the Proxy "
        f"{other}'s (1 client). Each 5.1+ Proxy answers the clients connected to its remoting "
        "port with its own clients only, so each list shares out every queue of T: 2 of 2 "
        "queues are allocated twice"
    )
    assert found.hint.startswith(
        f"connect every consumer of {G} to one Proxy (now {PROXY}, {other}), or all of them "
        "to the NameServer"
    )
    (table,) = [t for t in report.groups[0].topics if t.topic == T]
    assert {c.consumer.client_id: c.expected for c in table.consumers} == {
        "10.0.0.3@p1": 2,
        "10.0.0.4@p2": 2,
    }
