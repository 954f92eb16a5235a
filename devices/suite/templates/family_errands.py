"""Family errands: a memory, skill or sub-agent task asked for together with a tool task in other
apps, in one goal ("text my sister the gate code I told you about; also, pay back my brother
what he lent me").

The family part keeps its checker (the fact only memory holds, the skill chosen among
near-misses, the helper that must do each part) and the tool part keeps its lookups and
distractors; the checker expects both state changes and nothing else, so skipping either part,
or doing the tool part through a wrong skill or helper, fails. The tool part comes first and is
never a question (the family part may end with an answer). Both run on one phone and one clock:
the family templates' (2026-01-01 08:00), which the tool part's world is built around.

An errand belongs to its family part's family and is held out for test when either part is.
"""

from __future__ import annotations

import logging
import random
import re
from datetime import UTC, datetime
from typing import Any, ClassVar

from devices.protocol import TaskInstance
from devices.suite.diff import Expectation
from devices.suite.pools import Pool
from devices.suite.seeding import instance_index, instance_rng, instance_seed
from devices.suite.template import Observe, OracleScript, SplitError, Template, catalogue_apps
from devices.suite.templates import (
    memory,
    memory_deep,
    skills,
    skills_deep,
    subagent,
    subagent_deep,
)
from devices.suite.templates._hkit import derived_parameters
from devices.suite.templates._world import World, WorldTemplate
from devices.suite.templates.tool_errands import _PARTS
from schemas.actions import Finish
from schemas.tasks import Split

__all__ = ["FAMILY_ERRANDS", "TEMPLATES", "FamilyErrand", "family_errand"]

logger = logging.getLogger(__name__)

_FAMILY_PARTS: dict[str, type[Template]] = {
    cls.name: cls
    for module in (memory, memory_deep, skills, skills_deep, subagent, subagent_deep)
    for cls in module.TEMPLATES
}
# The family templates' clock: every instance starts at 2026-01-01T08:00 UTC.
_START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
_KEEP_CAPITAL = re.compile(r"^(I\b|I'|[A-Z][a-z]+\s[A-Z])")
_TOOL = "t_"


def _lower_first(text: str) -> str:
    return text if _KEEP_CAPITAL.match(text) else text[:1].lower() + text[1:]


def _tool_params(params: dict[str, Any]) -> dict[str, Any]:
    """The tool part's parameters ("t_x" and "_t_x" keys), under their own names."""
    out = {}
    for key, value in params.items():
        if key.startswith(_TOOL):
            out[key[len(_TOOL):]] = value
        elif key.startswith("_" + _TOOL):
            out["_" + key[len(_TOOL) + 1:]] = value
    return out


def _family_params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if not k.lstrip("_").startswith(_TOOL)}


