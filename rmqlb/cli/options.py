"""Options shared by several commands (design §3 conventions), and the helpers that read them.

``Output`` lives in :mod:`rmqlb.render.formats` (the renderers' closed enum) and is
re-exported here so commands keep importing it from one place.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from rmqlb.failon import FailOn
from rmqlb.render.formats import Output

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_TIMEOUT",
    "AccessKeyOption",
    "AllGroupsOption",
    "ColorOption",
    "DeadlineOption",
    "FailOn",
    "FailOnOption",
    "GroupOption",
    "MaxInFlightOption",
    "NamesrvOption",
    "Output",
    "OutputOption",
    "SecretKeyOption",
    "TimeoutOption",
    "TlsCaOption",
    "TlsCertOption",
    "TlsInsecureOption",
    "TlsKeyOption",
    "TlsOption",
    "make_console",
    "resolve_output",
    "use_color",
]


OutputOption = Annotated[
    Output | None,
    typer.Option(
        "--output",
        "-o",
        help="Report format; default: table on a terminal, plain otherwise.",
        case_sensitive=False,
    ),
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


# ----- live-cluster options (shared by ``explain -n`` and ``dump``) ----------------------------

NamesrvOption = Annotated[
    str | None,
    typer.Option(
        "--namesrv",
        "-n",
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
    ),
]
AllGroupsOption = Annotated[
    bool,
    typer.Option("--all-groups", help="Every non-system consumer group found on the brokers."),
]
TimeoutOption = Annotated[
    float,
    typer.Option("--timeout", min=0.001, help="Deadline per request, in seconds."),
]
TlsOption = Annotated[bool, typer.Option("--tls", help="Connect with TLS.")]
TlsInsecureOption = Annotated[
    bool,
    typer.Option("--tls-insecure", help="TLS without certificate verification (test clusters)."),
]
TlsCaOption = Annotated[
    Path | None,
    typer.Option("--tls-ca", help="CA bundle to verify the servers with.", show_default=False),
]
TlsCertOption = Annotated[
    Path | None,
    typer.Option("--tls-cert", help="Client certificate (PEM) for mutual TLS.", show_default=False),
]
TlsKeyOption = Annotated[
    Path | None,
    typer.Option("--tls-key", help="Client private key (PEM) for mutual TLS.", show_default=False),
]
AccessKeyOption = Annotated[
    str | None,
    typer.Option(
        "--access-key",
        envvar="ROCKETMQ_ACCESS_KEY",
        help="ACL access key (default: $ROCKETMQ_ACCESS_KEY).",
        show_default=False,
    ),
]
SecretKeyOption = Annotated[
    str | None,
    typer.Option(
        "--secret-key",
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
MaxInFlightOption = Annotated[
    int, typer.Option("--max-in-flight", min=1, help="Requests in flight at most.")
]
DEFAULT_TIMEOUT = 5.0
"""Seconds per request, like mqadmin."""
DEFAULT_MAX_IN_FLIGHT = 128
"""Requests in flight at most, over all connections."""
