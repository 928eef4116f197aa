"""What every Java strategy shares: ``AbstractAllocateMessageQueueStrategy.check`` and the
per-client ``cidAll.indexOf`` that the whole-group algorithms emulate."""

from __future__ import annotations

from collections.abc import Sequence

from rmqlb.errors import AllocationError
from rmqlb.model.queue import MessageQueue

Assignment = dict[str, list[MessageQueue]]


def java_check(mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> None:
    """Raise where Java's ``check`` throws for the first client it is called for.

    RebalanceImpl calls ``allocate`` once per client in sorted ``cidAll`` order; an empty
    client id sorts first, so it is the first call and fails before the empty ``mqAll`` does.
    """
    if not cid_all:
        return
    if "" in cid_all:
        raise AllocationError("currentCID is empty")
    if not mq_all:
        raise AllocationError("mqAll is null or mqAll empty")


def first_indexes(cid_all: Sequence[str]) -> dict[str, int]:
    """``cidAll.indexOf(cid)`` for every distinct client id (a duplicate keeps its first)."""
    index = dict(zip(cid_all, range(len(cid_all)), strict=True))
    if len(index) == len(cid_all):  # no id twice (the usual case): each index is the first
        return index
    index = {}
    for i, cid in enumerate(cid_all):
        index.setdefault(cid, i)
    return index
