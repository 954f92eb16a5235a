"""One checker entry point: `devices.suite.scoring.score_final_state` is the only function that
scores a final state, for template and composed tasks alike (read from the source)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("schemas", "streams", "devices", "trainer", "services", "bench")
#: Names a second scorer of final states would likely take.
SCORER_NAMES = {"score_final_state", "check_final_state", "score_final", "check_final"}


def scorers(root: Path = ROOT) -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in SCORER_NAMES:
                    found.append(f"{path.relative_to(root)}:{node.name}")
    return found


def test_final_states_are_scored_in_one_place() -> None:
    assert scorers() == ["devices/suite/scoring.py:score_final_state"]


def test_the_scan_finds_a_second_scorer(tmp_path: Path) -> None:
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "devices" / "scoring.py").write_text("def score_final_state(task, final):\n    return 1\n")
    (tmp_path / "services" / "tasks.py").write_text(
        "class C:\n    def check_final_state(self, task, final):\n        return 0\n")
    assert scorers(tmp_path) == ["devices/scoring.py:score_final_state", "services/tasks.py:check_final_state"]


def test_scoring_leaves_the_shared_start_world_as_it_was() -> None:
    """The scorer's start-state view shares its rows with the cached default world (no copy);
    every template's checker, on an oracle's final state and on the untouched one, must only
    read them, or it would change the world every later task starts from."""
    import json

    from devices.harness import Harness
    from devices.harness.episode import play
    from devices.sim import SimPhone
    from devices.sim.phone import SimSettings, _base
    from devices.suite.instances import generate_split
    from devices.suite.policies import OraclePolicy
    from devices.suite.scoring import score_final_state

    seed = SimSettings.model_fields["world_seed"].default

    def world() -> str:
        return json.dumps(_base(seed).tables, sort_keys=True, default=str)

    before = world()
    harness = Harness(SimPhone())
    for task in generate_split("dev", 1, 0):  # type: ignore[arg-type]
        harness.reset(task)
        score_final_state(task, harness.final_state())
        play(harness, task, OraclePolicy())
        score_final_state(task, harness.final_state())
    assert world() == before
