"""Dataset snapshots: Parquet training sets with lineage, and their `dataset.snapshotted`.

Schema of `data.parquet` (one row per training example — one step of an admitted
trajectory; the trainer's SFT reads `prompt` and `completion`):

| column | type | meaning |
|---|---|---|
| example_id | string | `<episode_id>:<step>` (unique) |
| kind | string | `demonstration` (an admitted trajectory's step) or `correction` (the oracle's continuation from a failed episode's first wrong step; `policy` then reads `oracle after <policy>`) |
| prompt | string | the chat the policy saw before the step (JSON messages from devices.harness.context: header with goal, date, catalogue, playbook; then every past step), built from the rollout's record; see `context_version` |
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
| failure_event_id, failure_topic / _partition / _offset | string, string, int32, int64 | a correction's failure trace (`failure.traced`) and where it sits; null on demonstrations |

Corrections make up `correction_share` of the rows (FLYWHEEL_CURATOR_CORRECTION_SHARE, a
seeded sample of the admitted corrections' rows; fewer when too few are admitted): the
demonstrations fill the rest of the target. `manifest.json` holds the `dataset.snapshotted`
payload's counts, the file hashes and `corrections` — the share wanted and reached, every
failure event id whose continuation the snapshot holds (with its episode and row count) and
every admitted failure skipped with its reason; `services.dataflow.views` makes that a DuckDB
table (`snapshot_corrections`).
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
from devices.harness.answer import parse_completion
from devices.suite.registry import UnknownTemplate, get_template
from devices.suite.template import PoolError
from schemas.training import DatasetSnapshotted, OffsetRange
from services.curator.corrections import DEFAULT_SHARE, Continuation, continuation, usable_rows
from services.curator.decide import CuratorState, Source, slice_of
from services.curator.examples import CONTEXT_VERSION, rebuilt_pairs, recorded_pairs, trained_steps
from services.dataflow.corrections import mix_corrections
from services.dataflow.heldout import held_out_mentions, task_text
from services.dataflow.ids import derived_id
from services.dataflow.tasks import instance_of

__all__ = [
    "COLUMNS",
    "HeldOutLeak",
    "build_rows",
    "check_train_only",
    "choose_episodes",
    "correction_rows",
    "recipe_of",
    "snapshot_rows_ready",
    "write_recipe",
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
    # True on rows after a deliberate slip of the rollout (the error in the history, the way on).
    "recovery": pa.bool_(),
    **{f"{what}_{col}": kind for what in ("task", "episode", "verdict", "decision")
       for col, kind in (("event_id", pa.string()), ("topic", pa.string()),
                         ("partition", pa.int32()), ("offset", pa.int64()))},
    "failure_event_id": pa.string(), "failure_topic": pa.string(),
    "failure_partition": pa.int32(), "failure_offset": pa.int64(),
}
#: The events a row is built from, in lineage-column order (failure: corrections only).
LINEAGE = ("task", "episode", "verdict", "decision", "failure")
SCHEMA = pa.schema(list(COLUMNS.items()))


class HeldOutLeak(ValueError):
    """A row of a snapshot comes from a dev or test instance."""


def choose_episodes(state: CuratorState, target_rows: int) -> list[str]:
    """Admitted episodes rebalanced toward the target mix: repeatedly the slice furthest
    below its share, until `target_rows` rows (all admitted episodes when fewer)."""
    by_slice: dict[str, list[str]] = {}
    for episode_id in state.admitted:
        if episode_id in state.corrections:
            continue  # corrections join at their share (write_snapshot), not in the target
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
        rows += trained_steps(state.episodes[episode_id][0])
    return chosen


def _lineage(prefix: str, source: Source) -> dict[str, Any]:
    return {f"{prefix}_event_id": source.event_id, f"{prefix}_topic": source.topic,
            f"{prefix}_partition": source.partition, f"{prefix}_offset": source.offset}


def build_rows(state: CuratorState, episode_ids: list[str], admission_policy: str,
               harness: Any = None) -> list[dict[str, Any]]:
    """One row per step of each episode, its prompt built from the rollout's record of what
    the policy was shown (services.curator.examples.recorded_pairs; no simulator). An episode
    recorded without it gets its header from `harness` (a Harness around a SimPhone, reset to
    the task, nothing replayed); without a harness such an episode gives no rows (logged)."""
    rows = []
    for episode_id in episode_ids:
        episode = state.episodes[episode_id][0]
        task = state.tasks[episode.task_id][0]
        if episode_id in state.corrections:
            rows.extend(_correction_rows(state, episode_id, admission_policy, harness))
            continue
        pairs = recorded_pairs(episode)
        if pairs is None and harness is not None:
            pairs = rebuilt_pairs(instance_of(task), episode.steps, harness)
        if pairs is None:
            logger.warning("episode %s has no recorded context and no harness rebuilds it: no rows",
                           episode_id)
            continue
        slipped = False  # a deliberate slip (never a row) came before: the row shows recovery
        for step, (prompt, completion) in zip(episode.steps, pairs, strict=True):
            if not step.target:
                slipped = True
                continue
            rows.append(_row(state, episode_id, "demonstration", f"{episode_id}:{step.index}",
                             step.index, prompt, completion, step.action.action_type,
                             admission_policy, CONTEXT_VERSION, recovery=slipped))
    return rows


def _row(state: CuratorState, episode_id: str, kind: str, example_id: str, step_index: int,
         prompt: str, completion: str, action_type: str, admission_policy: str,
         context_version: str, *, recovery: bool = False) -> dict[str, Any]:
    episode, episode_source = state.episodes[episode_id]
    verdict, verdict_source = state.verdicts[episode_id]
    task, task_source = state.tasks[episode.task_id]
    admission, decision_source = state.admitted[episode_id]
    return {
        "example_id": example_id, "kind": kind, "prompt": prompt, "completion": completion,
        "step_index": step_index, "steps_in_episode": len(episode.steps),
        "action_type": action_type, "goal": task.goal, "task_id": task.task_id,
        "template": task.template, "family": task.family, "tier": task.tier,
        "split": task.split, "origin": task.origin, "episode_id": episode_id,
        "policy": episode.policy if kind == "demonstration" else f"oracle after {episode.policy}",
        "harness": episode.harness, "verifier": verdict.verifier,
        "verdict_score": verdict.score, "review_id": admission.review_id,
        "review_decision_id": admission.decision_id, "admission_policy": admission_policy,
        "context_version": context_version, "recovery": recovery,
        **_lineage("task", task_source), **_lineage("episode", episode_source),
        **_lineage("verdict", verdict_source), **_lineage("decision", decision_source),
        **(_lineage("failure", state.failure_sources[episode_id]) if kind == "correction"
           else dict.fromkeys(("failure_event_id", "failure_topic", "failure_partition",
                               "failure_offset"))),
    }


def _correction_rows(state: CuratorState, episode_id: str, admission_policy: str,
                     harness: Any) -> list[dict[str, Any]]:
    """The oracle's continuation from the failing state (needs the replay harness); [] with
    the reason logged when there is none."""
    found = correction_rows(state, episode_id, admission_policy, harness)
    return found if isinstance(found, list) else []


def correction_rows(state: CuratorState, episode_id: str, admission_policy: str,
                    harness: Any) -> list[dict[str, Any]] | str:
    """A failed episode's correction rows (each naming its failure event), or why none."""
    episode = state.episodes[episode_id][0]
    task = state.tasks[episode.task_id][0]
    failure = state.failures[episode_id]
    if harness is None:
        return "no replay harness"
    found = continuation(task, episode, failure, harness)
    if not isinstance(found, Continuation):
        return found.reason
    return [_row(state, episode_id, "correction", f"{episode_id}:c{found.start + j}",
                 found.start + j, prompt, completion, parse_completion(completion).action_type,
                 admission_policy, CONTEXT_VERSION)
            for j, (prompt, completion) in enumerate(found.pairs)]


