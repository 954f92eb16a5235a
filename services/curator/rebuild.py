"""A snapshot rebuilt from the event archive alone, and a corrected one without some episodes.

Every snapshot's manifest holds its `recipe` (`services.curator.snapshot.recipe_of`): the
demonstration episodes in the order the curator chose them, every admitted correction it drew
from, the decision event that admitted each, the correction share and the replay harness's
version. `rebuild_snapshot` finds the snapshot's `dataset.snapshotted` event in the archive,
reads that recipe from its manifest, takes every task, episode, verdict, decision and failure
trace it names from the archived topics (with their topic/partition/offset: the rows' lineage),
and writes the snapshot again through the same writer. Equal inputs give the same bytes, so the
sha256 of `data.parquet` and `manifest.json` must equal the ones the event recorded; a
difference is reported file by file. Nothing is read from the snapshot folder it checks.

`corrected_snapshot` writes the same recipe without episodes a re-judging found failing today
(`flywheel rescore --write-snapshot`): a new snapshot id whose manifest names what it was
corrected from and why each episode left.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devices.blobs import BlobNotFound, BlobStore
from schemas.registry import validate_event
from schemas.reviews import ReviewDecided
from schemas.training import DatasetSnapshotted
from services.curator.decide import CuratorState, Source, with_row_counts
from services.curator.snapshot import _available_corrections, write_recipe
from services.dataflow.admission import Admission
from services.dataflow.pmap import PMap

__all__ = ["ArchivedInputs", "RebuildError", "RebuildResult", "corrected_snapshot", "load_inputs",
           "rebuild_snapshot"]

logger = logging.getLogger(__name__)

#: The archived event types a snapshot is built from.
INPUT_TYPES = ("task.proposed", "episode.ended", "verdict.issued", "review.decided",
               "failure.traced", "dataset.snapshotted")
#: Manifest counts the writer derives from the rows (the rest are the curator's state).
DERIVED_COUNTS = ("episodes_in_snapshot", "held_back_by_rebalance", "correction_rows",
                  "correction_failures", "correction_rows_available")


class RebuildError(ValueError):
    """A snapshot cannot be rebuilt: one sentence says which input is missing."""


@dataclass
class RebuildResult:
    """The rebuilt snapshot's folder and, per file, the archived and the rebuilt sha256."""

    snapshot_id: str
    folder: Path
    files: dict[str, tuple[str | None, str]]
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return all(then == now for then, now in self.files.values())


@dataclass
class ArchivedInputs:
    """The archive's events a snapshot can be built from, keyed as the curator's fold keys them."""

    tasks: dict[str, tuple[Any, Source]] = field(default_factory=dict)
    episodes: dict[str, tuple[Any, Source]] = field(default_factory=dict)
    verdicts: dict[str, tuple[Any, Source]] = field(default_factory=dict)
    failures: dict[str, tuple[Any, Source]] = field(default_factory=dict)
    decisions: dict[str, tuple[ReviewDecided, Source]] = field(default_factory=dict)
    snapshots: dict[str, DatasetSnapshotted] = field(default_factory=dict)


def load_inputs(archived: Iterable[dict[str, Any]]) -> ArchivedInputs:
    """Every input event among the `archived` rows (the archive's `topic`, `partition`,
    `offset`, `type` and `payload` columns: `services.cli.snapshot_cmd.archived_inputs` reads
    them), in topic/partition/offset order; as in the curator's fold, a task, verdict or failure
    trace seen again replaces the earlier one, an episode does not."""
    rows = sorted((r for r in archived if r["type"] in INPUT_TYPES and r["payload"]),
                  key=lambda r: (r["topic"], r["partition"], r["offset"]))
    found = ArchivedInputs()
    for row in rows:
        event = validate_event(json.loads(row["payload"]))
        source = Source(event.event_id, row["topic"], row["partition"], row["offset"])
        kind = row["type"]
        if kind == "task.proposed":
            found.tasks[event.task_id] = (event, source)
        elif kind == "episode.ended":
            found.episodes.setdefault(event.episode_id, (event, source))
        elif kind == "verdict.issued":
            found.verdicts[event.episode_id] = (event, source)
        elif kind == "failure.traced":
            found.failures[event.episode_id] = (event, source)
        elif kind == "review.decided":
            found.decisions.setdefault(event.event_id, (event, source))
        else:
            found.snapshots.setdefault(event.snapshot_id, event)
    return found


def _recipe(event: DatasetSnapshotted, blobs: BlobStore) -> dict[str, Any]:
    try:
        manifest = json.loads(blobs.get(event.manifest.sha256))
    except BlobNotFound as error:
        raise RebuildError(f"the manifest of snapshot {event.snapshot_id} (blob "
                           f"{event.manifest.sha256[:12]}) is not in the blob store") from error
    if "recipe" not in manifest:
        raise RebuildError(f"snapshot {event.snapshot_id} was written before snapshots recorded "
                           "their recipe, so it cannot be rebuilt")
    return manifest


