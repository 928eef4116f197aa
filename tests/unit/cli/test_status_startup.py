"""A live ``rmqlb status -o json`` loads only what its JSON needs: no other command's module
and none of the text formats' helpers (fresh interpreter, as in ``test_startup``)."""

from __future__ import annotations

import pytest
from test_startup import EXAMPLES, _imported, _probe

from rmqlb.fake import FakeClusterThread
from rmqlb.snapshot import load_snapshot

NOT_FOR_STATUS_JSON = (
    "rmqlb.cli.explain",  # its dump loader: only --dump needs it
    "rmqlb.render.blocks",
    "rmqlb.render._view",
    "rmqlb.render.failures",
    "rich",
)


@pytest.fixture(scope="module")
def status_json() -> dict[str, object]:
    snap = load_snapshot(EXAMPLES / "16-queues-3-consumers-rebalancing.json")
    with FakeClusterThread(snap) as fake:
        return _probe("status", "-n", fake.namesrv_addr, "-o", "json")


def test_live_status_json_ran(status_json: dict[str, object]) -> None:
    assert status_json["code"] in {0, 1}
    assert "rmqlb.diagnose.status" in _imported(status_json, "rmqlb.diagnose.status")


@pytest.mark.parametrize("module", NOT_FOR_STATUS_JSON)
def test_live_status_json_leaves_out(status_json: dict[str, object], module: str) -> None:
    assert _imported(status_json, module) == []
