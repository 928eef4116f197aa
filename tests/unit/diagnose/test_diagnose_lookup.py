"""Group lookup: the closest known name and the one-line error."""

from __future__ import annotations

import pytest

from rmqlb.diagnose.lookup import closest, not_found


@pytest.mark.parametrize(
    ("name", "known", "expected"),
    [
        ("order-consumr", ["order-consumer", "pay-consumer"], "order-consumer"),
        ("ORDERGROUP", ["OrderGroup", "OrderGroup2"], "OrderGroup"),  # case is ignored
        ("order-x", ["order-b", "order-a"], "order-a"),  # a tie: the first in Java order
        ("tools_consumer", ["TOOLS_CONSUMER", "tools-consumers"], "tools-consumers"),
        ("TOOLS_CONSUMR", ["TOOLS_CONSUMER", "InventoryGroup"], "TOOLS_CONSUMER"),  # no user match
        ("zzz", ["OrderGroup"], None),
        ("anything", [], None),
    ],
)
def test_closest(name: str, known: list[str], expected: str | None) -> None:
    assert closest(name, known) == expected
    assert closest(name, list(reversed(known))) == expected  # input order never matters


def test_not_found_counts_user_groups_and_suggests() -> None:
    err = not_found("OrderGrop", ["OrderGroup", "TOOLS_CONSUMER", "CID_RMQ_SYS_TRANS"])
    assert str(err) == (
        "group 'OrderGrop' does not exist on this cluster (1 group known); "
        "did you mean 'OrderGroup'?"
    )
    assert (err.group, err.suggestion, err.exit_code) == ("OrderGrop", "OrderGroup", 2)
    bare = not_found("x", ["a", "b"], where="in the snapshot")
    assert str(bare) == "group 'x' does not exist in the snapshot (2 groups known)"
    assert bare.suggestion is None
