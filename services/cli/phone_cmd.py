"""`flywheel phone`: play a suite task by hand on a SimPhone, one typed action at a time.

Actions are AndroidWorld JSON (`{"action_type": "click", "index": 3}`) or short forms
(`click 3`, `type 2 hello`, `open contacts`, `tool contacts.search {"query": "Ann"}`,
`back`, `home`); `tools`, `state`, `help` and `quit` are commands of the player itself.
Input is read line by line from stdin, so a scripted session can be piped in.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from devices.protocol import DeviceError, TaskInstance
from schemas import actions as act
from schemas.observations import Observation, UIElement

__all__ = ["HELP", "Command", "CommandError", "parse_command", "register"]

logger = logging.getLogger(__name__)

#: Longest text shown per screen element or tool result; longer values are cut with "…".
MAX_CELL_CHARS = 60
MAX_RESULT_CHARS = 1500

HELP = """\
actions (AndroidWorld JSON also works, e.g. {"action_type": "click", "index": 3}):
  click N | click X Y      long N             type [N] TEXT        enter
  scroll up|down|left|right [N]               swipe up|down|left|right
  back     home            open APP           wait [SECONDS]
  tool NAME [JSON-ARGS]    skill NAME [JSON-ARGS]                  ask QUESTION
  remember KEY VALUE       recall KEY         search-memory QUERY
  answer TEXT              finish [ANSWER]    status complete|infeasible
player: tools [APP] · state · screen · context (what a model is shown) · help · quit"""

_DIRECTIONS = ("up", "down", "left", "right")


class CommandError(ValueError):
    """A typed line is not an action or a player command (one sentence saying how to fix it)."""


@dataclass(frozen=True)
class Command:
    """What a typed line means: an action for the phone, or a player command (`tools`, ...)."""

    action: Any = None
    player: str | None = None  # "tools", "state", "screen", "context", "help" or "quit"
    argument: str | None = None


def _json_object(text: str, what: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(f"{what} must be a JSON object ({error.msg} at column "
                           f"{error.colno}), e.g. {{\"query\": \"Ann\"}}") from None
    if not isinstance(value, dict):
        raise CommandError(f"{what} must be a JSON object like {{\"query\": \"Ann\"}}")
    return value


def _int(word: str, what: str) -> int:
    try:
        value = int(word)
    except ValueError:
        raise CommandError(f"{what} must be a whole number, not {word!r}") from None
    if value < 0:
        raise CommandError(f"{what} must not be negative")
    return value


def _value(text: str) -> Any:
    """A typed value: JSON if it parses (numbers, true, lists), else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_command(line: str) -> Command:
    """Parses one typed line; raises CommandError with a one-sentence hint when it is wrong."""
    text = line.strip()
    if not text:
        raise CommandError("type an action, or `help` to see them")
    if text.startswith("{"):
        try:
            return Command(action=act.parse_action(text))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "action"
            raise CommandError(f"that JSON is not a valid action: {where}: {first['msg']}"
                               ) from None
    verb, _, rest = text.partition(" ")
    verb, rest = verb.lower(), rest.strip()
    words = rest.split()
    if verb in ("quit", "exit", "q"):
        return Command(player="quit")
    if verb in ("help", "?", "tools", "state", "screen", "look", "context"):
        return Command(player={"?": "help", "look": "screen"}.get(verb, verb),
                       argument=rest or None)
    try:
        return Command(action=_action(verb, rest, words))
    except ValidationError as error:
        raise CommandError(f"`{verb}`: {error.errors()[0]['msg']}") from None


