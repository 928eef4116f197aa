"""``rmqlb --help`` must stay lean: heavy modules load only inside the command that needs them.

Runs in a fresh interpreter, because this test process has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "pydantic",
    "yaml",
    "tabulate",
    "rich.table",
    "asyncio",
    "pyspark",
    "pandas",
    # rmqlb's own engines load with the command that runs them
    "rmqlb.whatif",
    "rmqlb.diagnose",
    "rmqlb.allocate",
)

PROBE = (
    "import json, sys\n"
    "import rmqlb.cli\n"
    "code = rmqlb.cli.run(['--help'])\n"
    "sys.stdout.write('\\n' + json.dumps({'code': code, 'modules': sorted(sys.modules)}) + '\\n')\n"
)


@pytest.fixture(scope="module")
def loaded() -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_help_succeeds(loaded: dict[str, object]) -> None:
    assert loaded["code"] == 0


@pytest.mark.parametrize("module", HEAVY)
def test_heavy_module_not_imported_by_help(loaded: dict[str, object], module: str) -> None:
    modules = loaded["modules"]
    assert isinstance(modules, list)
    present = sorted(m for m in modules if m == module or m.startswith(module + "."))
    assert not present, f"'rmqlb --help' imported {module}: {present[:5]}"