class FamilyErrand(Template):
    """`tool` (a world template) first, then `part` (a memory, skill or sub-agent template)."""

    part: ClassVar[Template]
    tool: ClassVar[WorldTemplate]

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return derived_parameters(self)

    def goal(self, params: dict[str, Any]) -> str:
        return f"{self.tool.goal(_tool_params(params))} Also, {_lower_first(self.part.goal(_family_params(params)))}"

    def initial_state(self, params: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError("family errands build their state in generate()")

    def trace(self, split: Split, i: int, suite_seed: int) -> tuple[TaskInstance, list[tuple[Pool, Any]]]:
        """The instance and every pooled (pool, value) drawn to build it (both parts)."""
        if split not in self.splits():
            raise SplitError(f"template {self.name} is held out for test and has no {split} "
                             "instances; pick a template from the train or dev list")
        task = self.part.generate(split, i, suite_seed)
        index = instance_index(split, i)
        seed = instance_seed(suite_seed, self.name, index)
        w = World(instance_rng(seed), split, i, f"{suite_seed}:{self.name}:{split}")
        w.now = _START
        tool = self.tool.build(w)
        w.shuffle()
        self.tool.check_pools(tool, split)
        state = dict(task.initial_state)
        for app, tables in w.overlay().items():
            if app in state:
                raise ValueError(f"{self.name}: both parts set up {app}")
            state[app] = tables
        params = {**task.params,
                  **{("_" + _TOOL + k[1:]) if k.startswith("_") else _TOOL + k: v for k, v in tool.items()}}
        drawn = [(pool, task.params[k]) for k, pool in self.part.pools.items()]
        drawn += [(pool, v) for k, pool in self.part.list_pools.items() for v in task.params[k]]
        drawn += w.drawn
        instance = TaskInstance(
            task_id=f"{self.name}-{split}-{i:05d}-{seed & 0xFFFFFFFF:08x}",
            template=self.name, family=self.family, split=split, index=index, seed=seed,
            params=params, goal=self.goal(params), initial_state=state,
            start_clock_ms=task.start_clock_ms, max_steps=self.max_steps,
            apps=catalogue_apps(self.apps, seed, self.distractor_apps),
            tier=self.tier)
        return instance, drawn

    def generate(self, split: Split, i: int, suite_seed: int) -> TaskInstance:
        return self.trace(split, i, suite_seed)[0]

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [*self.tool.expect(_tool_params(p), before), *self.part.expect(_family_params(p), before)]

    def oracle(self, params: dict[str, Any], observe: Observe) -> OracleScript:
        for action in self.tool.oracle(_tool_params(params), observe):
            if not isinstance(action, Finish):  # only the family part may end the episode
                yield action
        yield from self.part.oracle(_family_params(params), observe)


def family_errand(tool: str, part: str) -> type[FamilyErrand]:
    """The errand class asking for the tool template `tool`, then the family template `part`."""
    t, h = _PARTS[tool](), _FAMILY_PARTS[part]()
    if set(t.apps) & set(h.apps) or not t.apps or not h.apps:
        raise ValueError(f"errand parts {tool} and {part} share apps; pick parts in different apps")
    attrs = {
        "name": f"{part}__and__{tool}",
        "family": h.family,
        "checker": h.checker,
        "diff_memory": h.diff_memory,
        "part": h, "tool": t,
        "apps": (*t.apps, *h.apps),
        "distractor_apps": h.distractor_apps,
        "tier": "hard",
        "needs_lookup": True,
        "chain": max(t.chain, h.chain),
        "test_only": t.test_only or h.test_only,
        "max_steps": t.max_steps + h.max_steps,
        "goal_template": f"{t.goal_template} Also, {h.goal_template}",
        "__doc__": f"Family errand: {tool}, then {part}.",
        "__module__": __name__,
    }
    cls_name = "".join(piece.capitalize() for piece in attrs["name"].split("_") if piece)
    return type(cls_name, (FamilyErrand,), attrs)


# (tool part, family part): the tool part writes (never a question); no app in both.
FAMILY_ERRANDS: tuple[tuple[str, str], ...] = (
    ("star_relation", "mem_cancel_gift_order"),
    ("pay_invoice_email", "skill_meeting_mode"),
    ("read_texts_from_relation", "mem_follow_up_from_note"),
    ("pay_back_relation", "skill_reply_only"),
    ("drop_rainy_cities", "mem_usual_order"),
    ("reorder_last", "skill_meeting_with_sender"),
    ("artist_playlist", "skill_note_and_email"),
    ("rename_and_prune_playlists", "sa_meeting_via_scheduler"),
    ("pay_invoice_email", "skill_bedtime"),
    ("hotel_for_flight", "sa_cheaper_to_note"),
    ("star_relation", "mem_preferred_timer"),
    ("hotel_for_flight", "mem_save_code_from_text"),
    ("artist_playlist", "sa_parallel_errands"),
    ("cheaper_of_two", "mem_relation_event_address"),
    ("rename_and_prune_playlists", "sa_note_to_setting"),
    ("recipe_to_cart", "mem_navigate_provider"),
    ("drop_rainy_cities", "skill_note_and_text"),
    ("trash_older_topic_emails", "skill_bedtime_dimmed"),
    ("reorder_last", "mem_save_sender_role"),
    ("like_song_gui", "sa_latest_subject_to_note"),
    ("untag_album", "skill_schedule_meeting"),
    ("like_song_gui", "sa_closer_of_two"),
    ("trash_older_topic_emails", "mem_preferred_brightness"),
    ("cheaper_of_two", "skill_meeting_by_email"),
    ("delete_texts_from_relation", "skill_reorder_latest"),
    ("trim_cart_and_order", "skill_welcome_contact"),
    ("slot_on_event_day", "mem_home_checkout"),
    ("acknowledge_company_emails", "skill_archive_photo"),
    ("transfer_half", "skill_reply_and_file"),
    ("delete_off_alarms", "mem_email_relation"),
    ("delete_off_alarms", "mem_star_relation"),
    ("acknowledge_company_emails", "mem_share_photo_relation"),
    ("recipe_to_cart", "skill_landing"),
    ("trim_cart_and_order", "mem_text_relation"),
)

TEMPLATES = [family_errand(tool, part) for tool, part in FAMILY_ERRANDS]
