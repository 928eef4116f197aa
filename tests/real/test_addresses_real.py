"""Wrong addresses given as the NameServer, against the real 4.9.8 processes: a hint at once.

Measured here: a 4.9.8 broker answers GET_BROKER_CLUSTER_INFO (106) at once with code 3
REQUEST_CODE_NOT_SUPPORTED ("request type 106 not supported").
"""

from __future__ import annotations

import json
import time

import pytest
from realkit import ALL_VERSIONS, Kit


@pytest.mark.versions(*ALL_VERSIONS)
def test_a_broker_given_as_the_namesrv_gets_a_hint_at_once(kit: Kit) -> None:
    start = time.monotonic()
    done = kit.rmqlb("explain", "-n", kit.broker_addr("broker-a"), "--timeout", "5", expect=(3,))
    assert time.monotonic() - start < 5  # the answer, not a timeout
    assert "answered like a RocketMQ broker, not a NameServer" in done.stderr
    assert "9876" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.versions(*ALL_VERSIONS)
def test_a_broker_before_the_namesrv_in_the_list_is_skipped(kit: Kit) -> None:
    # (exit 4 only for a client of another test stopping as the whole-cluster capture asks it)
    done = kit.rmqlb("dump", "-n", f"{kit.broker_addr('broker-a')};{kit.namesrv}", expect=(0, 4))
    assert '"format": "rmqlb.snapshot/1"' in done.stdout
    errors = json.loads(done.stdout).get("errors", [])
    assert all(e["request"] == "GET_CONSUMER_RUNNING_INFO" for e in errors), errors
    assert done.returncode == 0 or errors, done.stderr
