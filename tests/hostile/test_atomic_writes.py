"""Every file rmqlb writes is replaced atomically: a full disk (``RLIMIT_FSIZE``), a signal
or a kill during the write leaves the previous file as it was, and no temporary behind."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner import ROOT, Outcome, rmqlb_child

from rmqlb.errors import InputError, Terminated
from rmqlb.fake import FakeClusterThread
from rmqlb.fileio import atomic_directory, write_atomic
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(180)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"
CHECK_YAML = sorted(str(p) for p in (ROOT / "examples" / "check").glob("*.yaml"))
OLD = "previous content, complete\n"


def _small_files() -> None:
    """In the child: files may grow to 1 KiB only (what ``ulimit -f 1`` does)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


def _on_a_full_disk(args: list[str]) -> Outcome:
    """``rmqlb ARGS`` in a child whose files may grow to 1 KiB only, writing no bytecode:
    CPython writes a module's bytecode with one unchecked write, so under the limit it
    would leave the first 1 KiB of it in ``__pycache__``, and every later import of that
    module in any process fails ("marshal data too short")."""
    return rmqlb_child(args, preexec=_small_files, env={"PYTHONDONTWRITEBYTECODE": "1"})


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_write_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text(OLD)
    target.chmod(0o640)
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "failure",
    [OSError(28, "No space left on device"), KeyboardInterrupt(), Terminated(signal.SIGTERM)],
)
def test_a_failed_or_interrupted_write_leaves_the_old_file(
    failure: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.json"
    target.write_text(OLD)

    def fail(fd: int) -> None:
        raise failure

    monkeypatch.setattr(os, "fsync", fail)
    expected = InputError if isinstance(failure, OSError) else type(failure)
    with pytest.raises(expected):
        write_atomic(target, "x" * 100_000)
    assert target.read_text() == OLD
    assert _leftovers(tmp_path) == []


def test_an_interrupted_directory_build_leaves_the_old_directory(tmp_path: Path) -> None:
    target = tmp_path / "findings"
    target.mkdir()
    (target / "part-00000.parquet").write_text(OLD)
    with pytest.raises(KeyboardInterrupt), atomic_directory(target) as building:
        (building / "part-00000.parquet").write_text("half")
        raise KeyboardInterrupt
    assert (target / "part-00000.parquet").read_text() == OLD
    assert _leftovers(tmp_path) == []
    with atomic_directory(target) as building:
        (building / "part-00000.parquet").write_text("new")
    assert (target / "part-00000.parquet").read_text() == "new"
    assert _leftovers(tmp_path) == []


def test_sigkill_mid_write_never_leaves_a_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "snap.json"
    old = "o" * 5_000_000
    target.write_text(old)
    script = (
        "import sys\nfrom rmqlb.fileio import write_atomic\n"
        "while True:\n    write_atomic(sys.argv[1], 'n' * 50_000_000)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, str(target)], env=env)
    time.sleep(1.5)
    proc.kill()
    proc.wait(30)
    text = target.read_text()
    assert text in (old, "n" * 50_000_000), f"{len(text)} characters: a partial file"


def _one_line(err: str) -> str:
    assert err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


def test_check_junit_on_a_full_disk_keeps_the_old_report(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(OLD)
    outcome = _on_a_full_disk(["check", "-o", "plain", "--junit", str(junit), *CHECK_YAML])
    assert outcome.code == 2, outcome
    assert "--junit" in _one_line(outcome.err) and "cannot write" in outcome.err
    assert junit.read_text() == OLD
    assert _leftovers(tmp_path) == []


def test_dump_out_on_a_full_disk_keeps_the_old_snapshot(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text(OLD)
    with FakeClusterThread(load_snapshot(DEMO)) as fake:
        outcome = _on_a_full_disk(["dump", "-n", fake.namesrv_addr, "--out", str(snap)])
    assert outcome.code == 2, outcome
    assert "cannot write" in _one_line(outcome.err)
    assert snap.read_text() == OLD
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
def test_audit_out_on_a_full_disk_keeps_the_old_tables(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "a.json").write_bytes(DEMO.read_bytes())
    out = tmp_path / "out"
    first = rmqlb_child(["audit", "--engine", "local", str(fleet), "--out", str(out)])
    assert first.code in (0, 1), first
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert Path("findings/part-00000.parquet") in before
    outcome = _on_a_full_disk(["audit", "--engine", "local", str(fleet), "--out", str(out)])
    assert outcome.code == 2, outcome
    assert "cannot write" in _one_line(outcome.err)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert _leftovers(out) == []
