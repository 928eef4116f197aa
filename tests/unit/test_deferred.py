"""rmqlb's dataclass methods compiled on first call (``rmqlb._deferred``): the same methods,
in their class's place after that call, and nobody else's classes touched."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import os
import pickle
import subprocess
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from rmqlb import _deferred

_SOURCE = '''
from __future__ import annotations
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Frozen:
    """A frozen record."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    hidden: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True, order=True)
class Ordered:
    """Ordered by its fields."""

    major: int
    minor: int = 0


@dataclass(slots=True)
class Mutable:
    """Mutable, with a default factory and a post-init."""

    items: list[int] = field(default_factory=list)
    size: int = -1

    def __post_init__(self) -> None:
        self.size = len(self.items)


@dataclass(frozen=True)
class Base:
    """A base record."""

    a: int


@dataclass(frozen=True)
class Derived(Base):
    """A derived record."""

    b: int = 2


@dataclass
class Selfish:
    """A field named self."""

    self: int
'''


def _module(name: str) -> types.ModuleType:
    """The classes above, defined in a fresh module named ``name``."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(_SOURCE, f"<{name}>", "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@pytest.fixture
def ours() -> Iterator[types.ModuleType]:
    yield _module("rmqlb._deferred_probe")
    del sys.modules["rmqlb._deferred_probe"]


@pytest.fixture
def eager() -> Iterator[types.ModuleType]:
    yield _module("deferred_probe_elsewhere")
    del sys.modules["deferred_probe_elsewhere"]


def _is_stub(cls: type, name: str) -> bool:
    return inspect.signature(cls.__dict__[name]).parameters.keys() >= {"rest", "named"}


def test_active_for_the_package() -> None:
    create_fn = dataclasses._create_fn  # type: ignore[attr-defined]
    assert getattr(create_fn, "deferring", False)
    _deferred.defer_dataclass_methods()  # twice: still one layer
    assert dataclasses._create_fn is create_fn  # type: ignore[attr-defined]


def test_methods_wait_for_their_first_call(ours: types.ModuleType) -> None:
    frozen = ours.Frozen
    for name in ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__"):
        assert name in frozen.__dict__
    assert _is_stub(frozen, "__init__")
    assert _is_stub(frozen, "__eq__")
    assert _is_stub(frozen, "__hash__")
    record = frozen("a", 1)
    assert not _is_stub(frozen, "__init__")  # compiled and in the class's place
    assert list(inspect.signature(frozen).parameters) == ["name", "count", "tags", "hidden"]
    assert frozen.__init__.__qualname__ == "Frozen.__init__"
    assert _is_stub(frozen, "__eq__")  # not called yet
    assert record == frozen("a", 1)
    assert not _is_stub(frozen, "__eq__")
    hash(record)
    assert not _is_stub(frozen, "__hash__")


def test_other_packages_classes_are_compiled_at_once(eager: types.ModuleType) -> None:
    for name in ("__init__", "__eq__", "__hash__", "__setattr__"):
        assert not _is_stub(eager.Frozen, name)


def _behaviour(m: types.ModuleType) -> list[Any]:
    """Everything the classes do, as texts."""
    out: list[Any] = []
    f = m.Frozen("q", 3, ("x",), hidden=9)
    out += [
        repr(f),
        f == m.Frozen("q", 3, ("x",)),
        f != m.Frozen("q", 4),
        hash(f) == hash(m.Frozen("q", 3, ("x",), 1)),
    ]
    out += [f == ("q", 3), dataclasses.replace(f, count=5), dataclasses.astuple(f)]
    for mutate in (lambda: setattr(f, "count", 1), lambda: delattr(f, "name")):
        with pytest.raises(dataclasses.FrozenInstanceError) as err:
            mutate()
        out.append(str(err.value))
    out.append(pickle.loads(pickle.dumps(f)) == f)
    out.append(copy.copy(f) == f)
    out += [sorted([m.Ordered(2), m.Ordered(1, 5), m.Ordered(1)]), m.Ordered(1) < m.Ordered(1, 1)]
    mutable = m.Mutable([1, 2])
    mutable.size = 7
    out += [repr(m.Mutable()), mutable.size, m.Mutable([1]) == m.Mutable([1])]
    out += [repr(m.Derived(1)), m.Derived(1) == m.Derived(1, 2), m.Derived(1) != m.Base(1)]
    out.append(repr(m.Selfish(self=4)))
    with pytest.raises(TypeError) as err:
        m.Frozen()
    out.append(str(err.value))
    return [repr(v) for v in out]  # the two modules' classes differ: compare texts


def test_deferred_methods_behave_as_compiled_ones(
    ours: types.ModuleType, eager: types.ModuleType
) -> None:
    assert _behaviour(ours) == _behaviour(eager)
    assert _behaviour(ours) == _behaviour(ours)  # the second time through compiled methods


def test_a_fresh_process_compiles_a_method_at_its_first_call() -> None:
    """In a process that has not used it yet, a model class's methods are stubs."""
    code = (
        "from rmqlb.model import MessageQueue as Q\n"
        "def stubs(): return sorted(n for n in ('__init__', '__eq__', '__hash__')"
        " if 'rest' in Q.__dict__[n].__code__.co_varnames)\n"
        "print(*stubs()); Q('T', 'b', 0); print(*stubs())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.splitlines() == ["__eq__ __hash__ __init__", "__eq__ __hash__"]


# --------------------------------------------------------------------------- the code cache


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts ``_deferred`` compiles from now on."""
    compiled: list[str] = []

    def compile_(text: str, *args: Any, **kwargs: Any) -> types.CodeType:
        compiled.append(text)
        code: types.CodeType = compile(text, *args, **kwargs)
        return code

    monkeypatch.setattr(_deferred, "compile", compile_, raising=False)
    return compiled


@pytest.fixture
def cache(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> _deferred.CodeCache:
    """A fresh code cache in ``tmp_path``, the one deferred methods use during the test."""
    fresh = _deferred.CodeCache(str(tmp_path / "methods.bin"))
    monkeypatch.setattr(_deferred, "_cache", fresh)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return fresh


def test_cached_methods_are_compiled_once_across_runs(
    cache: _deferred.CodeCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = _counting(monkeypatch)
    first = _module("rmqlb._deferred_probe")
    try:
        before = _behaviour(first)
        assert compiled and cache.added
        cache.save()
        assert not cache.added
        # the next run loads the file: the same classes call the same methods, compiling none
        again = _deferred.CodeCache(cache.path)
        assert again.codes.keys() == cache.codes.keys()
        monkeypatch.setattr(_deferred, "_cache", again)
        compiled.clear()
        second = _module("rmqlb._deferred_probe")
        assert _behaviour(second) == before
        assert compiled == [] and not again.added
        # compiled as dataclasses compiles them: no future import of _deferred inherited
        eager = _module("deferred_probe_elsewhere")
        annotations = eager.Frozen.__init__.__annotations__
        assert annotations["name"] == "str"  # the value, not the name dataclasses binds it to
        assert second.Frozen.__init__.__annotations__ == annotations
    finally:
        del sys.modules["rmqlb._deferred_probe"]
        sys.modules.pop("deferred_probe_elsewhere", None)


def test_an_unreadable_cache_is_ignored_and_an_unwritable_one_not_written(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    text = "def __create_fn__():\n def f(self):\n  return 1\n return f"
    for garbage in (b"", b"\x00\x01 not marshal", b"\xe3" * 64):
        path = tmp_path / "garbage.bin"
        path.write_bytes(garbage)
        broken = _deferred.CodeCache(str(path))
        assert broken.codes == {}
        namespace: dict[str, Any] = {}
        broken.exec(text, {}, namespace)
        assert namespace["__create_fn__"]()(None) == 1
    (tmp_path / "a-file").write_text("")
    nowhere = _deferred.CodeCache(str(tmp_path / "a-file" / "methods.bin"))
    nowhere.exec(text, {}, {})
    nowhere.save()  # a directory that cannot be made: silently nothing
    assert list(tmp_path.iterdir()) == [tmp_path / "garbage.bin", tmp_path / "a-file"]
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    quiet = _deferred.CodeCache(str(tmp_path / "quiet.bin"))
    quiet.exec(text, {}, {})
    quiet.save()
    assert not (tmp_path / "quiet.bin").exists()


@pytest.mark.parametrize("stop", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_save_stopped_half_way_leaves_the_old_file_and_no_temporary(
    stop: BaseException, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "methods.bin"
    path.write_bytes(b"old")
    cache = _deferred.CodeCache(str(path))
    cache.exec("def __create_fn__():\n def f(self):\n  return 1\n return f", {}, {})

    def dump(value: Any, fh: Any) -> None:
        fh.write(b"half")
        raise stop

    monkeypatch.setattr(_deferred.marshal, "dump", dump)
    cache.save()  # nothing escapes: it runs at exit
    assert sorted(p.name for p in tmp_path.iterdir()) == ["methods.bin"]
    assert path.read_bytes() == b"old"


def test_a_save_removes_what_killed_processes_left(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed while saving leaves its temporary; the next save removes it, not
    the one of a process still saving, nor other files."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    left = tmp_path / f"methods.bin.{int(gone.stdout)}.tmp"
    saving = tmp_path / f"methods.bin.{os.getppid()}.tmp"
    other = tmp_path / "methods.bin.notes.tmp"
    for path in (left, saving, other):
        path.write_bytes(b"")
    cache = _deferred.CodeCache(str(tmp_path / "methods.bin"))
    cache.exec("def __create_fn__():\n def f(self):\n  return 1\n return f", {}, {})
    cache.save()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["methods.bin", saving.name, other.name]
    )


def test_texts_of_other_versions_are_dropped_once_the_file_is_full(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(_deferred.CodeCache, "LIMIT", 3)

    def text(i: int) -> str:
        return f"def __create_fn__():\n def f(self):\n  return {i}\n return f"

    path = str(tmp_path / "methods.bin")
    old = _deferred.CodeCache(path)
    for i in range(3):  # an older version's texts: the file is full, not over
        old.exec(text(i), {}, {})
    old.save()
    assert len(_deferred.CodeCache(path).codes) == 3
    run = _deferred.CodeCache(path)
    run.exec(text(1), {}, {})  # still used
    run.exec(text(9), {}, {})  # new: over the limit, so only this run's texts stay
    run.save()
    assert set(_deferred.CodeCache(path).codes) == {text(1), text(9)}


def test_a_second_process_uses_the_first_ones_compiled_methods(tmp_path: Any) -> None:
    """The file goes where Python puts bytecode (here ``PYTHONPYCACHEPREFIX``)."""
    code = (
        "from rmqlb import _deferred\n"
        "from rmqlb.model import MessageQueue as Q\n"
        "Q('T', 'b', 0)\n"
        "print(len(_deferred._cache.codes), _deferred._cache.added)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path)
    runs = [
        subprocess.run(
            [sys.executable, "-c", code],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        ).stdout.split()
        for _ in range(2)
    ]
    (written,) = tmp_path.rglob("dataclass-methods.*.bin")
    assert written.parent.name == "rmqlb"
    assert runs[0][1] == "True" and runs[1] == [runs[0][0], "False"]  # nothing new the second time
