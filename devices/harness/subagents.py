"""Sub-agents: named helpers that run a structured plan of tool calls within their apps only.

A sub-agent is data (a frozen model in the harness spec). Delegation hands it an instruction,
the context it needs (`arguments.context`, facts the main agent found) and a plan of tool
calls; it may call only tools of its own apps (anything else is permission_denied) and returns
its results to the main agent, which merges them.
"""

from __future__ import annotations

from pydantic import Field, JsonValue

from schemas.envelope import Frozen

__all__ = ["PLAN_SCHEMA", "SUBAGENTS", "SubAgent"]


class SubAgent(Frozen):
    """A sub-agent may call tools of `apps` only; anything else is permission_denied."""

    name: str = Field(min_length=1)
    description: str
    apps: tuple[str, ...] = Field(min_length=1)

    def may_call(self, tool_name: str) -> bool:
        return tool_name.split(".", 1)[0] in self.apps


SUBAGENTS: dict[str, SubAgent] = {a.name: a for a in (
    SubAgent(name="scheduler", description="Manages the calendar and alarms, looks up contacts.",
             apps=("calendar", "clock", "contacts")),
    SubAgent(name="communicator",
             description="Sends and reads messages and email, looks up contacts.",
             apps=("messages", "email", "contacts")),
    SubAgent(name="navigator", description="Finds places, saves them and plans trips.",
             apps=("maps",)),
    SubAgent(name="shopper", description="Searches products, fills the cart and orders.",
             apps=("shopping",)),
    SubAgent(name="librarian", description="Organises files, photos and notes.",
             apps=("files", "notes")),
    SubAgent(name="device_admin", description="Changes device settings.", apps=("settings",)),
)}

# The shape of Delegate.arguments that a sub-agent accepts: the plan, and the context the
# main agent hands over (facts it found; the sub-agent's own context starts from these).
PLAN_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "tool_calls": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1},
                           "arguments": {"type": "object"}},
            "required": ["name"], "additionalProperties": False}},
        "context": {"type": "object"},
    },
    "required": ["tool_calls"], "additionalProperties": False,
}
