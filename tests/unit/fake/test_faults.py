"""Fault specifications for ``rmqlb serve --fault``."""

from __future__ import annotations

import pytest

from rmqlb.errors import InputError
from rmqlb.fake.faults import KINDS, Faults, FaultSpec, parse_fault


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("latency=50", FaultSpec("latency", value=50.0)),
        ("relay-delay=1500", FaultSpec("relay-delay", value=1500.0)),
        ("namesrv-down", FaultSpec("namesrv-down")),
        (" broker-down=broker-b ", FaultSpec("broker-down", target="broker-b")),
        ("silent-client=10.0.0.1@1#2", FaultSpec("silent-client", target="10.0.0.1@1#2")),
        ("GARBAGE=broker-a", FaultSpec("garbage", target="broker-a")),
        ("reset=broker-a", FaultSpec("reset", target="broker-a")),
        ("oversized=broker-a", FaultSpec("oversized", target="broker-a")),
    ],
)
def test_parse(text: str, spec: FaultSpec) -> None:
    assert parse_fault(text) == spec
    assert parse_fault(str(spec)) == spec  # str() is the spec again


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("explode", "unknown kind 'explode'"),
        ("latency=fast", "expected latency=MILLISECONDS"),
        ("latency=-1", "between 0 and 600000"),
        ("broker-down", "expected broker-down=NAME"),
        ("namesrv-down=ns1", "takes no value"),
    ],
)
def test_bad_specs_are_input_errors(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_fault(text)


def test_faults_index() -> None:
    faults = Faults.parse(["broker-down=a", "broker-down=b", "latency=5", "latency=7"])
    assert faults.targets("broker-down") == {"a", "b"}
    assert faults.has("broker-down", "a") and not faults.has("broker-down", "c")
    assert faults.number("latency", 0.0) == 7.0  # the last one wins
    assert faults.number("relay-delay", 200.0) == 200.0
    assert set(KINDS) >= {"latency", "namesrv-down", "broker-down", "silent-client"}
