"""The group's subscription-group configs on the brokers: CONSUME_DISABLED.

Every broker keeps its own ``subscriptionGroup.json``. With ``consumeEnable=false`` a broker
answers each pull of the group with ``NO_PERMISSION`` ("subscription group no permission");
the clients keep their queues and retry every 3 s, so nothing of that broker is consumed
while the lag grows. ``mqadmin updateSubGroup -s false`` sets it (to pause a group on
purpose, or by mistake when copying configs).
"""

from __future__ import annotations

from collections.abc import Sequence

from rmqlb.diagnose.context import GroupContext, Mode, TopicContext, broker_addr
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key


def disabled_brokers(g: GroupContext) -> list[str]:
    """The brokers whose config of the group has ``consumeEnable=false``, in Java order."""
    return sorted((b for b, cfg in g.group.configs.items() if not cfg.consume_enable), key=java_key)


def check_configs(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """CONSUME_DISABLED: the group may not consume on some brokers."""
    if g.mode is Mode.BROADCASTING or not g.group.configs:
        return []
    brokers = disabled_brokers(g)
    if not brokers:
        return []
    disabled = set(brokers)
    per_topic: list[str] = []
    lag = 0
    lag_known = False
    for ctx in topics:
        count = 0
        for broker, (first, n) in ctx.base.items():
            if broker not in disabled:
                continue
            count += n
            if ctx.lag is not None:
                lag_known = True
                lag += sum(filter(None, ctx.lag[first : first + n]))
        if count:
            per_topic.append(f"{ctx.topic} ({plural(count, 'queue')})")
    where = (
        f"every broker with a config of {g.name} ({', '.join(brokers)})"
        if len(brokers) == len(g.group.configs) and len(brokers) > 1
        else ", ".join(brokers)
    )
    affected = (
        f", so its queues there are not consumed: {', '.join(per_topic)}"
        if per_topic
        else ", so none of its queues there would be consumed"
    )
    waiting = f"; {lag:,} messages of lag wait on them" if lag_known and per_topic else ""
    consumers = (
        "" if g.consumers else "; the group has no online consumer now, so it shows once they start"
    )
    commands = "; ".join(
        f"mqadmin updateSubGroup -b {broker_addr(g.snapshot, b)} -g {g.name} -s true"
        for b in brokers
    )
    return [
        Finding(
            Code.CONSUME_DISABLED,
            Severity.error,
            g.name,
            f"consumeEnable=false in the subscription-group config of {g.name} on {where}: "
            f"the broker answers every pull of the group with NO_PERMISSION ('subscription "
            f"group no permission') and the clients retry every 3 s{affected}{waiting}"
            f"{consumers}",
            f"if the group was not paused on purpose, enable it again: {commands}",
        )
    ]
