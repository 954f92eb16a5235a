"""`flywheel suite ...`: list the task templates and evaluate reference policies on a split."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from devices.harness.spec import HarnessSpec, SpecError
from devices.protocol import MAX_FAULT_SHARE
from devices.suite.evaluate import evaluate
from devices.suite.plot import plot_report
from devices.suite.policies import PolicyLoadError, make_policy
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


class DeviceChoice(str, Enum):
    sim = "sim"
    adb = "adb"


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
        help="A built-in policy (oracle, random, noop, claim, ...), MODULE:CLASS of any "
             "importable class implementing devices.suite.policies.Policy, or model:PATH "
             "(a local model or checkpoint directory).")],
    split: Annotated[SplitName, typer.Option(help="Which split to evaluate on.")] = SplitName.dev,
    n: Annotated[int | None, typer.Option(
        min=1, help="Instances per template (default from settings).")] = None,
    seed: Annotated[int | None, typer.Option(
        min=0, help="Suite seed (default from settings).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    plot: Annotated[Path | None, typer.Option(
        help="Also draw the scores as a PNG chart at this path.")] = None,
    harness: Annotated[Path | None, typer.Option(
        help="A harness spec JSON file (default: the built-in HarnessSpec.default()).")] = None,
    device: Annotated[DeviceChoice, typer.Option(
        help="sim: the whole suite on SimPhones; adb: the real-device subset on the phone "
             "FLYWHEEL_ADB_* names, inside the harness, scored from the phone.")] = DeviceChoice.sim,
) -> None:
    """Run a policy on every template of a split and report per-family and overall scores."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    if device is DeviceChoice.adb:
        from services.cli.device_eval import eval_on_adb

        eval_on_adb(policy, n or 1, settings.suite_seed if seed is None else seed, as_json,
                    harness)
        return
    try:
        spec = HarnessSpec.load(harness) if harness is not None else None
        agent = (_model_policy(policy) if policy.startswith("model:")
                 else make_policy(policy, settings.random_seed))
    except (PolicyLoadError, SpecError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    report = evaluate(agent, split.value, n or settings.n_per_template,
                      settings.suite_seed if seed is None else seed,
                      random_seed=settings.random_seed, progress=not as_json, spec=spec)
    if plot is not None:
        plot_report(report, plot)
    if as_json:
        typer.echo(json.dumps(report.to_json_dict(), indent=2))
    else:
        _print_report(report, plot)
    if report.too_many_faults:
        err_console.print(f"[red]error:[/red] {report.faults} of {report.episodes} episodes "
                          f"({report.fault_share:.0%}) ended on a device error, more than "
                          f"{MAX_FAULT_SHARE:.0%}: the score says little of the policy", highlight=False)
        raise typer.Exit(1)


def _print_report(report: Any, plot: Path | None) -> None:
    per = Table("template", "family", "score", title=f"{report.policy} on {report.split}")
    for name, score in sorted(report.template_scores.items(),
                              key=lambda kv: (report.template_families[kv[0]], kv[0])):
        per.add_row(name, report.template_families[name], f"{score:.2f}")
    console.print(per)
    summary = Table("family", "score", title="Summary")
    for family in FAMILIES:
        summary.add_row(family, f"{getattr(report.scores, family):.3f}")
    for tier, score in report.tiers.items():
        summary.add_row(f"tier {tier}", f"{score:.3f}")
    summary.add_row("[bold]overall[/bold]", f"[bold]{report.overall:.3f}[/bold]")
    if report.overall_excluding_faults is not None:
        summary.add_row("overall excluding faults", f"{report.overall_excluding_faults:.3f}")
    console.print(summary)
    console.print(f"{report.episodes} episodes ({report.faults} ended on a device error and count), "
                  f"suite seed {report.suite_seed}, harness {report.harness_version}")
    if plot is not None:
        console.print(f"chart: {plot}")


def _model_policy(name: str) -> object:
    """The planner model in PATH for `model:PATH` (the trainer's ModelPolicy)."""
    from trainer.models import ModelError
    from trainer.policy import load_policy

    try:
        return load_policy(name.removeprefix("model:"))
    except ModelError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


@suite_app.command("stats")
def stats(
    n: Annotated[int, typer.Option(min=1, help="Oracle episodes per template for the action counts.")] = 2,
    seed: Annotated[int, typer.Option(min=0, help="Suite seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Breadth and depth: templates, apps, tools, oracle actions, lookups, tiers, distinct test instances."""
    from devices.suite.stats import suite_stats

    data = suite_stats(n_oracle=n, seed=seed)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    table = Table("group", "templates", "mean oracle actions", "mid-episode values", "chains ≥ 2",
                  title="Task suite")
    for group in ("per_family", "per_tier", "per_family_tier"):
        for name, row in data[group].items():
            table.add_row(name, str(row["templates"]), f"{row['mean_oracle_actions']:.2f}",
                          f"{row['needs_mid_episode_value']:.0%}", f"{row['dependent_chain_2plus']:.0%}")
    console.print(table)
    console.print(f"{data['templates']} templates, {data['apps']} apps, {data['tools']} tools "
                  f"({data['tools_used_by_oracle']} used by some oracle); mean oracle actions "
                  f"{data['mean_oracle_actions']:.2f}; at least {data['distinct_test_instances_min']} distinct "
                  f"test instances per template (of {data['distinct_test_instances_sampled']} drawn)")
    chars = data["prompt_chars_per_step"]
    console.print("context per oracle step (characters, median / p90): "
                  + ", ".join(f"{k} {v['median']:.0f} / {v['p90']:.0f}" for k, v in chars.items()))
    depth = data["depth"]
    console.print(f"depth: {depth['genuine_chains']} genuine chains (mean {depth['genuine_chain_mean_oracle_actions']:.2f} "
                  f"oracle actions) and {depth['errands']} errands joining independent templates (mean "
                  f"{depth['errand_mean_oracle_actions']:.2f}); hard tier {depth['hard_tier_mean_oracle_actions']:.2f} "
                  f"actions, {depth['hard_tier_without_errands_mean_oracle_actions']:.2f} without the errands")
    named = data["catalogue_identification"]
    console.print(f"catalogues that name their template alone: {named['identified']} of {named['instances']} "
                  f"test instances ({named['share_identified']:.1%}); median {named['median_candidates']} "
                  "templates could have shown a catalogue")
    derived = Table("template", "values the agent derives", title="Templates that need derived values")
    for name, rules in sorted(data["derived_values"].items()):
        derived.add_row(name, ", ".join(rules))
    console.print(derived)


def register(app: typer.Typer) -> None:
    app.add_typer(suite_app, name="suite")
