"""``rmqlb.whatif`` is pure: no terminal, no files, no network, nothing above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rmqlb.whatif

PACKAGE = Path(rmqlb.whatif.__file__).parent
FORBIDDEN = (
    "rich", "typer", "tabulate", "asyncio", "socket", "subprocess", "os", "sys", "pathlib",
    "rmqlb.cli", "rmqlb.render", "rmqlb.client", "rmqlb.fake", "rmqlb.check", "rmqlb.pipeline",
)  # fmt: skip


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_io_and_no_presentation(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [
        name
        for node in ast.walk(tree)
        for name in (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
    ]
    bad = [m for m in imported for f in FORBIDDEN if m == f or m.startswith(f + ".")]
    assert not bad, f"{path.name} imports {bad}"
    calls = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not calls & {"open", "print", "input"}, path.name
