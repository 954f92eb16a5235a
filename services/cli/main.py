"""The `flywheel` command: one Typer app; each command group lives in its own module."""

from __future__ import annotations

import importlib
import logging

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
)

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from streams.redact import install_log_redaction

    install_log_redaction()  # no secret (bootstrap credentials, tokens) in any log line
    app()


if __name__ == "__main__":
    main()
