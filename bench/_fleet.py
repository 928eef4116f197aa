"""Generated fleets for the audit bench, kept between runs in a cache outside the repository.

A fleet of half a gigabyte takes minutes to generate, so it is written once under
``$RMQLB_BENCH_CACHE`` (default ``$XDG_CACHE_HOME/rmqlb-bench``, else
``~/.cache/rmqlb-bench``) in a directory named by a hash of everything its bytes depend on:
the generator's parameters and the source of the code that writes it (the generator, the
allocation strategies and the model they use). Change either and the name changes, so a
stale fleet is never read; older ones are left for the user to delete. A fleet is generated
in a temporary directory beside it and renamed into place when complete, so an interrupted
run never leaves a half fleet under the final name.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import rmqlb

#: The code whose source decides a generated fleet's bytes (relative to the package).
GENERATOR_SOURCES = ("pipeline/generate.py", "allocate", "model")


def cache_root() -> Path:
    """Where generated fleets are kept."""
    explicit = os.environ.get("RMQLB_BENCH_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rmqlb-bench"


def generator_digest() -> str:
    """SHA-256 over the source files that decide what the generator writes."""
    package = Path(rmqlb.__file__).resolve().parent
    digest = hashlib.sha256()
    for entry in GENERATOR_SOURCES:
        target = package / entry
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for file in files:
            digest.update(str(file.relative_to(package)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def fleet_key(params: dict[str, Any]) -> str:
    """The cache name of a fleet: its parameters and the generator's source, hashed."""
    text = json.dumps({"params": params, "generator": generator_digest()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_fleet(
    *, files: int, groups: int, clusters: int, change_rate: float | None, seed: int = 42
) -> tuple[Path, bool]:
    """The directory of the fleet with these parameters, generated unless cached; and
    whether it came from the cache."""
    from rmqlb.pipeline.generate import MANIFEST, generate_fleet  # noqa: PLC0415

    params = {
        "files": files,
        "groups": groups,
        "clusters": clusters,
        "change_rate": change_rate,
        "seed": seed,
    }
    root = cache_root()
    target = root / f"fleet-{files}x{groups}-{fleet_key(params)}"
    if (target / MANIFEST).is_file():
        return target, True
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
    try:
        generate_fleet(
            work, files, seed=seed, groups=groups, clusters=clusters, change_rate=change_rate
        )
        (work / "_params.json").write_text(json.dumps(params, sort_keys=True) + "\n")
        work.rename(target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target, False


def fleet_bytes(fleet: Path) -> int:
    """Bytes of the snapshot files of ``fleet`` (what ``--engine auto`` weighs)."""
    return sum(p.stat().st_size for p in fleet.rglob("*.json") if not p.name.startswith("_"))
