"""Command-line interface. :func:`run` is the single error boundary: it maps every
:class:`~rmqlb.errors.RmqlbError` to a one-line message on stderr and its exit code, and any
other exception to a one-line message and exit 2 (set ``RMQLB_TRACEBACK=1`` to see the
traceback)."""

# ruff: noqa: E402  (the collector is tuned before the imports: see GC_YOUNG_THRESHOLD)

from __future__ import annotations

import gc

#: Objects the collector lets accumulate before a young-generation collection (Python's
#: default is 700). A run is mostly imports and acyclic answers: at the default, a live
#: explain of one group made 52 young and 5 middle collections (12 ms, about 4 % of it),
#: which found almost nothing to free. At this size a one-shot run makes none or few;
#: long-running commands (``--watch``, ``exporter``) still collect, just less often.
GC_YOUNG_THRESHOLD = 50_000

# First, before the imports below: they are most of what a short run allocates.
gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])

import copy
import os
import sys
from collections.abc import Iterable
from typing import Annotated, Any

import typer
from typer._click import exceptions as click_exceptions  # typer 0.28 vendors click

from rmqlb import __version__
from rmqlb.cli.app import app
from rmqlb.cli.messages import error, say
from rmqlb.errors import ExitCode, RmqlbError, Terminated

__all__ = ["COMMANDS", "app", "load_commands", "main", "run"]

#: Every command, in the order help lists them; each is registered on :data:`app` by the
#: module of its name (``rmqlb.cli.explain``) when that is imported. A run imports only the
#: module of the command it names; help, ``--version``, completion and an unknown command
#: import them all (:func:`load_commands`).
COMMANDS = (
    "audit",
    "check",
    "client",
    "demo",
    "dump",
    "explain",
    "exporter",
    "offsets",
    "schema",
    "serve",
    "simulate",
    "status",
)


def load_commands(names: Iterable[str] = COMMANDS) -> None:
    """Import the modules that register the commands ``names`` (default: all)."""
    import importlib

    for name in names:
        importlib.import_module(f"rmqlb.cli.{name}")


def _command_name(info: Any) -> str:
    return str(info.name or info.callback.__name__.replace("_", "-"))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rmqlb {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Diagnose Apache RocketMQ consumer load balancing: which consumer should hold which
    queue, which one does, and why they differ."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


def _interrupted(signum: int) -> int:
    """The one line an interrupted run prints, and its exit code (128 + the signal).

    Tasks an interrupt cancelled half-way may still report exceptions nobody read when they
    are collected: asyncio's logger is silenced so none of that reaches the user."""
    import logging

    logging.getLogger("asyncio").disabled = True
    say("interrupted")
    return 128 + signum


def run(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` and return the exit code instead of exiting.

    SIGTERM is handled like SIGINT while it runs (in the main thread): the work stops, files
    being written are left as they were, and ``rmqlb: interrupted`` is the one line printed.
    """
    import signal
    import threading

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _click_command(argv: list[str] | None) -> Any:
    """The click command that runs ``argv``: the root group with only the invoked command
    when ``argv`` names one (only its module is imported, and typer builds only its options
    from its signature), else with all of them, in :data:`COMMANDS` order (help,
    ``--version``, shell completion, an unknown command)."""
    import typer.main

    name = argv[0] if argv else None
    wanted: tuple[str, ...] = (name,) if name in COMMANDS else COMMANDS
    if any(k.endswith("_COMPLETE") for k in os.environ):
        wanted = COMMANDS
    load_commands(wanted)
    registered = {_command_name(c): c for c in app.registered_commands if c.callback}
    only = copy.copy(app)
    only.registered_commands = [registered[n] for n in wanted]
    return typer.main.get_command(only)


def _run(argv: list[str] | None) -> int:
    import signal

    command = _click_command(argv)
    try:
        result = command.main(args=argv, prog_name="rmqlb", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except SystemExit as exc:  # --show-completion and --install-completion exit themselves
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except typer.Abort:
        say("aborted")
        return 130
    except click_exceptions.NoArgsIsHelpError as exc:
        sys.stdout.write(exc.format_message() + "\n")  # bare ``rmqlb``: the help, exit 0
        return ExitCode.OK
    except click_exceptions.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        error(f"{exc.format_message()}{hint}")
        return ExitCode.BAD_INPUT
    except click_exceptions.ClickException as exc:
        error(exc.format_message())
        return ExitCode.BAD_INPUT
    except RmqlbError as exc:
        if os.environ.get("RMQLB_TRACEBACK"):
            raise
        error(str(exc))
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return _interrupted(signal.SIGINT)
    except Terminated as exc:
        return _interrupted(exc.signum)
    except RecursionError:  # a backstop: every reader refuses deep nesting itself
        error("input nested too deeply")
        return ExitCode.BAD_INPUT
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the boundary: never a traceback for users
        if os.environ.get("RMQLB_TRACEBACK"):
            raise
        say(f"internal error: {type(exc).__name__}: {exc}")
        return ExitCode.BAD_INPUT
    return int(result) if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point.

    What is still alive now lives until the process ends: :func:`gc.freeze` keeps the
    interpreter's collections at exit from walking all of it (about 4 % of a one-group
    ``explain``'s instructions). Exit still closes files and runs ``atexit`` handlers.
    """
    import gc

    code = run(sys.argv[1:])
    sys.stdout.flush()
    gc.freeze()
    sys.exit(code)
