"""The group's subscription-group configs on the brokers: CONSUME_DISABLED.

Every broker keeps its own ``subscriptionGroup.json``. With ``consumeEnable=false`` a broker
answers each pull of the group with ``NO_PERMISSION`` ("subscription group no permission");
the clients keep their queues and retry every 3 s, so nothing of that broker is consumed
while the lag grows. ``mqadmin updateSubGroup -s false`` sets it (to pause a group on
purpose, or by mistake when copying configs). With ``consumeBroadcastEnable=false``
(``-d false``) it refuses so every pull of a group it lists as BROADCASTING ("the consumer
group[G] can not consume by broadcast way"), 4.9 to 5.1 alike.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from rmqlb.diagnose.context import GroupContext, Mode, TopicContext, broker_addr
from rmqlb.diagnose.report import Code, Finding, Severity
from rmqlb.humanize import plural
from rmqlb.model.javaorder import java_key
from rmqlb.model.snapshot import GroupConfig

#: What ``mqadmin updateSubGroup`` writes for an option it is not given: it sends a fresh
#: config (4.9 to 5.1 ``UpdateSubGroupSubCommand``), with consumeBroadcastEnable=false
#: where a broker's own default is true. (It also writes consumeFromMinEnable=false, which
#: no broker of these versions reads, and 5.x's consumeTimeoutMinute and groupSysFlag at
#: their defaults: no option keeps them.)
_COMMAND_DEFAULTS = {
    "-s": "true",
    "-d": "false",
    "-r": "16",
    "-q": "1",
    "-i": "0",
    "-w": "1",
    "-a": "true",
    "-o": "false",
    "-p": None,
}


def update_sub_group(g: GroupContext, broker: str, change: str) -> str:
    """``mqadmin updateSubGroup -b ADDR -g G`` with ``change`` (``"-s true"``) and the
    options that keep the group's other settings there as they are: without them the
    command would reset them (a BROADCASTING group would lose consumeBroadcastEnable, a
    group with retryMaxTimes 3 get 16, one read from broker id 1 be sent to the master, a
    5.x retry policy go back to the default). Without a captured config, the broker's
    defaults."""
    cfg = g.group.configs.get(broker) or GroupConfig()
    now: dict[str, str | None] = {
        "-s": str(cfg.consume_enable).lower(),
        "-d": str(cfg.consume_broadcast_enable).lower(),
        "-r": str(cfg.retry_max_times),
        "-q": str(cfg.retry_queue_nums),
        "-i": str(cfg.broker_id),
        "-w": str(cfg.which_broker_when_consume_slowly),
        "-a": str(cfg.notify_consumer_ids_changed_enable).lower(),
        "-o": str(cfg.consume_message_orderly).lower(),
        "-p": cfg.group_retry_policy,
    }
    given = change.split()
    keep = [
        f"{opt} {shlex.quote(value)}"
        for opt, value in now.items()
        if value is not None and opt not in given and value != _COMMAND_DEFAULTS[opt]
    ]
    return " ".join(
        [f"mqadmin updateSubGroup -b {broker_addr(g.snapshot, broker)} -g {g.name}", change, *keep]
    )


def disabled_brokers(g: GroupContext) -> list[str]:
    """The brokers whose config of the group refuses its pulls, in Java order:
    ``consumeEnable=false``, or for a BROADCASTING group ``consumeBroadcastEnable=false``."""
    return sorted((b for b, cfg in g.group.configs.items() if _refuses(g, cfg)), key=java_key)


def _refuses(g: GroupContext, cfg: GroupConfig) -> bool:
    broadcast_off = g.mode is Mode.BROADCASTING and not cfg.consume_broadcast_enable
    return not cfg.consume_enable or broadcast_off


def check_configs(
    g: GroupContext, topics: Sequence[TopicContext], topic_filter: str | None
) -> list[Finding]:
    """CONSUME_DISABLED: the group may not consume on some brokers."""
    if not g.group.configs:
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
    affected = (
        f", so its queues there are not consumed: {', '.join(per_topic)}"
        if per_topic
        else ", so none of its queues there would be consumed"
    )
    waiting = f"; {lag:,} messages of lag wait on them" if lag_known and per_topic else ""
    consumers = (
        "" if g.consumers else "; the group has no online consumer now, so it shows once they start"
    )
    configs = g.group.configs
    off = [b for b in brokers if not configs[b].consume_enable]
    no_broadcast = [
        b
        for b in brokers
        if g.mode is Mode.BROADCASTING and not configs[b].consume_broadcast_enable
    ]
    causes: list[str] = []
    if off:
        causes.append(
            f"consumeEnable=false in the subscription-group config of {g.name} on "
            f"{_where(g, off)}: the broker answers every pull of the group with NO_PERMISSION "
            "('subscription group no permission')"
        )
    if no_broadcast:
        causes.append(
            f"consumeBroadcastEnable=false in the subscription-group config of {g.name} on "
            f"{_where(g, no_broadcast)}, and {g.name} consumes in BROADCASTING mode: the "
            "broker answers every pull of the group with NO_PERMISSION ('the consumer "
            f"group[{g.name}] can not consume by broadcast way')"
        )
    commands = "; ".join(
        update_sub_group(
            g,
            b,
            " ".join(
                opt for opt, on in (("-s true", b in off), ("-d true", b in no_broadcast)) if on
            ),
        )
        for b in brokers
    )
    if no_broadcast:
        paused = f"{g.name} was not paused on purpose and " if off else ""
        hint = (
            f"if {paused}every client of {g.name} should receive every message, let it "
            f"consume there: {commands}; else switch the consumers to MessageModel.CLUSTERING"
        )
    else:
        hint = f"if the group was not paused on purpose, enable it again: {commands}"
    return [
        Finding(
            Code.CONSUME_DISABLED,
            Severity.error,
            g.name,
            f"{'; and '.join(causes)} and the clients retry every 3 s{affected}{waiting}"
            f"{consumers}",
            hint,
        )
    ]


def _where(g: GroupContext, brokers: list[str]) -> str:
    if len(brokers) == len(g.group.configs) and len(brokers) > 1:
        return f"every broker with a config of {g.name} ({', '.join(brokers)})"
    return ", ".join(brokers)
