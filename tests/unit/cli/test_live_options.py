"""``LiveOptions``: address lists, environment fall-backs, flag checks, hidden secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from rmqlb.cli.live import LiveOptions
from rmqlb.errors import InputError


def test_semicolon_list_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    assert LiveOptions(namesrv="a:9876; b:9876;;a:9876").namesrv == ("a:9876", "b:9876")
    monkeypatch.setenv("NAMESRV_ADDR", "c:9876;d:9876;")
    assert LiveOptions().namesrv == ("c:9876", "d:9876")
    assert LiveOptions(namesrv="e:1").namesrv == ("e:1",)  # the flag wins


def test_secret_never_in_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCKETMQ_ACCESS_KEY", "reader")
    monkeypatch.setenv("ROCKETMQ_SECRET_KEY", "hunter2-secret")
    opts = LiveOptions(namesrv="a:1")
    assert opts.access_key == "reader" and opts.secret_key == "hunter2-secret"
    assert "hunter2-secret" not in repr(opts)
    collect = opts.collect_options()
    assert collect.client.credentials is not None
    assert "hunter2-secret" not in repr(collect)


def test_collect_options_tls(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x", encoding="utf-8")
    opts = LiveOptions(namesrv="a:1", tls_ca=ca).collect_options()
    assert opts.client.tls is not None and opts.client.tls.ca_file == str(ca)
    assert LiveOptions(namesrv="a:1").collect_options().client.tls is None
    assert LiveOptions(namesrv="a:1", tls_insecure=True).collect_options().client.tls is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"namesrv": ""}, "no NameServer address"),
        ({"namesrv": "a:1;bogus"}, "'bogus': expected host:port"),
        ({"timeout": 0}, "--timeout must be positive"),
        ({"access_key": "a"}, "both --access-key and --secret-key"),
        ({"tls_ca": "/no/such/ca.pem"}, "no such file"),
        ({"tls_key": "k.pem"}, "--tls-key needs --tls-cert"),
    ],
)
def test_bad_combinations(
    kwargs: dict[str, object], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("NAMESRV_ADDR", "ROCKETMQ_ACCESS_KEY", "ROCKETMQ_SECRET_KEY"):
        monkeypatch.delenv(var, raising=False)
    base: dict[str, object] = {"namesrv": "a:1", **kwargs}
    with pytest.raises(InputError, match=message):
        LiveOptions(**base).collect_options()  # type: ignore[arg-type]


def test_progress_appears_only_after_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rmqlb.cli import live

    monkeypatch.setattr(live.sys, "stderr", io.StringIO())
    quick = live._DelayedProgress()
    quick.scheduled(3)
    quick.finished(3)
    assert quick._progress is None  # fast captures never draw a bar
    quick.stop()

    monkeypatch.setattr(live, "PROGRESS_DELAY", 0.0)
    slow = live._DelayedProgress()
    slow.scheduled(4)
    slow.finished(1)
    assert slow._progress is not None
    assert (slow.total, slow.done) == (4, 1)
    slow.stop()


def test_the_cli_defaults_are_the_clients() -> None:
    """The CLI states the client's defaults without importing it (asyncio): the same numbers."""
    from rmqlb.cli.live import LiveOptions
    from rmqlb.cli.options import DEFAULT_MAX_IN_FLIGHT, DEFAULT_TIMEOUT
    from rmqlb.client.admin import ClientOptions
    from rmqlb.client.collector import DEFAULT_MAX_IN_FLIGHT as COLLECTOR_MAX_IN_FLIGHT
    from rmqlb.client.collector import CollectOptions

    assert DEFAULT_MAX_IN_FLIGHT == COLLECTOR_MAX_IN_FLIGHT == LiveOptions().max_in_flight
    assert CollectOptions(namesrv=("n:1",)).max_in_flight == DEFAULT_MAX_IN_FLIGHT
    assert DEFAULT_TIMEOUT == ClientOptions().timeout == LiveOptions().timeout
