"""The one context renderer: what it shows (goal, date, tools, first view), what it never shows
(task parameters), long results without a cut through a row, and shortening by oldest steps."""

from __future__ import annotations

import json

from devices.harness import Harness
from devices.harness.context import (
    drop_oldest_steps,
    episode_messages,
    render_header,
    render_observation,
    render_result,
    step_count,
)
from devices.sim import SimPhone
from devices.suite.registry import get_template
from schemas.actions import ToolCall
from schemas.observations import Observation, ToolResult


def _reset(name: str):
    harness = Harness(SimPhone())
    task = get_template(name).generate("dev", 0, 0)
    return harness, task, harness.reset(task)


def test_header_names_goal_date_tools_and_first_view_but_no_task_params() -> None:
    harness, task, observation = _reset("star_relation")
    header = render_header(task.goal, harness.catalogue(), observation)
    assert header.startswith(f"Goal: {task.goal}\nNow: ")
    assert "2026-" in header.splitlines()[1]  # today's date, from the phone's clock
    assert "- contacts: " in header and "search(query)" in header and "Screen: " in header
    assert "calendar:" not in header  # only the task's apps' tools
    secret = {k: v for k, v in task.params.items() if isinstance(v, str) and v not in task.goal}
    assert secret and all(v not in header for v in secret.values())


def test_the_date_follows_the_phone_clock() -> None:
    harness, task, observation = _reset("star_relation")
    later = observation.model_copy(update={"clock_ms": observation.clock_ms + 86_400_000 * 3})
    assert render_header(task.goal, harness.catalogue(), observation) != \
        render_header(task.goal, harness.catalogue(), later)


def test_a_long_list_keeps_whole_rows_and_says_how_many_it_left_out() -> None:
    rows = [{"id": f"c{i:04d}", "name": f"Person {i}", "phone": f"+1-555-{i:04d}"} for i in range(200)]
    text = render_result(rows)
    assert len(text) < 1400 and "(+" in text and "more rows" in text
    shown = [line for line in text.splitlines()[1:] if line.startswith("c")]
    assert shown and all(line.split("|")[0] in {r["id"] for r in rows} for line in shown)
    assert str(200 - len(shown)) in text.splitlines()[-1]


def test_a_short_list_of_rows_is_a_table_with_every_value() -> None:
    rows = [{"id": "pr1", "price": 2.91, "name": "Tahini"}, {"id": "pr2", "price": 3.5, "name": "Tahini | deli"}]
    text = render_result(rows)
    assert text.splitlines()[0] == "2 rows: id|price|name"
    assert "pr1|2.91|Tahini" in text and "pr2|3.5|Tahini / deli" in text


def test_observation_shows_errors_and_results() -> None:
    ok = Observation(step=1, clock_ms=0, result=ToolResult(name="x", ok=True, value={"id": "a1"}))
    assert render_observation(ok) == 'ok {"id":"a1"}'


def test_dropping_oldest_steps_keeps_the_header_and_the_newest() -> None:
    _, _, observation = _reset("star_relation")
    steps = [(ToolCall(name="contacts.search", arguments={"query": str(i)}), observation) for i in range(5)]
    messages = episode_messages("HEADER", steps)
    assert step_count(messages) == 5
    shorter = drop_oldest_steps(messages, 2)
    assert step_count(shorter) == 3 and shorter[0]["content"].startswith("HEADER")
    assert "2 earlier steps not shown" in shorter[0]["content"]
    assert json.dumps(shorter[-2:]) == json.dumps(messages[-2:])
    assert step_count(drop_oldest_steps(messages, 99)) == 0


def test_the_context_and_the_answer_format_are_written_once() -> None:
    """No second renderer of the policy's context or answer creeps back (three existed once)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    owners = {"render_header": "devices/harness/context.py", "render_observation": "devices/harness/context.py",
              "render_context": None, "episode_messages": "devices/harness/context.py",
              "format_action": "devices/harness/answer.py", "parse_completion": "devices/harness/answer.py",
              "training_pairs": None, "harness_pairs": None}
    found: dict[str, list[str]] = {}
    chat_with_actions = []
    for package in ("devices", "services", "trainer", "schemas", "streams", "bench"):
        for path in (root / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            rel = str(path.relative_to(root))
            for name in re.findall(r"^def (\w+)\(", text, flags=re.MULTILINE):
                if name in owners:
                    found.setdefault(name, []).append(rel)
            if re.search(r"apply_chat_template\([^)]*tools=", text):
                chat_with_actions.append(rel)
    assert found == {k: [v] for k, v in owners.items() if v}
    # the policy's chat (with the action list) is tokenised in two places: decoding and SFT rows
    assert sorted(chat_with_actions) == ["trainer/data.py", "trainer/policy.py"]
