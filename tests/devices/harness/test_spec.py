"""HarnessSpec: content-addressed versions, JSON round trips, and one-sentence errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devices.harness.skills import Skill, SkillStep
from devices.harness.spec import HarnessSpec, SpecError, ToolPolicy, content_version


def test_same_content_same_version_and_any_change_a_new_one() -> None:
    a, b = HarnessSpec.default(), HarnessSpec.default()
    assert a.version == b.version and len(a.version) == 12
    assert all(c in "0123456789abcdef" for c in a.version)
    assert a.version == content_version(json.loads(a.canonical_json()))  # the registry's hash, the same digest
    reworded = a.model_copy(update={"playbook": (*a.playbook, "Read the screen.")})
    hidden = a.model_copy(update={"tools": ToolPolicy(hidden=("contacts.delete",))})
    assert len({a.version, reworded.version, hidden.version}) == 3


def test_parent_is_lineage_not_content() -> None:
    spec = HarnessSpec.default()
    child = spec.model_copy(update={"parent": spec.version})
    assert child.version == spec.version


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    spec = HarnessSpec.default()
    path = spec.save(tmp_path / "specs" / "h.json")
    data = json.loads(path.read_text())
    assert data["version"] == spec.version and len(data["skills"]) == len(spec.skills)
    loaded = HarnessSpec.load(path)
    assert loaded == spec and loaded.version == spec.version


def test_a_hand_edited_spec_with_a_stale_version_is_refused(tmp_path: Path) -> None:
    path = HarnessSpec.default().save(tmp_path / "h.json")
    data = json.loads(path.read_text())
    data["playbook"].append("sneaky")
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError, match="hashes to"):
        HarnessSpec.load(path)
    del data["version"]
    path.write_text(json.dumps(data))
    assert "sneaky" in HarnessSpec.load(path).playbook


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"), ("{not json", "not readable JSON"), ("[1]", "JSON object"),
    ('{"skills": [{"name": "x"}]}', "invalid at skills.0"),
])
def test_bad_spec_files_are_one_sentence(tmp_path: Path, content: str | None,
                                         message: str) -> None:
    path = tmp_path / "spec.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SpecError, match=message):
        HarnessSpec.load(path)


def test_skill_and_subagent_names_are_unique() -> None:
    skill = Skill(name="twice", description="d", parameters={"type": "object"},
                  steps=(SkillStep(tool="clock.now"),))
    with pytest.raises(ValueError, match="repeats skill names"):
        HarnessSpec(skills=(skill, skill))
