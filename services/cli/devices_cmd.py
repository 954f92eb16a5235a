"""`flywheel devices ...`: list the phones runners can drive, and run one device runner."""

from __future__ import annotations

import json
import logging
import threading
import time

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from devices.adb.settings import load_adb_settings
from devices.protocol import DeviceError
from services.device_runner.decide import RunnerMemory
from services.device_runner.settings import DeviceRunnerSettings, load_device_runner_settings

__all__ = ["register"]

logger = logging.getLogger(__name__)

#: The live status line is redrawn this often; faster only burns the CPU the runner needs.
STATUS_REFRESH_S = 0.5

devices_app = typer.Typer(help="List devices and run device runners.", no_args_is_help=True)
console = Console()
err_console = Console(stderr=True)


def _fail(message: str) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {message}")
    return typer.Exit(code=1)


def _settings(**overrides: object) -> DeviceRunnerSettings:
    try:
        return load_device_runner_settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValueError as error:
        raise _fail(str(error)) from None


@devices_app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")
             ) -> None:
    """List the sim devices on offer and the phones an adb server has attached."""
    from services.device_runner.inventory import list_devices

    settings = _settings()
    try:
        adb = load_adb_settings()
    except ValueError as error:
        raise _fail(str(error)) from None
    inventory = list_devices(settings, adb)
    if as_json:
        typer.echo(json.dumps(inventory.to_dict(), indent=2))
        return
    table = Table("device id", "kind", "state", "detail", title="devices")
    for entry in inventory.devices:
        table.add_row(entry.device_id, entry.kind, entry.state, entry.detail)
    console.print(table)
    if inventory.note:
        console.print(f"[yellow]note:[/yellow] {inventory.note}")


def _status_line(settings: DeviceRunnerSettings, memory: RunnerMemory, started: float) -> Text:
    current = (memory.state.episode if memory.state else None) or "-"
    return Text.from_markup(
        f"[bold]{settings.device_id}[/bold] ({settings.kind}) in group {settings.group_for()} · "
        f"executed {memory.executed} · replayed {memory.replayed} · failed {memory.failed} · "
        f"episode {current} · {time.monotonic() - started:,.0f} s  [dim](Ctrl-C stops)[/dim]")


@devices_app.command("run")
def run_cmd(
    device_id: str = typer.Option(None, "--device-id", help="Device to serve (default sim-0)."),
    kind: str = typer.Option(None, "--kind", help="sim or adb (default sim)."),
    serial: str = typer.Option(None, "--serial", help="adb serial of the phone (implies --kind adb)."),
    phones: int = typer.Option(None, "--phones", help="Sim phones this runner serves at once "
                               "(ids DEVICE-ID-0 …; a rollout names them DEVICE-ID*N)."),
) -> None:
    """Run one device runner until Ctrl-C: execute its actions, publish observations."""
    from services.device_runner.devices import open_devices
    from services.device_runner.loop import run_device_runner
    from streams.admin import AdminError
    from streams.broker import BrokerError

    if serial is not None and kind is None:
        kind = "adb"  # a serial names an adb phone
    settings = _settings(device_id=device_id, kind=kind, adb_serial=serial, phones=phones)
    if settings.adb_serial is not None and settings.kind == "sim":
        raise _fail(f"--serial {settings.adb_serial!r} names an adb phone, but the runner's kind is "
                    f"sim; pass --kind adb or leave --serial out")
    try:
        devices = open_devices(settings)
    except (DeviceError, ValueError) as error:
        raise _fail(f"cannot open device {settings.device_id}: {error}") from None
    if settings.kind == "adb":  # asked before the runner waits on the broker
        problem = devices[0].device.adb.not_ready()
        if problem is not None:
            for device in devices:
                device.close()
            raise _fail(f"cannot open device {settings.device_id}: {problem}")
    memory = RunnerMemory()
    stop = threading.Event()
    failure: list[BaseException] = []

    finished = threading.Event()

    def work() -> None:
        try:
            run_device_runner(settings, devices, stop, memory=memory)
        except BaseException as error:  # noqa: BLE001 - reported on the main thread
            failure.append(error)
        finally:
            finished.set()

    started = time.monotonic()
    worker = threading.Thread(target=work, name=f"runner-{settings.device_id}", daemon=True)
    worker.start()
    try:
        with Live(_status_line(settings, memory, started), console=console,
                  refresh_per_second=1 / STATUS_REFRESH_S, transient=True) as live:
            # Waits on an Event, not Thread.join: a Ctrl-C landing inside join() can leave
            # CPython 3.11 believing the thread has ended while it still runs.
            while not finished.wait(STATUS_REFRESH_S):
                live.update(_status_line(settings, memory, started))
    except KeyboardInterrupt:
        console.print("stopping…")
    finally:
        stop.set()
        while not finished.wait(STATUS_REFRESH_S):  # the runner commits, closes, stops the broker
            pass
        for device in devices:
            device.close()
    _summary(settings, memory, time.monotonic() - started)
    if failure:
        error = failure[0]
        if isinstance(error, (BrokerError, AdminError, ValueError)):
            raise _fail(str(error))
        raise _fail(f"the runner stopped: {type(error).__name__}: {error}")


def _summary(settings: DeviceRunnerSettings, memory: RunnerMemory, elapsed_s: float) -> None:
    table = Table("device", "kind", "executed", "replayed", "failed", "seconds",
                  title="device runner summary")
    table.add_row(settings.device_id if settings.phones == 1 else
                  f"{settings.device_id} ({settings.phones} phones)", settings.kind, str(memory.executed), str(memory.replayed),
                  str(memory.failed), f"{elapsed_s:,.1f}")
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(devices_app, name="devices")
