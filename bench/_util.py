"""What every benchmark shares: the result row and best-of-N timers."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
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


def user_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment (``base``, else this process's) of a measured rmqlb process, as users
    run it: with compiled bytecode and rmqlb's compiled dataclass methods kept between runs.

    Containers and CI often set ``PYTHONDONTWRITEBYTECODE``; with it, every rmqlb process
    compiles each module it imports from source (an editable install has no bytecode of its
    own) and each dataclass method it calls, which no installed rmqlb does after its first run.
    """
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ms(seconds: float) -> str:
    """``0.0123`` -> ``"12.3 ms"``."""
    return f"{seconds * 1000:.1f} ms"
