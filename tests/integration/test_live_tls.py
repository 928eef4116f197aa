"""TLS to the fake cluster with a self-signed certificate generated for the test."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from livehelpers import ROOT

from rmqlb.cli import run
from rmqlb.client.admin import ClientOptions
from rmqlb.client.collector import CollectOptions, collect
from rmqlb.client.connection import TlsConfig
from rmqlb.errors import ClusterUnreachable
from rmqlb.fake import FakeCluster, FakeClusterThread
from rmqlb.model import Snapshot
from rmqlb.snapshot import load_snapshot

pytestmark = pytest.mark.timeout(60)

DEMO = ROOT / "rmqlb" / "data" / "demo-snapshot.json"


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with the ``openssl`` command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no 'openssl' command to generate a test certificate")
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("tls")
    cert, key = _self_signed(where, "server")
    other, _ = _self_signed(where, "other")
    return {"cert": cert, "key": key, "other": other}


def _server_context(certs: dict[str, Path]) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(certs["cert"], certs["key"])
    return ctx


async def _collect(snapshot: Snapshot, server: ssl.SSLContext, tls: TlsConfig) -> Snapshot:
    async with FakeCluster(snapshot, ssl_context=server) as fake:
        options = CollectOptions(
            namesrv=(fake.namesrv_addr,), client=ClientOptions(timeout=3, tls=tls)
        )
        return await collect(options)


@pytest.mark.parametrize(
    "tls",
    [TlsConfig(insecure=True), "verify"],
    ids=["insecure", "verified-with-ca-file"],
)
def test_collect_over_tls(certs: dict[str, Path], tls: TlsConfig | str) -> None:
    demo = load_snapshot(DEMO)
    config = TlsConfig(ca_file=str(certs["cert"])) if tls == "verify" else tls
    assert isinstance(config, TlsConfig)
    got = asyncio.run(_collect(demo, _server_context(certs), config))
    assert set(got.groups) == set(demo.groups)
    assert got.errors == ()


def test_untrusted_certificate_is_refused(certs: dict[str, Path]) -> None:
    demo = load_snapshot(DEMO)
    config = TlsConfig(ca_file=str(certs["other"]))
    with pytest.raises(ClusterUnreachable, match="TLS handshake failed"):
        asyncio.run(_collect(demo, _server_context(certs), config))


def test_cli_tls_flags(certs: dict[str, Path], tmp_path: Path) -> None:
    demo = load_snapshot(DEMO)
    out = tmp_path / "tls.json"
    with FakeClusterThread(demo, ssl_context=_server_context(certs)) as fake:
        assert run(["dump", "-n", fake.namesrv_addr, "--tls-insecure", "--out", str(out)]) == 0
        assert (
            run(
                [
                    "dump",
                    "-n",
                    fake.namesrv_addr,
                    "--tls",
                    "--tls-ca",
                    str(certs["cert"]),
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        assert run(["dump", "-n", fake.namesrv_addr, "--tls", "--tls-ca", str(certs["other"])]) == 3
    assert load_snapshot(out).groups
