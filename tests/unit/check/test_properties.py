"""Random valid configs go through the whole check without crashing, and every finding points
at a line of the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqlb.check import load_files, run_check
from rmqlb.errors import InputError

TOPICS = ["T1", "T2", "T3"]

topic = st.fixed_dictionaries(
    {},
    optional={
        "perm": st.sampled_from([0, 2, 4, 6, 7, "rw", "r"]),
        "brokers": st.lists(
            st.sampled_from(["broker-a", "broker-b", "az1@b"]), min_size=1, max_size=3, unique=True
        ),
    },
).flatmap(
    lambda base: st.one_of(
        st.integers(0, 40).map(lambda q: {**base, "queues": q}),
        st.tuples(st.integers(0, 40), st.integers(0, 40)).map(
            lambda rw: {**base, "read": rw[0], "write": rw[1]}
        ),
    )
)
replicas = st.one_of(
    st.integers(0, 30),
    st.tuples(st.integers(0, 20), st.integers(0, 80)).map(lambda t: f"{min(t)}..{max(t)}"),
)
member = st.fixed_dictionaries(
    {
        "replicas": replicas,
        "subscriptions": st.dictionaries(
            st.sampled_from([*TOPICS, "Missing"]),
            st.sampled_from(["*", "TagA", "TagA || TagB"]),
            max_size=3,
        ),
    },
    optional={"strategy": st.sampled_from(["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH:vnodes=3"])},
)
group = st.fixed_dictionaries(
    {"members": st.dictionaries(st.sampled_from(["a", "b", "c"]), member, max_size=3)},
    optional={
        "strategy": st.sampled_from(
            ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "MACHINE_ROOM:idcs=az1"]
        ),
        "messageModel": st.sampled_from(["CLUSTERING", "BROADCASTING"]),
    },
)
configs = st.fixed_dictionaries(
    {
        "topics": st.dictionaries(st.sampled_from(TOPICS), topic, max_size=3),
        "groups": st.dictionaries(st.sampled_from(["G1", "G2"]), group, min_size=1, max_size=2),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_random_valid_configs(tmp_path_factory: Any, config: dict[str, Any]) -> None:
    path = Path(tmp_path_factory.mktemp("c")) / "c.yaml"
    text = yaml.safe_dump(config, sort_keys=False)
    path.write_text(text)
    try:
        result = run_check(load_files([str(path)]))
    except InputError as exc:  # only for configs the reader must refuse
        assert "\n" not in str(exc)
        return
    total = len(text.splitlines())
    for finding in result.findings:
        assert finding.loc.file == str(path)
        assert 1 <= finding.loc.line <= total
        assert finding.message and finding.hint
    assert {(c.group, c.topic) for c in result.cases} >= {
        (g, t)
        for g, decl in config["groups"].items()
        for m in decl["members"].values()
        for t in m["subscriptions"]
    }
