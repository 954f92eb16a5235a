"""resolve_task: the step-0 task comes from the suite by id, or whole from task_params."""

from __future__ import annotations

import pytest

from devices.suite.registry import get_template
from services.dataflow.tasks import task_params_for
from services.device_runner.settings import DeviceRunnerSettings, load_device_runner_settings
from services.device_runner.tasks import TaskNotResolved, resolve_task
from tests.services.device_runner.helpers import TASK

TEMPLATE = "mem_text_relation"


def test_a_suite_task_is_regenerated_from_its_id() -> None:
    task = get_template(TEMPLATE).generate("dev", 3, 7)
    assert resolve_task(task.task_id, None, suite_seed=7) == task
    assert resolve_task(task.task_id, task.params, suite_seed=7) == task


def test_another_suite_seed_is_refused_with_the_setting_to_fix() -> None:
    task = get_template(TEMPLATE).generate("dev", 3, 7)
    with pytest.raises(TaskNotResolved, match="FLYWHEEL_DEVICE_RUNNER_SUITE_SEED"):
        resolve_task(task.task_id, None, suite_seed=8)


def test_params_that_differ_from_the_suite_are_refused() -> None:
    task = get_template(TEMPLATE).generate("dev", 0, 0)
    with pytest.raises(TaskNotResolved, match="params differ"):
        resolve_task(task.task_id, {**task.params, "person": "Nobody"}, suite_seed=0)


def test_a_whole_instance_in_task_params_is_used_as_is() -> None:
    assert resolve_task(TASK.task_id, task_params_for(TASK), suite_seed=0) == TASK


def test_a_whole_instance_must_match_the_requested_id() -> None:
    with pytest.raises(TaskNotResolved, match="not other-task"):
        resolve_task("other-task", task_params_for(TASK), suite_seed=0)


def test_an_unknown_template_names_it() -> None:
    with pytest.raises(TaskNotResolved, match="'nope'"):
        resolve_task("nope-dev-00000-0000abcd", None, suite_seed=0)


def test_each_device_has_its_own_consumer_group() -> None:
    settings = DeviceRunnerSettings(device_id="sim-1", group_id="device-runners")
    assert settings.group_for() == "device-runners.sim-1"
    assert settings.group_for("sim-2") == "device-runners.sim-2"


def test_bad_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_DEVICE_RUNNER_POLL_TIMEOUT_MS", "0")
    with pytest.raises(ValueError, match="FLYWHEEL_DEVICE_RUNNER_POLL_TIMEOUT_MS"):
        load_device_runner_settings()
