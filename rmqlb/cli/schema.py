"""``rmqlb schema``: print the JSON Schema of the snapshot format (``rmqlb.snapshot/1``)."""

from typing import Annotated

import typer

from rmqlb.cli.app import app


@app.command()
def schema(
    generate: Annotated[
        bool,
        typer.Option(
            "--generate",
            help="Build the schema from the format's definition (rmqlb.snapshot.spec) instead "
            "of printing the shipped file (for maintainers: the two must be equal).",
        ),
    ] = False,
) -> int:
    """Print the JSON Schema of snapshot files (for editors and validators)."""
    from rmqlb.snapshot.schema import generate_schema, schema_text, snapshot_schema

    document = generate_schema() if generate else snapshot_schema()
    typer.echo(schema_text(document), nl=False)
    return 0
