"""State diffs: from a verifier-less episode's stored final state back to its task's start."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from devices.blobs import BlobStore
from devices.harness.harness import Harness
from devices.sim.phone import SimPhone
from devices.suite.episode import run_episode
from devices.suite.policies import OraclePolicy
from devices.suite.registry import get_template
from services.gate.diff import MAX_DIFF_ROWS, diff_states, episode_diff, sim_state_view
from services.gate.queue import TaskInfo
from services.gate.service import Gate
from services.gate.tokens import ReviewerTokens


def solved(template: str = "note_phone_of_relation") -> tuple[dict, dict]:
    """A task instance (JSON) and the fingerprint of the phone after the oracle solved it
    (run through the harness, as the rollout runs it)."""
    instance = get_template(template).generate("train", 0, 0)
    phone = SimPhone()
    result = run_episode(Harness(phone), instance, OraclePolicy())
    assert result.score == 1.0
    return instance.model_dump(mode="json"), phone.state.fingerprint()


def nested(fingerprint: dict) -> dict:
    """The same state in a final-state shape: app → table → id → row."""
    tables: dict = {}
    for name, rows in fingerprint["tables"].items():
        app, table = name.split(".", 1)
        tables.setdefault(app, {})[table] = {row["id"]: row for row in rows}
    return {**fingerprint, "tables": tables}


def test_both_state_shapes_give_the_same_view() -> None:
    _, final = solved()
    assert sim_state_view(final) == sim_state_view(nested(final))


def test_the_diff_of_a_solved_task_is_the_field_it_wrote() -> None:
    instance, final = solved()
    diff = episode_diff(instance, nested(final))
    changed = [d for d in diff if d["path"].startswith("tables.")]
    params = instance["params"]
    assert [d["path"] for d in changed] == [f"tables.notes.notes.{params['_id']}.body"]
    assert params["_phone"] not in changed[0]["before"]
    assert changed[0]["after"].startswith(changed[0]["before"])
    assert changed[0]["after"].endswith(params["_phone"])
    assert episode_diff(instance, final) == diff  # the fingerprint shape gives the same diff
    untouched = episode_diff(instance, json.loads(json.dumps(_fresh(instance))))
    assert [d for d in untouched if d["path"].startswith("tables.")] == []


def _fresh(instance: dict) -> dict:
    from devices.protocol import TaskInstance

    phone = SimPhone()
    phone.reset(TaskInstance.model_validate(instance))
    return phone.state.fingerprint()


def test_long_diffs_are_cut_and_say_so() -> None:
    before = {f"k{i:04d}": i for i in range(MAX_DIFF_ROWS + 5)}
    after = {k: v + 1 for k, v in before.items()}
    diff = diff_states(before, after)
    assert len(diff) == MAX_DIFF_ROWS + 1 and diff[-1]["path"] == "… 5 more changes"


def test_the_gate_computes_a_diff_from_the_stored_final_state(tmp_path: Path) -> None:
    instance, final = solved()
    blobs = BlobStore(tmp_path / "blobs")
    ref = blobs.put(json.dumps(nested(final)).encode(), "application/json")

    class Nowhere:
        def publish(self, event: object) -> None:
            raise AssertionError("nothing is published here")

    gate = Gate(Ed25519PrivateKey.generate(), ReviewerTokens(tmp_path / "r.json"), Nowhere(),
                blobs=blobs)
    info = TaskInfo("goal", "note_phone_of_relation", "tool", "easy", instance)
    episode = SimpleNamespace(episode_id="ep-1", final_state=ref)
    diff = gate.state_diff(episode, info)
    assert diff and any(d["path"].startswith("tables.notes.notes.") for d in diff)
    assert gate.state_diff(episode, info) is diff  # cached
    missing = SimpleNamespace(episode_id="ep-2", final_state=SimpleNamespace(sha256="0" * 64))
    assert gate.state_diff(missing, info) is None
    assert gate.state_diff(SimpleNamespace(episode_id="ep-3"), info) is None  # no final state