def check_train_only(rows: list[dict[str, Any]], instances: dict[str, dict[str, Any]]) -> None:
    """Raises HeldOutLeak unless every row is a train instance: labelled train, from templates
    that serve train, with no pooled parameter outside the train pool and no dev or test pool
    value in its goal or parameters. `instances` maps task_id -> {"template", "params",
    "goal"} (parts in params for composed tasks)."""
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
        mentions = held_out_mentions(task_text(str(info.get("goal", "")), info["params"]))
        if mentions:
            bad.append(f"{row['example_id']} ({row['task_id']}) mentions {', '.join(mentions[:3])}")
    if bad:
        raise HeldOutLeak(f"{len(bad)} snapshot rows are not train instances; first: {bad[0]}")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot_rows_ready(state: CuratorState, share: float = DEFAULT_SHARE) -> int:
    """Admitted rows a snapshot can hold at `share`: every demonstration step plus the
    admitted corrections' rows up to that share (the service's trigger counts these, on every
    event: from the counts the state keeps, not by going over every admitted episode)."""
    return usable_rows(state.demonstration_rows, state.correction_rows, share)


def _available_corrections(state: CuratorState, admission_policy: str, harness: Any,
                           share: float) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Every admitted correction's rows (none are replayed at share 0), and the admitted
    failures whose continuation could not be rebuilt, with the reason."""
    available: list[dict[str, Any]] = []
    skipped = []
    for episode_id in state.admitted:
        if episode_id not in state.corrections or not share:
            continue
        found = correction_rows(state, episode_id, admission_policy, harness)
        if isinstance(found, str):
            skipped.append({"failure_event_id": state.failures[episode_id].event_id,
                            "episode_id": episode_id, "reason": found})
        else:
            available.extend(found)
    return available, skipped


def _choose_demonstrations(state: CuratorState, target_rows: int, corrections: int,
                           share: float) -> list[str]:
    """Demonstrations so that they plus the corrections their share allows (of `corrections`
    available rows) reach `target_rows`, when enough are admitted."""
    demonstrations = sum(1 for e in state.admitted if e not in state.corrections)
    want = target_rows - min(corrections, round(target_rows * share))
    while True:
        chosen = choose_episodes(state, want)
        rows = sum(trained_steps(state.episodes[e][0]) for e in chosen)
        total = usable_rows(rows, corrections, share)
        if total >= target_rows or len(chosen) >= demonstrations:
            return chosen
        want += target_rows - total


def _mix(demonstrations: list[dict[str, Any]], available: list[dict[str, Any]],
         skipped: list[dict[str, str]], share: float, chosen: list[str],
         ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The demonstration rows plus a seeded sample of the available correction rows making
    up `share` of the result, and the manifest's `corrections` record."""
    seed = int(derived_id("corrections", *sorted(chosen))[:8], 16)
    mixed, report = mix_corrections(pa.Table.from_pylist(demonstrations, schema=SCHEMA),
                                    pa.Table.from_pylist(available, schema=SCHEMA),
                                    share, seed=seed, mark=None)
    rows = mixed.to_pylist()
    taken = Counter((r["failure_event_id"], r["episode_id"]) for r in rows
                    if r["kind"] == "correction")
    record = {"share_wanted": share, "share": round(report.share, 6),
              "rows": report.corrections_used, "rows_available": report.corrections_available,
              "failures": [{"failure_event_id": f, "episode_id": e, "rows": n}
                           for (f, e), n in sorted(taken.items())],
              "skipped": skipped}
    return rows, record


