"""The what-if engine behind ``rmqlb simulate``: inputs, balance, moves, comparisons."""

from __future__ import annotations

import pytest

from rmqlb.allocate import allocate
from rmqlb.errors import InputError
from rmqlb.model.javaorder import java_sorted
from rmqlb.model.queue import MessageQueue
from rmqlb.model.strategy import (
    Avg,
    AvgByCircle,
    Config,
    ConsistentHash,
    MachineRoom,
    MachineRoomNearby,
    RoomPattern,
    describe,
)
from rmqlb.whatif.documents import what_if_to_json
from rmqlb.whatif.events import compare, compare_candidates, leaver, scale, what_if
from rmqlb.whatif.inputs import broker_names, default_consumer_ids, make_queues, new_consumer_ids
from rmqlb.whatif.measure import balance, diff

T = "TopicTest"


def q(broker: str, qid: int, topic: str = T) -> MessageQueue:
    return MessageQueue(topic, broker, qid)


# --------------------------------------------------------------------------- inputs


def test_broker_names_letters_then_numbers() -> None:
    assert broker_names(2) == ["broker-a", "broker-b"]
    assert broker_names(26)[-1] == "broker-z"
    many = broker_names(30)
    assert many[0] == "broker-00" and many[-1] == "broker-29"
    assert java_sorted(many) == many
    with pytest.raises(InputError):
        broker_names(0)


def test_make_queues_per_broker() -> None:
    got = make_queues(T, ["broker-a", "broker-b"], 2)
    assert got == [q("broker-a", 0), q("broker-a", 1), q("broker-b", 0), q("broker-b", 1)]
    with pytest.raises(InputError, match="given twice"):
        make_queues(T, ["x", "x"], 1)
    with pytest.raises(InputError):
        make_queues(T, ["x"], 0)


@pytest.mark.parametrize("count", [1, 3, 10, 11, 99, 100, 250])
def test_default_ids_sort_numerically(count: int) -> None:
    cids = default_consumer_ids(count)
    assert len(set(cids)) == count
    assert java_sorted(cids) == cids
    assert all(c.startswith("10.0.0.1@consumer-") for c in cids)


def test_default_ids_with_a_run_wide_width() -> None:
    before = default_consumer_ids(9, width=2)
    joiner = default_consumer_ids(1, start=9, width=2)
    assert before[0] == "10.0.0.1@consumer-00"
    assert joiner == ["10.0.0.1@consumer-09"]
    assert java_sorted(before + new_consumer_ids(before, 3, width=2))[-1].endswith("-11")


def test_new_ids_skip_taken_ones() -> None:
    existing = ["10.0.0.1@consumer-1", "x"]
    assert new_consumer_ids(existing, 2) == ["10.0.0.1@consumer-2", "10.0.0.1@consumer-3"]
    assert new_consumer_ids(["10.0.0.1@consumer-1"], 1) == ["10.0.0.1@consumer-2"]
    assert new_consumer_ids([], 1) == ["10.0.0.1@consumer-0"]


# --------------------------------------------------------------------------- measures


def test_balance_of_an_uneven_split() -> None:
    mqs = make_queues(T, ["broker-a"], 16)
    got = balance(allocate(Avg(), mqs, [f"c{i}" for i in range(10)]), mqs)
    assert (got.queues, got.consumers, got.min, got.max) == (16, 10, 1, 2)
    assert got.idle == () and got.unassigned == () and got.duplicated == ()


def test_balance_idle_unassigned_and_duplicated() -> None:
    mqs = [q("broker-a", 0), q("broker-a", 1), q("broker-a", 2)]
    assignment = {"a": [mqs[0], mqs[1]], "b": [mqs[1]], "c": []}
    got = balance(assignment, mqs)
    assert got.idle == ("c",)
    assert got.unassigned == (mqs[2],)
    assert got.duplicated == (mqs[1],)
    assert (got.min, got.max) == (0, 2)


def test_balance_of_nothing() -> None:
    got = balance({}, [q("b", 0)])
    assert (got.min, got.max, got.consumers, got.unassigned) == (0, 0, 0, (q("b", 0),))


def test_diff_counts_changed_holders() -> None:
    a, b, c = q("x", 0), q("x", 1), q("x", 2)
    moves = diff({"p": [a, b], "r": [c]}, {"p": [a], "r": [b, c]}, [a, b, c])
    assert [(m.queue, m.before, m.after) for m in moves.moved] == [(b, ("p",), ("r",))]
    assert (moves.count, moves.total, moves.percent) == (1, 3, 33.3)


def test_diff_to_nobody_and_from_nobody() -> None:
    a, b = q("x", 0), q("x", 1)
    moves = diff({"p": [a]}, {"p": [b]}, [a, b])
    assert [(m.before, m.after) for m in moves.moved] == [(("p",), ()), ((), ("p",))]


def test_scale_out_avg_16_queues_3_to_4() -> None:
    # 6/5/5 -> 4/4/4/4: queues 4,5 | 8,9,10 | 12..15 change hands (hand-checked).
    mqs = make_queues(T, ["broker-a"], 16)
    cids = default_consumer_ids(3)
    event = scale(Avg(), mqs, cids, add=new_consumer_ids(cids, 1))
    assert [m.queue.queue_id for m in event.moves.moved] == [4, 5, 8, 9, 10, 12, 13, 14, 15]
    assert event.moves.percent == 56.2
    assert event.added == ("10.0.0.1@consumer-3",)
    assert [len(v) for v in event.after.values()] == [4, 4, 4, 4]


