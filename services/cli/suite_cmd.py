"""`flywheel suite ...`: list the task templates and evaluate reference policies on a split."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from devices.suite.evaluate import evaluate
from devices.suite.plot import plot_report
from devices.suite.registry import FAMILIES, all_templates, templates_for
from devices.suite.settings import load_settings
from schemas.settings import SettingsError

__all__ = ["register"]

suite_app = typer.Typer(help="The task suite: templates, splits and reference policies.",
                        no_args_is_help=True)
console = Console()
err_console = Console(stderr=True)


class SplitName(str, Enum):
    train = "train"
    dev = "dev"
    test = "test"


class PolicyChoice(str, Enum):
    oracle = "oracle"
    random = "random"
    noop = "noop"


@suite_app.command("list")
def list_templates(
    split: Annotated[SplitName | None,
                     typer.Option(help="Only templates that serve this split.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the templates by family, with their checker and splits."""
    chosen = templates_for(split.value) if split else list(all_templates())
    if as_json:
        typer.echo(json.dumps({
            "templates": [t.describe() for t in chosen],
            "counts": {f: sum(t.family == f for t in chosen) for f in FAMILIES},
            "total": len(chosen),
            "held_out": sum(t.test_only for t in chosen),
        }, indent=2))
        return
    table = Table("family", "template", "checker", "splits", title="Task templates")
    for family in FAMILIES:
        for t in (t for t in chosen if t.family == family):
            table.add_row(family, t.name, t.checker,
                          "test (held out)" if t.test_only else "train, dev, test")
    console.print(table)
    held = sum(t.test_only for t in chosen)
    console.print(f"{len(chosen)} templates, {held} held out for test")


@suite_app.command("eval")
def eval_policy(
    policy: Annotated[str, typer.Option(
        help="oracle, random, noop, or model:PATH (a local model or checkpoint directory).")],
    split: Annotated[SplitName, typer.Option(help="Which split to evaluate on.")] = SplitName.dev,
    n: Annotated[int | None, typer.Option(
        min=1, help="Instances per template (default from settings).")] = None,
    seed: Annotated[int | None, typer.Option(
        min=0, help="Suite seed (default from settings).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    plot: Annotated[Path | None, typer.Option(
        help="Also draw the scores as a PNG chart at this path.")] = None,
) -> None:
    """Run a policy on every template of a split and report per-family and overall scores."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    report = evaluate(_policy(policy), split.value, n or settings.n_per_template,
                      settings.suite_seed if seed is None else seed,
                      random_seed=settings.random_seed, progress=not as_json)
    if plot is not None:
        plot_report(report, plot)
    if as_json:
        typer.echo(json.dumps(report.to_json_dict(), indent=2))
        return
    per = Table("template", "family", "score", title=f"{report.policy} on {report.split}")
    for name, score in sorted(report.template_scores.items(),
                              key=lambda kv: (report.template_families[kv[0]], kv[0])):
        per.add_row(name, report.template_families[name], f"{score:.2f}")
    console.print(per)
    summary = Table("family", "score", title="Summary")
    for family in FAMILIES:
        summary.add_row(family, f"{getattr(report.scores, family):.3f}")
    summary.add_row("[bold]overall[/bold]", f"[bold]{report.overall:.3f}[/bold]")
    console.print(summary)
    console.print(f"{report.episodes} episodes, suite seed {report.suite_seed}")
    if plot is not None:
        console.print(f"chart: {plot}")


def _policy(name: str) -> object:
    """A reference policy's name, or the planner model in PATH for `model:PATH`."""
    if name.startswith("model:"):
        from trainer.models import ModelError
        from trainer.policy import load_policy

        try:
            return load_policy(name.removeprefix("model:"))
        except ModelError as exc:
            err_console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
    if name not in {choice.value for choice in PolicyChoice}:
        err_console.print(f"[red]error:[/red] unknown policy {name!r}; use oracle, random, noop or model:PATH")
        raise typer.Exit(2)
    return name


def register(app: typer.Typer) -> None:
    app.add_typer(suite_app, name="suite")
