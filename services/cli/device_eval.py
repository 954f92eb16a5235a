"""`flywheel suite eval --device adb`: the real-device subset on a phone behind the adb server,
run inside the harness (the default spec, or `--harness FILE`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from devices.adb.settings import load_adb_settings
from devices.adb.suite import DEVICE_TEMPLATES, DeviceEpisode, device_policy, evaluate_on_device
from devices.harness.spec import HarnessSpec, SpecError
from devices.protocol import MAX_FAULT_SHARE, DeviceError
from schemas.settings import SettingsError

__all__ = ["eval_on_adb"]

logger = logging.getLogger(__name__)

console = Console()
err_console = Console(stderr=True)


def eval_on_adb(policy: str, n_per_template: int, suite_seed: int, as_json: bool,
                harness: Path | None = None) -> None:
    """Opens the configured phone (FLYWHEEL_ADB_*), runs the subset inside the harness `harness`
    names (a spec JSON file; default spec when None), prints the report."""
    from devices.adb.phone import AdbPhone

    try:
        settings = load_adb_settings()
    except SettingsError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    try:
        spec = HarnessSpec.load(harness) if harness is not None else None
        agent = device_policy(policy)
    except (ValueError, SpecError) as exc:  # PolicyLoadError is a ValueError
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    try:
        phone = AdbPhone(settings.serial, settings=settings)
        state = phone.adb.state()  # a server that does not answer says so itself
        if state is None:
            raise DeviceError(f"device {phone.device_id} is not attached to the adb server at "
                              f"{settings.host}:{settings.port}; check `flywheel devices list`")
        if state != "device":
            raise DeviceError(f"device {phone.device_id} is {state} on the adb server at "
                              f"{settings.host}:{settings.port}; unlock it and accept its USB "
                              f"debugging prompt, or reconnect it")
    except DeviceError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    total = len(DEVICE_TEMPLATES) * n_per_template
    done: list[DeviceEpisode] = []

    def progress(episode: DeviceEpisode) -> None:
        done.append(episode)
        if not as_json:
            mark = "fault" if episode.fault else f"{episode.score:.0f}"
            console.print(f"[{len(done)}/{total}] {episode.template}: {mark}")

    try:
        report = evaluate_on_device(phone, agent, n_per_template, suite_seed, progress=progress,
                                    spec=spec)
    finally:
        phone.close()
    if as_json:
        typer.echo(json.dumps(report.to_json_dict(), indent=2))
    else:
        table = Table("template", "score", title=f"{report.policy} on {report.device_id} "
                                                 f"(real-device subset)")
        for template in DEVICE_TEMPLATES:
            score = report.template_scores.get(template.name)
            table.add_row(template.name, "-" if score is None else f"{score:.2f}")
        console.print(table)
        excluding = ("" if report.overall_excluding_faults is None else
                     f"; {report.overall_excluding_faults:.3f} excluding faults")
        console.print(f"overall {report.overall:.3f} over {len(report.episodes)} episodes (a fault scores 0), "
                      f"{report.faults} environment faults ({report.fault_share:.0%}){excluding}; harness "
                      f"{report.harness_version}", highlight=False)
    if report.too_many_faults:
        err_console.print(f"[red]error:[/red] {report.faults} of {len(report.episodes)} episodes "
                          f"({report.fault_share:.0%}) were environment faults, more than "
                          f"{MAX_FAULT_SHARE:.0%}: the score says little of the policy; fix the phone "
                          f"(see the fault reasons) and run again", highlight=False)
        raise typer.Exit(1)
