"""episode.ended v2 writes each screen once: a repeated screen goes on the wire as a reference
to the step that carries it, reading puts it back, and a bad reference is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schemas.actions import Finish, OpenApp, ToolCall
from schemas.envelope import is_validated
from schemas.episodes import EpisodeEnded, Step
from schemas.observations import Observation, ToolResult, UIElement
from schemas.registry import SchemaError
from schemas.topics import TOPICS
from streams.codec import decode, encode

TOPIC = next(t for t in TOPICS.values() if "episode.ended" in t.type_names)
HOME = [UIElement(text=name, is_clickable=True) for name in ("Contacts", "Calendar", "Messages", "Notes")]
APP = [UIElement(text="Inbox"), UIElement(text="Compose", is_clickable=True)]
ENVELOPE = {"source": "test/0", "correlation_id": "run-1"}


def _step(index: int, action: Any, screen: list[UIElement], app: str = "home") -> Step:
    result = ToolResult(name="contacts.search", ok=True, value=[{"id": "c1"}]) \
        if isinstance(action, ToolCall) else None
    return Step(index=index, action=action, observation=Observation(
        step=index + 1, clock_ms=1_000 * index, foreground_app=app, screen=screen, result=result))


def _episode(steps: list[Step]) -> EpisodeEnded:
    return EpisodeEnded(event_id="ep-1", episode_id="e", task_id="t", device_id="sim-0",
                        environment="sim", policy="oracle", outcome="finished", steps=steps, **ENVELOPE)


CALL = ToolCall(name="contacts.search", arguments={"query": "Ann"})
STEPS = [_step(0, CALL, HOME), _step(1, CALL, HOME), _step(2, OpenApp(app_name="Messages"), APP, "messages"),
         _step(3, CALL, APP, "messages"), _step(4, CALL, []), _step(5, Finish(), APP, "messages")]


def test_a_repeated_screen_is_written_once_and_read_back_in_place() -> None:
    episode = _episode(STEPS)
    raw = encode(episode)
    wire = json.loads(raw)["steps"]
    assert [s.get("screen_as_step") for s in wire] == [None, 0, None, 2, None, 2]
    assert [len(s["observation"]["screen"]) for s in wire] == [4, 0, 2, 0, 0, 0]
    back = decode(raw, TOPIC)
    assert back == episode  # every screen back, every reference gone
    assert [s.observation.screen for s in back.steps] == [s.observation.screen for s in STEPS]
    assert all(s.screen_as_step is None for s in back.steps)
    assert is_validated(back)  # a producer passing it on need not validate it again
    assert encode(back) == raw
    assert len(raw) < len(encode(_episode(STEPS[:1]))) * 4  # six steps cost less than four firsts


def test_a_screen_that_changes_is_written_again() -> None:
    steps = [_step(0, CALL, HOME), _step(1, OpenApp(app_name="Messages"), APP, "messages"), _step(2, CALL, HOME)]
    wire = json.loads(encode(_episode(steps)))["steps"]
    assert all("screen_as_step" not in s for s in wire)  # only the last screen written is named


def test_a_v1_episode_with_every_screen_is_upcast() -> None:
    episode = _episode(STEPS[:2])
    data = json.loads(encode(episode))
    data["schema_version"] = 1
    data["steps"][1]["observation"]["screen"] = data["steps"][0]["observation"]["screen"]
    del data["steps"][1]["screen_as_step"]
    assert decode(json.dumps(data).encode(), TOPIC) == episode


@pytest.mark.parametrize(("edit", "sentence"), [
    (lambda steps: steps[1].__setitem__("screen_as_step", 3), "names the screen of step 3"),  # later
    (lambda steps: steps[1].__setitem__("screen_as_step", 7), "names the screen of step 7"),  # absent
    (lambda steps: steps[0].update(screen_as_step=0, observation={**steps[0]["observation"], "screen": []}),
     "names the screen of step 0"),  # itself
    (lambda steps: steps[1]["observation"].__setitem__("screen", [{"text": "x"}]), "send one or the other"),
    (lambda steps: steps[5].__setitem__("screen_as_step", 4), "names the screen of step 4"),  # empty screen
])
def test_a_bad_reference_is_refused_with_one_sentence(edit: Any, sentence: str) -> None:
    data = json.loads(encode(_episode(STEPS)))
    edit(data["steps"])
    with pytest.raises(SchemaError, match=sentence):
        decode(json.dumps(data).encode(), TOPIC)


def test_a_screen_nobody_was_shown_is_not_recorded() -> None:
    """A tool result is what the policy saw after a tool step, so the screen behind it is dropped
    unless the next step acts on the screen (then the gate shows it as the screen that step was
    chosen on); a GUI step's screen, which the policy saw, always stays."""
    from schemas.actions import Click
    from schemas.episodes import unseen_screens_dropped

    steps = [_step(0, CALL, HOME), _step(1, CALL, HOME), _step(2, Click(index=1), APP, "messages"),
             _step(3, CALL, APP, "messages"), _step(4, OpenApp(app_name="Messages"), APP, "messages"),
             _step(5, CALL, APP, "messages")]
    kept = unseen_screens_dropped(steps)
    assert [len(s.observation.screen) for s in kept] == [0, 4, 2, 2, 2, 0]
    assert [s.observation.result for s in kept] == [s.observation.result for s in steps]
    assert unseen_screens_dropped(STEPS)[2].observation.screen == APP  # an OpenApp's own screen
    episode = _episode(kept)
    assert decode(encode(episode), TOPIC) == episode  # still read back as written
    assert len(encode(episode)) < len(encode(_episode(steps)))
