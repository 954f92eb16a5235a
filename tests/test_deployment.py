"""docker-compose.yml parses, describes a 3-broker KRaft cluster, and wires real services and settings."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from devices.adb.settings import AdbSettings
from services.archiver.settings import ArchiverSettings
from services.cli.main import app
from services.device_runner.settings import DeviceRunnerSettings
from services.evaluator.settings import EvaluatorSettings
from services.gate.settings import GateSettings
from services.rollout.settings import RolloutSettings
from services.trainer.settings import TrainerSettings
from streams.settings import BusSettings

COMPOSE = yaml.safe_load((Path(__file__).parents[1] / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
BROKERS = {name: svc for name, svc in SERVICES.items() if name.startswith("kafka-")}
FLYWHEEL = {name: svc for name, svc in SERVICES.items() if svc.get("image") == "flywheel:latest"}
# Longest prefix first, so FLYWHEEL_DEVICE_RUNNER_X is not read as a BusSettings field.
SETTINGS_BY_PREFIX = sorted(
    [(cls.model_config["env_prefix"], cls)
     for cls in (DeviceRunnerSettings, ArchiverSettings, AdbSettings, RolloutSettings, GateSettings,
                 TrainerSettings, EvaluatorSettings, BusSettings)],
    key=lambda pair: -len(pair[0]),
)


def test_three_kraft_brokers_replicate_three_ways_with_two_in_sync() -> None:
    assert len(BROKERS) == 3
    voters = {svc["environment"]["KAFKA_CONTROLLER_QUORUM_VOTERS"] for svc in BROKERS.values()}
    assert len(voters) == 1 and voters.pop().count("@") == 3
    node_ids = {svc["environment"]["KAFKA_NODE_ID"] for svc in BROKERS.values()}
    assert node_ids == {"1", "2", "3"}
    for svc in BROKERS.values():
        env = svc["environment"]
        assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft, no ZooKeeper
        assert env["KAFKA_DEFAULT_REPLICATION_FACTOR"] == "3"
        assert env["KAFKA_MIN_INSYNC_REPLICAS"] == "2"
        assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"


def test_every_service_points_at_all_three_brokers() -> None:
    for name, svc in FLYWHEEL.items():
        servers = svc["environment"]["KAFKA_BOOTSTRAP_SERVERS"].split(",")
        assert sorted(s.split(":")[0] for s in servers) == sorted(BROKERS), name


@pytest.mark.parametrize("name", sorted(FLYWHEEL))
def test_each_container_runs_something_that_exists(name: str) -> None:
    svc = FLYWHEEL[name]
    entrypoint = svc.get("entrypoint")
    if entrypoint:
        assert entrypoint[:2] == ["python", "-m"]
        assert importlib.util.find_spec(f"{entrypoint[2]}.__main__") is not None, entrypoint
    else:
        command = [c for c in svc["command"] if c != "--help"]
        result = CliRunner().invoke(app, [*command, "--help"])
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize("name", sorted(FLYWHEEL))
def test_every_flywheel_variable_is_a_real_settings_field(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {k: str(v) for k, v in FLYWHEEL[name]["environment"].items()}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key, value in env.items():
        if key == "KAFKA_BOOTSTRAP_SERVERS":
            assert BusSettings().bootstrap_servers == value
            continue
        prefix, cls = next((p, c) for p, c in SETTINGS_BY_PREFIX if key.startswith(p))
        field = key[len(prefix):].lower()
        assert field in cls.model_fields, f"{key} is not a field of {cls.__name__}"
        assert str(getattr(cls(), field)) == value, key


def test_device_runners_each_own_a_distinct_device() -> None:
    ids = [svc["environment"]["FLYWHEEL_DEVICE_RUNNER_DEVICE_ID"]
           for svc in FLYWHEEL.values() if "FLYWHEEL_DEVICE_RUNNER_DEVICE_ID" in svc["environment"]]
    assert len(ids) >= 2 and len(ids) == len(set(ids))


def test_phone_runners_use_the_one_configured_adb_server() -> None:
    adb = SERVICES["adb"]
    assert adb["entrypoint"] == ["python", "-m", "services.adb_server"]
    assert adb["command"][0] == "serve" and "phones" in adb["profiles"]
    phones = [svc for svc in FLYWHEEL.values()
              if svc["environment"].get("FLYWHEEL_DEVICE_RUNNER_KIND") == "adb"]
    assert phones, "the phones profile shows at least one phone runner"
    for svc in phones:
        env = svc["environment"]
        assert env["FLYWHEEL_ADB_HOST"] == "adb" and "phones" in svc["profiles"]
        assert env["FLYWHEEL_DEVICE_RUNNER_ADB_SERIAL"]


def test_every_service_package_has_a_container_that_runs_it() -> None:
    """Each service with a `python -m` entry point deploys the same way: one compose service runs it."""
    root = Path(__file__).parents[1] / "services"
    packages = {p.name for p in root.iterdir() if (p / "__main__.py").is_file()}
    running = {svc["entrypoint"][2].removeprefix("services.") for svc in FLYWHEEL.values()
               if svc.get("entrypoint", [])[:2] == ["python", "-m"]}
    assert packages - running == set(), f"no container runs {sorted(packages - running)}"
    for name in ("generator", "rollout", "verifier", "curator", "gate", "trainer", "evaluator"):
        assert SERVICES[name]["volumes"] == ["flywheel-data:/data"]  # the archive, snapshots, checkpoints, registry
    assert SERVICES["gate"]["ports"] == ["8080:8080"]
