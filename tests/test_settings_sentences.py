"""Every bad setting is one sentence naming its variable: a walk over every settings field of
every settings class in the project, then every command and `python -m` service with bad
values, an unreachable broker and an unwritable data dir (no traceback anywhere)."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import time
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic_settings import BaseSettings

from schemas.settings import SettingsError, load_settings

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("schemas", "streams", "services", "devices", "trainer")
#: A value no field of that type accepts.
BAD_BY_TYPE: dict[Any, str] = {int: "not-a-number", float: "not-a-number", bool: "maybe"}
#: Guards against hangs only.
COMMAND_TIMEOUT_S = 90


def _settings_classes() -> list[type[BaseSettings]]:
    """Every BaseSettings subclass defined in the project (found by reading the sources, so a
    new service's settings are walked without editing this test)."""
    found: list[type[BaseSettings]] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text())
            names = [node.name for node in tree.body if isinstance(node, ast.ClassDef)
                     and any(getattr(b, "id", None) == "BaseSettings" for b in node.bases)]
            if names:
                module = importlib.import_module(
                    ".".join(path.relative_to(ROOT).with_suffix("").parts))
                found.extend(getattr(module, name) for name in names)
    return found


def _bad_value(annotation: Any) -> str | None:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return "no-such-choice"
    if annotation in BAD_BY_TYPE:
        return BAD_BY_TYPE[annotation]
    if len(args) == 1:
        return _bad_value(args[0])
    return None


def _cases() -> list[tuple[type[BaseSettings], str, str, str]]:
    cases = []
    for cls in _settings_classes():
        prefix = cls.model_config.get("env_prefix", "")
        for name, field in cls.model_fields.items():
            bad = _bad_value(field.annotation)
            constraints = {type(m).__name__ for m in field.metadata}
            if bad is None and field.annotation is str and constraints & {"MinLen", "_PydanticGeneralMetadata"}:
                bad = "" if "MinLen" in constraints else "bad value !"
            if bad is None:
                continue
            alias = getattr(field.validation_alias, "choices", None)
            variable = str(alias[0]) if alias else f"{prefix}{name}".upper()
            cases.append((cls, name, variable, bad))
            numeric = _annotation_of(field.annotation) in (int, float)
            if numeric:  # beyond any float, and past the field's own bounds
                cases.append((cls, name, variable, "1e400"))
                cases.extend((cls, name, variable, beyond) for beyond in _beyond_bounds(field))
    return cases


def _annotation_of(annotation: Any) -> Any:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return args[0] if len(args) == 1 else annotation


def _beyond_bounds(field: Any) -> list[str]:
    """Values just outside the field's ge/gt/le/lt bounds."""
    out = []
    for item in field.metadata:
        for attr, step in (("ge", -1), ("gt", 0), ("le", 1), ("lt", 0)):
            bound = getattr(item, attr, None)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                out.append(str(bound + step) if isinstance(bound, int) else repr(bound + step * 0.5 or bound))
    return out


CASES = _cases()
IDS = [f"{c.__name__}.{n}={b}" for c, n, _, b in CASES]


def test_the_walk_covers_the_project_settings() -> None:
    classes = {cls.__name__ for cls, *_ in CASES}
    assert {"BusSettings", "ArchiverSettings", "DeviceRunnerSettings", "AdbSettings"} <= classes
    assert len(CASES) >= 25


