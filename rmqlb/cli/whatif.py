"""``rmqlb simulate`` from a running group: a ``--dump`` file, a live cluster (``-n``) or a
check config (``--check-config``) is the starting point, and ``--add/--add-id/--remove``,
``--queues`` and ``--strategy`` are the steps of the what-if, applied in that order.

Glue only: the snapshot comes from :mod:`rmqlb.snapshot`, the live collector
(:func:`rmqlb.cli.live.snapshot_from_cluster`) or :mod:`rmqlb.check.synth`; the group from
:func:`rmqlb.diagnose.running.running`; the steps from :func:`rmqlb.allocate.whatif.plan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rmqlb.errors import InputError

if TYPE_CHECKING:
    from rmqlb.cli.live import LiveOptions
    from rmqlb.model.snapshot import Snapshot
    from rmqlb.render.formats import Output
    from rmqlb.render.simulate import RunningSimulation


@dataclass(frozen=True)
class Source:
    """Where the running group comes from: exactly one of the three."""

    dump: str | None = None
    live: LiveOptions | None = None
    check_config: tuple[str, ...] = ()
    replicas: int | None = None

    @property
    def label(self) -> str:
        """``dump``, ``live`` or ``check config``: how the heading names the source."""
        if self.dump is not None:
            return f"dump {self.dump}"
        if self.live is not None:
            return "live"
        return "check config"


@dataclass(frozen=True)
class Changes:
    """The what-if steps and the options that shape them."""

    add: int = 0
    add_id: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    queues: int | None = None
    strategy: str | None = None
    compare: bool = False


def _from_check(files: Sequence[str], group: str | None, replicas: int | None) -> Snapshot:
    """The declared group at ``replicas`` consumers (default: its maximum) as a snapshot."""
    from rmqlb.check import load_files
    from rmqlb.check.synth import Scenario, build_snapshot, distribute
    from rmqlb.diagnose.lookup import not_found

    config = load_files(list(files))
    declared = [g for g in config.groups.values() if g.members_declared]
    if group is None:
        if len(declared) != 1:
            names = ", ".join(g.name for g in declared) or "none"
            raise InputError(f"name the group to simulate with --group (declared: {names})")
        chosen = declared[0]
    else:
        found = config.groups.get(group)
        if found is None or not found.members_declared:
            raise not_found(group, [g.name for g in declared], "in the check config")
        chosen = found
    mins = tuple(m.min_replicas for m in chosen.members)
    maxs = tuple(m.max_replicas for m in chosen.members)
    total = sum(maxs) if replicas is None else replicas
    if not sum(mins) <= total <= sum(maxs):
        raise InputError(
            f"--replicas {total}: {chosen.name} runs {sum(mins)}..{sum(maxs)} consumers"
        )
    snapshot, _ = build_snapshot(config, chosen, Scenario(total, distribute(mins, maxs, total)))
    return snapshot


def acquire(source: Source, group: str | None) -> Snapshot:
    """The snapshot the what-if starts from."""
    if source.check_config:
        return _from_check(source.check_config, group, source.replicas)
    if source.replicas is not None:
        raise InputError("--replicas picks a consumer count of a --check-config group")
    if source.dump is not None:
        from rmqlb.cli.explain import _load_dump

        return _load_dump(source.dump)
    assert source.live is not None
    from rmqlb.cli.live import snapshot_from_cluster

    return snapshot_from_cluster(source.live)


def simulate_running(
    snapshot: Snapshot,
    source: Source,
    groups: Sequence[str],
    topic: str | None,
    changes: Changes,
) -> list[RunningSimulation]:
    """Every (group, topic) of the snapshot that was asked for, with its steps."""
    from rmqlb.allocate.whatif import compare_candidates, new_consumer_ids, plan, what_if
    from rmqlb.diagnose.running import running
    from rmqlb.model.strategy import Config, parse_strategy_spec
    from rmqlb.render.simulate import RunningSimulation

    names = list(groups)
    if not names:
        if len(snapshot.groups) != 1:
            known = ", ".join(sorted(snapshot.groups)[:10]) or "none"
            raise InputError(f"name the group to simulate with --group (groups: {known})")
        names = list(snapshot.groups)
    target = None
    if changes.strategy is not None:
        target = parse_strategy_spec(changes.strategy)
        if isinstance(target, Config):
            raise InputError("CONFIG lists are per client: simulate them with --input cases")
    out: list[RunningSimulation] = []
    for name in names:
        for start in running(snapshot, name, topic):
            joining = [*new_consumer_ids(start.consumers, changes.add), *changes.add_id]
            steps = plan(
                start.strategy,
                start.queues,
                start.consumers,
                add=joining,
                remove=changes.remove,
                per_broker=changes.queues,
                brokers=start.brokers,
                to_strategy=target,
            )
            compared = joiner = None
            if changes.compare and steps[0].assignment is not None:
                joiner = new_consumer_ids(start.consumers, 1)[0]
                compared = what_if(
                    start.strategy,
                    start.queues,
                    start.consumers,
                    compare_with=compare_candidates(start.strategy),
                    joiner=joiner,
                )
            out.append(RunningSimulation(start, source.label, tuple(steps), compared, joiner))
    return out


def run_running(  # noqa: PLR0917  (the command's parts, in order)
    source: Source,
    groups: Sequence[str],
    topic: str | None,
    changes: Changes,
    fmt: Output,
    color: bool | None,
) -> int:
    """Acquire, simulate, write; the exit code (4 when a live capture was partial)."""
    from rmqlb.cli.messages import report_failures
    from rmqlb.cli.options import make_console
    from rmqlb.errors import ExitCode
    from rmqlb.render.formats import Output
    from rmqlb.render.simulate import write_running

    snapshot = acquire(source, groups[0] if len(groups) == 1 else None)
    sims = simulate_running(snapshot, source, groups, topic, changes)
    write_running(sims, fmt, make_console(color) if fmt is Output.table else None)
    if source.live is not None and snapshot.errors:
        report_failures(snapshot.errors)
        return ExitCode.PARTIAL
    return ExitCode.OK
