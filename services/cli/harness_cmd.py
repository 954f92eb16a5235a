"""`flywheel harness ...`: list, show, diff and roll back harness versions; run evolution rounds."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from devices.harness.spec import HarnessSpec, SpecError
from devices.suite.policies import PolicyLoadError, make_policy
from schemas.envelope import utc_now
from schemas.harness import HarnessPromoted
from schemas.settings import SettingsError
from schemas.topics import topic
from services.cli.archive_cmd import fail
from services.dataflow.evolution.delta import diff_specs
from services.dataflow.ids import derived_id
from services.dataflow.registry import HarnessRegistry, RegistryError
from streams.producer import TypedProducer
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
             data_dir: DataDirOption = None,
             publish: Annotated[bool, typer.Option(
                 "--publish", help="Also publish harness.promoted (reason rollback) to "
                                   "KAFKA_BOOTSTRAP_SERVERS, so running services switch now.")
             ] = False) -> None:
    """Make an earlier version current again (what rollouts load: registry.current_spec())."""
    registry = _registry(data_dir)
    try:
        entry = registry.rollback(version)
    except RegistryError as error:
        fail(str(error))
    console.print(f"harness {entry.version} is current again (was {entry.previous})")
    if publish:
        _publish_rollback(entry.version, entry.previous or "")


def _publish_rollback(version: str, previous: str) -> None:
    """harness.promoted with reason 'rollback' on the harness topic of a running bus."""
    try:
        bus = load_bus_settings()
    except SettingsError as error:
        fail(str(error))
    bootstrap = bus.bootstrap_or_none()
    if bootstrap is None:
        fail("--publish needs a running bus: set KAFKA_BOOTSTRAP_SERVERS (the registry was "
             "rolled back; services pick it up when they restart)")
    event = HarnessPromoted(
        event_id=derived_id("harness.rollback", version, previous, utc_now().isoformat()),
        source="cli/1", correlation_id=f"rollback-{version}", proposal_id=f"rollback-{version}",
        harness=version, previous=previous, reason="rollback")
    try:
        with TypedProducer(bootstrap, client_id="harness-rollback") as producer:
            producer.send(topic("flywheel.harness"), event).get(timeout=30)
    except Exception as error:  # noqa: BLE001 - one sentence for people, not a traceback
        fail(f"could not publish the rollback to {bootstrap}: {error}")
    console.print(f"published harness.promoted (rollback) {event.event_id}")


@dataclass(frozen=True)
class _ScriptedModel:
    """A scripted policy as the model side of the rounds: nothing to train."""

    name: str
    seed: int = 0

    def policy(self) -> Any:
        return make_policy(self.name, self.seed)


@harness_app.command("rounds")
def rounds(
    generations: Annotated[int, typer.Option(min=1, help="Co-evolution rounds.")] = 3,
    policy: Annotated[str, typer.Option(help="oracle, random, noop or MODULE:CLASS.")] = "oracle",
    n_per_template: Annotated[int, typer.Option("--n", min=1,
                                                help="Seeded instances per template.")] = 2,
    base_spec: Annotated[Path | None, typer.Option(help="Spec JSON to start from when the "
                                                        "registry is empty.")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Rounds of harness evolution with a scripted policy (the model side is trained by
    `flywheel run --generations N`): failures on train → gated proposals → per-round dev/test
    table, written under <data dir>/rounds/<run id>/ for DuckDB."""
    from services.evolver.rounds import RoundsConfig, run_rounds
    from services.evolver.suite_runner import suite_collector, suite_runner

    registry = _registry(data_dir)
    try:
        spec = (registry.get("current") if registry.current() else
                (HarnessSpec.load(base_spec) if base_spec else HarnessSpec.default()
                 ).to_json_dict())
        model = _ScriptedModel(policy)
        model.policy()
    except (RegistryError, SpecError, PolicyLoadError) as error:
        fail(str(error))
    config = RoundsConfig(generations=generations)

    def score(m: _ScriptedModel, s: Any, split: Any) -> Any:
        return suite_runner(m.policy, n_per_template=n_per_template)(s, split)

    with console.status("evolving the harness") as status:
        report = run_rounds(
            model, spec, train=lambda m, g: m,
            collect=suite_collector(n_per_template=n_per_template), score=score,
            config=config, registry=registry,
            on_round=lambda g, r: status.update(f"round {g}/{generations} done"))
    folder = registry.root.parent / "rounds" / config.run_id
    paths = report.write(folder)
    console.print(report.table())
    for d in report.decisions:
        console.print(f"{d.proposal_id} gen {d.generation}: {d.outcome} — {d.detail} "
                      f"(from {len(d.motivated_by)} failures)", highlight=False, soft_wrap=True)
    console.print(f"written: {', '.join(str(p) for p in paths.values())}")
    console.print(f"query with DuckDB: SELECT * FROM '{paths['rounds']}'", highlight=False,
                  soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(harness_app, name="harness")
