"""``rmqlb simulate`` from a running group: a ``--dump`` file, a live cluster (``-n``) or a
check config (``--check-config``) is the starting point, and ``--add/--add-id/--remove``,
``--queues`` and ``--strategy`` are the steps of the what-if, applied in that order.

Glue only: the snapshot comes from :mod:`rmqlb.snapshot`, the live collector
(:func:`rmqlb.cli.live.snapshot_from_cluster`) or the check config
(:func:`rmqlb.check.synth.declared_snapshot`); the what-if from
:func:`rmqlb.whatif.running.simulate_running`; the output from :mod:`rmqlb.render.simulate`.
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
    from rmqlb.whatif.running import Changes


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


def acquire(source: Source, group: str | None) -> Snapshot:
    """The snapshot the what-if starts from."""
    if source.check_config:
        from rmqlb.check import load_files
        from rmqlb.check.synth import declared_snapshot

        return declared_snapshot(load_files(list(source.check_config)), group, source.replicas)
    if source.replicas is not None:
        raise InputError("--replicas picks a consumer count of a --check-config group")
    if source.dump is not None:
        from rmqlb.cli.explain import _load_dump

        return _load_dump(source.dump)
    assert source.live is not None
    from rmqlb.cli.live import snapshot_from_cluster

    return snapshot_from_cluster(source.live)


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
    from rmqlb.whatif.running import simulate_running

    snapshot = acquire(source, groups[0] if len(groups) == 1 else None)
    sims = simulate_running(snapshot, source.label, groups, topic, changes)
    write_running(sims, fmt, make_console(color) if fmt is Output.table else None)
    if source.live is not None and snapshot.errors:
        report_failures(snapshot.errors)
        return ExitCode.PARTIAL
    return ExitCode.OK
