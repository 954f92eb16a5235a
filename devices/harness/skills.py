"""The skill library: named, parameterised procedures whose steps are templated tool calls.

A skill is data (a frozen, serialisable model), so the harness spec can carry, diff and evolve
it. Step arguments hold `{name}` placeholders filled from the skill's arguments (a value that is
exactly one placeholder keeps its type) and `{$N.path}` placeholders filled from the result of
an earlier step N (e.g. `{$0.id}` is the id the first step returned). The library holds
near-miss skills on purpose: choosing the right one among similar ones is part of the task.
"""

from __future__ import annotations

import logging
import re
from functools import cache
from typing import Any

from pydantic import Field, JsonValue

from devices.kit.validators import Checker, array, boolean, compile_validator, integer, obj, string
from schemas.envelope import Frozen

__all__ = ["SKILLS", "Derived", "Skill", "SkillStep", "prepare_arguments", "render_arguments"]

logger = logging.getLogger(__name__)

# "{name}" fills a skill argument, "{$N.a.b}" a field of step N's result value.
_PLACEHOLDER = re.compile(r"\{(\$\d+(?:\.[A-Za-z0-9_]+)*|[a-z_][a-z0-9_]*)\}")


class SkillStep(Frozen):
    """One tool call of a skill; string values may hold placeholders."""

    tool: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    when: str | None = Field(default=None, description="Run only when this argument is truthy.")


class Derived(Frozen):
    """An argument computed from another one: `target = source * times`."""

    source: str
    times: float = 1.0


class Skill(Frozen):
    name: str = Field(min_length=1)
    description: str
    parameters: dict[str, JsonValue]
    steps: tuple[SkillStep, ...] = Field(min_length=1)
    defaults: dict[str, JsonValue] = Field(default_factory=dict)
    derived: dict[str, Derived] = Field(default_factory=dict)

    @property
    def check(self) -> Checker:
        return _checker(self.name, _schema_key(self.parameters))

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@cache
def _compiled(schema_json: str) -> Checker:
    import json

    return compile_validator(json.loads(schema_json))


def _schema_key(schema: dict[str, Any]) -> str:
    import json

    return json.dumps(schema, sort_keys=True)


def _checker(name: str, schema_json: str) -> Checker:
    return _compiled(schema_json)


def _lookup(path: str, results: list[Any]) -> Any:
    head, *rest = path[1:].split(".")
    index = int(head)
    if index >= len(results):
        return None
    value = results[index]
    for part in rest:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _render(value: Any, args: dict[str, Any], results: list[Any]) -> Any:
    if isinstance(value, str):
        def fill(name: str) -> Any:
            return _lookup(name, results) if name.startswith("$") else args.get(name)
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return fill(whole.group(1))
        return _PLACEHOLDER.sub(lambda m: str(fill(m.group(1)) or ""), value)
    if isinstance(value, list):
        return [_render(v, args, results) for v in value]
    if isinstance(value, dict):
        return {k: _render(v, args, results) for k, v in value.items()}
    return value


def render_arguments(step: SkillStep, args: dict[str, Any],
                     results: list[Any] | None = None) -> dict[str, Any]:
    """The step's tool arguments with placeholders filled; arguments that render to None are
    dropped. `results` holds the value of every earlier step, in order."""
    rendered = _render(dict(step.arguments), args, results or [])
    return {k: v for k, v in rendered.items() if v is not None}


def prepare_arguments(skill: Skill, arguments: dict[str, Any]) -> dict[str, Any]:
    """Validated skill arguments with defaults and derived values filled in (BadArguments if wrong)."""
    args = {**skill.defaults, **skill.check(arguments)}
    for target, rule in skill.derived.items():
        if args.get(rule.source) is not None:
            value = args[rule.source] * rule.times
            args[target] = int(value) if float(value).is_integer() else value
    return args


_DT = r"\d{4}-\d\d-\d\dT\d\d:\d\d"
_HM = r"\d\d:\d\d"


def _s(tool: str, when: str | None = None, **arguments: Any) -> SkillStep:
    return SkillStep(tool=tool, arguments=arguments, when=when)


