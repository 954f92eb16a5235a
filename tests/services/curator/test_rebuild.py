"""A snapshot rebuilt from the archive alone has the same sha256 (demonstrations and corrections);
an archive that lost or changed an input is caught (a missing event is one sentence, a changed one
a different sha256); a corrected snapshot leaves the named episodes out and says why."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from services.archiver.rows import ArchiveRow, to_table
from services.archiver.store import ArchiveStore
from services.cli.snapshot_cmd import archived_inputs
from services.curator.rebuild import RebuildError, corrected_snapshot, rebuild_snapshot
from streams.codec import encode
from tests.services.curator.test_curator import Pipeline
from tests.services.dataflow.helpers import proposed


@dataclass
class _Record:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]]
    timestamp_ms: int
    event: object


def _archive(pipe: Pipeline, root: Path, skip=lambda stored: False, change=None):  # type: ignore[no-untyped-def]
    """What the archiver would hold after the pipeline's run: every folded event at its offset."""
    rows = []
    for stored in pipe.log:
        if skip(stored):
            continue
        event = change(stored.event) if change is not None else stored.event
        rows.append(ArchiveRow(event.event_id, _Record(stored.topic, stored.partition or 0,
                                                       stored.offset or 0, None, encode(event), [],
                                                       0, event)))
    ArchiveStore(root).write(to_table(rows, archived_at_ms=0))
    return archived_inputs(root)


@pytest.fixture(scope="module")
def pipe(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    pipe = Pipeline(tmp_path_factory.mktemp("run"), snapshot_examples=8)
    for template in range(10):
        pipe.run(proposed(i=0, template=template), policy="random")
        pipe.run(proposed(i=1, template=template))
    assert pipe.snapshots, "the run wrote a snapshot"
    return pipe


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path / "data.parquet").to_pylist()


def test_a_rebuilt_snapshot_has_the_same_sha256(pipe: Pipeline, tmp_path: Path) -> None:
    archive = _archive(pipe, tmp_path / "archive")
    for snapshot in pipe.snapshots:
        result = rebuild_snapshot(snapshot.snapshot_id, archive, pipe.blobs, tmp_path / "rebuilt")
        assert result.identical, result.files
        assert result.files["data.parquet"][0] == snapshot.files["data.parquet"]
        assert result.folder != Path(snapshot.path)  # written afresh, not read back
    kinds = {r["kind"] for s in pipe.snapshots for r in _rows(Path(s.path))}
    assert kinds == {"demonstration", "correction"}, "the rebuild covered corrections too"


def test_a_changed_archived_episode_gives_a_different_sha256(pipe: Pipeline, tmp_path: Path) -> None:
    snapshot = pipe.snapshots[-1]
    target = _rows(Path(snapshot.path))[0]["verdict_event_id"]

    def lower(event):  # type: ignore[no-untyped-def]
        return event.model_copy(update={"score": 0.99}) if event.event_id == target else event

    archive = _archive(pipe, tmp_path / "archive", change=lower)
    result = rebuild_snapshot(snapshot.snapshot_id, archive, pipe.blobs, tmp_path / "rebuilt")
    assert not result.identical
    assert result.files["data.parquet"][0] != result.files["data.parquet"][1]


def test_a_missing_decision_or_snapshot_is_one_sentence(pipe: Pipeline, tmp_path: Path) -> None:
    archive = _archive(pipe, tmp_path / "archive", skip=lambda s: s.event.type == "review.decided")
    with pytest.raises(RebuildError, match=r"^decision \S+ that admitted episode \S+ is not in the archive$"):
        rebuild_snapshot(pipe.snapshots[0].snapshot_id, archive, pipe.blobs, tmp_path / "rebuilt")
    with pytest.raises(RebuildError, match="no dataset.snapshotted event for snapshot nope"):
        rebuild_snapshot("nope", archive, pipe.blobs, tmp_path / "rebuilt")


def test_a_corrected_snapshot_leaves_the_episodes_out_and_says_why(pipe: Pipeline, tmp_path: Path) -> None:
    archive = _archive(pipe, tmp_path / "archive")
    snapshot = pipe.snapshots[-1]
    rows = _rows(Path(snapshot.path))
    gone = rows[0]["episode_id"]
    event = corrected_snapshot(snapshot.snapshot_id, archive, pipe.blobs, tmp_path / "fixed",
                               {gone: "today's checker: 0.00 (was 1.00)"})
    assert event is not None and event.snapshot_id != snapshot.snapshot_id
    fixed = _rows(Path(event.path))
    assert gone not in {r["episode_id"] for r in fixed}
    kept = [r for r in rows if r["episode_id"] != gone and r["kind"] == "demonstration"]
    assert {r["example_id"] for r in kept} <= {r["example_id"] for r in fixed}
    manifest = json.loads((Path(event.path) / "manifest.json").read_text())
    assert manifest["corrected_from"] == {"snapshot_id": snapshot.snapshot_id, "dropped": [
        {"episode_id": gone, "why": "today's checker: 0.00 (was 1.00)"}]}
    assert corrected_snapshot(snapshot.snapshot_id, archive, pipe.blobs, tmp_path / "fixed",
                              {"not-in-it": "x"}) is None