def _state(inputs: ArchivedInputs, demonstrations: list[str], corrections: list[str],
           decisions: dict[str, str]) -> CuratorState:
    """A curator state holding exactly the recipe's episodes, admitted by the named decisions."""
    tasks, episodes, verdicts, failures, failure_sources, admitted = {}, {}, {}, {}, {}, {}
    for episode_id in [*demonstrations, *corrections]:
        if episode_id not in inputs.episodes:
            raise RebuildError(f"episode {episode_id} is not in the archive")
        episode = inputs.episodes[episode_id]
        if episode[0].task_id not in inputs.tasks:
            raise RebuildError(f"task {episode[0].task_id} of episode {episode_id} is not in the archive")
        if episode_id not in inputs.verdicts:
            raise RebuildError(f"the verdict on episode {episode_id} is not in the archive")
        decision_id = decisions.get(episode_id)
        if decision_id not in inputs.decisions:
            raise RebuildError(f"decision {decision_id} that admitted episode {episode_id} is not "
                               "in the archive")
        decision, source = inputs.decisions[decision_id]
        if decision.decision != "approved" or not decision.final or episode_id not in decision.approved_ids:
            raise RebuildError(f"decision {decision_id} does not admit episode {episode_id}")
        episodes[episode_id] = episode
        tasks[episode[0].task_id] = inputs.tasks[episode[0].task_id]
        verdicts[episode_id] = inputs.verdicts[episode_id]
        admitted[episode_id] = (Admission(decision.review_id, decision.event_id,
                                          tuple(decision.approved_ids)), source)
        if episode_id in corrections:
            if episode_id not in inputs.failures:
                raise RebuildError(f"the failure trace of correction {episode_id} is not in the archive")
            failures[episode_id], failure_sources[episode_id] = inputs.failures[episode_id]
    return with_row_counts(CuratorState(
        tasks=PMap(tasks), episodes=PMap(episodes), verdicts=PMap(verdicts), failures=PMap(failures),
        failure_sources=PMap(failure_sources), admitted=PMap(admitted),
        corrections=PMap(dict.fromkeys(corrections, 1))))


def _write(inputs: ArchivedInputs, manifest: dict[str, Any], out_root: Path, harness: Any,
           demonstrations: list[str], corrections: list[str],
           extra: dict[str, Any] | None = None) -> tuple[DatasetSnapshotted, list[str]]:
    recipe = manifest["recipe"]
    notes = []
    version = getattr(getattr(harness, "spec", None), "version", None)
    if recipe.get("replay_harness") and recipe["replay_harness"] != version and corrections:
        notes.append(f"corrections were replayed in harness {recipe['replay_harness']}; this "
                     f"rebuild replays them in {version}")
    state = _state(inputs, demonstrations, corrections, recipe["decisions"])
    share = float(recipe["correction_share"])
    policy = manifest["admission_policy"]
    available, skipped = _available_corrections(state, policy, harness, share)
    counts = {k: v for k, v in manifest["counts"].items() if k not in DERIVED_COUNTS}
    with tempfile.TemporaryDirectory() as blob_root:  # the rebuild adds nothing to the data dir's blobs
        event = write_recipe(state, demonstrations, available, skipped, out_root,
                             BlobStore(Path(blob_root)), policy, cause=manifest.get("cause"),
                             harness=harness, correction_share=share, state_counts=counts,
                             extra=extra)
    return event, notes


def _archived(snapshot_id: str, inputs: ArchivedInputs, blob_root: Path
              ) -> tuple[DatasetSnapshotted, dict[str, Any]]:
    """The archived snapshot event and its manifest (with the recipe), or RebuildError."""
    if snapshot_id not in inputs.snapshots:
        known = ", ".join(sorted(inputs.snapshots)[:5]) or "none"
        raise RebuildError(f"no dataset.snapshotted event for snapshot {snapshot_id} in the archive "
                           f"(archived snapshots: {known})")
    archived = inputs.snapshots[snapshot_id]
    return archived, _recipe(archived, BlobStore(blob_root))


def _replay_harness(harness: Any, device_id: str) -> Any:
    if harness is not None:
        return harness
    from services.dataflow.tasks import new_harness
    return new_harness(device_id)


def rebuild_snapshot(snapshot_id: str, inputs: ArchivedInputs, blob_root: Path, out_root: Path,
                     harness: Any = None) -> RebuildResult:
    """Writes snapshot `snapshot_id` again under `out_root` from the archived `inputs` and
    compares each file's sha256 with the archived event's."""
    archived, manifest = _archived(snapshot_id, inputs, blob_root)
    recipe = manifest["recipe"]
    event, notes = _write(inputs, {**manifest, "cause": archived.causation_id}, out_root,
                          _replay_harness(harness, "snapshot-rebuild"),
                          list(recipe["demonstrations"]), list(recipe["corrections"]))
    files = {name: (archived.files.get(name), sha) for name, sha in event.files.items()}
    return RebuildResult(event.snapshot_id, Path(event.path), files, notes)


def corrected_snapshot(snapshot_id: str, inputs: ArchivedInputs, blob_root: Path, out_root: Path,
                       drop: dict[str, str], harness: Any = None) -> DatasetSnapshotted | None:
    """Snapshot `snapshot_id`'s recipe without the episodes in `drop` (episode id -> why), written
    under `out_root` as a new snapshot; None when none of them is in it."""
    archived, manifest = _archived(snapshot_id, inputs, blob_root)
    recipe = manifest["recipe"]
    gone = [e for e in [*recipe["demonstrations"], *recipe["corrections"]] if e in drop]
    if not gone:
        return None
    extra = {"corrected_from": {"snapshot_id": snapshot_id,
                                "dropped": [{"episode_id": e, "why": drop[e]} for e in gone]}}
    event, _ = _write(inputs, {**manifest, "cause": archived.event_id}, out_root,
                      _replay_harness(harness, "snapshot-correct"),
                      [e for e in recipe["demonstrations"] if e not in drop],
                      [e for e in recipe["corrections"] if e not in drop], extra)
    return event
