"""`flywheel dlq show TOPIC`: the dead letters of a topic, with their errors and sources."""

from __future__ import annotations

import logging
import re
from typing import Annotated

import typer
from kafka.errors import KafkaError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schemas.topics import DLQ_SUFFIX, TOPICS, dlq_name
from services.cli.broker_cmd import bus_bootstrap, fail, settings_or_exit
from streams.admin import AdminError, list_topics
from streams.codec import header_value
from streams.dlq import DeadLetter, read_dead_letters, safe_preview

__all__ = ["register"]

logger = logging.getLogger(__name__)

console = Console()

dlq_app = typer.Typer(help="Inspect dead-letter topics.", no_args_is_help=True)

#: What Kafka accepts as a topic name; anything else cannot have dead letters.
LEGAL_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
#: Characters of each dead letter's value shown; enough to recognise it, short enough to scan.
PREVIEW_CHARS = 200


@dlq_app.command("show")
def show(
    topic: Annotated[str, typer.Argument(help="A topic (e.g. flywheel.episodes) or its .dlq.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Show at most N.")] = 20,
) -> None:
    """Show each dead letter, grouped by the consumer that refused it: error, source
    topic/partition/offset and a safe preview."""
    if not LEGAL_TOPIC.fullmatch(topic):
        raise fail(f"{topic!r} is not a Kafka topic name (letters, digits, '.', '_' and '-', at "
                   f"most 249); dead letters are kept for {', '.join(sorted(TOPICS))} (each with "
                   f"{DLQ_SUFFIX})")
    base = topic.removesuffix(DLQ_SUFFIX)
    registered = base in TOPICS
    if not registered and not settings_or_exit().bootstrap_or_none():  # no broker started for a typo
        raise fail(f"{topic} is not a topic of the loop; dead letters are kept for "
                   f"{', '.join(sorted(TOPICS))} (each with {DLQ_SUFFIX})")
    bootstrap = bus_bootstrap()
    if not registered and dlq_name(base) not in _existing(bootstrap):
        raise fail(f"the broker at {bootstrap} has no topic {dlq_name(base)}, and {base} is not a "
                   f"topic of the loop")
    try:
        letters = read_dead_letters(bootstrap, topic, limit)
    except KafkaError as error:
        raise fail(f"reading the dead letters of {topic} failed ({type(error).__name__}); check "
                   f"that the broker is up") from None
    if not letters:
        console.print(f"no dead letters for {topic}", highlight=False)
        return
    table = Table("consumer", "offset", "source", "error", "preview", title=f"dead letters of {topic}",
                  show_lines=True)
    by_consumer: dict[str, int] = {}
    for letter in sorted(letters, key=lambda one: (_consumer(one), one.offset)):
        consumer = _consumer(letter)
        by_consumer[consumer] = by_consumer.get(consumer, 0) + 1
        source = f"{letter.source_topic}[{letter.source_partition}]@{letter.source_offset}"
        table.add_row(escape(consumer), str(letter.offset), escape(source),
                      escape(f"{letter.error_type}: {letter.error}"),
                      escape(_preview(letter)))
    console.print(table)
    counts = ", ".join(f"{name} {n}" for name, n in sorted(by_consumer.items()))
    console.print(f"{len(letters)} dead letter(s) shown: {counts}", highlight=False)


def _existing(bootstrap: str) -> set[str]:
    try:
        return set(list_topics(bootstrap))
    except AdminError as error:
        raise fail(str(error)) from None


def _consumer(letter: DeadLetter) -> str:
    """The consumer (group) that refused the record, as its dead letter names it."""
    return header_value(letter.headers, "consumer") or "(unnamed)"


def _preview(letter: DeadLetter) -> str:
    """The redacted preview; for a record too large to dead-letter whole, where its bytes are."""
    if letter.value_sha256 is not None:
        size = header_value(letter.headers, "value_size") or "?"
        kept = header_value(letter.headers, "value_preview") or ""
        return f"[{size} bytes in the blob store as {letter.value_sha256}] {kept}"
    return safe_preview(letter.value, PREVIEW_CHARS)


def register(app: typer.Typer) -> None:
    app.add_typer(dlq_app, name="dlq")
