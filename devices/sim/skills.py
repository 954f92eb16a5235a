"""The built-in skill library: named multi-step procedures whose steps are templated tool calls."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from devices.sim.tools import Checker, array, boolean, compile_validator, integer, obj, string

__all__ = ["SKILLS", "Skill", "SkillStep", "prepare_arguments", "render_arguments"]

logger = logging.getLogger(__name__)

# "{name}" placeholders inside step arguments; a value that is exactly one placeholder keeps its type.
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class SkillStep:
    """One tool call of a skill; string values may hold {argument} placeholders."""

    tool: str
    arguments: dict[str, Any]
    when: str | None = None  # run only when this skill argument is present and truthy


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    parameters: dict[str, Any]
    steps: tuple[SkillStep, ...]

    @property
    def check(self) -> Checker:
        return _CHECKS[self.name]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters,
                "steps": [{"tool": s.tool, "arguments": s.arguments, "when": s.when} for s in self.steps]}


def _render(value: Any, args: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return args.get(whole.group(1))
        return _PLACEHOLDER.sub(lambda m: str(args.get(m.group(1), "")), value)
    if isinstance(value, list):
        return [_render(v, args) for v in value]
    if isinstance(value, dict):
        return {k: _render(v, args) for k, v in value.items()}
    return value


def render_arguments(step: SkillStep, args: dict[str, Any]) -> dict[str, Any]:
    """The step's tool arguments with placeholders filled; arguments that render to None are dropped."""
    rendered = _render(step.arguments, args)
    return {k: v for k, v in rendered.items() if v is not None}


_DT = r"\d{4}-\d\d-\d\dT\d\d:\d\d"
SKILLS: dict[str, Skill] = {s.name: s for s in (
    Skill("schedule_meeting",
          "Create a calendar event with a contact and text them the invitation.",
          obj({"title": string("Meeting title.", minLength=1),
               "start": string("Start 'YYYY-MM-DDTHH:MM'.", pattern=_DT),
               "end": string("End 'YYYY-MM-DDTHH:MM'.", pattern=_DT),
               "contact": string("Contact name to invite.", minLength=1)},
              {"location": string("Where.")}),
          (SkillStep("calendar.create_event", {"title": "{title}", "start": "{start}", "end": "{end}",
                                               "location": "{location}", "attendees": ["{contact}"]}),
           SkillStep("messages.send", {"contact": "{contact}",
                                       "body": "Invitation: {title} on {start}."}))),
    Skill("bedtime_mode",
          "Prepare the phone for the night: do not disturb on, dark mode on, dim the screen, set a wake-up alarm.",
          obj({"wake_time": string("Alarm time 'HH:MM'.", pattern=r"\d\d:\d\d")},
              {"brightness": integer("Screen brightness 0-100 (default 10).", minimum=0, maximum=100)}),
          (SkillStep("settings.set", {"key": "do_not_disturb", "value": True}),
           SkillStep("settings.set", {"key": "dark_mode", "value": True}),
           SkillStep("settings.set", {"key": "brightness", "value": "{brightness}"}, when="brightness"),
           SkillStep("clock.set_alarm", {"time": "{wake_time}", "label": "Wake up"}))),
    Skill("share_photo",
          "Tag a photo and share it with a contact.",
          obj({"file_id": string("File id.", minLength=1), "contact": string("Contact name.", minLength=1)},
              {"tag": string("Tag to add first.", minLength=1)}),
          (SkillStep("files.tag", {"id": "{file_id}", "tag": "{tag}"}, when="tag"),
           SkillStep("files.share", {"id": "{file_id}", "contact": "{contact}"}))),
    Skill("quick_reorder",
          "Put a product in the cart and check out to an address.",
          obj({"product_id": string("Product id.", minLength=1), "address": string("Delivery address.", minLength=3)},
              {"quantity": integer("How many (default 1).", minimum=1, maximum=99)}),
          (SkillStep("shopping.add_to_cart", {"product_id": "{product_id}", "quantity": "{quantity}"}),
           SkillStep("shopping.checkout", {"address": "{address}"}))),
    Skill("save_and_go",
          "Save a place to a list and start navigating there.",
          obj({"place_id": string("Place id.", minLength=1), "mode": string("Travel mode.", enum=["drive", "walk", "transit"])},
              {"list": string("List name (default 'Favorites').", minLength=1)}),
          (SkillStep("maps.save_place", {"place_id": "{place_id}", "list": "{list}"}),
           SkillStep("maps.navigate", {"destination": "{place_id}", "mode": "{mode}"}))),
    Skill("note_and_email",
          "Write a note and email the same text to people.",
          obj({"title": string("Title and subject.", minLength=1), "body": string("Text."),
               "to": array(string("Email address."), "Recipients.", minItems=1)}),
          (SkillStep("notes.create", {"title": "{title}", "body": "{body}"}),
           SkillStep("email.send", {"to": "{to}", "subject": "{title}", "body": "{body}"}))),
    Skill("focus_mode",
          "Silence the phone for focused work: do not disturb on, ring volume 0, a timer for the session.",
          obj({"minutes": integer("Session length in minutes.", minimum=1, maximum=240)},
              {"airplane": boolean("Also turn airplane mode on.")}),
          (SkillStep("settings.set", {"key": "do_not_disturb", "value": True}),
           SkillStep("settings.set", {"key": "volume_ring", "value": 0}),
           SkillStep("settings.set", {"key": "airplane_mode", "value": True}, when="airplane"),
           SkillStep("clock.start_timer", {"seconds": "{seconds}", "label": "Focus"}))),
)}

# Skill argument defaults (applied before rendering) and derived values.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "bedtime_mode": {}, "quick_reorder": {"quantity": 1}, "save_and_go": {"list": "Favorites"},
}


def prepare_arguments(skill: Skill, arguments: dict[str, Any]) -> dict[str, Any]:
    """Validated skill arguments with defaults and derived values filled in (BadArguments if wrong)."""
    args = {**_DEFAULTS.get(skill.name, {}), **skill.check(arguments)}
    if skill.name == "focus_mode":
        args["seconds"] = args["minutes"] * 60
    return args


_CHECKS: dict[str, Checker] = {name: compile_validator(s.parameters) for name, s in SKILLS.items()}