def write_snapshot(state: CuratorState, target_rows: int, root: Path, blobs: BlobStore,
                   admission_policy: str, *, cause: Any, harness: Any = None,
                   correction_share: float = DEFAULT_SHARE) -> DatasetSnapshotted:
    """Writes `<root>/<snapshot_id>/data.parquet` and `manifest.json` and returns the event:
    demonstrations, then corrections making up `correction_share` of the rows, together at
    least `target_rows` when that many are admitted (see the module docstring).
    Deterministic in the state: a repeat after a crash rewrites the same files and event.
    The manifest's `recipe` names every input, so `services.curator.rebuild` reproduces the
    same bytes from the event archive alone."""
    available, skipped = _available_corrections(state, admission_policy, harness,
                                                correction_share)
    chosen = _choose_demonstrations(state, target_rows, len(available), correction_share)
    counts = {k: v for k, v in sorted(state.counts.items())}
    counts.update({"admitted_episodes": len(state.admitted), "review_queue": state.review_queue})
    return write_recipe(state, chosen, available, skipped, root, blobs, admission_policy,
                        cause=cause, harness=harness, correction_share=correction_share,
                        state_counts=counts)


def recipe_of(state: CuratorState, chosen: list[str], correction_share: float,
              harness: Any) -> dict[str, Any]:
    """What a snapshot is made of, by event: the demonstrations in the order chosen, every
    admitted correction considered (admission order: the seeded sample draws from them), the
    decision that admitted each, the correction share and the replay harness's version."""
    corrections = [e for e in state.admitted if e in state.corrections] if correction_share else []
    return {"demonstrations": list(chosen), "corrections": corrections,
            "decisions": {e: state.admitted[e][1].event_id for e in [*chosen, *corrections]},
            "correction_share": correction_share,
            "replay_harness": getattr(getattr(harness, "spec", None), "version", None)}


