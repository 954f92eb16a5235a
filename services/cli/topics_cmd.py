"""`flywheel topics create|list`: explicit creation of every registered topic and its DLQ."""

from __future__ import annotations

import logging

import typer
from rich.console import Console
from rich.table import Table

from schemas.topics import TOPICS, dlq_name
from services.cli.broker_cmd import bus_bootstrap, fail
from streams.admin import AdminError, create_topics, list_topics

__all__ = ["register"]

logger = logging.getLogger(__name__)

console = Console()

topics_app = typer.Typer(help="Create and list the loop's Kafka topics.", no_args_is_help=True)


@topics_app.command("create")
def create() -> None:
    """Create every registered topic and its dead-letter topic (existing ones are kept)."""
    bootstrap = bus_bootstrap()
    try:
        before = set(list_topics(bootstrap))
        names = create_topics(bootstrap, TOPICS.values(), with_dlq=True)
    except AdminError as error:
        raise fail(str(error)) from None
    table = Table("topic", "partitions", "cleanup", "state", title=f"topics on {bootstrap}")
    for t in TOPICS.values():
        for name, partitions, policy in ((t.name, t.partitions, t.cleanup_policy),
                                         (dlq_name(t.name), 1, "delete")):
            table.add_row(name, str(partitions), policy,
                          "existed" if name in before else "created")
    console.print(table)
    created = len([n for n in names if n not in before])
    console.print(f"{created} created, {len(names) - created} already there", highlight=False)


@topics_app.command("list")
def list_() -> None:
    """List the topics on the broker, marking the registered ones."""
    bootstrap = bus_bootstrap()
    try:
        names = list_topics(bootstrap)
    except AdminError as error:
        raise fail(str(error)) from None
    registered = set(TOPICS) | {dlq_name(n) for n in TOPICS}
    table = Table("topic", "registered", title=f"topics on {bootstrap}")
    for name in names:
        table.add_row(name, "yes" if name in registered else "-")
    console.print(table)
    missing = sorted(registered - set(names))
    if missing:
        console.print(f"{len(missing)} registered topics are missing; run `flywheel topics "
                      f"create`", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(topics_app, name="topics")
