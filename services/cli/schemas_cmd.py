"""`flywheel schemas ...`: inspect and export the event contract."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from schemas.export import export_json_schemas
from schemas.topics import TOPICS

__all__ = ["register"]

schemas_app = typer.Typer(help="Inspect and export the event contract.", no_args_is_help=True)
console = Console()


@schemas_app.command("export")
def export(
    directory: Annotated[Path, typer.Argument(help="Folder to write the JSON Schemas into.")],
) -> None:
    """Write one JSON Schema file per event type."""
    try:
        paths = export_json_schemas(directory)
    except OSError as error:
        console.print(f"error: cannot write the schemas to {directory} ({error.strerror or error}); "
                      f"pass a folder you can write", highlight=False)
        raise typer.Exit(1) from None
    console.print(f"wrote {len(paths)} JSON Schemas to {directory}")


@schemas_app.command("topics")
def topics() -> None:
    """List every topic with its key, partitions, cleanup policy and event types."""
    table = Table("topic", "key", "partitions", "cleanup", "event types")
    for t in TOPICS.values():
        table.add_row(t.name, t.key, str(t.partitions), t.cleanup_policy,
                      ", ".join(sorted(t.type_names)))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(schemas_app, name="schemas")
