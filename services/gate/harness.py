"""The gate's view of harness promotions: the harness topic folded as the evolver folds it.

`HarnessBoard.apply` folds every `harness.*` event with `services.dataflow.evolution.decide.evolve` (the
evolver's own fold), so the gate lists exactly the promotions the evolver holds back for the
veto window (`pending_promotions`). A veto the gate itself signed is remembered per proposal
until the evolver's `harness.rejected` arrives; vetoes without the gate's signature are ignored
here as the evolver ignores them.

The board starts from the registry's current harness (or the built-in one) and never needs the
specs themselves to list what waits: a promotion of a version it cannot rebuild is folded with
a version-only stand-in, which only ends that proposal's wait on the page.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from schemas.envelope import Event, utc_now
from schemas.harness import (
    HarnessChange,
    HarnessEvaluated,
    HarnessPromoted,
    HarnessRejected,
    HarnessVetoed,
)
from services.dataflow.evolution.decide import (
    EvolverConfig,
    EvolverState,
    PendingPromotion,
    evolve,
    initial_state,
    pending_promotions,
    veto,
)
from services.dataflow.registry import HarnessRegistry, RegistryError

__all__ = ["MAX_NOTE_CHARS", "HarnessBoard", "PendingView", "VetoRefused", "change_summary"]

logger = logging.getLogger(__name__)

#: A veto's note is a sentence or two for the log, not an essay.
MAX_NOTE_CHARS = 1000
#: Event ids remembered against redeliveries (far above the harness topic's traffic).
MAX_SEEN_IDS = 100_000
SOURCE = "gate/1"


class VetoRefused(ValueError):
    """The proposal is known but cannot be vetoed now (not pending, already vetoed, …)."""


_WHAT = {"skill": "skill", "tool": "tool", "memory": "memory policy", "prompt": "playbook",
         "subagent": "sub-agent"}


def change_summary(change: HarnessChange) -> str:
    """One line saying what `change` does to the harness, e.g. "tool description of
    messages.send: 'Send a text …'" or "memory policy top_k → 10"."""
    spec = change.spec
    if change.component == "tool":
        if "description" in spec:
            return f"tool description of {change.name}: {_short(spec['description'])}"
        if change.op == "add":
            return f"tool {change.name} shown to the agent"
        if change.op == "remove":
            return f"tool {change.name} hidden from the agent"
    if change.component == "memory" and "value" in spec:
        return f"memory policy {change.name} → {spec['value']}"
    if change.component == "prompt":
        text = spec.get("text")
        verb = {"add": "new", "update": "revised", "remove": "removed"}[change.op]
        return f"{verb} playbook entry {change.name!r}" + (f": {_short(text)}" if text else "")
    if change.component == "skill":
        verb = {"add": "new", "update": "repaired", "remove": "removed"}[change.op]
        steps = spec.get("steps")
        count = f" ({len(steps)} steps)" if isinstance(steps, list) else ""
        return f"{verb} skill {change.name}{count}"
    return f"{change.op} {_WHAT[change.component]} {change.name}"


def _short(value: Any, limit: int = 160) -> str:
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit - 1] + "…")


@dataclass(frozen=True)
class PendingView:
    """One row of the gate's harness page: a promotion waiting out its veto window."""

    pending: PendingPromotion
    changes: tuple[str, ...]
    dev: HarnessEvaluated
    test: HarnessEvaluated
    seconds_left: float
    vetoed_by: str | None = None
    veto_note: str = ""

    @property
    def proposal_id(self) -> str:
        return self.pending.proposal_id

    def to_json(self) -> dict[str, Any]:
        p = self.pending
        return {
            "proposal_id": p.proposal_id, "base": p.base, "candidate": p.candidate,
            "rationale": p.rationale, "changes": list(self.changes),
            "dev": {"delta": self.dev.delta, "low": self.dev.delta_low,
                    "high": self.dev.delta_high, "episodes": self.dev.episodes,
                    "family_deltas": dict(self.dev.family_deltas)},
            "test": {"delta": self.test.delta, "passed": self.test.passed,
                     "reason": self.test.reason, "episodes": self.test.episodes,
                     "family_deltas": dict(self.test.family_deltas)},
            "motivated_by": list(p.motivated_by), "since": p.since.isoformat(),
            "due": p.due.isoformat(), "seconds_left": self.seconds_left,
            "vetoed_by": self.vetoed_by, "veto_note": self.veto_note}


