"""Fault injection for SimPhone from its own seeded generator, so faults never disturb the world's seed."""

from __future__ import annotations

import logging
import random
from typing import Any

__all__ = ["FAULT_KINDS", "GUI_FAULTS", "SLOW_SCREEN_MS", "TOOL_FAULTS", "TOOL_TIMEOUT_MS", "FaultInjector"]

logger = logging.getLogger(__name__)

TOOL_FAULTS = ("tool_timeout", "transient_error", "slow_screen")
GUI_FAULTS = ("permission_popup", "slow_screen", "app_crash")
FAULT_KINDS = ("permission_popup", "slow_screen", "app_crash", "tool_timeout", "transient_error")
# A slow screen costs a few seconds of device time, like a janky real app.
SLOW_SCREEN_MS = 3_000
# A tool that times out has waited this long on the device clock (a typical client timeout).
TOOL_TIMEOUT_MS = 10_000


class FaultInjector:
    """Draws at most one fault per action with probability `rate`, reproducibly from `seed`."""

    __slots__ = ("_rng", "rate", "seed")

    def __init__(self, rate: float = 0.0, seed: int | None = None) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault_rate must be between 0 and 1, not {rate}.")
        self.rate = rate
        self.seed = seed
        self._rng = random.Random(seed or 0)

    def reseed(self, seed: int) -> None:
        self._rng.seed(seed)

    def draw(self, kinds: tuple[str, ...]) -> str | None:
        """A fault kind from `kinds`, or None (always None, drawing nothing, when rate is 0)."""
        if self.rate <= 0.0 or not kinds:
            return None
        if self._rng.random() >= self.rate:
            return None
        return kinds[self._rng.randrange(len(kinds))]

    def getstate(self) -> Any:
        return self._rng.getstate()

    def setstate(self, state: Any) -> None:
        self._rng.setstate(state)