# The built-in library. The first seven are the original procedures; the rest are near misses
# of them (same apps, a different order, a different recipient channel, one step more or less),
# so a policy that picks "a skill about the night" without reading descriptions goes wrong.
SKILLS: dict[str, Skill] = {s.name: s for s in (
    Skill(name="schedule_meeting",
          description="Create a calendar event with a contact and text them the invitation.",
          parameters=obj({"title": string("Meeting title.", minLength=1),
                          "start": string("Start 'YYYY-MM-DDTHH:MM'.", pattern=_DT),
                          "end": string("End 'YYYY-MM-DDTHH:MM'.", pattern=_DT),
                          "contact": string("Contact name to invite.", minLength=1)},
                         {"location": string("Where.")}),
          steps=(_s("calendar.create_event", title="{title}", start="{start}", end="{end}",
                    location="{location}", attendees=["{contact}"]),
                 _s("messages.send", contact="{contact}", body="Invitation: {title} on {start}."))),
    Skill(name="schedule_meeting_by_email",
          description="Create a calendar event and email the invitation to an address "
                      "(no text message).",
          parameters=obj({"title": string("Meeting title.", minLength=1),
                          "start": string("Start 'YYYY-MM-DDTHH:MM'.", pattern=_DT),
                          "end": string("End 'YYYY-MM-DDTHH:MM'.", pattern=_DT),
                          "email": string("Invitee's email address.", minLength=3)}),
          steps=(_s("calendar.create_event", title="{title}", start="{start}", end="{end}",
                    attendees=["{email}"]),
                 _s("email.send", to=["{email}"], subject="Invitation: {title}",
                    body="Invitation: {title} on {start}."))),
    Skill(name="block_time",
          description="Put a private calendar block in the diary; invites nobody.",
          parameters=obj({"title": string("Block title.", minLength=1),
                          "start": string("Start 'YYYY-MM-DDTHH:MM'.", pattern=_DT),
                          "end": string("End 'YYYY-MM-DDTHH:MM'.", pattern=_DT)}),
          steps=(_s("calendar.create_event", title="{title}", start="{start}", end="{end}"),)),
    Skill(name="bedtime_mode",
          description="Prepare the phone for the night: do not disturb on, dark mode on, dim the "
                      "screen, set a wake-up alarm.",
          parameters=obj({"wake_time": string("Alarm time 'HH:MM'.", pattern=_HM)},
                         {"brightness": integer("Screen brightness 0-100 (default 10).",
                                                minimum=0, maximum=100)}),
          steps=(_s("settings.set", key="do_not_disturb", value=True),
                 _s("settings.set", key="dark_mode", value=True),
                 _s("settings.set", when="brightness", key="brightness", value="{brightness}"),
                 _s("clock.set_alarm", time="{wake_time}", label="Wake up"))),
    Skill(name="nap_mode",
          description="A short rest: do not disturb on and a timer that ends the nap "
                      "(no alarm, screen unchanged).",
          parameters=obj({"minutes": integer("Nap length in minutes.", minimum=1, maximum=180)}),
          steps=(_s("settings.set", key="do_not_disturb", value=True),
                 _s("clock.start_timer", seconds="{seconds}", label="Nap")),
          derived={"seconds": Derived(source="minutes", times=60)}),
    Skill(name="morning_mode",
          description="Start the day: do not disturb off, dark mode off, screen brightness up.",
          parameters=obj({}, {"brightness": integer("Screen brightness 0-100 (default 80).",
                                                    minimum=0, maximum=100)}),
          steps=(_s("settings.set", key="do_not_disturb", value=False),
                 _s("settings.set", key="dark_mode", value=False),
                 _s("settings.set", key="brightness", value="{brightness}")),
          defaults={"brightness": 80}),
    Skill(name="share_photo",
          description="Tag a photo and share it with a contact.",
          parameters=obj({"file_id": string("File id.", minLength=1),
                          "contact": string("Contact name.", minLength=1)},
                         {"tag": string("Tag to add first.", minLength=1)}),
          steps=(_s("files.tag", when="tag", id="{file_id}", tag="{tag}"),
                 _s("files.share", id="{file_id}", contact="{contact}"))),
    Skill(name="archive_photo",
          description="Tag a file and move it to an album; shares with nobody.",
          parameters=obj({"file_id": string("File id.", minLength=1),
                          "album": string("Destination album.", minLength=1),
                          "tag": string("Tag to add.", minLength=1)}),
          steps=(_s("files.tag", id="{file_id}", tag="{tag}"),
                 _s("files.move", id="{file_id}", album="{album}"))),
    Skill(name="quick_reorder",
          description="Put a product in the cart and check out to an address.",
          parameters=obj({"product_id": string("Product id.", minLength=1),
                          "address": string("Delivery address.", minLength=3)},
                         {"quantity": integer("How many (default 1).", minimum=1, maximum=99)}),
          steps=(_s("shopping.add_to_cart", product_id="{product_id}", quantity="{quantity}"),
                 _s("shopping.checkout", address="{address}")),
          defaults={"quantity": 1}),
    Skill(name="stock_up",
          description="Put a product in the cart without ordering yet (checkout stays open).",
          parameters=obj({"product_id": string("Product id.", minLength=1),
                          "quantity": integer("How many.", minimum=1, maximum=99)}),
          steps=(_s("shopping.add_to_cart", product_id="{product_id}", quantity="{quantity}"),)),
    Skill(name="save_and_go",
          description="Save a place to a list and start navigating there.",
          parameters=obj({"place_id": string("Place id.", minLength=1),
                          "mode": string("Travel mode.", enum=["drive", "walk", "transit"])},
                         {"list": string("List name (default 'Favorites').", minLength=1)}),
          steps=(_s("maps.save_place", place_id="{place_id}", list="{list}"),
                 _s("maps.navigate", destination="{place_id}", mode="{mode}")),
          defaults={"list": "Favorites"}),
    Skill(name="bookmark_place",
          description="Save a place to a list for later; no navigation.",
          parameters=obj({"place_id": string("Place id.", minLength=1),
                          "list": string("List name.", minLength=1)}),
          steps=(_s("maps.save_place", place_id="{place_id}", list="{list}"),)),
    Skill(name="note_and_email",
          description="Write a note and email the same text to people.",
          parameters=obj({"title": string("Title and subject.", minLength=1),
                          "body": string("Text."),
                          "to": array(string("Email address."), "Recipients.", minItems=1)}),
          steps=(_s("notes.create", title="{title}", body="{body}"),
                 _s("email.send", to="{to}", subject="{title}", body="{body}"))),
    Skill(name="note_and_text",
          description="Write a note and text the same words to one contact.",
          parameters=obj({"title": string("Note title.", minLength=1),
                          "body": string("Text.", minLength=1),
                          "contact": string("Contact name.", minLength=1)}),
          steps=(_s("notes.create", title="{title}", body="{body}"),
                 _s("messages.send", contact="{contact}", body="{body}"))),
    Skill(name="focus_mode",
          description="Silence the phone for focused work: do not disturb on, ring volume 0, a "
                      "timer for the session.",
          parameters=obj({"minutes": integer("Session length in minutes.", minimum=1,
                                             maximum=240)},
                         {"airplane": boolean("Also turn airplane mode on.")}),
          steps=(_s("settings.set", key="do_not_disturb", value=True),
                 _s("settings.set", key="volume_ring", value=0),
                 _s("settings.set", when="airplane", key="airplane_mode", value=True),
                 _s("clock.start_timer", seconds="{seconds}", label="Focus")),
          derived={"seconds": Derived(source="minutes", times=60)}),
    Skill(name="meeting_mode",
          description="Quiet for a meeting: ring volume 0 and a timer; do not disturb untouched.",
          parameters=obj({"minutes": integer("Meeting length in minutes.", minimum=1,
                                             maximum=240)}),
          steps=(_s("settings.set", key="volume_ring", value=0),
                 _s("clock.start_timer", seconds="{seconds}", label="Meeting")),
          derived={"seconds": Derived(source="minutes", times=60)}),
    Skill(name="travel_mode",
          description="Getting on a plane: airplane mode on, bluetooth off, battery saver on.",
          parameters=obj({}),
          steps=(_s("settings.set", key="airplane_mode", value=True),
                 _s("settings.set", key="bluetooth", value=False),
                 _s("settings.set", key="battery_saver", value=True))),
    Skill(name="landing_mode",
          description="Just landed: airplane mode off, wifi on, battery saver off.",
          parameters=obj({}),
          steps=(_s("settings.set", key="airplane_mode", value=False),
                 _s("settings.set", key="wifi", value=True),
                 _s("settings.set", key="battery_saver", value=False))),
    Skill(name="privacy_mode",
          description="Stop sharing: location off and bluetooth off.",
          parameters=obj({}),
          steps=(_s("settings.set", key="location", value=False),
                 _s("settings.set", key="bluetooth", value=False))),
    Skill(name="welcome_contact",
          description="Add a new contact, star them, and text them a welcome.",
          parameters=obj({"name": string("Full name.", minLength=1),
                          "phone": string("Phone number.", minLength=3),
                          "message": string("Welcome text.", minLength=1)}),
          steps=(_s("contacts.add", name="{name}", phone="{phone}"),
                 _s("contacts.star", id="{$0.id}", starred=True),
                 _s("messages.send", contact="{name}", body="{message}"))),
    Skill(name="add_contact_quietly",
          description="Add a new contact and star them; sends nothing.",
          parameters=obj({"name": string("Full name.", minLength=1),
                          "phone": string("Phone number.", minLength=3)}),
          steps=(_s("contacts.add", name="{name}", phone="{phone}"),
                 _s("contacts.star", id="{$0.id}", starred=True))),
    Skill(name="reply_and_file",
          description="Reply to an email by id and move the original to a folder.",
          parameters=obj({"email_id": string("Email id.", minLength=1),
                          "body": string("Reply text.", minLength=1),
                          "folder": string("Folder for the original.", minLength=1)}),
          steps=(_s("email.reply", id="{email_id}", body="{body}"),
                 _s("email.move", id="{email_id}", folder="{folder}"))),
    Skill(name="reply_only",
          description="Reply to an email by id and leave it where it is.",
          parameters=obj({"email_id": string("Email id.", minLength=1),
                          "body": string("Reply text.", minLength=1)}),
          steps=(_s("email.reply", id="{email_id}", body="{body}"),)),
)}