class HarnessBoard:
    """The folded harness topic behind the gate's harness page (thread-safe)."""

    def __init__(self, spec: Mapping[str, Any], *, veto_window_s: float = 0.0,
                 registry: HarnessRegistry | None = None,
                 trust: Callable[[HarnessVetoed], bool] | None = None,
                 clock: Callable[[], datetime] = utc_now) -> None:
        self.config = EvolverConfig(veto_window_s=veto_window_s)
        self.state: EvolverState = initial_state(spec)
        self.registry = registry
        #: Which vetoes read from the topic count (the gate: its own valid signatures).
        self.trust = trust
        self.clock = clock
        self.lock = threading.RLock()
        self.vetoes: dict[str, HarnessVetoed] = {}
        self.rejected: dict[str, HarnessRejected] = {}
        self.untrusted_vetoes = 0
        self._seen: OrderedDict[str, None] = OrderedDict()

    # ---- the fold ------------------------------------------------------------------------
    def apply(self, event: Event) -> bool:
        """Folds one harness event in; False for a duplicate or an ignored event."""
        with self.lock:
            if event.event_id in self._seen:
                return False
            if isinstance(event, HarnessVetoed) and (self.trust is None
                                                     or not self.trust(event)):
                # not remembered: a forged event cannot take the id of a real one
                self.untrusted_vetoes += 1
                logger.warning("ignored a veto of %s by %s that this gate did not sign",
                               event.proposal_id, event.reviewer)
                return False
            self._seen[event.event_id] = None
            if len(self._seen) > MAX_SEEN_IDS:
                self._seen.popitem(last=False)
            if isinstance(event, HarnessVetoed):
                self.vetoes.setdefault(event.proposal_id, event)
                return True
            if isinstance(event, HarnessRejected):
                self.rejected[event.proposal_id] = event
            self.state = evolve(self._known(event), event, self.config)
            return True

    def _known(self, event: Event) -> EvolverState:
        """A promoted version the fold cannot rebuild from its proposal (a rollback, or a base
        the gate never saw) joins from the registry, else as a version-only stand-in."""
        state = self.state
        if not isinstance(event, HarnessPromoted) or event.harness in state.specs:
            return state
        proposal = state.proposals.get(event.proposal_id)
        if proposal is not None and proposal.base_harness in state.specs:
            return state  # evolve applies the proposal to its base
        spec: Mapping[str, Any] = {"version": event.harness}
        if self.registry is not None:
            try:
                spec = self.registry.get(event.harness)
            except RegistryError:
                pass
        return dataclasses.replace(state, specs={**state.specs, event.harness: spec})

    # ---- reads ---------------------------------------------------------------------------
    def status(self, proposal_id: str) -> str | None:
        with self.lock:
            return self.state.status.get(proposal_id)

    def pending(self, now: datetime | None = None) -> list[PendingView]:
        """Promotions waiting out the veto window, oldest first."""
        now = now or self.clock()
        with self.lock:
            state = self.state
            out = []
            for p in pending_promotions(state, self.config):
                proposal = state.proposals[p.proposal_id]
                vetoed = self.vetoes.get(p.proposal_id)
                out.append(PendingView(
                    pending=p, changes=tuple(change_summary(c) for c in proposal.changes),
                    dev=state.evaluations[(p.proposal_id, "dev")],
                    test=state.evaluations[(p.proposal_id, "test")],
                    seconds_left=max(0.0, (p.due - now).total_seconds()),
                    vetoed_by=vetoed.reviewer if vetoed else None,
                    veto_note=vetoed.note if vetoed else ""))
            return out

    # ---- the veto ------------------------------------------------------------------------
    def veto_event(self, proposal_id: str, reviewer: str, note: str = "") -> HarnessVetoed:
        """The unsigned veto of `proposal_id` by `reviewer`. KeyError (one sentence) when the
        gate has never seen the proposal, VetoRefused when it is not pending or already
        vetoed."""
        note = note.strip()
        if len(note) > MAX_NOTE_CHARS:
            raise VetoRefused(f"the note is {len(note)} characters; keep it under "
                              f"{MAX_NOTE_CHARS}")
        with self.lock:
            status = self.state.status.get(proposal_id)
            if status is None:
                raise KeyError(f"no harness proposal {proposal_id!r} is known to the gate")
            if status == "rejected" and proposal_id in self.rejected:
                why = self.rejected[proposal_id]
                raise VetoRefused(f"proposal {proposal_id} was already rejected "
                                  f"({why.reason}: {why.detail}); there is nothing to veto")
            earlier = self.vetoes.get(proposal_id)
            if earlier is not None and status == "pending":
                raise VetoRefused(f"proposal {proposal_id} was already vetoed by "
                                  f"{earlier.reviewer}; the evolver is rejecting it")
            try:
                unsigned = veto(self.state, proposal_id, reviewer, note)
            except ValueError as error:
                raise VetoRefused(str(error)) from None
        # A fresh, unguessable event id (not derived from the proposal): consumers dedupe on
        # ids before they check signatures, so a predictable id could be taken first by a
        # forged veto and the real one dropped as its duplicate. A retry after a lost
        # acknowledgement is then a second veto, which the evolver ignores once it rejected.
        return HarnessVetoed.model_validate({**unsigned.model_dump(), "source": SOURCE})
