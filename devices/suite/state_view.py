"""StateView: the read API checkers use, over the final-state JSON any harness and device produce.

It lives in the shared kit (devices.kit.final_state) so that the harness can build one without
the suite; this module keeps the names the suite and its callers import.
"""

from __future__ import annotations

from devices.kit.final_state import FinalStateError, StateView

__all__ = ["FinalStateError", "StateView"]
