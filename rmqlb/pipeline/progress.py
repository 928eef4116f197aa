"""How far an audit has got, for the progress line a long run shows on a terminal.

The engines report :class:`AuditProgress` values to a :data:`ProgressSink` (the CLI's is
:class:`rmqlb.render.progress.ProgressLine`); nothing here writes anywhere. The in-process
engine counts files, bytes and snapshots exactly; the Spark engine knows its tasks (the
records are read inside them), so it reports tasks done of the running job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Below this share done an ETA is a guess from too little: none is given.
MIN_FRACTION_FOR_ETA = 0.02


@dataclass(frozen=True, slots=True)
class AuditProgress:
    """One progress report: the phase, the counts known so far and the time spent.

    ``snapshots`` counts input snapshots, ``group_snapshots`` the groups in them (what is
    diagnosed); ``files_total``/``bytes_total`` are ``None`` where the engine cannot know
    them (Spark reads inside its tasks); ``tasks_total`` is ``None`` for the in-process
    engine.

    >>> p = AuditProgress("reading", elapsed=2.0, files_read=1, files_total=4,
    ...                   bytes_read=250, bytes_total=1000, snapshots=120)
    >>> p.fraction, p.eta
    (0.25, 6.0)
    """

    phase: str
    elapsed: float
    files_read: int = 0
    files_total: int | None = None
    bytes_read: int = 0
    bytes_total: int | None = None
    snapshots: int = 0
    group_snapshots: int = 0
    tasks_done: int = 0
    tasks_total: int | None = None

    @property
    def fraction(self) -> float | None:
        """Share of the phase done (bytes for the in-process engine, tasks for Spark)."""
        if self.bytes_total:
            return min(self.bytes_read / self.bytes_total, 1.0)
        if self.tasks_total:
            return min(self.tasks_done / self.tasks_total, 1.0)
        return None

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far (``None`` until enough is done to tell)."""
        done = self.fraction
        if done is None or done < MIN_FRACTION_FOR_ETA:
            return None
        return self.elapsed * (1.0 - done) / done


ProgressSink = Callable[[AuditProgress], None]
"""Receives progress reports; called often (it throttles itself)."""
