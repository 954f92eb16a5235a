"""Errands: tool tasks that ask for two things in one goal, in two different corners of the phone.

A user rarely asks one thing at a time ("text my sister the address of the bakery, and
move my dentist reminder to Friday"). An errand joins two tool templates whose apps do not
overlap into one instance: both parts are built in one world (one clock, one id space, one
set of people), the goal states both, the checker expects both state changes and nothing
else, and the oracle solves the first part, then the second. The first part is never a
question (only the last part may end the episode with an answer).

Each part keeps its own lookups, distractors and pools, so an errand needs the sum of its
parts' actions and every lookup either part needs: breaking any one fails the errand. An
errand is held out for test when either part is.
"""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar

from devices.suite.template import Observe, OracleScript
from devices.suite.templates import tool_life, tool_money, tool_more, tool_people
from devices.suite.templates._world import World, WorldTemplate
from schemas.actions import Finish

__all__ = ["ERRANDS", "TEMPLATES", "Errand", "errand"]

logger = logging.getLogger(__name__)

_PARTS: dict[str, type[WorldTemplate]] = {
    cls.name: cls
    for module in (tool_people, tool_money, tool_life, tool_more)
    for cls in module.TEMPLATES
}
# Words that keep their capital when the second part's goal follows "Also, ".
_KEEP_CAPITAL = re.compile(r"^(I\b|I'|[A-Z][a-z]+\s[A-Z])")
_FIELD = re.compile(r"{(\w+)}")
_TAGS = ("a", "b", "c")


def _key(tag: str, key: str) -> str:
    """A part's parameter under the errand ("_x" stays checker-only as "_a_x")."""
    return f"_{tag}_{key[1:]}" if key.startswith("_") else f"{tag}_{key}"


def _split(params: dict[str, Any], tag: str) -> dict[str, Any]:
    out = {}
    for key, value in params.items():
        private = key.startswith("_")
        bare = key[1:] if private else key
        if bare.startswith(f"{tag}_"):
            out[("_" if private else "") + bare[len(tag) + 1:]] = value
    return out


def _lower_first(text: str) -> str:
    return text if _KEEP_CAPITAL.match(text) else text[:1].lower() + text[1:]


class Errand(WorldTemplate):
    """World templates (`parts`, tagged a, b, c) asked for in one goal; see the module docstring."""

    parts: ClassVar[tuple[WorldTemplate, ...]]

    def goal(self, params: dict[str, Any]) -> str:
        goals = [part.goal(_split(params, tag)) for tag, part in zip(_TAGS, self.parts, strict=False)]
        return " Also, ".join([goals[0], *(_lower_first(g) for g in goals[1:])])

    def build(self, w: World) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for tag, part in zip(_TAGS, self.parts, strict=False):
            out.update({_key(tag, k): v for k, v in part.build(w).items()})
        return out

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [e for tag, part in zip(_TAGS, self.parts, strict=False)
                for e in part.expect(_split(p, tag), before)]

    def oracle(self, params: dict[str, Any], observe: Observe) -> OracleScript:
        last = len(self.parts) - 1
        for n, (tag, part) in enumerate(zip(_TAGS, self.parts, strict=False)):
            for action in part.oracle(_split(params, tag), observe):
                if isinstance(action, Finish) and n < last:  # only the last part may end the episode
                    continue
                yield action


def errand(*names: str, tier: str = "hard") -> type[Errand]:
    """The errand class joining the templates `names` (two or three, in different apps)."""
    parts = tuple(_PARTS[n]() for n in names)
    apps = [app for part in parts for app in part.apps]
    if len(apps) != len(set(apps)):
        raise ValueError(f"errand parts {names} share apps; pick parts in different apps")
    template = " Also, ".join(_FIELD.sub(lambda m, tag=tag: "{" + tag + "_" + m.group(1) + "}", part.goal_template)
                              for tag, part in zip(_TAGS, parts, strict=False))
    attrs = {
        "name": "__and__".join(names),
        "parts": parts,
        "apps": tuple(apps),
        "tier": tier,
        "chain": max(part.chain for part in parts),
        "lookups": tuple(dict.fromkeys(tool for part in parts for tool in part.lookups)),
        "gui": any(part.gui for part in parts),
        "test_only": any(part.test_only for part in parts),
        "max_steps": sum(part.max_steps for part in parts),
        "goal_template": template,
        "__doc__": f"Errand: {', then '.join(names)}.",
        "__module__": __name__,
    }
    cls_name = "".join(part.capitalize() for part in attrs["name"].split("_") if part)
    return type(cls_name, (Errand,), attrs)


# Parts in order: only the last may be a question; no two parts share an app.
ERRANDS: tuple[tuple[str, ...], ...] = (
    ("alarm_before_meeting", "dimmer_screen"),
    ("delete_texts_from_relation", "rate_recipe_gui"),
    ("drop_song_from_playlist", "new_number_relation"),
    ("save_sender_contact", "cheaper_of_two"),
    ("untag_album", "next_meeting_place"),
    ("delete_off_alarms", "delete_album_screenshots"),
    ("tick_off_reminder", "bank_reference_gui"),
    ("hotel_for_flight", "like_song_gui"),
    ("duplicate_activity", "travel_time_to"),
    ("slot_on_event_day", "acknowledge_company_emails"),
    ("trim_cart_and_order", "forecast_where_relation_lives"),
    ("artist_playlist", "unread_from_relation"),
    ("read_texts_from_relation", "paid_to_payee"),
    ("move_tagged_photos", "directions_to_meeting"),
    ("trash_older_topic_emails", "pay_back_relation"),
    ("reply_about_topic", "flight_landing_time"),
    ("reorder_last", "stop_medication"),
    ("note_phone_of_relation", "playlist_from_album"),
    ("new_payee_from_richest", "text_relation"),
    ("rename_and_prune_playlists", "star_relation"),
    ("invite_relation", "tick_off_reminder", "delete_album_screenshots"),
    ("timer_for", "trim_cart_and_order", "slot_on_event_day"),
    ("invite_relation", "duplicate_activity", "trash_older_topic_emails"),
    ("alarm_earlier", "cheapest_flight_to_relation", "cheaper_of_two"),
    ("reply_last_text", "directions_to_meeting", "artist_playlist"),
)

TEMPLATES = [errand(*names) for names in ERRANDS]