@pytest.mark.parametrize(("cls", "name", "variable", "bad"), CASES, ids=IDS)
def test_every_settings_field_with_a_bad_value_is_one_sentence_naming_its_variable(
        cls: type[BaseSettings], name: str, variable: str, bad: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith(("FLYWHEEL_", "KAFKA_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv(variable, bad)
    with pytest.raises(SettingsError) as caught:
        load_settings(cls, "test")
    message = str(caught.value)
    assert caught.value.variable == variable
    assert variable in message and "\n" not in message


def _command(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FLYWHEEL_", "KAFKA_"))}
    return subprocess.run([sys.executable, "-m", *args], env={**clean, "COLUMNS": "300",
                          "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S, check=False, cwd=ROOT)


#: Every service's `python -m` entry point (the trainer, evaluator and gate once printed a
#: pydantic traceback for a bad bus setting), then the CLI's commands that reach the bus.
SERVICE_MAINS = [["services.archiver"], ["services.device_runner"], ["services.rollout"],
                 ["services.generator"], ["services.verifier"], ["services.curator"],
                 ["services.evolver"], ["services.trainer"], ["services.evaluator"],
                 ["services.gate"]]
COMMANDS = [*SERVICE_MAINS,
            ["services.cli.main", "topics", "list"], ["services.cli.main", "broker", "status"],
            ["services.cli.main", "dlq", "show", "flywheel.tasks"],
            ["services.cli.main", "archive", "stats"], ["services.cli.main", "sql", "select 1"],
            ["services.cli.main", "run", "--examples", "0", "--duration", "1"]]


@pytest.mark.parametrize("env", [{"FLYWHEEL_BROKER_PORT": "abc"},
                                 {"KAFKA_BOOTSTRAP_SERVERS": "a:b:c"}],
                         ids=["port", "bootstrap"])
@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[1:]) or a[0] for a in COMMANDS])
def test_every_command_says_a_bad_setting_in_one_sentence(args: list[str],
                                                          env: dict[str, str]) -> None:
    result = _command(args, env)
    output = " ".join((result.stdout + result.stderr).split())
    variable = next(iter(env))
    assert result.returncode != 0, output
    assert variable in output and "Traceback" not in output, output


@pytest.mark.parametrize("args", [["services.archiver"], ["services.device_runner"]])
def test_an_unreachable_broker_is_one_sentence_within_the_bootstrap_timeout(
        args: list[str]) -> None:
    started = time.monotonic()
    result = _command(args, {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1"})
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0 and "does not answer" in output, output
    assert "Traceback" not in output
    assert time.monotonic() - started < 30, "not within the bootstrap timeout"


def test_an_unwritable_data_dir_for_the_broker_is_one_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = _command(["services.cli.main", "broker", "start"],
                      {"FLYWHEEL_DATA_DIR": str(blocker / "var"),
                       "FLYWHEEL_BROKER_PORT": "1"})  # never reached: the folder fails first
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0 and "FLYWHEEL_DATA_DIR" in output, output
    assert "Traceback" not in output


#: Bad inputs an outside tester found ending in a traceback: (args, env, words the sentence holds).
NAMED_BAD_INPUTS = [
    (["services.cli.main", "schemas", "export", "/proc/1/x"], {}, "cannot write the schemas"),
    (["services.rollout"], {"FLYWHEEL_ROLLOUT_POLICY": "nosuch.m:C"}, "cannot load policy 'nosuch.m:C'"),
    (["services.generator"], {"FLYWHEEL_GENERATOR_QUEUE_DEPTH": "1e400"}, "FLYWHEEL_GENERATOR_QUEUE_DEPTH"),
    (["services.device_runner"], {"FLYWHEEL_SIM_FAULT_RATE": "2"}, "FLYWHEEL_SIM_FAULT_RATE"),
    (["services.rollout"], {"FLYWHEEL_SIM_FAULT_RATE": "-0.5"}, "FLYWHEEL_SIM_FAULT_RATE"),
    (["services.verifier"], {"FLYWHEEL_DATA_DIR": "/proc/1/x"}, "FLYWHEEL_DATA_DIR"),
]


@pytest.mark.parametrize(("args", "env", "words"), NAMED_BAD_INPUTS,
                         ids=[" ".join(a[1:]) or a[0] for a, _, _ in NAMED_BAD_INPUTS])
def test_each_named_bad_input_is_one_sentence(args: list[str], env: dict[str, str], words: str) -> None:
    result = _command(args, {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1", **env})
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0, output
    assert words in output and "Traceback" not in output, output
