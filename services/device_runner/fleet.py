"""A fleet of simulated-phone runners in one process: what `flywheel run` serves locally."""

from __future__ import annotations

import logging
import threading
from typing import Self

from services.device_runner.decide import RunnerMemory
from services.device_runner.devices import open_device
from services.device_runner.loop import run_device_runner
from services.device_runner.settings import load_device_runner_settings
from streams.lifecycle import Running

__all__ = ["SimFleet"]

logger = logging.getLogger(__name__)

#: A runner finishes its current poll (≤ poll_timeout_ms) and batch before it sees the stop.
JOIN_TIMEOUT_S = 30.0


class SimFleet(Running):
    """Runs one device runner thread per simulated phone `sim-0 … sim-(count-1)`."""

    def __init__(self, count: int, bootstrap: str) -> None:
        self.count = count
        self._bootstrap = bootstrap
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._memories = [RunnerMemory() for _ in range(count)]
        self.errors: list[str] = []
        self._active = 0  # runners serving through run_one

    def run_one(self, index: int, stop: threading.Event) -> None:
        """Serves sim-`index` until `stop` is set; raises when the runner fails (for a
        supervisor that restarts it; its memory carries over, so redeliveries are answered)."""
        settings = load_device_runner_settings(device_id=f"sim-{index}", kind="sim")
        device = open_device(settings)
        self._active += 1
        try:
            run_device_runner(settings, device, stop, bootstrap=self._bootstrap,
                              memory=self._memories[index])
        finally:
            self._active -= 1
            device.close()

    def _serve(self, index: int) -> None:
        settings = load_device_runner_settings(device_id=f"sim-{index}", kind="sim")
        device = open_device(settings)
        try:
            run_device_runner(settings, device, self._stop, bootstrap=self._bootstrap,
                              memory=self._memories[index])
        except Exception as error:  # reported in the summary; the other runners go on
            logger.exception("device runner for %s stopped", settings.device_id)
            self.errors.append(f"{settings.device_id}: {error}")
        finally:
            device.close()

    def start(self) -> Self:
        for index in range(self.count):
            thread = threading.Thread(target=self._serve, args=(index,), daemon=True,
                                      name=f"device-runner-sim-{index}")
            thread.start()
            self._threads.append(thread)
        return self

    @property
    def serving(self) -> int:
        return sum(thread.is_alive() for thread in self._threads) + self._active

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
