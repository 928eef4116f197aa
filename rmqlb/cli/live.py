"""Live-cluster acquisition for the CLI: :class:`LiveOptions` and :func:`snapshot_from_cluster`.

``explain -n`` and ``dump`` build a :class:`LiveOptions` from their flags and call
:func:`snapshot_from_cluster`, which runs the concurrent collector
(:mod:`rmqlb.client.collector`) under ``asyncio.run``. A Rich progress bar appears on stderr
only when stderr is a terminal and the capture takes longer than half a second.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rmqlb.cli.options import DEFAULT_MAX_IN_FLIGHT, DEFAULT_TIMEOUT
from rmqlb.errors import InputError, Terminated

if TYPE_CHECKING:
    from rmqlb.cli.options import Connection
    from rmqlb.client.collector import CollectOptions
    from rmqlb.model.snapshot import Snapshot

T = TypeVar("T")

#: Seconds an interrupted capture gets to cancel its requests and close its connections.
INTERRUPT_GRACE = 2.0

PROGRESS_DELAY = 0.5
"""Seconds a capture must last before the progress bar is drawn."""


def _split(value: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    parts = [value] if isinstance(value, str) else list(value)
    out: list[str] = []
    for part in parts:
        for raw in part.replace(",", ";").split(";"):
            addr = raw.strip()
            if addr and addr not in out:
                out.append(addr)
    return tuple(out)


@dataclass(frozen=True)
class LiveOptions:
    """How to reach and what to read from a live cluster.

    ``namesrv`` accepts RocketMQ's ``host:port;host:port`` form; empty falls back to
    ``$NAMESRV_ADDR``. ``groups`` empty (with or without ``all_groups``) means every
    non-system group the brokers know; ``patterns`` (globs), ``topic`` (groups consuming it)
    and ``system`` (built-in groups too) shape that discovery; ``proxies`` are 5.1+ Proxy
    remoting addresses asked for gRPC consumers (see
    :class:`~rmqlb.client.collector.CollectOptions`). The ACL keys fall back to
    ``$ROCKETMQ_ACCESS_KEY`` /
    ``$ROCKETMQ_SECRET_KEY``; the secret never appears in ``repr``.
    """

    namesrv: tuple[str, ...] | str = ()
    groups: tuple[str, ...] = ()
    all_groups: bool = False
    timeout: float = DEFAULT_TIMEOUT
    tls: bool = False
    tls_insecure: bool = False
    tls_ca: Path | str | None = None
    tls_cert: Path | str | None = None
    tls_key: Path | str | None = None
    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    deadline: float | None = None
    progress: bool = True
    patterns: tuple[str, ...] = ()
    topic: str | None = None
    system: bool = False
    proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        addrs = _split(self.namesrv) or _split(os.environ.get("NAMESRV_ADDR"))
        object.__setattr__(self, "namesrv", addrs)
        object.__setattr__(self, "proxies", _split(self.proxies))
        object.__setattr__(self, "groups", tuple(self.groups))
        if self.access_key is None and os.environ.get("ROCKETMQ_ACCESS_KEY"):
            object.__setattr__(self, "access_key", os.environ["ROCKETMQ_ACCESS_KEY"])
        if self.secret_key is None and os.environ.get("ROCKETMQ_SECRET_KEY"):
            object.__setattr__(self, "secret_key", os.environ["ROCKETMQ_SECRET_KEY"])

    def collect_options(self) -> CollectOptions:
        """The collector's options; :class:`InputError` for inconsistent flags."""
        from rmqlb.client.admin import ClientOptions
        from rmqlb.client.collector import CollectOptions
        from rmqlb.client.connection import TlsConfig, split_addr
        from rmqlb.client.errors import ConnectFailed
        from rmqlb.remoting.acl import Credentials

        if not self.namesrv:
            raise InputError("no NameServer address: use -n/--namesrv or set NAMESRV_ADDR")
        for addr in self.namesrv:
            try:
                split_addr(addr)
            except ConnectFailed:
                raise InputError(
                    f"NameServer address {addr!r}: expected host:port, e.g. 10.0.0.9:9876"
                ) from None
        for addr in self.proxies:
            try:
                split_addr(addr)
            except ConnectFailed:
                raise InputError(
                    f"Proxy address {addr!r}: expected host:port, e.g. 10.0.0.9:8080"
                ) from None
        if self.timeout <= 0:
            raise InputError("--timeout must be positive")
        if self.max_in_flight < 1:
            raise InputError("--max-in-flight must be at least 1")
        if bool(self.access_key) != bool(self.secret_key):
            raise InputError("ACL needs both --access-key and --secret-key")
        if self.tls_key and not self.tls_cert:
            raise InputError("--tls-key needs --tls-cert")
        for flag, path in (
            ("--tls-ca", self.tls_ca),
            ("--tls-cert", self.tls_cert),
            ("--tls-key", self.tls_key),
        ):
            if path is not None and not Path(path).is_file():
                raise InputError(f"{flag} {path}: no such file")
        use_tls = self.tls or self.tls_insecure or any((self.tls_ca, self.tls_cert))
        tls = (
            TlsConfig(
                insecure=self.tls_insecure,
                ca_file=str(self.tls_ca) if self.tls_ca else None,
                cert_file=str(self.tls_cert) if self.tls_cert else None,
                key_file=str(self.tls_key) if self.tls_key else None,
            )
            if use_tls
            else None
        )
        credentials = (
            Credentials(self.access_key, self.secret_key)
            if self.access_key and self.secret_key
            else None
        )
        assert isinstance(self.namesrv, tuple)
        return CollectOptions(
            namesrv=self.namesrv,
            groups=self.groups,
            client=ClientOptions(timeout=self.timeout, tls=tls, credentials=credentials),
            max_in_flight=self.max_in_flight,
            deadline=self.deadline,
            patterns=tuple(self.patterns),
            topic=self.topic,
            system=self.system,
            proxies=self.proxies,
            offset_tables=True,
        )