def _action(verb: str, rest: str, words: list[str]) -> Any:
    if verb in ("click", "tap", "long", "long_press"):
        model = act.Click if verb in ("click", "tap") else act.LongPress
        if len(words) == 1:
            return model(index=_int(words[0], "the element index"))
        if len(words) == 2:
            return model(x=_int(words[0], "x"), y=_int(words[1], "y"))
        raise CommandError(f"`{verb}` takes an element index (`{verb} 3`) or a point "
                           f"(`{verb} 540 1200`)")
    if verb in ("type", "input"):
        if not words:
            raise CommandError("`type` needs text, e.g. `type 2 hello` or `type hello`")
        if words[0].isdigit() and len(words) > 1:
            return act.InputText(index=int(words[0]), text=rest.split(None, 1)[1])
        return act.InputText(text=rest)
    if verb == "enter":
        return act.KeyboardEnter()
    if verb in ("scroll", "swipe"):
        if not words or words[0] not in _DIRECTIONS:
            raise CommandError(f"`{verb}` needs a direction: {', '.join(_DIRECTIONS)}")
        if verb == "swipe":
            return act.Swipe(direction=words[0])
        index = _int(words[1], "the element index") if len(words) > 1 else None
        return act.Scroll(direction=words[0], index=index)
    if verb == "back":
        return act.NavigateBack()
    if verb == "home":
        return act.NavigateHome()
    if verb in ("open", "launch"):
        if not rest:
            raise CommandError("`open` needs an app name, e.g. `open contacts`")
        return act.OpenApp(app_name=rest)
    if verb == "wait":
        return act.Wait(seconds=float(words[0])) if words else act.Wait()
    if verb in ("tool", "skill"):
        name, _, arguments = rest.partition(" ")
        if not name:
            raise CommandError(f"`{verb}` needs a name, e.g. `tool contacts.search "
                               f"{{\"query\": \"Ann\"}}`")
        args = _json_object(arguments, f"the {verb}'s arguments")
        return act.ToolCall(name=name, arguments=args) if verb == "tool" else act.UseSkill(
            skill=name, arguments=args)
    if verb == "remember":
        key, _, value = rest.partition(" ")
        if not key or not value:
            raise CommandError("`remember` needs a key and a value, e.g. `remember gate B12`")
        return act.MemoryWrite(key=key, value=_value(value))
    if verb == "recall":
        if not rest:
            raise CommandError("`recall` needs a key, e.g. `recall gate`")
        return act.MemoryRead(key=rest)
    if verb == "search-memory":
        if not rest:
            raise CommandError("`search-memory` needs a query, e.g. `search-memory dentist`")
        return act.MemoryRead(query=rest)
    if verb == "ask":
        return act.AskUser(question=rest)
    if verb == "answer":
        return act.Answer(text=rest)
    if verb == "finish":
        return act.Finish(answer=rest or None)
    if verb == "status":
        if rest not in ("complete", "infeasible"):
            raise CommandError("`status` takes `complete` or `infeasible`")
        return act.Status(goal_status=rest)
    raise CommandError(f"unknown command {verb!r}; type `help` to see the actions")


# ---- rendering ---------------------------------------------------------------------------

