"""`flywheel review`: review the gate's queue in a terminal, one key per decision.

Talks to a running gate over its JSON API with a reviewer token, so decisions are signed by
the gate exactly as in the browser: `a` approves, `r` asks for a reason and rejects, `n`
skips, `q` quits.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import click
import httpx
import typer
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from services.cli.archive_cmd import fail
from services.gate.settings import load_gate_settings

__all__ = ["ReviewTally", "read_key", "register", "render_item", "review_loop"]

logger = logging.getLogger(__name__)

console = Console()

#: Characters of an action or result shown per step; the browser shows everything.
CELL_CHARS = 160
#: A gate on loopback answers in milliseconds; 30 s covers a slow remote one.
HTTP_TIMEOUT_S = 30.0


@dataclass
class ReviewTally:
    approved: int = 0
    rejected: int = 0
    skipped: int = 0
    refused: int = 0


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS - 1] + "…"


def render_item(item: dict[str, Any]) -> Group:
    """The item as rich renderables: goal and facts, steps, verdict, failures, state diff."""
    request = item["request"]
    facts = Text()
    facts.append(item.get("goal") or request["summary"], style="bold")
    facts.append(f"\n{item['review_id']} · family {item.get('family') or '–'} · tier "
                 f"{item.get('tier') if item.get('tier') is not None else '–'} · verdict "
                 f"{item['verdict']} · why: {', '.join(request.get('reasons') or []) or '–'}")
    if request.get("submitted_by"):
        facts.append(f" · written by {request['submitted_by']}")
    parts: list[Any] = [Panel(facts, title="review")]
    for episode in item["episodes"]:
        steps = Table("#", "action", "result", title=f"episode {episode['episode_id']}",
                      expand=True)
        for step in episode["steps"]:
            result = (step.get("observation") or {}).get("result") or {}
            outcome = (result.get("value") if result.get("ok")
                       else (result.get("error") or {}).get("message", ""))
            steps.add_row(str(step["index"]), _cut(step["action"]), _cut(outcome))
        parts.append(steps)
        verdict = episode.get("verdict")
        if verdict:
            parts.append(Text(f"checker {verdict['checker']}: score {verdict['score']:.2f}"))
        for failure in episode.get("failures", []):
            parts.append(Text(f"failure {failure['category']} at step {failure['step_index']}: "
                              f"{failure['summary']}", style="red"))
        if episode.get("state_diff") is not None:
            diff = Table("where", "before", "after", title="state diff")
            for row in episode["state_diff"]:
                diff.add_row(row["path"], _cut(row["before"]), _cut(row["after"]))
            parts.append(diff)
    return Group(*parts)


def read_key() -> str:
    """One key press from a terminal; from a pipe or file, the next non-blank character
    (end of input quits), so keys can be scripted."""
    if sys.stdin.isatty():
        return click.getchar()
    while True:
        char = sys.stdin.read(1)
        if char == "":
            return "q"
        if not char.isspace():
            return char


def review_loop(client: httpx.Client, out: Console, read_key: Callable[[], str],
                read_line: Callable[[str], str], filters: dict[str, Any] | None = None,
                limit: int | None = None) -> ReviewTally:
    """Shows waiting items one by one and sends one decision per key until the queue is
    empty, `q` is pressed or `limit` items were handled."""
    tally = ReviewTally()
    skipped: set[str] = set()
    params = {k: v for k, v in (filters or {}).items() if v is not None}
    handled = 0
    while limit is None or handled < limit:
        queue = client.get("/api/queue", params=params)
        queue.raise_for_status()
        waiting = [i for i in queue.json()["items"] if i["review_id"] not in skipped]
        if not waiting:
            out.print("nothing left to review")
            break
        review_id = waiting[0]["review_id"]
        item = client.get(f"/api/items/{review_id}")
        item.raise_for_status()
        out.print(render_item(item.json()))
        out.print(f"[bold]a[/] approve · [bold]r[/] reject · [bold]n[/] next · [bold]q[/] quit "
                  f"({len(waiting)} waiting)")
        key = read_key().lower()
        if key == "q":
            break
        handled += 1
        if key not in ("a", "r"):
            skipped.add(review_id)
            tally.skipped += 1
            continue
        body = {"decision": "approved", "reason": ""}
        if key == "r":
            reason = read_line("reason: ").strip()
            if not reason:
                out.print("[yellow]a rejection needs a reason; skipped[/]")
                skipped.add(review_id)
                tally.skipped += 1
                continue
            body = {"decision": "rejected", "reason": reason}
        answer = client.post(f"/api/items/{review_id}/decision", json=body)
        if answer.status_code == 201:
            if key == "a":
                tally.approved += 1
            else:
                tally.rejected += 1
            out.print(f"[green]{body['decision']}[/] {review_id} "
                      f"(decision {answer.json()['decision_id'][:12]}, signed by the gate)")
        else:
            tally.refused += 1
            skipped.add(review_id)
            detail = answer.json().get("error") or answer.json().get("detail")
            out.print(f"[red]not taken:[/] {detail}")
    return tally


def review(
    token: Annotated[str, typer.Option(
        envvar="FLYWHEEL_REVIEW_TOKEN", prompt=True, hide_input=True,
        help="Your reviewer token (FLYWHEEL_REVIEW_TOKEN).")],
    url: Annotated[str | None, typer.Option(
        envvar="FLYWHEEL_GATE_URL", help="The gate's address (default from FLYWHEEL_GATE_HOST "
                                         "and _PORT).")] = None,
    family: Annotated[str | None, typer.Option(help="Only this task family.")] = None,
    tier: Annotated[str | None, typer.Option(help="Only this difficulty tier (easy, medium, "
                                                   "hard).")] = None,
    verdict: Annotated[str | None, typer.Option(help="passed, partial, failed or pending.")
                       ] = None,
    category: Annotated[str | None, typer.Option(help="Only this failure category.")] = None,
) -> None:
    """Review the gate's queue in the terminal: a approve, r reject (with a reason), n next,
    q quit. Decisions are signed by the gate, as in the browser."""
    if url is None:
        try:
            settings = load_gate_settings()
        except ValueError as error:
            fail(str(error))
        url = f"http://{settings.host}:{settings.port}"
    headers = {"Authorization": f"Bearer {token.strip()}"}
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=HTTP_TIMEOUT_S) as client:
            tally = review_loop(client, console, read_key,
                                lambda prompt: console.input(prompt),
                                {"family": family, "tier": tier, "verdict": verdict,
                                 "category": category})
    except httpx.HTTPStatusError as error:
        if error.response.status_code == 401:
            fail("the gate does not know that reviewer token; ask for one "
                 "('flywheel gate token NAME')")
        fail(f"the gate answered {error.response.status_code}: {error.response.text[:200]}")
    except httpx.HTTPError as error:
        fail(f"cannot reach the gate at {url} ({error}); is 'flywheel gate' or 'flywheel run' "
             "running?")
    table = Table("approved", "rejected", "skipped", "not taken", title="flywheel review")
    table.add_row(str(tally.approved), str(tally.rejected), str(tally.skipped),
                  str(tally.refused))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("review")(review)
