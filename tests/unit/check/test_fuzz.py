"""Whatever the bytes, reading inputs gives a config or a one-line InputError: never a
traceback, never a hang."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqlb.check.loader import load_files, read_one
from rmqlb.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples/check").glob("*.yaml"))

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-5, 70000)
    | st.text(max_size=6)
    | st.sampled_from(["3..12", "5..2", "*", "AVG", "rw", "9"])
)
keys = st.sampled_from(
    [
        "version", "topics", "groups", "queues", "read", "write", "perm", "brokers",
        "strategy", "messageModel", "members", "replicas", "subscriptions", "room",
        "type", "expression", "T", "G", "m", "broker-a",
    ]
)  # fmt: skip
documents = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=25,
)


def one_line_or_config(text: str, name: str) -> None:
    try:
        read_one(text, name)
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message
        assert message.startswith(name), message


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_random_structures(doc: object) -> None:
    one_line_or_config(yaml.safe_dump({"groups": doc}), "f.yaml")
    one_line_or_config(yaml.safe_dump({"topics": doc}), "f.yaml")
    one_line_or_config(yaml.safe_dump(doc), "f.yaml")


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    one_line_or_config(text, "f.yaml")
    one_line_or_config(text, "f.json")


@settings(max_examples=200)
@given(st.sampled_from(EXAMPLES), st.data())
def test_mutated_examples(path: Path, data: st.DataObject) -> None:
    text = path.read_text()
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 20)))
    insert = data.draw(st.text(alphabet=" :-{}[]*&!|>'\"\n\t0123456789.abc", max_size=8))
    one_line_or_config(text[:start] + insert + text[end:], "f.yaml")


def test_examples_load(tmp_path: Path) -> None:
    config = load_files([str(p) for p in EXAMPLES])
    assert "OrderGroup" in config.groups
