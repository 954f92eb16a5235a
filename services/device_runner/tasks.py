"""Rebuilds the task instance a step-0 action asks for, from its task id or from the event itself."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from devices.protocol import TaskInstance

__all__ = ["TaskNotResolved", "resolve_task"]

logger = logging.getLogger(__name__)

# The suite names instances "<template>-<split>-<i:05d>-<seed low 32 bits as 8 hex digits>".
_TASK_ID = re.compile(r"^(?P<template>.+)-(?P<split>train|dev|test)-(?P<i>\d+)-(?P<seed>[0-9a-f]{8})$")
# task_params holding all of these is a whole TaskInstance (tasks that are not from the suite).
_INSTANCE_KEYS = frozenset({"task_id", "template", "family", "split", "index", "seed", "goal"})


class TaskNotResolved(ValueError):
    """The task of a step-0 action cannot be rebuilt (one sentence saying why)."""


def resolve_task(task_id: str, task_params: Mapping[str, Any] | None, suite_seed: int
                 ) -> TaskInstance:
    """The TaskInstance for a step-0 action.

    A whole instance in `task_params` (see `task_params_for`) is used as it is; otherwise the
    instance is regenerated from the suite by template, split and number parsed from the id,
    and must come out with the same id (same suite seed) and, if given, the same params.
    """
    if task_params and _INSTANCE_KEYS <= task_params.keys():
        try:
            task = TaskInstance.model_validate(dict(task_params))
        except ValidationError as error:
            first = error.errors()[0]
            path = ".".join(str(p) for p in first["loc"])
            raise TaskNotResolved(f"task_params of {task_id} is not a valid task instance: "
                                  f"field '{path}': {first['msg']}") from None
        if task.task_id != task_id:
            raise TaskNotResolved(f"task_params describe {task.task_id}, not {task_id}")
        return task
    return _from_suite(task_id, task_params, suite_seed)


def _from_suite(task_id: str, task_params: Mapping[str, Any] | None, suite_seed: int
                ) -> TaskInstance:
    from devices.suite.registry import UnknownTemplate, get_template  # the suite is heavy-ish

    match = _TASK_ID.match(task_id)
    if match is None:
        raise TaskNotResolved(f"task id {task_id!r} is not a suite task id "
                              f"('<template>-<split>-<n>-<seed>') and the action carries no "
                              f"whole task instance in task_params")
    try:
        template = get_template(match["template"])
    except UnknownTemplate:
        raise TaskNotResolved(f"task {task_id} names template {match['template']!r}, which this "
                              f"runner's suite does not have; upgrade the runner") from None
    task = template.generate(match["split"], int(match["i"]), suite_seed)  # type: ignore[arg-type]
    if task.task_id != task_id:
        raise TaskNotResolved(f"task {task_id} does not come from suite seed {suite_seed}; set "
                              f"FLYWHEEL_DEVICE_RUNNER_SUITE_SEED to the generator's seed")
    if task_params and dict(task_params) != task.params:
        raise TaskNotResolved(f"task {task_id}: the requested params differ from the suite's "
                              f"for that instance; send the whole instance in task_params")
    return task
