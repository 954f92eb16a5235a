"""The learning bench's corrections round: a failed episode becomes the oracle's way on from its
first wrong step; a solved one yields nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench.dagger import Corrections, collect_corrections, correction_snapshot, first_wrong_step
from devices.suite.instances import generate_split, of_tiers
from devices.suite.policies import OraclePolicy
from schemas.actions import Answer, Finish, ToolCall


class Dawdler:
    """Says something instead of acting, then gives up: fails every task at its first step."""

    name = "dawdler"

    def begin(self, goal, catalogue) -> None:
        self._said = False

    def next_action(self, observation):
        if not self._said:
            self._said = True
            return Answer(text="let me think")
        return Finish()


class Oracle(OraclePolicy):
    """The suite's oracle, prepared for each task as the corrections round plays it."""

    def __init__(self, tasks) -> None:
        super().__init__()
        self._tasks = {t.goal: t for t in tasks}

    def begin(self, goal, catalogue) -> None:
        self.prepare(self._tasks[goal])
        super().begin(goal, catalogue)


def _tasks(k: int = 3):
    return of_tiers(generate_split("train", 1, 3), ["easy"])[:k]


def test_first_wrong_step_is_the_first_difference_from_the_oracle() -> None:
    read, write = ToolCall(name="clock.list_timers"), ToolCall(name="clock.start_timer", arguments={"seconds": 60})
    assert first_wrong_step([read, write], [read, write]) == 2  # all matched: the episode stopped short
    assert first_wrong_step([read, Finish()], [read, write]) == 1
    assert first_wrong_step([write], [read, write]) == 0
    assert first_wrong_step([read, write, Finish()], [read, write]) == 2  # past the oracle's end


def test_a_failed_episode_is_continued_by_the_oracle_after_its_wrong_step(tmp_path: Path) -> None:
    tasks = _tasks()
    found = collect_corrections(Dawdler(), tasks)
    assert (found.episodes, found.failed, found.corrected) == (3, 3, 3)
    assert sum(found.first_wrong_actions.values()) == 3
    by_task: dict[str, list[dict]] = {}
    for row in found.rows:
        by_task.setdefault(row["task_id"], []).append(row)
    assert set(by_task) == {t.task_id for t in tasks}
    for rows in by_task.values():
        assert rows[0]["step"] == 1  # after the wrong step: recovery from the state it left
        history = json.loads(rows[0]["prompt"])
        assert any("let me think" in json.dumps(m) for m in history if m["role"] == "assistant")
        assert all(r["kind"] == "correction" and r["recovery"] for r in rows)
        assert rows[-1]["action_type"] == "finish"


def test_a_solved_episode_yields_no_correction() -> None:
    tasks = _tasks(2)
    found = collect_corrections(Oracle(tasks), tasks)
    assert (found.episodes, found.failed, found.rows) == (2, 0, [])


def test_the_snapshot_mixes_corrections_with_a_replay_and_reports_the_share(tmp_path: Path) -> None:
    from trainer.data import build_oracle_snapshot

    earlier = build_oracle_snapshot(tmp_path / "sft", n_per_template=1, tiers=["easy"])
    found = collect_corrections(Dawdler(), _tasks(2))
    path, makeup = correction_snapshot(tmp_path / "dagger", found, earlier, replay=1.0)
    rows = pq.read_table(path / "data.parquet").to_pylist()
    kinds = {r["kind"] for r in rows}
    assert kinds == {"correction", "demonstration"}
    assert len({r["task_id"] for r in rows if r["kind"] == "demonstration"}) == 2  # one replayed per corrected
    assert makeup["correction_share"] == pytest.approx(makeup["correction_rows"] / len(rows))
    with pytest.raises(ValueError, match="no failed episode"):
        correction_snapshot(tmp_path / "empty", Corrections(), earlier, replay=0.0)
