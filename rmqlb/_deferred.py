"""rmqlb's dataclass methods compiled on their first call, not when their class is made.

On Python 3.11 and 3.12, :mod:`dataclasses` compiles every method it writes for a class as
the class is created: ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, and a frozen
class's ``__setattr__`` and ``__delattr__``. That is about 1.2 ms for a frozen class, and
108 ms (timed around the class processing) of a 370 ms live ``explain`` of one group, which
imports 67 such classes and calls a few of their methods.

With :func:`defer_dataclass_methods`, each method of a class defined in rmqlb is compiled on
its first call instead. It is then put in the stub's place on its class, so every later call
is the very method :mod:`dataclasses` writes. The source text, globals and locals are the
ones ``dataclasses`` passed, so the method is the same one, only compiled later. A stub
that cannot be replaced, because ``dataclasses`` wrapped it (``__repr__`` in a recursion
guard), stays and calls the compiled method.

The compiled code is kept between runs, as Python keeps a module's (:class:`CodeCache`):
compiling the 40-odd methods a live ``explain`` of one group calls took 15 ms of it; loading
their code takes well under 1 ms.

Other packages' dataclasses are left alone. Python 3.13 compiles all of a class's methods
at once, through another function. There, and wherever :mod:`dataclasses` has no
``_create_fn``, nothing changes.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import marshal
import os
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any

#: The package whose classes are deferred (a class's module's ``__name__`` starts with it).
PACKAGE = "rmqlb"

_Method = Callable[..., Any]


def _ours(globals_: dict[str, Any] | None) -> bool:
    name = (globals_ or {}).get("__name__")
    return isinstance(name, str) and (name == PACKAGE or name.startswith(PACKAGE + "."))


def _install(owner_of: type, name: str, stub: _Method, method: _Method) -> None:
    """Put ``method`` where ``stub`` is in the classes of ``owner_of``'s MRO."""
    method.__qualname__ = stub.__qualname__
    for klass in owner_of.__mro__:
        if klass.__dict__.get(name) is stub:
            type.__setattr__(klass, name, method)


class CodeCache:
    """The code of the method texts :mod:`dataclasses` compiles, kept in a file between runs.

    A text is the whole source ``dataclasses._create_fn`` executes (the method and the names
    it closes over), so equal texts compile to equal code; the file is named for the
    interpreter's version, and one that does not load is ignored. Like a module's bytecode,
    the file goes in the package's ``__pycache__`` (or under ``PYTHONPYCACHEPREFIX``), is
    written atomically, at exit and only when a text was new, and not at all where bytecode is
    not written (``PYTHONDONTWRITEBYTECODE``) or the directory is not writable. Texts another
    version of rmqlb left are dropped once the file holds more than :attr:`LIMIT`: the file
    then keeps the texts of the run that writes it.
    """

    #: Texts the file holds at most before it is pruned: rmqlb's 154 dataclasses have about
    #: 700 methods, of which a run calls a few dozen (loading 100 takes about 1 ms).
    LIMIT = 800

    def __init__(self, path: str) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = {}
        self.used: set[str] = set()
        self.added = False
        try:
            with open(path, "rb") as fh:
                data = fh.read()  # marshal.load(fh) reads it in thousands of small calls
            loaded = marshal.loads(data)
        except Exception:  # a file that does not load is no cache: compile as without one
            return
        if isinstance(loaded, dict):
            self.codes = {k: v for k, v in loaded.items() if type(k) is str and type(v) is CodeType}

    def exec(self, text: str, globals_: dict[str, Any], ns: dict[str, Any]) -> None:
        """``exec(text, globals_, ns)``, with ``text`` compiled once across runs."""
        code = self.codes.get(text)
        if code is None:
            # as exec() compiles it in dataclasses: no future flag of this module inherited
            code = self.codes[text] = compile(text, "<string>", "exec", dont_inherit=True)
            self.added = True
        self.used.add(text)
        exec(code, globals_, ns)

    def save(self) -> None:
        """Write the file if a text was new (atomically; silently not where it cannot be).

        It runs at exit: whatever stops it (a full disk, a signal turned into an exception)
        leaves no temporary file and no traceback, only the previous file. A process killed
        while saving (SIGKILL) cannot clean up: the next save removes what such processes
        left."""
        if not self.added or sys.dont_write_bytecode:
            return
        self.added = False
        codes = self.codes
        if len(codes) > self.LIMIT:
            codes = {text: code for text, code in codes.items() if text in self.used}
        partial = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(partial, "wb") as fh:
                marshal.dump(codes, fh)
            os.replace(partial, self.path)
            self._remove_orphans()
        except BaseException:  # an optimisation, at exit: nothing to report, only to clean
            with contextlib.suppress(OSError):
                os.unlink(partial)

    def _remove_orphans(self) -> None:
        """Remove the temporaries of saves whose process is gone (``<file>.<pid>.tmp``)."""
        folder, name = os.path.split(self.path)
        for entry in os.listdir(folder):
            pid = entry.removeprefix(f"{name}.").removesuffix(".tmp")
            if entry == f"{name}.{pid}.tmp" and pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, entry))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as another user's
        return True
    return True


def cache_path() -> str:
    """Where this interpreter keeps rmqlb's compiled dataclass methods."""
    here = os.path.dirname(os.path.abspath(__file__))
    name = f"dataclass-methods.{sys.implementation.cache_tag}-{sys.hexversion:x}.bin"
    prefix = sys.pycache_prefix
    if prefix:
        return os.path.join(prefix, here.lstrip(os.sep), name)
    return os.path.join(here, "__pycache__", name)


_cache: CodeCache | None = None


def _code_cache() -> CodeCache:
    global _cache  # noqa: PLW0603  (one per process, loaded on the first deferred call)
    if _cache is None:
        _cache = CodeCache(cache_path())
        atexit.register(_cache.save)
    return _cache


def _compile(
    create_fn: Callable[..., _Method], name: str, args: Any, body: Any, **kwargs: Any
) -> _Method:
    """``create_fn(...)`` with its ``exec`` served by the code cache: ``dataclasses`` looks
    ``exec`` up in its module first, then in the builtins. (A class another thread makes
    meanwhile gets its methods through the cache too: the same code, compiled once.)"""
    module = vars(dataclasses)
    module["exec"] = _code_cache().exec
    try:
        return create_fn(name, args, body, **kwargs)
    finally:
        module.pop("exec", None)


def _deferring(create_fn: Callable[..., _Method]) -> Callable[..., _Method]:
    """``create_fn`` (``dataclasses._create_fn``) returning, for rmqlb's classes, a stub that
    compiles the method on its first call."""

    def create(name: str, args: Any, body: Any, **kwargs: Any) -> _Method:
        if not _ours(kwargs.get("globals")):
            return create_fn(name, args, body, **kwargs)
        compiled: _Method | None = None

        def stub(self: Any, /, *rest: Any, **named: Any) -> Any:
            nonlocal compiled
            if compiled is None:
                compiled = _compile(create_fn, name, args, body, **kwargs)
                _install(type(self), name, stub, compiled)
            return compiled(self, *rest, **named)

        stub.__name__ = name
        stub.__qualname__ = name
        return stub

    create.deferring = True  # type: ignore[attr-defined]
    return create


def defer_dataclass_methods() -> None:
    """Compile rmqlb's dataclass methods on first call from now on (once; see the module)."""
    create_fn = getattr(dataclasses, "_create_fn", None)
    if create_fn is None or getattr(create_fn, "deferring", False):
        return
    dataclasses._create_fn = _deferring(create_fn)  # type: ignore[attr-defined]
