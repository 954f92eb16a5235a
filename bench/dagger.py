"""The learning bench's corrections round (DAgger): the model's own failures become SFT rows.

`collect_corrections` plays a model on training tasks it has not seen (new values), finds each
failed episode's first wrong step (the first action that differs from the oracle's on a fresh
sim, as the verifier's trace does), and asks the curator's `correction_pairs` for the oracle's
way on from that state: after the wrong step when the oracle can still finish from there
(recovery), else instead of it. `correction_snapshot` writes those rows with a replay sample of
the earlier SFT snapshot's episodes beside them (so the round does not forget what it knew) and
reports the corrections' share of the rows.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["Corrections", "collect_corrections", "correction_snapshot", "first_wrong_step"]


@dataclass
class Corrections:
    """What a corrections round collected: rows, and how the played episodes went."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    episodes: int = 0
    failed: int = 0
    corrected: int = 0  # failed episodes the oracle could continue
    first_wrong_actions: dict[str, int] = field(default_factory=dict)  # the oracle's action type there


def _canon(action: Any) -> dict[str, Any]:
    return json.loads(json.dumps(action.model_dump(mode="json"), sort_keys=True))


def first_wrong_step(taken: Sequence[Any], reference: Sequence[Any]) -> int:
    """The index of the first action in `taken` that differs from the oracle's `reference`, or
    len(taken) when every action matched (the episode stopped short)."""
    for index, action in enumerate(taken):
        if index >= len(reference) or _canon(action) != _canon(reference[index]):
            return index
    return len(taken)


def collect_corrections(policy: Any, tasks: Sequence[Any]) -> Corrections:
    """Plays `policy` on `tasks` in a SimPhone harness and turns each failed episode into the
    oracle's continuation from its first wrong step (rows in the oracle snapshot's shape)."""
    from devices.harness.answer import parse_completion
    from devices.harness.context import CONTEXT_VERSION
    from devices.suite.registry import get_template
    from devices.suite.scoring import score_final_state
    from services.curator.examples import correction_pairs
    from services.dataflow.tasks import new_harness, oracle_actions
    from services.evolver.suite_runner import play_episode

    found = Corrections()
    harness = new_harness("sim-dagger")
    reference_harness = new_harness("sim-dagger-oracle")
    try:
        for task in tasks:
            steps, _outcome, _failure = play_episode(harness, task, policy)
            found.episodes += 1
            if score_final_state(task, harness.final_state()).score >= 1.0:
                continue
            found.failed += 1
            reference, _ = oracle_actions(task, reference_harness)
            wrong = first_wrong_step([s.action for s in steps], reference)
            if wrong < len(reference):
                kind = reference[wrong].action_type
                found.first_wrong_actions[kind] = found.first_wrong_actions.get(kind, 0) + 1
            continued = correction_pairs(task, steps, wrong, harness)
            if continued is None:
                continue
            start, pairs = continued
            found.corrected += 1
            tier = get_template(task.template).tier
            for offset, (context, completion) in enumerate(pairs):
                found.rows.append({
                    "prompt": context, "completion": completion, "example_id": f"{task.task_id}:c{start + offset}",
                    "task_id": task.task_id, "template": task.template, "family": task.family, "tier": tier,
                    "action_type": parse_completion(completion).action_type, "step": start + offset,
                    "context_version": CONTEXT_VERSION, "recovery": True, "kind": "correction"})
    finally:
        harness.close()
        reference_harness.close()
    return found


def correction_snapshot(out_dir: Path, corrections: Corrections, replay_from: Path, *, replay: float,
                        seed: int = 0) -> tuple[Path, dict[str, Any]]:
    """A snapshot of the correction rows plus `replay` × as many of the earlier snapshot's
    episodes (seeded, whole episodes), and its make-up: rows, correction rows and their share."""
    from trainer.data import DATA_FILE, MANIFEST_FILE

    earlier = pq.read_table(replay_from / DATA_FILE).to_pylist()
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in earlier:
        by_task.setdefault(row["task_id"], []).append({**row, "kind": row.get("kind") or "demonstration"})
    corrected_tasks = len({row["task_id"] for row in corrections.rows})
    chosen = sorted(by_task)
    random.Random(seed).shuffle(chosen)
    replayed = [row for task_id in chosen[:round(replay * corrected_tasks)] for row in by_task[task_id]]
    rows = replayed + corrections.rows
    if not rows:
        raise ValueError("the corrections round found no failed episode the oracle could continue")
    out_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), out_dir / DATA_FILE)
    share = len(corrections.rows) / len(rows)
    makeup = {"rows": len(rows), "correction_rows": len(corrections.rows), "replay_rows": len(replayed),
              "correction_share": share, "episodes_played": corrections.episodes, "failed": corrections.failed,
              "corrected": corrections.corrected, "first_wrong_actions": corrections.first_wrong_actions}
    (out_dir / MANIFEST_FILE).write_text(json.dumps({"snapshot_id": f"dagger-{seed}", "kind": "sft",
                                                     "source": "corrections"} | makeup, indent=2))
    return out_dir, makeup
