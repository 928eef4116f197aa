"""``rmqlb audit``: fleet-wide audit of many snapshots (Spark by default), and the fleet
generator (``--generate N``).

Exit codes: 0 nothing at or above ``--fail-on``; 1 a *persistent* finding at or above
``--fail-on`` (transient findings — a rebalance caught mid-way — never fail the audit, nor
do flapping groups; both are reported); 2 bad input or usage, no snapshot found, or pyspark
missing for ``--engine spark``; 4 some records or groups could not be read and no worse
code applies.
"""

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.messages import say
from rmqlb.cli.options import Display, FailOn, FailOnOption, Inputs, shared_options
from rmqlb.errors import InputError

if TYPE_CHECKING:
    from rmqlb.pipeline import AuditResult
    from rmqlb.pipeline.result import InputProblem
    from rmqlb.render.progress import ProgressLine


class EngineName(StrEnum):
    """``--engine`` values (mirrors :class:`rmqlb.pipeline.Engine`, kept here to stay light)."""

    auto = "auto"
    spark = "spark"
    local = "local"


@app.command()
@shared_options
def audit(  # noqa: PLR0917  (typer maps every option to a parameter)
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Snapshot files, JSON Lines files (one snapshot per line) or directories "
            "(searched recursively for *.json / *.jsonl / *.ndjson).",
            show_default=False,
        ),
    ] = None,
    engine: Annotated[
        EngineName,
        typer.Option(
            "--engine",
            help="auto: in-process for local snapshots (spread over the cores: faster on one "
            "machine), Spark with --master, inside a Spark driver or for remote input (says "
            "which on stderr); spark: local[*], --master or the spark-submit session; "
            "local: in-process.",
            case_sensitive=False,
        ),
    ] = EngineName.auto,
    master: Annotated[
        str | None,
        typer.Option(
            "--master", metavar="URL", help="Spark master URL, e.g. local[2], spark://host:7077."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Directory for summary.json and the Parquet tables findings/ groups/ "
            "flapping/ occurrences/ (with --generate: where the fleet is written).",
        ),
    ] = None,
    cluster_from: Annotated[
        str | None,
        typer.Option(
            "--cluster-from",
            metavar="REGEX",
            help="Regex with one group taking the cluster name from each input path "
            "(default: the snapshot's source.namesrv).",
        ),
    ] = None,
    persistent_window: Annotated[
        int,
        typer.Option(
            "--persistent-window",
            metavar="N",
            help="A finding is persistent when present in each of the group's last N snapshots.",
        ),
    ] = 3,
    flap_threshold: Annotated[
        int,
        typer.Option(
            "--flap-threshold",
            metavar="K",
            help="A group flaps when its actual assignment changed more than K times.",
        ),
    ] = 2,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report", metavar="FILE", help="Write a self-contained HTML report with charts."
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", metavar="N", help="Rows in the top-offender tables.")
    ] = 20,
    generate: Annotated[
        int | None,
        typer.Option(
            "--generate",
            metavar="N",
            help="Write N synthetic snapshots with known problems to --out instead of auditing.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed for --generate.")] = 0,
    groups: Annotated[
        int,
        typer.Option("--groups", metavar="N", help="Groups per generated snapshot (--generate)."),
    ] = 12,
    clusters: Annotated[
        int | None,
        typer.Option(
            "--clusters", metavar="N", help="Clusters to spread generated snapshots over."
        ),
    ] = None,
    jsonl: Annotated[
        bool, typer.Option("--jsonl", help="--generate: one JSON Lines file per cluster.")
    ] = False,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="A progress line on stderr (files read, snapshots audited, ETA); "
            "default: when stderr is a terminal.",
            show_default=False,
        ),
    ] = None,
    display: Display = Display(),
    inputs: Inputs = Inputs(),
    fail_on: FailOnOption = FailOn.error,
) -> int:
    """Audit a fleet of snapshots: persistent vs transient problems, flapping groups, worst
    offenders. Writes summary.json + Parquet tables with --out, HTML charts with --report."""
    if generate is not None:
        if paths:
            raise InputError("--generate writes a fleet; give no PATH (use --out DIR)")
        if out is None:
            raise InputError("--generate needs --out DIR")
        return _generate(generate, out, seed=seed, groups=groups, clusters=clusters, jsonl=jsonl)

    from rmqlb.cli.options import make_console, resolve_output
    from rmqlb.pipeline import AuditOptions, Engine, run_audit
    from rmqlb.pipeline.result import exit_code

    chosen = Engine(engine.value)
    if top < 1:
        raise InputError("--top must be at least 1")
    options = AuditOptions(
        persistent_window=persistent_window,
        flap_threshold=flap_threshold,
        cluster_from=cluster_from,
        top=top,
    )
    line = _progress_line(progress)
    try:
        result = run_audit(
            paths or [],
            engine=chosen,
            options=options,
            out=out,
            master=master,
            on_choice=lambda e, why: say(f"engine {e.value}: {why}"),
            progress=line,
        )
    finally:
        if line is not None:
            line.close()
    if result.snapshots == 0:
        first = f": {_problem_line(result)}" if result.problems else ""
        raise InputError(f"no usable snapshot found under {' '.join(paths or [])}{first}")
    for problem in result.problems[:5]:
        say(f"skipped {_problem_text(problem)}")
    if result.problem_count > 5:
        say(f"... and {result.problem_count - 5} more skipped inputs")
    if report is not None:
        from rmqlb.render.html import write_html_report

        write_html_report(result, report)
    from rmqlb.render.audit import write_summary

    fmt = resolve_output(display.output)
    write_summary(result, fmt, make_console(display.color), top)
    return int(exit_code(result, fail_on.value))


def _progress_line(wanted: bool | None) -> "ProgressLine | None":
    """The stderr progress line: on a terminal unless ``--no-progress``, or ``--progress``."""
    import sys

    if wanted is False or (wanted is None and not sys.stderr.isatty()):
        return None
    from rmqlb.render.progress import ProgressLine

    return ProgressLine(sys.stderr)


def _problem_text(problem: "InputProblem") -> str:
    where = f"{problem.path or '<input>'}"
    if problem.group:
        where += f" group {problem.group}"
    return f"{where}: {problem.message}"


def _problem_line(result: "AuditResult") -> str:
    return _problem_text(result.problems[0])


def _generate(
    files: int, out: Path, *, seed: int, groups: int, clusters: int | None, jsonl: bool
) -> int:
    from rmqlb.pipeline.generate import MANIFEST, generate_fleet

    if clusters is not None and clusters < 1:
        raise InputError("--clusters must be at least 1")
    try:
        manifest = generate_fleet(
            out, files, seed=seed, clusters=clusters, groups=groups, jsonl=jsonl
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:
        raise InputError(f"--out {out}: {exc.strerror or exc}") from None
    from rmqlb.render.safe import escape_controls

    typer.echo(
        escape_controls(
            f"wrote {manifest['snapshots']} snapshots ({len(manifest['clusters'])} clusters, "
            f"{groups} groups each) and {len(manifest['injections'])} injected problems "
            f"to {out} (manifest: {out / MANIFEST})"
        )
    )
    return 0
