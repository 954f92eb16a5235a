"""`flywheel gate`: serve the review gate; `gate keygen` and `gate token NAME` set it up."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from schemas.topics import TOPICS
from services.archiver.service import StopFlag
from services.cli.archive_cmd import fail
from services.dataflow.signing import GateKeyError, create_key, key_id_of
from services.gate.launch import GateHandle, GateStartError, load_or_create_key, start_gate
from services.gate.settings import GateSettings, load_gate_settings
from services.gate.tokens import ReviewerTokens, TokenError
from streams.admin import AdminError, create_topics
from streams.broker import BrokerError, ensure_broker
from streams.settings import BusSettings, load_bus_settings

__all__ = ["gate_app", "register", "start_with_run"]

logger = logging.getLogger(__name__)

gate_app = typer.Typer(help="The human review gate: serve it, create its key, issue tokens.")
console = Console()

#: The status line of a serving gate is redrawn this often.
STATUS_EVERY_S = 5.0


def _settings(**overrides: object) -> tuple[BusSettings, GateSettings]:
    try:
        return load_bus_settings(), load_gate_settings(
            **{k: v for k, v in overrides.items() if v is not None})
    except ValueError as error:
        fail(str(error))


@gate_app.callback(invoke_without_command=True)
def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="Listen address (FLYWHEEL_GATE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port (FLYWHEEL_GATE_PORT).")] = None,
    duration: Annotated[float | None, typer.Option(
        "--duration", min=0, help="Stop after this many seconds (tests).")] = None,
) -> None:
    """Serve the review gate until Ctrl-C: the queue from the topics, signed decisions. Refuses
    to start without a signing key ('flywheel gate keygen' creates one)."""
    if ctx.invoked_subcommand is not None:
        return
    bus, settings = _settings(host=host, port=port)
    try:  # fail closed before touching the broker
        load_or_create_key(settings.resolved_key_path(bus.data_dir), create=False)
    except GateStartError as error:
        fail(str(error))
    try:
        bootstrap, broker = ensure_broker(bus)
    except BrokerError as error:
        fail(str(error))
    stop = StopFlag(duration)
    try:
        create_topics(bootstrap, TOPICS.values(), with_dlq=True)
        handle = start_gate(bootstrap, bus.data_dir, settings)
    except (GateStartError, TokenError, AdminError) as error:
        if broker is not None:
            broker.stop()
        fail(str(error))
    console.print(handle.banner())
    if not handle.gate.tokens.reviewers:
        console.print("no reviewer has a token yet: 'flywheel gate token NAME' issues one")
    stop.install()
    try:
        last = 0.0
        while not stop():
            time.sleep(0.2)
            if time.monotonic() - last >= STATUS_EVERY_S:
                last = time.monotonic()
                counts = handle.gate.queue.counts()
                logger.info("gate: %(waiting)d waiting, %(approved)d approved, "
                            "%(rejected)d rejected", counts)
            if handle.feed.error is not None:
                stop.set(f"the feed stopped: {handle.feed.error}")
    finally:
        stop.restore()
        handle.stop()
        if broker is not None:
            broker.stop()
    counts = handle.gate.queue.counts()
    console.print(f"gate stopped ({stop.reason}): {counts['approved']} approved, "
                  f"{counts['rejected']} rejected, {counts['waiting']} waiting")


@gate_app.command("keygen")
def keygen(key_path: Annotated[Path | None, typer.Option(
        "--key-path", help="Where to write the key (default <data dir>/gate/signing_key.pem).")
        ] = None) -> None:
    """Create the gate's Ed25519 signing key (mode 0600) and its public half (.pub), which the
    curator loads to verify decisions. Never overwrites a key."""
    bus, settings = _settings(key_path=key_path)
    path = settings.resolved_key_path(bus.data_dir)
    if path.exists():
        fail(f"a key already exists at {path}; move it away first to replace it")
    try:
        key = create_key(path)
    except (OSError, GateKeyError) as error:
        fail(f"cannot write the key to {path}: {error}")
    console.print(f"created {path} (key id {key_id_of(key.public_key())}); the curator "
                  f"verifies with {path.with_suffix('.pub')}")


@gate_app.command("token")
def token(name: Annotated[str, typer.Argument(help="The reviewer's name.")],
          revoke: Annotated[bool, typer.Option("--revoke", help="Remove NAME's token.")] = False
          ) -> None:
    """Issue (or --revoke) a reviewer's sign-in token; it is printed once and stored hashed."""
    bus, settings = _settings()
    try:
        tokens = ReviewerTokens(settings.resolved_reviewers_path(bus.data_dir))
        if revoke:
            found = tokens.revoke(name)
            console.print(f"revoked {name}'s token" if found else f"{name} had no token")
            return
        issued = tokens.issue(name)
    except (TokenError, OSError) as error:
        fail(str(error))
    typer.echo(issued)
    Console(stderr=True).print(f"token for {name}: shown once, stored as a sha256 hash")


def start_with_run(bootstrap: str, data_dir: Path, out: Console | None = None, *,
                   rotate_token: bool = False) -> GateHandle:
    """For `flywheel run`: starts the gate beside the loop (the key is created on the first
    run under the data directory, mode 0600), prints its address and the 'local' reviewer's
    token (kept from the last run unless `rotate_token`). A bad setting or a taken port ends the run with one sentence.

    In run_cmd::

        gate = start_with_run(bootstrap, bus.data_dir, console)
        try: ...the loop...
        finally: gate.stop()
        for row in gate.summary_rows(auto_admitted=...): table.add_row(*row)
    """
    out = out or console
    try:
        handle = start_gate(bootstrap, data_dir, load_gate_settings(), create_key=True,
                            local_reviewer="local", rotate_token=rotate_token)
    except (GateStartError, TokenError, ValueError, OSError) as error:
        fail(str(error))
    out.print(handle.banner(), highlight=False, soft_wrap=True)
    return handle


def register(app: typer.Typer) -> None:
    app.add_typer(gate_app, name="gate")
