"""`flywheel broker start|stop|status`: the local Kafka-protocol broker, run in the background."""

from __future__ import annotations

import logging

import typer
from rich.console import Console
from rich.table import Table

from streams.broker import BrokerError, LocalBroker, broker_status, ensure_broker
from streams.settings import BusSettings, load_bus_settings

__all__ = ["bus_bootstrap", "fail", "register", "settings_or_exit"]

logger = logging.getLogger(__name__)

console = Console()
err_console = Console(stderr=True)

broker_app = typer.Typer(help="Run the local Kafka-protocol broker (Tansu) in the background.",
                         no_args_is_help=True)


def fail(message: str) -> typer.Exit:
    """Prints one sentence to stderr and returns the Exit to raise."""
    err_console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(1)


def settings_or_exit() -> BusSettings:
    try:
        return load_bus_settings()
    except ValueError as error:
        raise fail(str(error)) from None


def bus_bootstrap() -> str:
    """KAFKA_BOOTSTRAP_SERVERS when set, else the local broker (started in the background and
    left running for the next command if it was not running yet)."""
    settings = settings_or_exit()
    try:
        bootstrap, started = ensure_broker(settings)
    except BrokerError as error:
        raise fail(str(error)) from None
    if started is not None:
        err_console.print(f"started the local broker on {bootstrap} (pid {started.pid}); stop "
                          f"it with `flywheel broker stop`", highlight=False)
    return bootstrap


@broker_app.command("start")
def start() -> None:
    """Start the local broker in the background and record it in DATA_DIR/broker.json."""
    settings = settings_or_exit()
    if settings.bootstrap_or_none():
        console.print(f"KAFKA_BOOTSTRAP_SERVERS is set ({settings.bootstrap_servers}); no local "
                      f"broker is needed", highlight=False)
        return
    running = LocalBroker.recorded(settings.data_dir)
    if running is not None:
        console.print(f"the local broker already runs on {running.bootstrap} (pid {running.pid})",
                      highlight=False)
        return
    try:
        broker = LocalBroker.from_settings(settings).start()
    except BrokerError as error:
        raise fail(str(error)) from None
    console.print(f"started the local broker on {broker.bootstrap} (pid {broker.pid}, log "
                  f"{broker.log_path})", highlight=False)


@broker_app.command("stop")
def stop() -> None:
    """Stop the local broker recorded in DATA_DIR/broker.json (its in-memory data is lost)."""
    settings = settings_or_exit()
    running = LocalBroker.recorded(settings.data_dir)
    if running is None:
        console.print("no local broker is running")
        return
    running.stop()
    console.print(f"stopped the local broker (pid {running.pid})", highlight=False)


@broker_app.command("status")
def status() -> None:
    """Show whether the broker runs, with its pid, port and bootstrap servers."""
    settings = settings_or_exit()
    state = broker_status(settings)
    table = Table("field", "value", title="broker")
    table.add_row("running", "yes" if state.running else "no")
    table.add_row("kind", "external (KAFKA_BOOTSTRAP_SERVERS)" if state.external else "local")
    table.add_row("bootstrap", state.bootstrap or "-")
    table.add_row("pid", str(state.pid) if state.pid else "-")
    table.add_row("port", str(state.port) if state.port else "-")
    if state.log_path:
        table.add_row("log", str(state.log_path))
    if state.started_at:
        table.add_row("started", state.started_at)
    console.print(table)
    if not state.running:
        raise typer.Exit(3)  # scripts can test `flywheel broker status` like a service check


def register(app: typer.Typer) -> None:
    app.add_typer(broker_app, name="broker")
