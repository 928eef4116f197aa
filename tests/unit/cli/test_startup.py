"""``rmqlb --help`` and ``rmqlb explain`` must stay lean: heavy modules load only inside the
command (and the output format) that needs them.

Runs in a fresh interpreter, because this test process has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rmqlb import fileio
from rmqlb.cli import COMMANDS, app, load_commands
from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import load_snapshot

EXAMPLES = Path(__file__).parents[3] / "examples"

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

# What ``explain`` must not import, whatever its input: other commands' engines, data-frame
# stacks, the fake cluster, the packaged-resource machinery (the schema command's).
NOT_FOR_EXPLAIN = (
    "pyspark",
    "pandas",
    "pyarrow",
    "pydantic",
    "yaml",
    "rmqlb.whatif",
    "rmqlb.pipeline",
    "rmqlb.check",
    "rmqlb.fake",
    "importlib.resources",
)
# Nor, whatever its input, the other commands' modules (each registers its command only when
# run), --watch's, the status-level diagnosis, typer's Rich help, numpy (very large
# CONSISTENT_HASH rings only), stdlib packages nothing here uses, or tempfile (only writing a
# file needs it).
OTHER_COMMANDS = (
    *(f"rmqlb.cli.{name}" for name in COMMANDS if name != "explain"),
    "rmqlb.cli.watch",
    "rmqlb.render.changes",
)
NOT_FOR_ANY_EXPLAIN = (
    *NOT_FOR_EXPLAIN,
    *OTHER_COMMANDS,
    "rmqlb.exporter",
    "rmqlb.diagnose.status",
    "typer.rich_utils",
    "numpy",
    "email",
    "http",
    "xml",
    "multiprocessing",
    "unittest",
    "tempfile",
)
# A group no broker balances (every 4.x one) never loads the 5.x broker-side assignment:
# its allocation, the BrokerSide it feeds, its request bodies.
BROKER_SIDE = ("rmqlb.diagnose.brokerside", "rmqlb.allocate.broker", "rmqlb.remoting.assignment")
# ``-o json`` of a file: no network stack, no Rich.
HEAVY_DUMP_JSON = (
    *NOT_FOR_ANY_EXPLAIN,
    *BROKER_SIDE,
    "rich",
    "asyncio",
    "ssl",
    "rmqlb.client",
    "rmqlb.remoting",
)
# A big snapshot file is decoded by jiter from its bytes: pydantic-core (which writes big JSON
# documents only) stays out of its JSON report too.
HEAVY_BIG_DUMP_JSON = (*HEAVY_DUMP_JSON, "pydantic_core")
# A live capture reads no file: pydantic-core (the big-document JSON writer) stays out
# for one group's small report, and so do the encoders' decimal arithmetic and Rich. Neither
# output loads what only some runs need: the proposal search (only IDLE_CONSUMER, IMBALANCE
# and UNCONSUMED_QUEUE search fixes; this group is just rebalancing), hashlib
# (CONSISTENT_HASH rings, ACL signatures: it loads OpenSSL's digests), the text outputs'
# document model (the colour table needs only its Column), Rich's emoji table (table
# headers are Text, never parsed as markup) or the strategy parameter search (its clients
# state their strategy whole).
NOT_FOR_THIS_GROUP = (
    *BROKER_SIDE,
    "rmqlb.diagnose.proposals",
    "rmqlb.diagnose.infer",
    "hashlib",
    "hmac",
    "rmqlb.render.blocks",
    "rich._emoji_codes",
)
# A live capture reads no snapshot file and writes none: the loader and the schema stay out
# (the report's JSON shares only the writer and the spec).
NO_SNAPSHOT_FILE = ("rmqlb.snapshot._parse", "rmqlb.snapshot.schema")
HEAVY_LIVE_JSON = (
    *NOT_FOR_ANY_EXPLAIN,
    *NOT_FOR_THIS_GROUP,
    *NO_SNAPSHOT_FILE,
    "rich",
    "pydantic_core",
    "decimal",
)
# The colour table of a live capture writes no JSON either: none of the snapshot package;
# and its tables, a line a cell, are drawn without Rich's Table (nor the fractions and
# decimal modules Rich's table layout imports).
HEAVY_LIVE_TABLE = (
    *NOT_FOR_ANY_EXPLAIN,
    *NOT_FOR_THIS_GROUP,
    "rmqlb.snapshot",
    "pydantic_core",
    "rich.table",
    "decimal",
)

PROBE = (
    "import json, sys\n"
    "import rmqlb.cli\n"
    "code = rmqlb.cli.run(sys.argv[1:])\n"
    "sys.stdout.write('\\n' + json.dumps({'code': code, 'modules': sorted(sys.modules)}) + '\\n')\n"
)


def _probe(*argv: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in {0, 1}, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _imported(loaded: dict[str, object], module: str) -> list[str]:
    modules = loaded["modules"]
    assert isinstance(modules, list)
    return sorted(m for m in modules if m == module or m.startswith(module + "."))


@pytest.fixture(scope="module")
def loaded() -> dict[str, object]:
    return _probe("--help")


@pytest.fixture(scope="module")
def fake_addr() -> Iterator[str]:
    with FakeClusterThread(
        load_snapshot(EXAMPLES / "16-queues-3-consumers-rebalancing.json")
    ) as fake:
        yield fake.namesrv_addr


@pytest.fixture(scope="module")
def dump_json() -> dict[str, object]:
    return _probe("explain", "--dump", str(EXAMPLES / "healthy.json"), "-o", "json")


@pytest.fixture(scope="module")
def big_dump_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """``explain --dump`` of a file past the size jiter decodes (offsets on 10,000 queues)."""
    queues = 10_000
    doc = {
        "format": "rmqlb.snapshot/1",
        "topics": {"T": {"queues": queues}},
        "groups": {
            "G": {
                "consumers": [{"clientId": "c1", "subscriptions": ["T"]}],
                "offsets": [
                    {"topic": "T", "brokerName": "broker-a", "queueId": i, "brokerOffset": 10**9,
                     "consumerOffset": 10**9 - i, "lastTimestamp": 1_738_000_000_000}
                    for i in range(queues)
                ],
            }
        },
    }  # fmt: skip
    path = tmp_path_factory.mktemp("big") / "big.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert path.stat().st_size >= fileio._BIG_TEXT
    return _probe("explain", "--dump", str(path), "-o", "json")


@pytest.fixture(scope="module")
def live_json(fake_addr: str) -> dict[str, object]:
    return _probe("explain", "-n", fake_addr, "order-consumer", "-o", "json")


@pytest.fixture(scope="module")
def live_table(fake_addr: str) -> dict[str, object]:
    return _probe("explain", "-n", fake_addr, "order-consumer", "-o", "table")


def test_help_succeeds(loaded: dict[str, object]) -> None:
    assert loaded["code"] == 0


@pytest.mark.parametrize("module", HEAVY)
def test_heavy_module_not_imported_by_help(loaded: dict[str, object], module: str) -> None:
    present = _imported(loaded, module)
    assert not present, f"'rmqlb --help' imported {module}: {present[:5]}"


def test_explain_paths_ran(
    dump_json: dict[str, object],
    big_dump_json: dict[str, object],
    live_json: dict[str, object],
    live_table: dict[str, object],
) -> None:
    assert (dump_json["code"], live_json["code"], live_table["code"]) == (0, 1, 1)
    assert big_dump_json["code"] in {0, 1}
    for loaded in (dump_json, big_dump_json, live_json, live_table):  # they ran the diagnosis
        assert _imported(loaded, "rmqlb.diagnose.engine")
    assert _imported(big_dump_json, "jiter")
    assert not _imported(dump_json, "jiter")
    assert _imported(live_json, "rmqlb.client.collector")
    assert _imported(live_table, "rmqlb.render.table")  # it drew the colour table


EXPLAIN_CASES = (
    [("dump_json", "explain --dump FILE -o json", m) for m in HEAVY_DUMP_JSON]
    + [("big_dump_json", "explain --dump BIG_FILE -o json", m) for m in HEAVY_BIG_DUMP_JSON]
    + [("live_json", "explain -n ADDR GROUP -o json", m) for m in HEAVY_LIVE_JSON]
    + [("live_table", "explain -n ADDR GROUP (table)", m) for m in HEAVY_LIVE_TABLE]
)


@pytest.mark.parametrize(("probe", "command", "module"), EXPLAIN_CASES)
def test_heavy_module_not_imported_by_explain(
    request: pytest.FixtureRequest, probe: str, command: str, module: str
) -> None:
    present = _imported(request.getfixturevalue(probe), module)
    assert not present, f"'rmqlb {command}' imported {module}: {present[:5]}"


def test_each_command_is_registered_by_the_module_of_its_name() -> None:
    """A run imports only ``rmqlb.cli.<command>``: that module must register the command,
    and :data:`COMMANDS` must name every command there is."""
    load_commands()
    registered = {
        (c.name or c.callback.__name__.replace("_", "-")): c.callback.__module__
        for c in app.registered_commands
        if c.callback is not None
    }
    assert registered == {name: f"rmqlb.cli.{name}" for name in COMMANDS}


def test_cli_raises_the_young_collection_threshold_before_its_imports() -> None:
    """The CLI's collector tuning is in place by the time typer is imported (a fresh
    interpreter: this one's threshold is whatever the test run set)."""
    code = (
        "import gc, sys\n"
        "seen = []\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'typer' and not seen: seen.append(gc.get_threshold()[0])\n"
        "sys.meta_path.insert(0, Spy())\n"
        "import rmqlb.cli\n"
        "print(seen[0], gc.get_threshold()[0], rmqlb.cli.GC_YOUNG_THRESHOLD)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    at_typer, after, wanted = map(int, proc.stdout.split())
    assert wanted > 700  # above Python's default
    assert at_typer == after == wanted
