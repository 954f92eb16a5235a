"""Simulated sub-agents: named helpers that run a structured plan of tool calls within their apps only."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PLAN_SCHEMA", "SUBAGENTS", "SubAgent"]


@dataclass(frozen=True, slots=True)
class SubAgent:
    """A sub-agent may call tools of `apps` only; anything else is permission_denied."""

    name: str
    description: str
    apps: frozenset[str]

    def may_call(self, tool_name: str) -> bool:
        return tool_name.split(".", 1)[0] in self.apps


SUBAGENTS: dict[str, SubAgent] = {a.name: a for a in (
    SubAgent("scheduler", "Manages the calendar and alarms, looks up contacts.",
             frozenset({"calendar", "clock", "contacts"})),
    SubAgent("communicator", "Sends and reads messages and email, looks up contacts.",
             frozenset({"messages", "email", "contacts"})),
    SubAgent("navigator", "Finds places, saves them and plans trips.", frozenset({"maps"})),
    SubAgent("shopper", "Searches products, fills the cart and orders.", frozenset({"shopping"})),
    SubAgent("librarian", "Organises files, photos and notes.", frozenset({"files", "notes"})),
    SubAgent("device_admin", "Changes device settings.", frozenset({"settings"})),
)}

# The shape of Delegate.arguments that a sub-agent accepts.
PLAN_SCHEMA = {
    "type": "object",
    "properties": {"tool_calls": {"type": "array", "minItems": 1, "items": {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "arguments": {"type": "object"}},
        "required": ["name"], "additionalProperties": False}}},
    "required": ["tool_calls"], "additionalProperties": False,
}
