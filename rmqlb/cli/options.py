"""Options shared by several commands (design §3 conventions), and the helpers that read them.

``Output`` lives in :mod:`rmqlb.render.formats` (the renderers' closed enum) and is
re-exported here so commands keep importing it from one place.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO, TypeVar, get_type_hints

import typer

from rmqlb.cli.complete import complete_group, complete_topic
from rmqlb.failon import FailOn
from rmqlb.fileio import LIMIT_ENV, LIMIT_FLAG, max_input_size, parse_size
from rmqlb.render.formats import Output, StatusOutput

if TYPE_CHECKING:
    from rich.console import Console

    from rmqlb.cli.live import LiveOptions

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_TIMEOUT",
    "AccessKeyOption",
    "AllGroupsOption",
    "ColorOption",
    "Connection",
    "DeadlineOption",
    "Display",
    "DumpOption",
    "FailOn",
    "FailOnOption",
    "GroupOption",
    "Inputs",
    "MaxInFlightOption",
    "MaxInputSizeOption",
    "NamesrvOption",
    "NoHeadersOption",
    "Output",
    "OutputOption",
    "ProxyOption",
    "SecretKeyOption",
    "StatusDisplay",
    "TimeoutOption",
    "TlsCaOption",
    "TlsCertOption",
    "TlsInsecureOption",
    "TlsKeyOption",
    "TlsOption",
    "check_source",
    "make_console",
    "resolve_output",
    "shared_options",
    "use_color",
]


OutputOption = Annotated[
    Output | None,
    typer.Option(
        "--output",
        "-o",
        help="Report format (wide: the table with every column); default: table on a "
        "terminal, plain otherwise.",
        case_sensitive=False,
    ),
]
NoHeadersOption = Annotated[
    bool,
    typer.Option("--no-headers", help="Rows only: no title, column names or totals."),
]
ColorOption = Annotated[
    bool | None,
    typer.Option(
        "--color/--no-color",
        help="Force colours on or off (default: on for a terminal unless NO_COLOR is set).",
        show_default=False,
    ),
]
FailOnOption = Annotated[
    FailOn,
    typer.Option(
        "--fail-on", help="Exit 1 when a finding is at least this severe.", case_sensitive=False
    ),
]


def resolve_output(output: Output | None, stream: TextIO | None = None) -> Output:
    """The format to use: the flag, else ``table`` on a terminal and ``plain`` otherwise."""
    if output is Output.wide:  # a table with every column: the renderers know it as table
        return Output.table
    if output is not None:
        return output
    stream = stream or sys.stdout
    return Output.table if stream.isatty() else Output.plain


def use_color(color: bool | None, stream: TextIO | None = None) -> bool:
    """Colours on for a terminal unless ``NO_COLOR`` is set; ``--color/--no-color`` wins."""
    if color is not None:
        return color
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    return stream.isatty()


def make_console(
    color: bool | None, stream: TextIO | None = None, width: int | None = None
) -> Console:
    """A Rich console writing to ``stream`` (stdout by default) with the resolved colour rule."""
    from rich.console import Console

    stream = stream or sys.stdout
    on = use_color(color, stream)
    return Console(
        file=stream,
        no_color=not on,
        color_system="auto" if on else None,
        force_terminal=on if color is not None else None,
        width=width,
        highlight=False,
        soft_wrap=False,
    )


DumpOption = Annotated[
    str | None,
    typer.Option(
        "--dump",
        "-d",
        metavar="FILE",
        help="Read a snapshot file (rmqlb.snapshot/1) instead of a cluster; '-' reads stdin.",
        show_default=False,
    ),
]


def check_source(ctx: typer.Context, dump: str | None, connection: Connection) -> None:
    """Exactly one of ``--dump FILE`` and ``-n ADDR`` (``$NAMESRV_ADDR`` yields to a file)."""
    from typer._click.core import ParameterSource
    from typer._click.exceptions import UsageError

    from_env = ctx.get_parameter_source("namesrv") is ParameterSource.ENVIRONMENT
    if dump is not None and connection.namesrv is not None and not from_env:
        raise UsageError("give either --dump FILE or -n/--namesrv ADDR, not both", ctx)
    if dump is None and not connection.namesrv:
        raise UsageError("give --dump FILE or -n/--namesrv ADDR (or set NAMESRV_ADDR)", ctx)


def _input_size(value: str | int | None) -> int | None:
    """``--max-input-size`` in bytes, by the one size rule (:func:`rmqlb.fileio.parse_size`)."""
    if value is None or isinstance(value, int):
        return value
    try:
        return parse_size(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


MaxInputSizeOption = Annotated[
    int | None,
    typer.Option(
        LIMIT_FLAG,
        metavar="SIZE",
        envvar=LIMIT_ENV,
        parser=_input_size,
        help="Read input files of up to SIZE bytes (e.g. 2GiB, 500MB, 1048576); default: the "
        f"limit of each kind of input (docs/limits.md), or ${LIMIT_ENV}.",
        show_default=False,
    ),
]


# ----- live-cluster options (shared by ``explain -n`` and ``dump``) ----------------------------

NamesrvOption = Annotated[
    str | None,
    typer.Option(
        "--namesrv",
        "-n",
        metavar="ADDR",
        envvar="NAMESRV_ADDR",
        help="NameServer address(es), semicolon-separated (default: $NAMESRV_ADDR).",
        show_default=False,
    ),
]
GroupOption = Annotated[
    list[str] | None,
    typer.Option(
        "--group",
        "-g",
        metavar="GROUP",
        help="A consumer group (repeatable; mqadmin's -g), like the GROUP arguments.",
        show_default=False,
        autocompletion=complete_group,
    ),
]
GroupGlobArguments = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[GROUP|GLOB]...",
        help="Groups, or glob patterns such as 'order-*' (default: every group).",
        show_default=False,
        autocompletion=complete_group,
    ),
]
ConsumersOfTopicOption = Annotated[
    str | None,
    typer.Option(
        "--topic",
        "-t",
        metavar="TOPIC",
        help="Only groups that consume this topic (the brokers say who: online "
        "subscribers and committed offsets).",
        show_default=False,
        autocompletion=complete_topic,
    ),
]
AllGroupsOption = Annotated[
    bool,
    typer.Option("--all-groups", help="Every non-system consumer group found on the brokers."),
]
WatchOption = Annotated[
    float | None,
    typer.Option(
        "--watch",
        min=0.1,
        metavar="SECONDS",
        help="Poll again every SECONDS and mark what changed; Ctrl-C stops (exit 0).",
        show_default=False,
    ),
]
CountOption = Annotated[
    int | None,
    typer.Option(
        "--count", min=1, metavar="N", help="With --watch: stop after N polls.", show_default=False
    ),
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout", min=0.001, metavar="SECONDS", help="Deadline per request, in seconds."
    ),
]
TlsOption = Annotated[bool, typer.Option("--tls", help="Connect with TLS.")]
TlsInsecureOption = Annotated[
    bool,
    typer.Option("--tls-insecure", help="TLS without certificate verification (test clusters)."),
]
TlsCaOption = Annotated[
    Path | None,
    typer.Option(
        "--tls-ca", metavar="FILE", help="CA bundle to verify the servers with.", show_default=False
    ),
]
TlsCertOption = Annotated[
    Path | None,
    typer.Option(
        "--tls-cert",
        metavar="FILE",
        help="Client certificate (PEM) for mutual TLS.",
        show_default=False,
    ),
]
TlsKeyOption = Annotated[
    Path | None,
    typer.Option(
        "--tls-key",
        metavar="FILE",
        help="Client private key (PEM) for mutual TLS.",
        show_default=False,
    ),
]
AccessKeyOption = Annotated[
    str | None,
    typer.Option(
        "--access-key",
        metavar="KEY",
        envvar="ROCKETMQ_ACCESS_KEY",
        help="ACL access key (default: $ROCKETMQ_ACCESS_KEY).",
        show_default=False,
    ),
]
SecretKeyOption = Annotated[
    str | None,
    typer.Option(
        "--secret-key",
        metavar="KEY",
        envvar="ROCKETMQ_SECRET_KEY",
        help="ACL secret key (default: $ROCKETMQ_SECRET_KEY); never printed or saved.",
        show_default=False,
    ),
]
DeadlineOption = Annotated[
    float | None,
    typer.Option(
        "--deadline",
        min=0.001,
        metavar="SECONDS",
        help="Overall deadline for the capture (default: 6 x --timeout, at least 30 s).",
        show_default=False,
    ),
]
ProxyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--proxy",
        metavar="HOST:PORT",
        envvar="RMQLB_PROXY",
        help=(
            "A RocketMQ 5.1+ Proxy's remoting address, asked for the consumers of each group "
            "connected to it, gRPC or remoting (repeatable; default: $RMQLB_PROXY, "
            "semicolon-separated)."
        ),
        show_default=False,
    ),
]
MaxInFlightOption = Annotated[
    int,
    typer.Option("--max-in-flight", min=1, metavar="N", help="Requests in flight at most."),
]
DEFAULT_TIMEOUT = 5.0
"""Seconds per request, like mqadmin."""
DEFAULT_MAX_IN_FLIGHT = 512
"""Requests in flight at most, over all connections: the collector's own default (why: see
:data:`rmqlb.client.collector.DEFAULT_MAX_IN_FLIGHT`; not imported from there, which would
load asyncio for ``--help``; a test keeps the two equal)."""


# ----- option groups, declared once -----------------------------------------------------------


@dataclass(frozen=True)
class Connection:
    """How to reach a live cluster: ``-n`` and the flags every live command shares.

    A command takes it as one parameter annotated ``Connection``; :func:`shared_options`
    turns that parameter into the options below, in this order.
    """

    namesrv: NamesrvOption = None
    timeout: TimeoutOption = DEFAULT_TIMEOUT
    deadline: DeadlineOption = None
    max_in_flight: MaxInFlightOption = DEFAULT_MAX_IN_FLIGHT
    tls: TlsOption = False
    tls_insecure: TlsInsecureOption = False
    tls_ca: TlsCaOption = None
    tls_cert: TlsCertOption = None
    tls_key: TlsKeyOption = None
    access_key: AccessKeyOption = None
    secret_key: SecretKeyOption = field(default=None, repr=False)
    proxy: ProxyOption = None

    def live(self, **what: Any) -> LiveOptions:
        """:class:`~rmqlb.cli.live.LiveOptions` for these flags and ``what`` to read."""
        from rmqlb.cli.live import LiveOptions

        return LiveOptions(
            namesrv=self.namesrv or (),
            timeout=self.timeout,
            deadline=self.deadline,
            max_in_flight=self.max_in_flight,
            tls=self.tls,
            tls_insecure=self.tls_insecure,
            tls_ca=self.tls_ca,
            tls_cert=self.tls_cert,
            tls_key=self.tls_key,
            access_key=self.access_key,
            secret_key=self.secret_key,
            proxies=tuple(self.proxy or ()),
            **what,
        )


@dataclass(frozen=True)
class Display:
    """How a report looks: the format (``-o``) and colours, shared by every report command."""

    output: OutputOption = None
    color: ColorOption = None

    @property
    def wide(self) -> bool:
        """``-o wide``: every column, absolute times beside ages."""
        return self.output is Output.wide


StatusOutputOption = Annotated[
    StatusOutput | None,
    typer.Option(
        "--output",
        "-o",
        help="Report format; default: table on a terminal, plain otherwise. openmetrics: "
        "the metrics of 'rmqlb exporter', once (docs/exporter.md).",
        case_sensitive=False,
    ),
]


@dataclass(frozen=True)
class StatusDisplay:
    """:class:`Display` of ``status``, whose ``-o`` also takes ``openmetrics``."""

    output: StatusOutputOption = None
    color: ColorOption = None


@dataclass(frozen=True)
class Inputs:
    """How much of an input file a command reads (``--max-input-size``), shared by every
    command that reads files; the limit holds while the command runs."""

    max_input_size: MaxInputSizeOption = None


_GROUPS: tuple[type, ...] = (Connection, Display, StatusDisplay, Inputs)
F = TypeVar("F", bound=Callable[..., Any])


def shared_options(command: F) -> F:
    """Declare a command's option groups once: every parameter annotated with a group
    (:class:`Connection`, :class:`Display`, :class:`Inputs`) becomes that group's options on
    the command line, at its place, and reaches the command as one instance of the group.
    The limit of :class:`Inputs` holds while the command runs."""
    hints = get_type_hints(command, include_extras=True)
    signature = inspect.signature(command)
    params: list[inspect.Parameter] = []
    groups: dict[str, type] = {}
    for param in signature.parameters.values():
        group = hints.get(param.name)
        if group not in _GROUPS:
            params.append(param.replace(annotation=hints.get(param.name, param.annotation)))
            continue
        assert isinstance(group, type)
        groups[param.name] = group
        group_hints = get_type_hints(group, include_extras=True)
        params.extend(
            inspect.Parameter(f.name, param.kind, default=f.default, annotation=group_hints[f.name])
            for f in fields(group)
        )

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        limit: int | None = None
        for name, group in groups.items():
            kwargs[name] = instance = group(**{f.name: kwargs.pop(f.name) for f in fields(group)})
            if isinstance(instance, Inputs):
                limit = instance.max_input_size
        with max_input_size(limit):
            return command(*args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper  # type: ignore[return-value]
