"""What every benchmark shares: the result row and best-of-N timers."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

Clock = Callable[[], float]


@dataclass
class BenchResult:
    """One measured ratio: ``ratio`` (lower is better) against its ``target``."""

    name: str
    ratio: float
    target: float
    detail: str

    @property
    def skipped(self) -> bool:
        """A row that could not run here (its ``detail`` starts with ``skipped:`` and says why)."""
        return self.detail.startswith("skipped:")

    @property
    def ok(self) -> bool:
        """Whether the ratio meets its target."""
        return self.ratio <= self.target


def best_of(fn: Callable[[], object], repeat: int = 5, clock: Clock = time.perf_counter) -> float:
    """The fastest of ``repeat`` runs of ``fn``, in seconds (``time.perf_counter`` by default).

    The minimum is the least noisy estimate on a shared machine: noise only ever adds time.
    """
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def best_of_pair(
    subject: Callable[[], object],
    floor: Callable[[], object],
    repeat: int = 5,
    clock: Clock = time.perf_counter,
) -> tuple[float, float]:
    """Best times of ``subject`` and ``floor``, run alternately so that a noisy neighbour
    slows both rather than one: the ratio of the two minima is then far more stable."""
    best_subject = best_floor = float("inf")
    for _ in range(repeat):
        best_subject = min(best_subject, best_of(subject, 1, clock))
        best_floor = min(best_floor, best_of(floor, 1, clock))
    return best_subject, best_floor


def ms(seconds: float) -> str:
    """``0.0123`` -> ``"12.3 ms"``."""
    return f"{seconds * 1000:.1f} ms"
