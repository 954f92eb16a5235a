"""The `flywheel` command: one Typer app; each command group lives in its own module."""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable
from typing import Any

import typer

__all__ = ["app", "main"]

logger = logging.getLogger(__name__)

app = typer.Typer(
    name="flywheel",
    help="Flywheel: the event-sourced data and training loop for mobile planning agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

# Each module defines `register(app: typer.Typer) -> None` that adds its commands.
COMMAND_MODULES = (
    "services.cli.broker_cmd",
    "services.cli.topics_cmd",
    "services.cli.dlq_cmd",
    "services.cli.schemas_cmd",
    "services.cli.archive_cmd",
    "services.cli.sql_cmd",
    "services.cli.run_cmd",
    "services.cli.devices_cmd",
    "services.cli.phone_cmd",
    "services.cli.suite_cmd",
    "services.cli.gate_cmd",
    "services.cli.review_cmd",
    "services.cli.harness_cmd",
    "services.cli.train_cmd",
    "services.cli.audit_cmd",
    "services.cli.rescore_cmd",
    "services.cli.report_cmd",
    "services.cli.snapshot_cmd",
)

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def _one_sentence_for_os_errors(callback: Callable[..., Any]) -> Callable[..., Any]:
    """`callback` with a file-system failure (a folder that cannot be made, a file that cannot be
    read) turned into one sentence naming the path and exit status 1, for verbs that do not word it
    themselves."""

    @functools.wraps(callback)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except OSError as error:
            where = f" {error.filename}" if error.filename else ""
            typer.echo(f"error: cannot use{where}: {error.strerror or error}; pass a path you can "
                       f"read and write", err=True)
            raise typer.Exit(1) from None

    return guarded


def _guard(typer_app: typer.Typer) -> None:
    for command in typer_app.registered_commands:
        if command.callback is not None:
            command.callback = _one_sentence_for_os_errors(command.callback)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _guard(group.typer_instance)


_guard(app)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from streams.redact import install_log_redaction

    install_log_redaction()  # no secret (bootstrap credentials, tokens) in any log line
    app()


if __name__ == "__main__":
    main()