def test_scale_in_moves_the_leaver_queues() -> None:
    mqs = make_queues(T, ["broker-a"], 4)
    event = scale(Avg(), mqs, ["a", "b"], remove=["b"])
    assert {m.queue.queue_id: (m.before, m.after) for m in event.moves.moved} == {
        2: (("b",), ("a",)),
        3: (("b",), ("a",)),
    }
    assert event.consumers_after == ("a",)


def test_removing_the_last_consumer_orphans_every_queue() -> None:
    mqs = make_queues(T, ["broker-a"], 3)
    event = scale(Avg(), mqs, ["a"], remove=["a"])
    assert event.after == {}
    assert event.moves.count == 3 and event.moves.percent == 100.0


def test_remove_unknown_consumer_is_input_error() -> None:
    with pytest.raises(InputError, match="cannot remove 'zz'"):
        scale(Avg(), make_queues(T, ["b"], 2), ["a"], remove=["zz"])


def test_remove_one_of_a_duplicated_id() -> None:
    mqs = make_queues(T, ["b"], 4)
    event = scale(Avg(), mqs, ["a", "a", "c"], remove=["a"])
    assert event.consumers_after == ("a", "c")


def test_adding_an_existing_id_duplicates_it() -> None:
    # Two processes with one id: both take index 0's block; index 1's block goes to nobody.
    mqs = make_queues(T, ["b"], 4)
    event = scale(Avg(), mqs, ["a"], add=["a"])
    assert event.after == {"a": [q("b", 0), q("b", 1)]}
    assert balance(event.after, mqs).unassigned == (q("b", 2), q("b", 3))


# --------------------------------------------------------------------------- compare


def test_compare_candidates_default_and_parameterised() -> None:
    assert [describe(s) for s in compare_candidates()] == [
        "AVG",
        "AVG_BY_CIRCLE",
        "CONSISTENT_HASH(vnodes=10)",
    ]
    room = MachineRoom(frozenset({"hz"}))
    assert compare_candidates(room)[-1] == room
    rooms = RoomPattern("^(\\w+)@")
    nearby = compare_candidates(AvgByCircle(), rooms, rooms)[-1]
    assert nearby == MachineRoomNearby(AvgByCircle(), rooms, rooms)
    config = {"a": (q("b", 0),)}
    assert compare_candidates(None, config=config)[-1] == Config(config)
    assert describe(compare_candidates(MachineRoomNearby(ConsistentHash(4), rooms, rooms))[2]) == (
        "CONSISTENT_HASH(vnodes=4)"
    )


def test_compare_rows_16_queues_3_consumers() -> None:
    mqs = make_queues(T, ["broker-a"], 16)
    cids = default_consumer_ids(3)
    rows = compare([Avg(), AvgByCircle()], mqs, cids)
    avg, circle = rows
    assert avg.balance is not None and (avg.balance.min, avg.balance.max) == (5, 6)
    assert avg.moved_on_add is not None and avg.moved_on_add.count == 9
    # -1 removes consumer-2 (last in Java order): 0-5,6-10 -> 0-7,8-15: 6,7 and 11..15 move.
    assert avg.moved_on_remove is not None and avg.moved_on_remove.count == 7
    assert circle.balance is not None and (circle.balance.min, circle.balance.max) == (5, 6)
    assert leaver(cids) == cids[-1]


def test_compare_records_java_errors_per_cell() -> None:
    mqs = [q("hz@a", 0), q("hz@a", 1)]
    rooms = RoomPattern("^(hz)@")
    spec = MachineRoomNearby(Avg(), rooms, rooms)
    rows = compare([spec], mqs, ["hz@1", "hz@2"], joiner="sh@3")
    (row,) = rows
    assert row.balance is not None
    assert row.moved_on_add is None
    assert row.add_error == "Machine room is null for consumer id sh@3"
    assert row.moved_on_remove is not None

    (broken,) = compare([ConsistentHash(-2)], mqs, ["a"])
    assert broken.balance is None and broken.error == "illegal virtualNodeCnt :-2"


def test_compare_single_consumer_minus_one_orphans_all() -> None:
    mqs = make_queues(T, ["b"], 5)
    (row,) = compare([Avg()], mqs, ["only"])
    assert row.moved_on_remove is not None and row.moved_on_remove.count == 5


# --------------------------------------------------------------------------- what_if + json


def test_what_if_json_shape() -> None:
    mqs = make_queues(T, ["broker-a"], 2)
    result = what_if(Avg(), mqs, ["a", "b", "c"], add=["d"], compare_with=[Avg()], joiner="d")
    obj = what_if_to_json(None, result)
    assert set(obj) == {"id", "assignments", "moves", "compare"}
    assert obj["assignments"]["c"] == []
    assert obj["assignments"]["a"] == [{"topic": T, "brokerName": "broker-a", "queueId": 0}]
    assert obj["moves"]["added"] == ["d"] and obj["moves"]["count"] == 0
    assert obj["compare"][0]["label"] == "AVG"
    assert obj["compare"][0]["movedOnAdd"] == {"count": 0, "percent": 0.0}


def test_what_if_plain_has_only_the_contract_keys() -> None:
    result = what_if(Avg(), make_queues(T, ["broker-a"], 2), ["a"])
    assert set(what_if_to_json("x", result)) == {"id", "assignments"}
