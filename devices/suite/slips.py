"""Deliberate first mistakes ("slips") for recovery data: a wrong call the phone refuses, played
before the oracle's real one, so the rows after it show an error and the oracle's way on.

`slip_for` is the one definition, used by the oracle snapshots SFT builds in-process
(`trainer.data.build_oracle_snapshot(recovery=…)`) and by the rollout's slipping oracle
(`FLYWHEEL_ROLLOUT_RECOVERY`), whose slip steps are recorded with `target=False` so that no
training row ever teaches the mistake itself.
"""

from __future__ import annotations

import random
from typing import Any

from schemas.actions import ToolCall

__all__ = ["slip_for"]


def slip_for(action: Any, rng: random.Random) -> Any | None:
    """A plausible first mistake in place of the oracle's tool call `action`: the same call with
    one id argument pointing nowhere (ids never end in `x`, so it is not_found), else a call to a
    verb the app does not have (unknown tool); None when `action` is no tool call."""
    if not isinstance(action, ToolCall):
        return None
    keys = [k for k, v in (action.arguments or {}).items()
            if isinstance(v, str) and (k == "id" or k.endswith("_id"))]
    if keys:
        key = rng.choice(keys)
        return action.model_copy(update={"arguments": {**action.arguments,
                                                       key: f"{key[:2]}{rng.randrange(16**6):06x}x"}})
    app, _, verb = action.name.partition(".")
    return action.model_copy(update={"name": f"{app}.{verb}_all" if verb else f"{app}_all"})