def write_recipe(state: CuratorState, chosen: list[str], available: list[dict[str, Any]],
                 skipped: list[dict[str, str]], root: Path, blobs: BlobStore,
                 admission_policy: str, *, cause: Any, harness: Any, correction_share: float,
                 state_counts: dict[str, Any], extra: dict[str, Any] | None = None,
                 ) -> DatasetSnapshotted:
    """The files and event of a snapshot of `chosen` demonstrations plus the seeded share of the
    `available` correction rows; `state_counts` are the curator's counts when it wrote (the
    manifest's `counts`, to which the rows' own counts are added); `extra` adds manifest keys
    (a corrected snapshot's `corrected_from`)."""
    rows, corrections = _mix(build_rows(state, chosen, admission_policy, harness), available,
                             skipped, correction_share, chosen)
    fixes = sorted({r["example_id"] for r in rows if r["kind"] == "correction"})
    chosen_all = chosen + sorted({f["episode_id"] for f in corrections["failures"]})
    instances = {state.tasks[t][0].task_id: {"template": state.tasks[t][0].template,
                                             "params": state.tasks[t][0].params,
                                             "goal": state.tasks[t][0].goal}
                 for t in {state.episodes[e][0].task_id for e in chosen_all}}
    check_train_only(rows, instances)
    snapshot_id = derived_id("snapshot", *sorted(chosen), *fixes)[:20]
    folder = root / snapshot_id
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    data_path = folder / "data.parquet"
    tmp = folder / ".data.parquet.tmp"
    pq.write_table(table, tmp)
    tmp.replace(data_path)
    source_ids = sorted({row[f"{w}_event_id"] for row in rows for w in LINEAGE
                         if row[f"{w}_event_id"] is not None})
    offsets: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        for what in LINEAGE:
            if row[f"{what}_partition"] is not None and row[f"{what}_offset"] is not None:
                offsets.setdefault((row[f"{what}_topic"], row[f"{what}_partition"]),
                                   []).append(row[f"{what}_offset"])
    composition = Counter(f"{r['family']}/{r['template']}/{r['tier']}" for r in rows)
    families = Counter(r["family"] for r in rows)
    counts = dict(state_counts)
    counts.update({"episodes_in_snapshot": len(chosen_all),
                   "held_back_by_rebalance": int(counts.get("admitted_episodes", 0)) - len(chosen_all),
                   "correction_rows": sum(r["kind"] == "correction" for r in rows),
                   "recovery_rows": sum(bool(r["recovery"]) for r in rows),
                   "correction_failures": len(corrections["failures"]),
                   "correction_rows_available": corrections["rows_available"]})
    files = {"data.parquet": _sha256(data_path)}
    manifest = {"snapshot_id": snapshot_id, "rows": len(rows), "kind": "sft",
                "admission_policy": admission_policy, "counts": dict(sorted(counts.items())),
                "composition": dict(sorted(composition.items())),
                "family_counts": dict(sorted(families.items())), "files": files,
                "columns": list(COLUMNS), "source_event_ids": len(source_ids),
                "corrections": corrections,
                "recipe": recipe_of(state, chosen, correction_share, harness), **(extra or {})}
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
