"""`flywheel gate` (keygen, token, serve, fail closed) and `flywheel review` (the terminal loop
against a live gate)."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rich.console import Console
from typer.testing import CliRunner

from services.cli.main import app
from services.cli.review_cmd import review_loop
from tests.services.gate.conftest import LiveGate

pytestmark = pytest.mark.integration


@pytest.fixture
def env(tmp_path: Path, bootstrap: str) -> dict[str, str]:
    return {"FLYWHEEL_DATA_DIR": str(tmp_path), "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
            "FLYWHEEL_GATE_PORT": "0"}


def test_keygen_writes_an_owner_only_key_once(env: dict[str, str], tmp_path: Path) -> None:
    runner = CliRunner()
    made = runner.invoke(app, ["gate", "keygen"], env=env)
    assert made.exit_code == 0, made.output
    key = tmp_path / "gate" / "signing_key.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.with_suffix(".pub").exists()
    again = runner.invoke(app, ["gate", "keygen"], env=env)
    assert again.exit_code == 1 and "already exists" in again.output


def test_token_prints_once_and_stores_a_hash(env: dict[str, str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["gate", "token", "dana"], env=env)
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[0]
    assert token.startswith("fwr_")
    assert token not in (tmp_path / "gate" / "reviewers.json").read_text()


def test_gate_refuses_to_serve_without_a_key(env: dict[str, str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["gate", "--duration", "1"], env=env)
    assert result.exit_code == 1
    assert "refuses to start without one" in result.output
    assert not (tmp_path / "gate" / "signing_key.pem").exists()


def test_gate_serves_with_a_key_until_its_duration(env: dict[str, str]) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["gate", "keygen"], env=env).exit_code == 0
    result = runner.invoke(app, ["gate", "--duration", "1"], env=env)
    assert result.exit_code == 0, result.output
    assert "review gate on http://127.0.0.1:" in result.output
    assert "gate stopped (duration reached)" in result.output


@pytest.fixture
def api(live_gate: LiveGate) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {live_gate.tokens['alice']}"}
    with httpx.Client(base_url=live_gate.url, headers=headers, timeout=30) as client:
        yield client


def test_review_in_the_terminal_one_key_per_decision(live_gate: LiveGate,
                                                     api: httpx.Client) -> None:
    keys = iter(["a", "n", "r", "q"])
    reasons = iter(["the note has the wrong body"])
    out = Console(record=True, width=160)
    tally = review_loop(api, out, lambda: next(keys), lambda prompt: next(reasons))
    assert (tally.approved, tally.skipped, tally.rejected) == (1, 1, 1)
    items = live_gate.handle.gate.queue.items
    assert items["rv-a-pass"].status == "approved"
    assert items["rv-b-fail"].status == "waiting"  # skipped with n
    assert items["rv-c-correction"].status == "rejected"
    assert items["rv-c-correction"].final.reason == "the note has the wrong body"
    text = out.export_text()
    assert live_gate.samples[0].task.goal in text and "state diff" in text


def test_review_refuses_a_rejection_without_a_reason(live_gate: LiveGate,
                                                     api: httpx.Client) -> None:
    keys = iter(["r", "q"])
    tally = review_loop(api, Console(record=True), lambda: next(keys), lambda prompt: "  ")
    assert tally.rejected == 0 and tally.skipped == 1
    assert live_gate.handle.gate.queue.counts()["waiting"] == 3


def test_review_rejects_an_unknown_token(env: dict[str, str], live_gate: LiveGate) -> None:
    result = CliRunner().invoke(app, ["review", "--url", live_gate.url, "--token", "fwr_nope"],
                                env=env)
    assert result.exit_code == 1 and "does not know that reviewer token" in result.output


def test_start_with_run_creates_the_key_and_prints_address_and_token_once(
        env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from services.cli.gate_cmd import start_with_run
    from services.dataflow.verify import DecisionVerifier

    assert DecisionVerifier.for_data_dir(tmp_path).closed  # before the gate: fail closed
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = Console(record=True, width=200)
    handle = start_with_run(env["KAFKA_BOOTSTRAP_SERVERS"], tmp_path, out)
    try:
        text = out.export_text()
        assert handle.url in text and handle.local_token and handle.local_token in text
        key = tmp_path / "gate" / "signing_key.pem"
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
        assert not DecisionVerifier.for_data_dir(tmp_path).closed
        rows = dict(handle.summary_rows(auto_admitted=7))
        assert rows["items auto-admitted by the policy"] == "7"
        assert rows["still waiting for a person"] == "0"
        assert rows["items human-reviewed"] == "0"
        auto = dict(handle.summary_rows(blocking=False))  # --admission auto: nobody was waited for
        assert auto["still waiting for a person (not blocking: --admission auto)"] == "0"
        assert "still waiting for a person" not in auto
    finally:
        handle.stop()


def test_flywheel_review_end_to_end_with_keys_on_stdin(env: dict[str, str],
                                                       live_gate: LiveGate) -> None:
    result = CliRunner().invoke(
        app, ["review", "--url", live_gate.url, "--token", live_gate.tokens["alice"],
              "--verdict", "failed"], input="r" + "loops forever\n" + "q", env=env)
    assert result.exit_code == 0, result.output
    item = live_gate.handle.gate.queue.items["rv-b-fail"]
    assert item.status == "rejected" and item.final.reason == "loops forever"
    assert live_gate.handle.gate.queue.items["rv-a-pass"].status == "waiting"  # filtered out
    assert "flywheel review" in result.output