def _cut(text: str, limit: int = MAX_CELL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _flags(element: UIElement) -> str:
    names = (("is_clickable", "click"), ("is_editable", "edit"), ("is_scrollable", "scroll"),
             ("is_checkable", "check"))
    flags = [label for attr, label in names if getattr(element, attr)]
    if element.is_checkable:
        flags.append("on" if element.is_checked else "off")
    return " ".join(flags)


def screen_table(observation: Observation) -> Table:
    """The screen as a numbered element list (the index is what `click N` uses)."""
    title = (f"step {observation.step} · app {observation.foreground_app or 'home'}"
             + (" · done" if observation.done else ""))
    table = Table("#", "text", "description", "id", "flags", title=title, title_justify="left")
    for i, element in enumerate(observation.screen):
        resource = (element.resource_id or "").rsplit("/", 1)[-1]
        table.add_row(str(i), _cut(element.text or ""), _cut(element.content_description or ""),
                      resource, _flags(element))
    return table


def show(console: Console, observation: Observation) -> None:
    console.print(screen_table(observation))
    if observation.message:
        console.print(f"[bold]message:[/bold] {observation.message}")
    result = observation.result
    if result is not None:
        if result.ok:
            body = json.dumps(result.value, ensure_ascii=False)
            console.print(f"[green]{result.name} ok[/green]: {_cut(body, MAX_RESULT_CHARS)}",
                          markup=True, highlight=False)
        elif result.error is not None:
            console.print(f"[red]{result.name} failed[/red] ({result.error.code}"
                          f"{', retryable' if result.error.retryable else ''}): "
                          f"{result.error.message}", highlight=False)


def show_tools(console: Console, phone: Any, app: str | None) -> None:
    table = Table("tool", "parameters", "description", title="tools")
    for name, spec in sorted(phone.tools.items()):
        if app and spec.app != app:
            continue
        params = spec.parameters.get("properties", {})
        required = set(spec.parameters.get("required", ()))
        shown = ", ".join(p + ("" if p in required else "?") for p in params)
        table.add_row(name, shown, _cut(spec.description, 70))
    console.print(table)


def show_state(console: Console, phone: Any) -> None:
    state = phone.view()
    table = Table("part", "value", title="device state")
    for app, tables in _tables(phone).items():
        for name in tables:
            table.add_row(f"{app}.{name}", f"{len(state.rows(app, name))} rows")
    table.add_row("settings", json.dumps(state.settings))
    table.add_row("memory", _cut(json.dumps(state.memory, ensure_ascii=False), 200))
    table.add_row("answer", repr(state.answer))
    table.add_row("log", f"{len(state.log)} entries")
    console.print(table)


def _tables(phone: Any) -> dict[str, tuple[str, ...]]:
    from devices.sim.state import TABLES

    return {app: tuple(tables) for app, tables in TABLES.items() if tables}


# ---- the session -------------------------------------------------------------------------

def _pick_task(template: str | None, split: str, index: int, suite_seed: int) -> TaskInstance:
    from devices.suite.registry import UnknownTemplate, get_template, templates_for
    from devices.suite.template import SplitError

    try:
        chosen = get_template(template) if template else templates_for(split)[0]  # type: ignore[arg-type]
        return chosen.generate(split, index, suite_seed)  # type: ignore[arg-type]
    except UnknownTemplate as error:
        raise CommandError(str(error).strip("'\"")) from None
    except IndexError:
        raise CommandError(f"no template serves the {split} split; pick one with --template"
                           ) from None
    except (SplitError, ValueError) as error:
        raise CommandError(str(error)) from None


def _read_line(console: Console) -> str | None:
    console.print("[bold cyan]action>[/bold cyan] ", end="")
    try:
        return input()
    except EOFError:
        console.print()
        return None


def play(console: Console, task: TaskInstance) -> float:
    """Runs the interactive session on a fresh SimPhone inside the default harness; returns the
    checker's score."""
    from devices.harness.harness import Harness
    from devices.sim import SimPhone
    from devices.suite.episode import score_state

    phone = Harness(SimPhone("sim-phone"))
    try:
        observation = phone.reset(task)
        console.print(f"[bold]task[/bold] {task.task_id} ({task.family}, {task.split})")
        console.print(f"[bold]goal:[/bold] {task.goal}")
        console.print("type `help` for the actions, `quit` to stop and score")
        show(console, observation)
        steps = 0
        while not observation.done and steps < task.max_steps:
            line = _read_line(console)
            if line is None:
                break
            try:
                command = parse_command(line)
            except CommandError as error:
                console.print(f"[yellow]{error}[/yellow]")
                continue
            if command.player == "quit":
                break
            if command.player is not None:
                _player(console, phone, command, observation)
                continue
            try:
                observation = phone.act(command.action)
            except DeviceError as error:
                console.print(f"[red]the phone refused the action:[/red] {error}")
                continue
            steps += 1
            show(console, observation)
        else:
            reason = "the episode is done" if observation.done else "the step limit is reached"
            console.print(f"{reason} after {steps} steps")
        score = score_state(task, phone)
    finally:
        phone.close()
    summary = Table("task", "template", "steps", "score", title="result")
    summary.add_row(task.task_id, task.template, str(steps), f"{score:.2f}")
    console.print(summary)
    console.print(f"score: {score:.2f}")
    return score


def _player(console: Console, phone: Any, command: Command, observation: Observation) -> None:
    if command.player == "help":
        console.print(HELP, markup=False, highlight=False)
    elif command.player == "tools":
        show_tools(console, phone, command.argument)
    elif command.player == "state":
        show_state(console, phone)
    elif command.player == "screen":
        show(console, observation)
    elif command.player == "context":
        show_context(console, phone)


def show_context(console: Console, phone: Any) -> None:
    """What a language-model policy is shown before its next step: the one context
    (devices.harness.context), the header then each past step, as the chat's messages."""
    for message in phone.context_messages():
        if message["role"] == "assistant":
            call = message["tool_calls"][0]["function"]
            body = json.dumps(call, ensure_ascii=False)
        else:
            body = message["content"]
        console.print(f"[bold]{message['role']}[/bold]\n{body}", markup=True, highlight=False)


def phone(
    template: str = typer.Option(None, "--template", help="Task template (default: the first "
                                 "template of the split; see `flywheel suite list`)."),
    split: str = typer.Option("dev", "--split", help="train, dev or test."),
    index: int = typer.Option(0, "--index", min=0, help="Instance number within the split."),
) -> None:
    """Play a task by hand: see the goal and the screen, type actions, get the checker's score."""
    from devices.suite.settings import load_settings
    from schemas.settings import SettingsError

    console = Console(highlight=False)
    if split not in ("train", "dev", "test"):
        Console(stderr=True).print(f"[red]error:[/red] --split must be train, dev or test, "
                                   f"not {split!r}")
        raise typer.Exit(code=1)
    try:
        task = _pick_task(template, split, index, load_settings().suite_seed)
    except (CommandError, SettingsError) as error:
        Console(stderr=True).print(f"[red]error:[/red] {error}")
        raise typer.Exit(code=1) from None
    play(console, task)


def register(app: typer.Typer) -> None:
    app.command("phone")(phone)
