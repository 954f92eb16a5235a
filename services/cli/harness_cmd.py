"""`flywheel harness ...`: list, show, diff and roll back harness versions in the registry."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from schemas.settings import SettingsError
from services.cli.archive_cmd import fail
from services.evolver.delta import diff_specs
from services.evolver.registry import HarnessRegistry, RegistryError
from streams.settings import load_bus_settings

__all__ = ["register"]

logger = logging.getLogger(__name__)

harness_app = typer.Typer(help="Harness versions: list, show, diff, roll back.",
                          no_args_is_help=True)
console = Console()

DataDirOption = Annotated[Path | None, typer.Option(
    "--data-dir", help="Folder holding harness/ (default: FLYWHEEL_DATA_DIR or var).")]


def _registry(data_dir: Path | None) -> HarnessRegistry:
    try:
        root = data_dir if data_dir is not None else load_bus_settings().data_dir
    except SettingsError as error:
        fail(str(error))
    return HarnessRegistry.at_data_dir(root)


@harness_app.command("list")
def list_versions(data_dir: DataDirOption = None,
                  as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
                  ) -> None:
    """Every stored harness version, its parent and when it became current."""
    registry = _registry(data_dir)
    infos = registry.versions()
    if as_json:
        typer.echo(json.dumps([{"version": i.version, "parent": i.parent, "current": i.current,
                                "promoted_at": i.promoted_at, "reason": i.reason}
                               for i in infos], indent=2))
        return
    if not infos:
        console.print(f"no harness versions in {registry.root}")
        return
    table = Table(title=f"harness versions ({registry.root})")
    for column in ("", "version", "parent", "first current", "how"):
        table.add_column(column)
    for info in infos:
        table.add_row("*" if info.current else "", info.version, info.parent or "-",
                      info.promoted_at or "never", info.reason or "proposed")
    console.print(table)


@harness_app.command("show")
def show(version: Annotated[str, typer.Argument(help="Version, prefix or 'current'.")] = "current",
         data_dir: DataDirOption = None) -> None:
    """Print one version's spec as JSON."""
    try:
        spec = _registry(data_dir).get(version)
    except RegistryError as error:
        fail(str(error))
    typer.echo(json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False))


@harness_app.command("diff")
def diff(old: Annotated[str, typer.Argument(help="Version (or prefix) to compare from.")],
         new: Annotated[str, typer.Argument(help="Version to compare to.")] = "current",
         data_dir: DataDirOption = None,
         as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """The changes that turn OLD into NEW (default: the current version)."""
    registry = _registry(data_dir)
    try:
        changes = diff_specs(registry.get(old), registry.get(new))
    except RegistryError as error:
        fail(str(error))
    if as_json:
        typer.echo(json.dumps([c.model_dump(mode="json") for c in changes], indent=2))
        return
    if not changes:
        console.print("no differences")
        return
    for change in changes:
        detail = json.dumps(change.spec, ensure_ascii=False, sort_keys=True) if change.spec else ""
        sign = {"add": "+", "remove": "-", "update": "~"}[change.op]
        console.print(f"{sign} {change.component} {change.name} {detail}".rstrip(),
                      highlight=False, soft_wrap=True)


@harness_app.command("rollback")
def rollback(version: Annotated[str, typer.Argument(help="Earlier version (or prefix).")],
             data_dir: DataDirOption = None) -> None:
    """Make an earlier version current again (rollouts pick it up on their next episode)."""
    registry = _registry(data_dir)
    try:
        entry = registry.rollback(version)
    except RegistryError as error:
        fail(str(error))
    console.print(f"harness {entry.version} is current again (was {entry.previous})")


def register(app: typer.Typer) -> None:
    app.add_typer(harness_app, name="harness")
