"""A fleet of simulated phones in one process: what `flywheel run` serves locally.

The phones `sim-0 … sim-(count-1)` are served by one device runner thread (a runner of many
phones, `DeviceRunnerSettings.phones`): their episodes interleave in its batches. One runner
per phone (`runner_per_phone=True`, the old layout) puts a consumer, a producer and their
threads in this process for every phone; measured with `bench/loop.py` (1,500 examples, 2
cores), one runner of 16 phones played ~1.6x the episodes/s of four runners of one phone.
"""

from __future__ import annotations

import logging
import threading
from typing import Self

from services.dataflow.ids import phone_ids
from services.device_runner.decide import RunnerMemory
from services.device_runner.devices import open_devices
from services.device_runner.loop import run_device_runner
from services.device_runner.settings import DeviceRunnerSettings, load_device_runner_settings
from streams.lifecycle import Running

__all__ = ["SimFleet"]

logger = logging.getLogger(__name__)

#: A runner finishes its current poll (≤ poll_timeout_ms) and batch before it sees the stop.
JOIN_TIMEOUT_S = 30.0


class SimFleet(Running):
    """Serves the simulated phones `sim-0 … sim-(count-1)` from one runner thread (or, with
    `runner_per_phone`, one runner thread per phone)."""

    def __init__(self, count: int, bootstrap: str, *, runner_per_phone: bool = False) -> None:
        self.count = count
        self._bootstrap = bootstrap
        if runner_per_phone or count <= 1:
            self.runners = [(f"sim-{i}", 1) for i in range(count)]
        else:
            self.runners = [("sim", count)]  # phone_ids("sim", count): sim-0 … sim-(count-1)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._memories = [RunnerMemory() for _ in self.runners]
        self._serving = [0] * len(self.runners)  # phones of runners serving through run_one
        self.errors: list[str] = []

    @property
    def device_ids(self) -> list[str]:
        """Every phone the fleet serves, as a rollout lists them."""
        return [d for runner_id, phones in self.runners for d in phone_ids(runner_id, phones)]

    def name(self, index: int) -> str:
        """Runner `index` for a supervisor's line: the phones it serves."""
        runner_id, phones = self.runners[index]
        return runner_id if phones == 1 else f"{runner_id}-0…{runner_id}-{phones - 1}"

    def _settings(self, index: int) -> DeviceRunnerSettings:
        runner_id, phones = self.runners[index]
        return load_device_runner_settings(device_id=runner_id, kind="sim", phones=phones)

    def run_one(self, index: int, stop: threading.Event) -> None:
        """Serves runner `index`'s phones until `stop` is set; raises when the runner fails (for
        a supervisor that restarts it; its memory carries over, so redeliveries are answered)."""
        settings = self._settings(index)
        devices = open_devices(settings)
        self._serving[index] = len(devices)
        try:
            run_device_runner(settings, devices, stop, bootstrap=self._bootstrap,
                              memory=self._memories[index])
        finally:
            self._serving[index] = 0
            for device in devices:
                device.close()

    def _serve(self, index: int) -> None:
        try:
            self.run_one(index, self._stop)
        except Exception as error:  # reported in the summary; the other runners go on
            runner_id = self.runners[index][0]
            logger.exception("device runner %s stopped", runner_id)
            self.errors.append(f"{runner_id}: {error}")

    def start(self) -> Self:
        for index in range(len(self.runners)):
            thread = threading.Thread(target=self._serve, args=(index,), daemon=True,
                                      name=f"device-runner-{self.runners[index][0]}")
            thread.start()
            self._threads.append(thread)
        return self

    @property
    def serving(self) -> int:
        """Phones whose runner is serving now."""
        return sum(self._serving)

    @property
    def executed(self) -> int:
        return sum(memory.executed for memory in self._memories)

    @property
    def failed(self) -> int:
        return sum(memory.failed for memory in self._memories)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(JOIN_TIMEOUT_S)
