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

Other packages' dataclasses are left alone. Python 3.13 compiles all of a class's methods
at once, through another function. There, and wherever :mod:`dataclasses` has no
``_create_fn``, nothing changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
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
                compiled = create_fn(name, args, body, **kwargs)
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
