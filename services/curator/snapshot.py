"""Dataset snapshots: Parquet training sets with lineage, and their `dataset.snapshotted`.

Schema of `data.parquet` (one row per training example — one step of an admitted
trajectory; the trainer's SFT reads `prompt` and `completion`):

| column | type | meaning |
|---|---|---|
| example_id | string | `<episode_id>:<step>` (unique) |
| kind | string | `demonstration` (an admitted trajectory's step) |
| prompt | string | the context the policy saw before the step (goal + history) |
| completion | string | the action taken, canonical JSON (the training target) |
| step_index, steps_in_episode | int32 | position in the trajectory |
| action_type | string | e.g. `tool_call`, `answer`, `finish` |
| goal | string | the task's instruction |
| task_id, template, family, tier, split, origin | string | the task (split is always `train`) |
| episode_id, policy, harness | string | the rollout: policy and harness versions |
| verifier, verdict_score | string, float64 | the verifier version and score |
| review_id, review_decision_id, admission_policy | string | who admitted it |
| context_version | string | the prompt rendering's version |
| {task,episode,verdict,decision}_event_id | string | the events it was built from … |
| {task,episode,verdict,decision}_topic / _partition / _offset | string, int32, int64 | … and where they sit in the topics (hence in the archive) |

`manifest.json` holds the `dataset.snapshotted` payload's counts plus the file hashes.
A snapshot never holds a dev or test instance: `check_train_only` runs on the rows before
anything is written and raises `HeldOutLeak` naming the offending rows.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from devices.blobs import BlobStore
from devices.suite.registry import UnknownTemplate, get_template
from devices.suite.template import PoolError
from schemas.training import DatasetSnapshotted, OffsetRange
from services.curator.decide import CuratorState, Source, slice_of
from services.curator.examples import CONTEXT_VERSION, training_pairs
from services.dataflow.ids import derived_id

__all__ = [
    "COLUMNS",
    "HeldOutLeak",
    "build_rows",
    "check_train_only",
    "choose_episodes",
    "write_snapshot",
]

logger = logging.getLogger(__name__)

SOURCE = "curator/1.0.0"

COLUMNS: dict[str, pa.DataType] = {
    "example_id": pa.string(), "kind": pa.string(), "prompt": pa.string(),
    "completion": pa.string(), "step_index": pa.int32(), "steps_in_episode": pa.int32(),
    "action_type": pa.string(), "goal": pa.string(), "task_id": pa.string(),
    "template": pa.string(), "family": pa.string(), "tier": pa.string(), "split": pa.string(),
    "origin": pa.string(), "episode_id": pa.string(), "policy": pa.string(),
    "harness": pa.string(), "verifier": pa.string(), "verdict_score": pa.float64(),
    "review_id": pa.string(), "review_decision_id": pa.string(),
    "admission_policy": pa.string(), "context_version": pa.string(),
    **{f"{what}_{col}": kind for what in ("task", "episode", "verdict", "decision")
       for col, kind in (("event_id", pa.string()), ("topic", pa.string()),
                         ("partition", pa.int32()), ("offset", pa.int64()))},
}


class HeldOutLeak(ValueError):
    """A row of a snapshot comes from a dev or test instance."""


def choose_episodes(state: CuratorState, target_rows: int) -> list[str]:
    """Admitted episodes rebalanced toward the target mix: repeatedly the slice furthest
    below its share, until `target_rows` rows (all admitted episodes when fewer)."""
    by_slice: dict[str, list[str]] = {}
    for episode_id in state.admitted:
        task = state.tasks[state.episodes[episode_id][0].task_id][0]
        by_slice.setdefault(slice_of(task), []).append(episode_id)
    weights = {k: state.weights.get(k, 0.0) for k in by_slice}
    if not any(weights.values()):
        weights = dict.fromkeys(by_slice, 1.0)
    total_weight = sum(weights.values()) or 1.0
    taken: Counter[str] = Counter()
    chosen: list[str] = []
    rows = 0
    while rows < target_rows and any(by_slice.values()):
        open_slices = [k for k, v in by_slice.items() if v]
        n = len(chosen) + 1
        key = max(sorted(open_slices),
                  key=lambda k: weights.get(k, 0.0) / total_weight * n - taken[k])
        episode_id = by_slice[key].pop(0)
        chosen.append(episode_id)
        taken[key] += 1
        rows += len(state.episodes[episode_id][0].steps)
    return chosen


def _lineage(prefix: str, source: Source) -> dict[str, Any]:
    return {f"{prefix}_event_id": source.event_id, f"{prefix}_topic": source.topic,
            f"{prefix}_partition": source.partition, f"{prefix}_offset": source.offset}


def build_rows(state: CuratorState, episode_ids: list[str], admission_policy: str,
               ) -> list[dict[str, Any]]:
    rows = []
    for episode_id in episode_ids:
        episode, episode_source = state.episodes[episode_id]
        verdict, verdict_source = state.verdicts[episode_id]
        task, task_source = state.tasks[episode.task_id]
        admission, decision_source = state.admitted[episode_id]
        pairs = training_pairs(task.goal, episode.steps)
        for step, (prompt, completion) in zip(episode.steps, pairs):
            rows.append({
                "example_id": f"{episode_id}:{step.index}", "kind": "demonstration",
                "prompt": prompt, "completion": completion, "step_index": step.index,
                "steps_in_episode": len(episode.steps), "action_type": step.action.action_type,
                "goal": task.goal, "task_id": task.task_id, "template": task.template,
                "family": task.family, "tier": task.tier, "split": task.split,
                "origin": task.origin, "episode_id": episode_id, "policy": episode.policy,
                "harness": episode.harness, "verifier": verdict.verifier,
                "verdict_score": verdict.score, "review_id": admission.review_id,
                "review_decision_id": admission.decision_id,
                "admission_policy": admission_policy, "context_version": CONTEXT_VERSION,
                **_lineage("task", task_source), **_lineage("episode", episode_source),
                **_lineage("verdict", verdict_source), **_lineage("decision", decision_source),
            })
    return rows


def check_train_only(rows: list[dict[str, Any]], instances: dict[str, dict[str, Any]]) -> None:
    """Raises HeldOutLeak unless every row is a train instance: labelled train, from a
    template that serves train, with every pooled parameter in the train pool.
    `instances` maps task_id -> {"template": ..., "params": ...} (parts for composed tasks)."""
    bad = []
    for row in rows:
        if row["split"] != "train":
            bad.append(f"{row['example_id']} ({row['task_id']}) is a {row['split']} instance")
            continue
        info = instances.get(row["task_id"])
        if info is None:
            bad.append(f"{row['example_id']}: task {row['task_id']} is unknown")
            continue
        parts = info["params"].get("parts") if str(info["template"]).startswith("composed:") \
            else [{"template": info["template"], "params": info["params"]}]
        for part in parts or []:
            try:
                template = get_template(str(part["template"]))
                if "train" not in template.splits():
                    raise PoolError(f"template {template.name} is held out for test")
                template.check_pools(dict(part["params"]), "train")
            except (PoolError, UnknownTemplate, KeyError) as error:
                bad.append(f"{row['example_id']} ({row['task_id']}): {error}")
    if bad:
        raise HeldOutLeak(f"{len(bad)} snapshot rows are not train instances; first: {bad[0]}")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_snapshot(state: CuratorState, target_rows: int, root: Path, blobs: BlobStore,
                   admission_policy: str, *, cause: Any) -> DatasetSnapshotted:
    """Writes `<root>/<snapshot_id>/data.parquet` and `manifest.json` and returns the event.
    Deterministic in the state: a repeat after a crash rewrites the same files and event."""
    chosen = choose_episodes(state, target_rows)
    rows = build_rows(state, chosen, admission_policy)
    instances = {state.tasks[t][0].task_id: {"template": state.tasks[t][0].template,
                                             "params": state.tasks[t][0].params}
                 for t in {state.episodes[e][0].task_id for e in chosen}}
    check_train_only(rows, instances)
    snapshot_id = derived_id("snapshot", *sorted(chosen))[:20]
    folder = root / snapshot_id
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=pa.schema(list(COLUMNS.items())))
    data_path = folder / "data.parquet"
    tmp = folder / ".data.parquet.tmp"
    pq.write_table(table, tmp)
    tmp.replace(data_path)
    source_ids = sorted({row[f"{w}_event_id"] for row in rows
                         for w in ("task", "episode", "verdict", "decision")})
    offsets: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        for what in ("task", "episode", "verdict", "decision"):
            if row[f"{what}_partition"] is not None and row[f"{what}_offset"] is not None:
                offsets.setdefault((row[f"{what}_topic"], row[f"{what}_partition"]),
                                   []).append(row[f"{what}_offset"])
    composition = Counter(f"{r['family']}/{r['template']}/{r['tier']}" for r in rows)
    families = Counter(r["family"] for r in rows)
    counts = {k: v for k, v in sorted(state.counts.items())}
    counts.update({"admitted_episodes": len(state.admitted), "episodes_in_snapshot": len(chosen),
                   "held_back_by_rebalance": len(state.admitted) - len(chosen),
                   "review_queue": state.review_queue})
    files = {"data.parquet": _sha256(data_path)}
    manifest = {"snapshot_id": snapshot_id, "rows": len(rows), "kind": "sft",
                "admission_policy": admission_policy, "counts": counts,
                "composition": dict(sorted(composition.items())),
                "family_counts": dict(sorted(families.items())), "files": files,
                "columns": list(COLUMNS), "source_event_ids": len(source_ids)}
    manifest_bytes = json.dumps(manifest, indent=2, sort_keys=True).encode()
    (folder / "manifest.json").write_bytes(manifest_bytes)
    files["manifest.json"] = hashlib.sha256(manifest_bytes).hexdigest()
    return DatasetSnapshotted(
        event_id=derived_id("dataset.snapshotted", snapshot_id), snapshot_id=snapshot_id,
        kind="sft", path=str(folder), manifest=blobs.put(manifest_bytes, "application/json"),
        rows=len(rows),
        source_event_ids_sha256=hashlib.sha256("\n".join(source_ids).encode()).hexdigest(),
        source_offsets=[OffsetRange(topic=t, partition=p, first=min(v), last=max(v))
                        for (t, p), v in sorted(offsets.items())],
        family_counts=dict(families), composition=dict(composition), counts=counts,
        files=files, admission_policy=admission_policy, source=SOURCE,
        correlation_id=snapshot_id, causation_id=cause)
