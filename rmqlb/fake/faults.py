"""Fault specifications for the fake cluster (``rmqlb serve --fault SPEC``).

Each fault is one ``kind[=value]`` string:

=========================  ==============================================================
``latency=50``             every request is answered 50 ms late (like ``--latency-ms``)
``namesrv-down``           the NameServer port refuses connections
``broker-down=broker-b``   that broker's port refuses connections (routes still name it)
``silent-client=CID``      that client never answers running info: the broker replies
                           207 (CONSUME_MSG_TIMEOUT) after the relay delay, as a real one
                           does after its 10 s
``relay-delay=300``        that relay delay in ms (default 200)
``garbage=broker-a``       that broker answers every request with bytes that are no frame
``reset=broker-a``         that broker writes half a response, then resets the connection
``oversized=broker-a``     that broker announces a frame larger than any client accepts
``blackhole=broker-a``     that broker accepts connections and requests, never answers
``no-config=GROUP``        no broker holds a subscription group config for that group (as
                           after ``mqadmin deleteSubGroup``): only its clients and offsets
                           show it exists
=========================  ==============================================================

>>> parse_fault("broker-down=broker-b")
FaultSpec(kind='broker-down', target='broker-b', value=None)
>>> parse_fault("latency=50").value
50.0
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rmqlb.errors import InputError

#: kind -> whether it needs a target name (else a number, or nothing)
_TARGETED = {
    "broker-down",
    "silent-client",
    "garbage",
    "reset",
    "oversized",
    "no-config",
    "blackhole",
}
_NUMERIC = {"latency", "relay-delay"}
_BARE = {"namesrv-down"}
KINDS: tuple[str, ...] = tuple(sorted(_TARGETED | _NUMERIC | _BARE))


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """One injected fault: ``kind``, the broker/client it hits, or its numeric value."""

    kind: str
    target: str | None = None
    value: float | None = None

    def __str__(self) -> str:
        if self.target is not None:
            return f"{self.kind}={self.target}"
        if self.value is not None:
            return f"{self.kind}={self.value:g}"
        return self.kind


def parse_fault(text: str) -> FaultSpec:
    """Read one ``kind[=value]`` fault; :class:`InputError` names what is wrong."""
    kind, eq, value = text.strip().partition("=")
    kind = kind.strip().lower()
    value = value.strip()
    if kind in _BARE:
        if eq:
            raise InputError(f"fault {text!r}: {kind} takes no value")
        return FaultSpec(kind)
    if kind in _TARGETED:
        if not value:
            raise InputError(f"fault {text!r}: expected {kind}=NAME")
        return FaultSpec(kind, target=value)
    if kind in _NUMERIC:
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"fault {text!r}: expected {kind}=MILLISECONDS") from None
        if not 0 <= number <= 600_000:
            raise InputError(f"fault {text!r}: {kind} must be between 0 and 600000 ms")
        return FaultSpec(kind, value=number)
    raise InputError(f"fault {text!r}: unknown kind {kind!r} (known: {', '.join(KINDS)})")


@dataclass(frozen=True, slots=True)
class Faults:
    """All faults of one fake cluster, indexed for the request handlers."""

    specs: tuple[FaultSpec, ...] = ()

    @classmethod
    def parse(cls, texts: Iterable[str | FaultSpec]) -> Faults:
        """Parse ``--fault`` strings (or pass specs through)."""
        return cls(tuple(t if isinstance(t, FaultSpec) else parse_fault(t) for t in texts))

    def targets(self, kind: str) -> frozenset[str]:
        """Names hit by faults of ``kind``."""
        return frozenset(s.target for s in self.specs if s.kind == kind and s.target)

    def has(self, kind: str, target: str | None = None) -> bool:
        """Whether a fault of ``kind`` (for ``target``) is configured."""
        return any(s.kind == kind and (target is None or s.target == target) for s in self.specs)

    def number(self, kind: str, default: float) -> float:
        """The value of the last numeric fault of ``kind`` (milliseconds), else ``default``."""
        values = [s.value for s in self.specs if s.kind == kind and s.value is not None]
        return values[-1] if values else default
