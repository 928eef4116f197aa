"""Looking a consumer group up by name: is it known, and which known name was meant? Pure.

A one-letter typo in a group name must not look like a group without consumers (that
report would advise deleting a group that never existed): callers raise
:class:`~rmqlb.errors.GroupNotFound` with :func:`not_found` instead.

>>> closest("order-consumr", ["OrderGroup", "order-consumer", "TOOLS_CONSUMER"])
'order-consumer'
>>> print(not_found("order-consumr", ["order-consumer", "TOOLS_CONSUMER"]))
group 'order-consumr' does not exist on this cluster (1 group known); did you mean 'order-consumer'?
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from rmqlb.errors import GroupNotFound, InputError
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import Snapshot
from rmqlb.model.system import is_system_group

#: How alike two names must be (difflib's ratio) to be suggested.
CUTOFF = 0.6


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name`` (difflib's ratio, ignoring case), or ``None``.

    User groups are preferred: a system group is suggested only when no user group is close.
    Ties go to the first name in Java order, so the answer never depends on input order.
    """
    names = sorted(set(known), key=java_key)
    wanted = name.lower()
    for pool in (
        [n for n in names if not is_system_group(n)],
        [n for n in names if is_system_group(n)],
    ):
        best: tuple[float, str] | None = None
        for candidate in pool:
            score = difflib.SequenceMatcher(None, wanted, candidate.lower()).ratio()
            if score >= CUTOFF and (best is None or score > best[0]):
                best = (score, candidate)
        if best is not None:
            return best[1]
    return None


def not_found(name: str, known: Iterable[str], where: str = "on this cluster") -> GroupNotFound:
    """The error for a group that exists nowhere, counting the known user groups and naming
    the closest one, e.g. ``group 'x' does not exist on this cluster (12 groups known); did
    you mean 'y'?``."""
    names = set(known)
    users = sum(1 for n in names if not is_system_group(n))
    text = f"group {name!r} does not exist {where} ({users} group{'s' if users != 1 else ''} known)"
    suggestion = closest(name, names)
    if suggestion is not None:
        text += f"; did you mean {suggestion!r}?"
    return GroupNotFound(text, name, suggestion)


def known_topics(snapshot: Snapshot) -> set[str]:
    """Every topic ``snapshot`` knows of: routes, subscriptions and offsets."""
    names = set(snapshot.topics)
    for g in snapshot.groups.values():
        names.update(s.topic for c in g.consumers for s in c.subscriptions)
        names.update(o.queue.topic for o in g.offsets)
    return names


def topic_not_found(name: str, known: Iterable[str], where: str = "in the snapshot") -> InputError:
    """The error for a topic that exists nowhere (or, with ``where``, not where it was asked
    for), naming the closest known one, e.g. ``topic 'RefundTopc' does not exist in the
    snapshot (8 topics known); did you mean 'RefundTopic'?``."""
    names = set(known)
    text = f"topic {name!r} does not exist {where} ({plural(len(names), 'topic')} known)"
    suggestion = closest(name, names)
    if suggestion is not None:
        text += f"; did you mean {suggestion!r}?"
    return InputError(text)
