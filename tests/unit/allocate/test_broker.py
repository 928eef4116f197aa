"""Broker-side assignment (``QueryAssignmentProcessor``, 5.0.0 and 5.1.4): hand-checked cases
following the Java code paths, and properties against the client-side allocators."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlb.allocate import allocate
from rmqlb.allocate.broker import (
    BROKER_STRATEGY_NAMES,
    BrokerState,
    query_all,
    query_assignment,
    request_mode,
)
from rmqlb.model import BrokerConfig, MessageQueue, MessageRequestMode, RequestMode
from rmqlb.model.strategy import Avg, AvgByCircle

PULL = MessageRequestMode(RequestMode.PULL)


def pop(share: int) -> MessageRequestMode:
    return MessageRequestMode(RequestMode.POP, share)


def qs(n: int, broker: str = "broker-a", topic: str = "T") -> tuple[MessageQueue, ...]:
    return tuple(MessageQueue(topic, broker, i) for i in range(n))


def labels(queues: tuple[MessageQueue, ...] | None) -> list[str] | None:
    return None if queues is None else [q.label() for q in queues]


# ---------------------------------------------------------------- hand-checked Java paths


def test_pull_avg_is_the_clients_avg_for_the_asking_client() -> None:
    state = BrokerState(qs(8), ("c2", "c0", "c1"), PULL)  # the broker sorts its list
    assert labels(query_assignment(state, "c0", "AVG")) == [
        "broker-a:0",
        "broker-a:1",
        "broker-a:2",
    ]
    assert labels(query_assignment(state, "c2", "AVG")) == ["broker-a:6", "broker-a:7"]
    assert labels(query_assignment(state, "c1", "AVG_BY_CIRCLE")) == [
        "broker-a:1",
        "broker-a:4",
        "broker-a:7",
    ]


def test_a_strategy_the_broker_does_not_know_gets_no_assignment() -> None:
    state = BrokerState(qs(4), ("c0", "c1"), PULL)
    for name in ("CONSISTENT_HASH", "MACHINE_ROOM", "CONFIG", "MACHINE_ROOM_NEARBY-AVG", None):
        assert query_assignment(state, "c0", name) is None
    # ... in POP mode too: the name is looked up first
    assert (
        query_assignment(BrokerState(qs(4), ("c0", "c1"), pop(-1)), "c0", "CONSISTENT_HASH") is None
    )


def test_server_load_balancer_disabled_gives_every_queue_whatever_the_strategy() -> None:
    state = BrokerState(qs(3), None, PULL, server_load_balancer_enable=False)
    assert labels(query_assignment(state, "c9", "CONSISTENT_HASH")) == [
        "broker-a:0",
        "broker-a:1",
        "broker-a:2",
    ]


def test_no_route_or_no_consumer_list_gives_no_assignment() -> None:
    assert query_assignment(BrokerState(None, ("c0",), PULL), "c0", "AVG") is None
    assert query_assignment(BrokerState(qs(2), None, PULL), "c0", "AVG") is None


def test_java_throws_on_an_empty_route_or_list_and_the_broker_answers_without_assignment() -> None:
    assert query_assignment(BrokerState((), ("c0",), PULL), "c0", "AVG") is None
    assert query_assignment(BrokerState(qs(2), (), PULL), "c0", "AVG") is None
    assert query_assignment(BrokerState(qs(2), ("", "c0"), PULL), "", "AVG") is None


def test_a_client_missing_from_the_brokers_list_gets_an_empty_assignment() -> None:
    assert query_assignment(BrokerState(qs(4), ("c0", "c1"), PULL), "c9", "AVG") == ()
    assert query_assignment(BrokerState(qs(4), ("c0", "c1", "c2", "c3"), pop(1)), "c9", "AVG") == ()


def test_pop_share_at_or_above_clients_minus_one_pops_every_broker_whole() -> None:
    route = qs(4) + qs(2, "broker-b")
    for share in (-1, 0, 2, 5):
        state = BrokerState(route, ("c0", "c1", "c2"), pop(share))
        # a client the broker does not list gets it too: allocate4Pop does not check
        for cid in ("c0", "c9"):
            assert labels(query_assignment(state, cid, "AVG")) == ["broker-a:-1", "broker-b:-1"]


def test_pop_share_one_adds_the_next_clients_share_wrapping_round() -> None:
    state = BrokerState(qs(4), ("c0", "c1", "c2"), pop(1))
    got = query_all(state, {"c0": "AVG", "c1": "AVG", "c2": "AVG"})
    assert {c: labels(q) for c, q in got.items()} == {
        "c0": ["broker-a:0", "broker-a:1", "broker-a:2"],
        "c1": ["broker-a:2", "broker-a:3"],
        "c2": ["broker-a:0", "broker-a:1", "broker-a:3"],
    }


def test_pop_with_more_clients_than_queues_gives_one_queue_each_by_index() -> None:
    state = BrokerState(qs(2), ("c0", "c1", "c2", "c3", "c4"), pop(1))
    got = query_all(state, dict.fromkeys(("c0", "c1", "c2", "c3", "c4", "c9"), "AVG"))
    assert {c: labels(q) for c, q in got.items()} == {
        "c0": ["broker-a:0"],
        "c1": ["broker-a:1"],
        "c2": ["broker-a:0"],
        "c3": ["broker-a:1"],
        "c4": ["broker-a:0"],
        "c9": [],
    }
    # the processor's own allocate refuses a blank id (StringUtils.isBlank), but for
    # Java a no-break space is not whitespace
    blank = BrokerState(qs(2), (" ", "c1", "c2", "c3"), pop(1))
    assert query_assignment(blank, " ", "AVG") is None
    nbsp = BrokerState(qs(2), ("\u00a0", "c1", "c2", "c3"), pop(1))  # sorts last: index 3
    assert labels(query_assignment(nbsp, "\u00a0", "AVG")) == ["broker-a:1"]


def test_a_duplicated_client_id_takes_the_share_of_its_first_index() -> None:
    state = BrokerState(qs(6), ("c0", "c1", "c1", "c2"), pop(1))
    # AVG over 4 entries: c0 0-1, c1 (first index 1) 2-3; the block 4 of the second c1 is
    # taken by nobody but the one before it; c2 5
    assert labels(query_assignment(state, "c1", "AVG")) == [
        "broker-a:2",
        "broker-a:3",
    ]
    assert labels(query_assignment(state, "c0", "AVG")) == [
        "broker-a:0",
        "broker-a:1",
        "broker-a:2",
        "broker-a:3",
    ]


def test_broadcasting_gets_the_whole_route() -> None:
    state = BrokerState(qs(2), None, pop(1))
    assert labels(query_assignment(state, "c0", "CONSISTENT_HASH", broadcasting=True)) == [
        "broker-a:0",
        "broker-a:1",
    ]


def test_request_mode_set_wins_then_retry_pull_then_the_brokers_default() -> None:
    pop_default = BrokerConfig(
        default_message_request_mode=RequestMode.POP, default_pop_share_queue_num=2
    )
    assert request_mode("T", pop(1), pop_default) == pop(1)
    assert request_mode("%RETRY%G", None, pop_default) == PULL
    assert request_mode("T", None, pop_default) == pop(2)
    assert request_mode("T", None, None) == PULL
    assert request_mode("T", None, BrokerConfig(default_message_request_mode=RequestMode.POP)) == (
        pop(-1)
    )


# ---------------------------------------------------------------- properties

CIDS = st.lists(st.sampled_from([f"10.0.0.{i}@1" for i in range(9)]), min_size=1, max_size=9)
QUEUE_COUNTS = st.integers(1, 20)


@settings(max_examples=200, deadline=None)
@given(cids=CIDS, n=QUEUE_COUNTS, name=st.sampled_from(BROKER_STRATEGY_NAMES))
def test_pull_equals_the_client_side_strategy_for_every_listed_client(
    cids: list[str], n: int, name: str
) -> None:
    state = BrokerState(qs(n), tuple(cids), PULL)
    client_side = allocate(Avg() if name == "AVG" else AvgByCircle(), qs(n), cids)
    for cid in set(cids):
        got = query_assignment(state, cid, name)
        assert got is not None and set(got) == set(client_side[cid])


@settings(max_examples=200, deadline=None)
@given(
    cids=st.lists(
        st.sampled_from([f"c{i}" for i in range(9)]), min_size=3, max_size=9, unique=True
    ),
    n=QUEUE_COUNTS,
    share=st.integers(1, 7),
)
def test_pop_shares_hand_each_queue_to_share_plus_one_clients(
    cids: list[str], n: int, share: int
) -> None:
    state = BrokerState(qs(n), tuple(cids), pop(share))
    got = query_all(state, dict.fromkeys(cids, "AVG"))
    held = Counter(q for queues in got.values() for q in queues or ())
    if share >= len(cids) - 1:
        assert all(q == (MessageQueue("T", "broker-a", -1),) for q in got.values())
    elif len(cids) <= n:
        # every AVG block goes to its owner and to the share clients before it
        assert set(held) == set(qs(n))
        assert set(held.values()) == {share + 1}
    else:
        assert sorted(held.elements()) == sorted(qs(n)[i % n] for i in range(len(cids)))
