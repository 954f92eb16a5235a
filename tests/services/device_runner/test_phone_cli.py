"""`flywheel phone`: the typed-action parser, and a scripted session piped through stdin."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from devices.suite.registry import get_template
from schemas.actions import Click, InputText, OpenApp, ToolCall
from services.cli.main import app
from services.cli.phone_cmd import CommandError, parse_command

runner = CliRunner()

TEMPLATE = "mem_email_relation"  # the needed person is only in memory


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(("line", "action"), [
    ("click 3", Click(index=3)),
    ("click 540 1200", Click(x=540, y=1200)),
    ("type 2 hello world", InputText(index=2, text="hello world")),
    ("type hello", InputText(text="hello")),
    ("open contacts", OpenApp(app_name="contacts")),
    ('tool contacts.search {"query": "Ann"}', ToolCall(name="contacts.search",
                                                       arguments={"query": "Ann"})),
    ('{"action_type": "click", "index": 3}', Click(index=3)),
])
def test_short_forms_and_json_parse_to_actions(line: str, action: object) -> None:
    assert parse_command(line).action == action


@pytest.mark.parametrize(("line", "hint"), [
    ("click", "element index"),
    ("tool contacts.search {query}", "JSON object"),
    ('{"action_type": "click"}', "index"),
    ("fly away", "unknown command"),
    ("scroll sideways", "direction"),
])
def test_bad_lines_get_a_hint(line: str, hint: str) -> None:
    with pytest.raises(CommandError, match=hint):
        parse_command(line)


def test_player_commands_are_not_actions() -> None:
    command = parse_command("tools contacts")
    assert command.action is None and (command.player, command.argument) == ("tools", "contacts")


def _task() -> object:
    return get_template(TEMPLATE).generate("dev", 0, 0)


def test_a_scripted_session_shows_the_screen_and_scores_the_answer() -> None:
    task = _task()
    params = task.params
    email = next(c["email"] for c in task.initial_state["contacts"]["contacts"]
                 if c["name"] == params["person"])
    send = {"to": [email], "subject": params["subject"], "body": params["phrase"]}
    session = "\n".join([
        "help", "open contacts", "fly away",
        f'{{"action_type": "memory_read", "query": "{params["relation"]}"}}',
        f'tool contacts.search {{"query": "{params["person"]}"}}',
        "tools contacts", f"tool email.send {json.dumps(send)}", "finish",
    ]) + "\n"
    result = runner.invoke(app, ["phone", "--template", TEMPLATE, "--split", "dev"], input=session)
    out = _flat(result.output)
    assert result.exit_code == 0, result.output
    assert f"goal: Email my {params['relation']} with the subject" in out
    assert "app contacts" in out and "Alice Chen" in out  # the numbered screen of the app
    assert "unknown command 'fly'" in out
    assert "memory_read ok" in out and params["person"] in out
    assert "contacts.search ok" in out and email in out
    assert "contacts.add" in out  # the tool list
    assert "the episode is done" in out
    assert out.rstrip().endswith("score: 1.00")


def test_quitting_early_scores_zero() -> None:
    result = runner.invoke(app, ["phone", "--template", TEMPLATE], input="quit\n")
    assert result.exit_code == 0, result.output
    assert _flat(result.output).rstrip().endswith("score: 0.00")


def test_end_of_input_ends_the_session_with_a_score() -> None:
    result = runner.invoke(app, ["phone", "--template", TEMPLATE], input="home\n")
    assert result.exit_code == 0, result.output
    assert "score: 0.00" in result.output


def test_an_unknown_template_is_one_sentence() -> None:
    result = runner.invoke(app, ["phone", "--template", "no_such_template"])
    assert result.exit_code == 1
    assert "no_such_template" in result.output and "Traceback" not in result.output


def test_context_shows_what_a_model_is_shown() -> None:
    task = _task()
    session = "open contacts\ncontext\nquit\n"
    result = runner.invoke(app, ["phone", "--template", TEMPLATE, "--split", "dev"], input=session)
    out = _flat(result.output)
    assert result.exit_code == 0, result.output
    assert f"user Goal: {_flat(task.goal)}" in out and "Now: " in out
    assert 'assistant {"name": "open_app", "arguments": {"app_name": "contacts"}}' in out
    assert "tool Opened Contacts. | contacts: [" in out  # the tool turn: the screen the step left
