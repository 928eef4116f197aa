"""``rmqlb check FILE...``: CI check of declared topics and groups (design §3)."""

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from rmqlb.cli.app import app
from rmqlb.cli.messages import say
from rmqlb.cli.options import (
    Display,
    FailOn,
    Inputs,
    Output,
    make_console,
    resolve_output,
    shared_options,
)


@app.command()
@shared_options
def check(  # noqa: PLR0917  (a Typer command: options are parameters)
    files: Annotated[
        list[str],
        typer.Argument(
            help="rmqlb YAML configs, broker topics.json / subscriptionGroup.json, or mqadmin "
            "metadata.json (detected by content).",
            show_default=False,
            metavar="FILE...",
        ),
    ],
    display: Display = Display(),
    inputs: Inputs = Inputs(),
    fail_on: Annotated[
        FailOn,
        typer.Option(
            "--fail-on",
            help="Exit 1 when a finding is at least this severe.",
            case_sensitive=False,
        ),
    ] = FailOn.warning,
    max_imbalance: Annotated[
        float | None,
        typer.Option(
            "--max-imbalance",
            metavar="RATIO",
            help="Report IMBALANCE above this max/min queues-per-consumer ratio "
            "(default: the engine's).",
            min=1.0,
            show_default=False,
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Also write JUnit XML (a testcase per group x topic).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    explain_counts: Annotated[
        bool,
        typer.Option(
            "--explain-counts",
            help="Print, per group and topic, the allocation at each consumer count considered.",
        ),
    ] = False,
) -> int:
    """Check declared topics and consumer groups before they ship; exit 1 on findings.

    Each consumer count of a group's range (replicas: 3..12) is diagnosed like a live cluster.

    Findings point at the file and line that declared them.

    With GITHUB_ACTIONS=true the findings are also printed as workflow annotations (and the
    Markdown report is added to the job summary).
    """
    from rmqlb.check import CheckOptions, load_files, run_check
    from rmqlb.render.check import markdown_text, write_check
    from rmqlb.render.ci import github_annotations, junit_xml

    config = load_files(files)
    result = run_check(
        config, CheckOptions(max_imbalance=max_imbalance, keep_allocations=explain_counts)
    )
    fmt = resolve_output(display.output)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        # Annotations go to stdout, except beside JSON, which must stay parseable.
        stream = sys.stderr if fmt is Output.json else sys.stdout
        workspace = os.environ.get("GITHUB_WORKSPACE") or os.getcwd()
        for line in github_annotations(result, workspace):
            stream.write(line + "\n")
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_file:
            try:
                with open(summary_file, "a", encoding="utf-8") as handle:
                    handle.write(markdown_text(result, fail_on.value))
            except OSError as exc:
                say(f"cannot write the job summary {summary_file}: {exc.strerror}")
    target = make_console(display.color) if fmt is Output.table else sys.stdout
    write_check(result, fmt, target, fail_on.value)
    if junit is not None:
        from rmqlb.fileio import write_atomic

        write_atomic(junit, junit_xml(result, fail_on.value), what="--junit")
    return int(result.exit_code(fail_on.value))
