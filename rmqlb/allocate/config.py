"""CONFIG — ``AllocateMessageQueueByConfig``: every client returns the list it was given.

Java does no check at all: the configured list comes back whatever the route or the other
clients say (queues may even be outside ``mqAll``). A client with no list gets nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rmqlb.allocate._common import Assignment
from rmqlb.model.queue import MessageQueue


def allocate_config(
    cid_all: Sequence[str], config: Mapping[str, Sequence[MessageQueue]]
) -> Assignment:
    """Each distinct client's configured list, in configured order."""
    return {cid: list(config.get(cid, ())) for cid in dict.fromkeys(cid_all)}
