"""Which files an audit reads, decided the same way for both engines.

A PATH is a snapshot file, a JSON Lines file (one snapshot per line) or a directory searched
recursively. Inside directories only ``*.json`` (one snapshot per file) and ``*.jsonl`` /
``*.ndjson`` (JSON Lines) are read, and — like Spark's file index — names starting with ``_``
or ``.`` are skipped (so a generator's ``_manifest.json`` or Spark's ``_SUCCESS`` are never
mistaken for snapshots). A file named explicitly is read whatever its name: JSON Lines when it
ends in ``.jsonl``/``.ndjson``, one snapshot otherwise. URIs with a scheme (``s3a://``,
``hdfs://``) are handed to Spark as directories; the local engine rejects them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from rmqlb.errors import InputError
from rmqlb.fileio import InputKind, decode_text, describe_special, read_input

LINES_SUFFIXES = (".jsonl", ".ndjson")
WHOLE_SUFFIXES = (".json",)
_T = TypeVar("_T")

WHOLE_GLOB = "*.json"
LINES_GLOB = "*.{jsonl,ndjson}"


class Layout(StrEnum):
    """How a file holds snapshots."""

    whole = "whole"  # one JSON document per file
    lines = "lines"  # JSON Lines: one snapshot per line


@dataclass(frozen=True, slots=True)
class InputPlan:
    """What to read: explicit files by layout, plus directories to search."""

    whole_files: tuple[str, ...] = ()
    line_files: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    uris: tuple[str, ...] = ()


def has_scheme(path: str) -> bool:
    """``s3a://b/x`` or ``file:/x`` (but not ``C:\\x``)."""
    head, sep, _ = path.partition(":")
    return bool(sep) and len(head) > 1 and head.replace("+", "").isalnum()


def layout_of(name: str) -> Layout:
    """JSON Lines for ``.jsonl``/``.ndjson`` names, one snapshot per file otherwise."""
    return Layout.lines if name.lower().endswith(LINES_SUFFIXES) else Layout.whole


def hidden(name: str) -> bool:
    """Spark's rule for names its file index skips (``_SUCCESS``, ``.part.crc``)."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".")


def plan_inputs(paths: Sequence[str]) -> InputPlan:
    """Classify the PATH arguments; a missing local path is an :class:`InputError`."""
    if not paths:
        raise InputError("audit needs at least one PATH (a snapshot file or a directory)")
    whole: list[str] = []
    lines: list[str] = []
    dirs: list[str] = []
    uris: list[str] = []
    for raw in paths:
        if has_scheme(raw) and not raw.startswith("file:"):
            uris.append(raw)
            continue
        local = Path(raw[len("file:") :] if raw.startswith("file:") else raw)
        if local.is_dir():
            dirs.append(str(local.resolve()))
        elif local.is_file() or describe_special(str(local)) not in (None, "no such file"):
            # a FIFO, a device or a symlink loop is read as a file: the engine skips it and
            # says why (the audit goes on)
            target = lines if layout_of(local.name) is Layout.lines else whole
            target.append(str(local.absolute()) if not local.is_file() else str(local.resolve()))
        else:
            raise InputError(f"{raw}: no such file or directory")
    return InputPlan(tuple(whole), tuple(lines), tuple(dirs), tuple(uris))


def walk(directory: str) -> Iterator[tuple[str, Layout]]:
    """Files under ``directory`` an audit reads, sorted, with their layout."""
    for root, subdirs, files in os.walk(directory):
        subdirs[:] = sorted(d for d in subdirs if not hidden(d))
        for name in sorted(files):
            if hidden(name):
                continue
            # case-sensitive, like Spark's pathGlobFilter
            if name.endswith(LINES_SUFFIXES):
                yield os.path.join(root, name), Layout.lines
            elif name.endswith(WHOLE_SUFFIXES):
                yield os.path.join(root, name), Layout.whole


def local_files(plan: InputPlan) -> list[tuple[str, Layout]]:
    """Every file of ``plan`` for the local engine (no URIs), each once."""
    if plan.uris:
        raise InputError(
            f"{plan.uris[0]}: the local engine reads local paths only; use --engine spark"
        )
    files: dict[str, Layout] = {}
    for path in plan.whole_files:
        files.setdefault(path, Layout.whole)
    for path in plan.line_files:
        files.setdefault(path, Layout.lines)
    for directory in plan.directories:
        for path, layout in walk(directory):
            files.setdefault(path, layout)
    return list(files.items())


def spark_plan(plan: InputPlan) -> tuple[InputPlan, list[tuple[str, str]]]:
    """What Spark reads of ``plan``, and ``(path, why)`` for each local file it must not open.

    Local files are listed as for the local engine (:func:`local_files`); a FIFO, a device,
    a symlink loop or a file over the size limit is left out with the reason the local engine
    gives (:func:`rmqlb.fileio.describe_special`), before Spark could block on it or read it
    whole. Remote URIs are Spark's to list.
    """
    whole: list[str] = []
    lines: list[str] = []
    skipped: list[tuple[str, str]] = []
    for path, layout in local_files(replace(plan, uris=())):
        why = describe_special(path, InputKind.AUDIT)
        if why is not None:
            skipped.append((path, why))
        else:
            (lines if layout is Layout.lines else whole).append(path)
    return InputPlan(tuple(whole), tuple(lines), (), plan.uris), skipped


# Spark's text source splits lines on \r\n, \r and \n only (not on U+2028 & co.).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def file_records(path: str, layout: Layout) -> Iterator[tuple[str | None, str | None]]:
    """``(record, None)`` per record of a local file (the whole text, or each line split
    as Spark's text source splits them), or one ``(None, why)`` when it cannot be read."""
    try:
        text = decode_text(read_input(path, InputKind.AUDIT), path)
    except InputError as exc:  # "<path>: <why>": the caller's row names the path already
        yield None, str(exc).removeprefix(f"{path}: ")
        return
    for record in _LINE_BREAK.split(text) if layout is Layout.lines else [text]:
        yield record, None


def file_size(path: str) -> int:
    """Bytes of ``path`` (0 when it cannot be stat'ed: the read will say why)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def chunk_files(files: Sequence[_T], sizes: Sequence[int], parts: int) -> list[list[_T]]:
    """``files`` cut into at most ``parts`` runs of neighbours with about equal bytes.

    Neighbours stay together (the captures of one cluster sit side by side in a sorted
    listing, and a worker that audits them in a row diagnoses each unchanged group state
    once); every run holds at least one file and the order is kept.

    >>> chunk_files(["a", "b", "c", "d"], [10, 10, 10, 10], 2)
    [['a', 'b'], ['c', 'd']]
    >>> chunk_files(["a", "b", "c"], [30, 1, 1], 2)
    [['a'], ['b', 'c']]
    >>> chunk_files(["a"], [5], 4)
    [['a']]
    """
    parts = max(1, min(parts, len(files)))
    total = sum(sizes) or 1
    runs: list[list[_T]] = [[] for _ in range(parts)]
    seen = 0
    for index, (item, size) in enumerate(zip(files, sizes, strict=True)):
        # the run whose byte range holds this file's middle, never fewer runs than files left
        run = min(parts - 1, (seen + size // 2) * parts // total)
        run = max(run, parts - (len(files) - index))
        while run > 0 and not runs[run - 1]:  # no empty run before a full one
            run -= 1
        runs[run].append(item)
        seen += size
    return [r for r in runs if r]