class _DelayedProgress:
    """A Rich progress bar on stderr that only appears after :data:`PROGRESS_DELAY`."""

    def __init__(self) -> None:
        import time

        self._start = time.monotonic()
        self._progress: Any = None
        self._task: Any = None
        self.total = 0
        self.done = 0

    def scheduled(self, count: int = 1) -> None:
        self.total += count
        self._refresh()

    def finished(self, count: int = 1) -> None:
        self.done += count
        self._refresh()

    def _refresh(self) -> None:
        import time

        if self._progress is None:
            if time.monotonic() - self._start < PROGRESS_DELAY:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._progress = Progress(
                TextColumn("collecting"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("requests"),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("collect", total=self.total)
        self._progress.update(self._task, total=self.total, completed=self.done)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def snapshot_from_cluster(opts: LiveOptions) -> Snapshot:
    """Capture a snapshot of the live cluster (see :mod:`rmqlb.client.collector`).

    Raises :class:`~rmqlb.errors.ClusterUnreachable` (exit 3) when no NameServer answers;
    partial failures are in ``Snapshot.errors`` (the report then exits 4).
    """
    import asyncio

    from rmqlb.client.collector import collect

    options = opts.collect_options()
    progress = _DelayedProgress() if opts.progress and sys.stderr.isatty() else None
    captured: list[Snapshot] = []

    async def capture() -> None:
        # Kept out of the main task's result: on the way out, asyncio.run (3.11) formats
        # its SIGINT handler, whose repr holds that task's and so its result's: a whole
        # snapshot's repr (0.2 s for 1,000 groups).
        captured.append(await _interruptible(collect(options, progress=progress)))

    try:
        asyncio.run(capture())
        return captured[0]
    finally:
        if progress is not None:
            progress.stop()


async def _interruptible(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work``; SIGINT or SIGTERM cancels every task of the run (so requests stop and
    connections close) and raises :class:`~rmqlb.errors.Terminated` for the CLI boundary
    once ``work`` has ended, or after :data:`INTERRUPT_GRACE` seconds at the latest."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    task = loop.create_task(work)
    this = asyncio.current_task()
    received: list[int] = []
    grace: asyncio.Future[None] = loop.create_future()

    def interrupt(signum: int) -> None:
        if received:
            return
        received.append(signum)
        loop.set_exception_handler(_quiet_after_interrupt)
        for other in asyncio.all_tasks(loop):  # not only ``work``: the tasks it started too
            if other is not this:
                other.cancel()
        loop.call_later(INTERRUPT_GRACE, _settle, grace)

    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        try:
            loop.add_signal_handler(signum, interrupt, signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            continue
        installed.append((signum, previous))
    try:
        await asyncio.wait((task, grace), return_when=asyncio.FIRST_COMPLETED)
        if received:
            raise Terminated(received[0])
        return task.result()
    finally:
        grace.cancel()
        for signum, previous in installed:
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous)  # the CLI's own SIGTERM handler, for one


def _settle(future: Any) -> None:
    if not future.done():
        future.set_result(None)


def _quiet_after_interrupt(loop: Any, context: dict[str, Any]) -> None:
    """After an interrupt, tasks cancelled half-way may leave exceptions nobody reads:
    nothing to tell the user, who asked to stop."""


def snapshot_from(dump: str | None, connection: Connection, groups: tuple[str, ...]) -> Snapshot:
    """The snapshot of ``--dump FILE`` (``-``: standard input), else one captured live from
    ``connection``'s cluster for ``groups``."""
    if dump is not None:
        from rmqlb.snapshot import load_snapshot

        return load_snapshot(dump)
    return snapshot_from_cluster(connection.live(groups=groups))
