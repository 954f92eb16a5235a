"""The harness registry and `flywheel harness list|show|diff|rollback`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from schemas.harness import HarnessChange
from services.cli.main import app
from services.dataflow.evolution.delta import apply_changes, with_version
from services.dataflow.registry import HarnessRegistry, RegistryError

runner = CliRunner()
BASE = with_version({"tools": {"hidden": [], "descriptions": {}}, "skills": [],
                     "subagents": [], "memory": {"top_k": 5}, "playbook": ["Read first."]})
NEXT = apply_changes(BASE, [HarnessChange(component="prompt", op="add", name="p",
                                          spec={"text": "Check the date."})])


@pytest.fixture()
def registry(tmp_path: Path) -> HarnessRegistry:
    reg = HarnessRegistry.at_data_dir(tmp_path)
    reg.init(BASE)
    reg.promote(NEXT, proposal_id="hp-1")
    return reg


def test_versions_are_stored_once_and_history_records_every_move(
        registry: HarnessRegistry) -> None:
    assert registry.current() == NEXT["version"]
    assert registry.put(NEXT) == NEXT["version"]  # idempotent
    assert len(list(registry.versions_dir.glob("*.json"))) == 2
    assert [(h.reason, h.version, h.previous) for h in registry.history()] == [
        ("init", BASE["version"], None), ("gate", NEXT["version"], BASE["version"])]
    assert registry.init(BASE) == NEXT["version"]  # init never replaces a current harness
    infos = registry.versions()
    assert [(i.version, i.parent, i.current) for i in infos] == [
        (BASE["version"], None, False), (NEXT["version"], BASE["version"], True)]


def test_rollback_restores_the_stored_spec_byte_for_byte(registry: HarnessRegistry) -> None:
    before = (registry.versions_dir / f"{BASE['version']}.json").read_bytes()
    entry = registry.rollback(BASE["version"][:6])
    assert (entry.version, entry.previous, entry.reason) == (BASE["version"], NEXT["version"],
                                                             "rollback")
    assert registry.current() == BASE["version"]
    assert registry.get("current") == BASE
    assert (registry.versions_dir / f"{BASE['version']}.json").read_bytes() == before
    with pytest.raises(RegistryError, match="already current"):
        registry.rollback(BASE["version"])


def test_bad_versions_and_edited_files_are_refused(registry: HarnessRegistry) -> None:
    with pytest.raises(RegistryError, match="too short"):
        registry.get("ab")
    with pytest.raises(RegistryError, match="no harness version"):
        registry.get("ffffffff")
    with pytest.raises(RegistryError, match="edited by hand"):
        registry.put({**BASE, "version": "000000000000"})
    path = registry.versions_dir / f"{BASE['version']}.json"
    path.write_text(json.dumps({**BASE, "playbook": ["Tampered."]}))
    with pytest.raises(RegistryError, match="was edited"):
        registry.rollback(BASE["version"])
    assert registry.current() == NEXT["version"]  # nothing moved


def test_cli_lists_shows_diffs_and_rolls_back(registry: HarnessRegistry, tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path)]
    listed = runner.invoke(app, ["harness", "list", "--json", *data])
    assert listed.exit_code == 0, listed.output
    assert [v["current"] for v in json.loads(listed.stdout)] == [False, True]

    shown = runner.invoke(app, ["harness", "show", NEXT["version"][:8], *data])
    assert shown.exit_code == 0 and json.loads(shown.stdout) == NEXT

    diffed = runner.invoke(app, ["harness", "diff", BASE["version"], "--json", *data])
    assert diffed.exit_code == 0, diffed.output
    assert json.loads(diffed.stdout) == [{"component": "prompt", "op": "add",
                                          "name": "Check the date.",
                                          "spec": {"text": "Check the date."}}]

    rolled = runner.invoke(app, ["harness", "rollback", BASE["version"], *data])
    assert rolled.exit_code == 0, rolled.output
    assert registry.current() == BASE["version"]
    again = runner.invoke(app, ["harness", "diff", NEXT["version"], *data])
    assert "- prompt" in again.stdout

    missing = runner.invoke(app, ["harness", "rollback", "deadbeef", *data])
    assert missing.exit_code == 1
    assert "no harness version 'deadbeef'" in missing.output
    assert "Traceback" not in missing.output


def test_cli_rounds_promote_through_the_gate_and_write_the_tables(tmp_path: Path) -> None:
    from devices.harness.spec import HarnessSpec, ToolPolicy
    from services.dataflow.evolution.delta import normalise

    base = normalise({**HarnessSpec.default().to_json_dict(),
                      "tools": ToolPolicy(hidden=("messages.send",)).model_dump()})
    spec_path = tmp_path / "base.json"
    spec_path.write_text(json.dumps(base))
    result = runner.invoke(app, ["harness", "rounds", "--generations", "1", "--n", "1",
                                 "--base-spec", str(spec_path), "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "promoted — passed dev and held on test" in result.output
    registry = HarnessRegistry.at_data_dir(tmp_path)
    assert registry.current() == HarnessSpec.default().version
    (folder,) = (tmp_path / "rounds").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["decisions.parquet", "events.parquet",
                                                       "rounds.parquet"]
    bad = runner.invoke(app, ["harness", "rounds", "--policy", "nope:Nothing", "--data-dir",
                              str(tmp_path / "other")])
    assert bad.exit_code == 1 and "Traceback" not in bad.output


def test_rollback_can_be_published_to_the_bus(registry: HarnessRegistry, tmp_path: Path,
                                              bootstrap: str, fresh_topic: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from schemas.topics import TOPICS
    from streams.consumer import TypedBatchConsumer

    harness = fresh_topic("flywheel.harness")
    # the command publishes to the registered topic: point it at this test's fresh copy
    monkeypatch.setitem(TOPICS, "flywheel.harness", harness)
    result = runner.invoke(app, ["harness", "rollback", BASE["version"], "--publish",
                                 "--data-dir", str(tmp_path)],
                           env={"KAFKA_BOOTSTRAP_SERVERS": bootstrap})
    assert result.exit_code == 0, result.output
    consumer = TypedBatchConsumer(bootstrap, [harness], group_id=None)
    try:
        records = []
        for _ in range(20):
            records += consumer.poll_batch(500)
            if records:
                break
    finally:
        consumer.close()
    (record,) = records
    assert (record.event.reason, record.event.harness, record.event.previous) == (
        "rollback", BASE["version"], NEXT["version"])
    offline = runner.invoke(app, ["harness", "rollback", NEXT["version"], "--publish",
                                  "--data-dir", str(tmp_path)],
                            env={"KAFKA_BOOTSTRAP_SERVERS": ""})
    assert offline.exit_code == 1 and "needs a running bus" in offline.output
    assert registry.current() == NEXT["version"]  # the registry moved anyway


def test_rollouts_load_the_current_spec(tmp_path: Path) -> None:
    from devices.harness.spec import HarnessSpec

    empty = HarnessRegistry.at_data_dir(tmp_path / "empty")
    assert empty.current_spec().version == HarnessSpec.default().version
    registry = HarnessRegistry.at_data_dir(tmp_path / "reg")
    default = HarnessSpec.default().to_json_dict()
    changed = apply_changes(default, [HarnessChange(component="prompt", op="add", name="p",
                                                    spec={"text": "Check the date."})])
    registry.init(default)
    registry.promote(changed)
    assert registry.current_spec().version == changed["version"]
    assert "Check the date." in registry.current_spec().playbook
