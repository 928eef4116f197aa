"""``python -m bench``: run every ``bench/bench_*.py`` and print one table of ratios.

A module that raises gets an error row; the others still run. Exit status is 0 either way:
ratios are information, not assertions.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path

from bench._util import BenchResult


def _modules() -> list[str]:
    here = Path(__file__).resolve().parent
    return sorted(f"bench.{p.stem}" for p in here.glob("bench_*.py"))


def _run_module(name: str) -> list[BenchResult]:
    try:
        module = importlib.import_module(name)
        results = module.run()
    except Exception as exc:  # one broken bench must not hide the others
        traceback.print_exc(file=sys.stderr)
        return [BenchResult(name, float("nan"), float("nan"), f"ERROR {type(exc).__name__}: {exc}")]
    return list(results)


def main(argv: list[str] | None = None) -> int:
    """Run the selected (default: all) bench modules and print the table."""
    wanted = set(argv if argv is not None else sys.argv[1:])
    rows: list[BenchResult] = []
    for name in _modules():
        if wanted and name.removeprefix("bench.") not in wanted and name not in wanted:
            continue
        print(f"running {name} ...", file=sys.stderr, flush=True)
        rows.extend(_run_module(name))
    header = ("name", "ratio", "target", "ok?", "detail")
    table = [
        (
            r.name,
            "-" if r.skipped else "error" if r.ratio != r.ratio else f"{r.ratio:.2f}",
            "-" if r.target != r.target else f"<= {r.target:g}",
            "skip" if r.skipped else "ERROR" if r.ratio != r.ratio else ("ok" if r.ok else "MISS"),
            r.detail,
        )
        for r in rows
    ]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *table, strict=False)]
    for line in (header, *table):
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
