"""An agent written outside the project, against the public policy protocol only: it is loaded by
`flywheel suite eval --policy tests.devices.harness.external_policy:CatalogueReader`."""

from __future__ import annotations

from typing import Any

from schemas.actions import Finish, ToolCall

__all__ = ["SEEN", "CatalogueReader", "NotAPolicy"]

#: (goal type, catalogue type, number of tools) per episode begun: what the evaluator handed over.
SEEN: list[tuple[str, str, int]] = []


class CatalogueReader:
    """Calls the first read tool the catalogue lists, then finishes."""

    name = "catalogue-reader"

    def begin(self, goal: Any, catalogue: Any) -> None:
        SEEN.append((type(goal).__name__, type(catalogue).__name__, len(catalogue.tools)))
        self._read = next((t.name for t in catalogue.tools if not t.writes
                           and not t.parameters.get("required")), None)
        self._done = False

    def next_action(self, observation: Any) -> Any:
        if self._read is not None and not self._done:
            self._done = True
            return ToolCall(name=self._read, arguments={})
        return Finish()


class NotAPolicy:
    """Has a name but no begin/next_action."""

    name = "not-a-policy"
