"""The agent boundary from outside: any importable class implementing the protocol is scored
with `--policy MODULE:CLASS`, and it receives the goal text and the catalogue, never the task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devices.harness.catalogue import Catalogue
from devices.suite.policies import Policy, PolicyLoadError, make_policy
from services.cli.main import app
from tests.devices.harness import external_policy

runner = CliRunner()
SPEC = "tests.devices.harness.external_policy:CatalogueReader"


def test_an_external_policy_is_scored_through_the_cli(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(external_policy.SEEN_FILE_ENV, str(tmp_path / "seen.jsonl"))
    external_policy.SEEN.clear()
    result = runner.invoke(app, ["suite", "eval", "--policy", SPEC, "--split", "dev", "--n", "1",
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["policy"] == "catalogue-reader" and len(report["harness_version"]) == 12
    assert report["overall"] <= 0.1
    seen = external_policy.seen(tmp_path / "seen.jsonl")
    assert seen and all(s[:2] == ("str", Catalogue.__name__) and s[2] > 0 for s in seen)
    assert len(seen) == report["episodes"]
    assert not external_policy.SEEN, "the policy ran in its own process, not in the evaluator's"


def test_the_loaded_class_implements_the_protocol() -> None:
    policy = make_policy(SPEC)
    assert isinstance(policy, Policy) and policy.name == "catalogue-reader"


@pytest.mark.parametrize("spec, message", [
    ("no_such_module_xyz:Agent", "cannot import module"),
    ("tests.devices.harness.external_policy:Missing", "has no 'Missing'"),
    ("tests.devices.harness.external_policy:NotAPolicy", "does not implement the policy protocol"),
    ("genius", "unknown policy"),
])
def test_bad_policy_names_are_one_sentence(spec: str, message: str) -> None:
    with pytest.raises(PolicyLoadError, match=message):
        make_policy(spec)
    result = runner.invoke(app, ["suite", "eval", "--policy", spec, "--n", "1"])
    assert result.exit_code == 2 and message.split("'")[0] in " ".join(result.output.split())
    assert "Traceback" not in result.output
