"""In-process pieces for the flywheel services' tests: tasks, episodes, routed pipelines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from devices.blobs import BlobStore
from devices.sim import SimPhone
from devices.suite.registry import templates_for
from schemas.envelope import Event
from schemas.tasks import TaskProposed
from services.dataflow.ids import derived_id
from services.dataflow.store import Stored
from services.dataflow.tasks import task_event
from services.rollout.engine import Rollout
from services.rollout.policies import load_policy


def proposed(split: str = "train", i: int = 0, template: int = 0) -> TaskProposed:
    chosen = templates_for(split)[template]  # type: ignore[arg-type]
    task = chosen.generate(split, i, 0)  # type: ignore[arg-type]
    return task_event(task, tier="easy", event_id=derived_id("test-task", task.task_id),
                      source="test/0", correlation_id=task.task_id)


def roll(task: TaskProposed, blobs: Path, policy: str = "oracle", **kwargs: Any,
         ) -> tuple[Event, Event]:
    rollout = Rollout(SimPhone("test-sim"), load_policy(policy), policy, BlobStore(blobs),
                      **kwargs)
    try:
        return rollout.run(task)
    finally:
        rollout.close()


class Offsets:
    """Hands out increasing offsets per topic, as a broker would."""

    def __init__(self) -> None:
        self.next: dict[str, int] = {}

    def stored(self, topic: str, event: Event) -> Stored:
        offset = self.next.get(topic, 0)
        self.next[topic] = offset + 1
        return Stored(event, topic, 0, offset)
