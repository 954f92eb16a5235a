"""An agent written outside the project, against the public policy protocol only: it is loaded by
`flywheel suite eval --policy tests.devices.harness.external_policy:CatalogueReader`."""

from __future__ import annotations

import json
import os
from typing import Any

from schemas.actions import Finish, ToolCall

__all__ = ["SEEN", "CatalogueReader", "NotAPolicy", "seen"]

#: (goal type, catalogue type, number of tools) per episode begun: what the evaluator handed over.
SEEN: list[tuple[str, str, int]] = []
#: Where a policy run sealed off in its own process also writes what it saw (one JSON line each).
SEEN_FILE_ENV = "FLYWHEEL_TEST_SEEN_FILE"


def seen(path: str | os.PathLike[str]) -> list[tuple[str, str, int]]:
    """What a sealed-off CatalogueReader saw, read back from its file."""
    with open(path, encoding="utf-8") as lines:
        return [tuple(json.loads(line)) for line in lines]  # type: ignore[misc]


class CatalogueReader:
    """Calls the first read tool the catalogue lists, then finishes."""

    name = "catalogue-reader"

    def begin(self, goal: Any, catalogue: Any) -> None:
        record = (type(goal).__name__, type(catalogue).__name__, len(catalogue.tools))
        SEEN.append(record)
        if os.environ.get(SEEN_FILE_ENV):
            with open(os.environ[SEEN_FILE_ENV], "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")
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
