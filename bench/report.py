"""One JSON shape for the throughput benches (`bus`, `loop`, `remote_rollout`), and one figure type.

`write_report(path, bench, runs, aims)` writes every run's figures, their medians and, for
each aim, its ratio, the bound and whether this run met it, so a reader (or a test)
compares runs without parsing tables. Aims are `{name: (ratio, bound)}`: met when
`ratio >= bound`. The table benches (`harness`, `phone`) print `Figure`s: a median beside the
median of its baseline, measured in the same run (`median_of`). The training benches (`coevolve`,
`learn`, `train`) share their logging and torch set-up (`trainer_logging`).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Figure", "aim_lines", "median_of", "trainer_logging", "write_report"]


@dataclass(frozen=True)
class Figure:
    """One measured figure and its baseline, both as medians."""

    name: str
    unit: str
    value: float
    baseline_name: str
    baseline: float

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("nan")


def median_of(reps: int, measure: Callable[[], float]) -> float:
    """The median of `reps` calls of `measure`."""
    return statistics.median(measure() for _ in range(reps))


def write_report(path: str | Path, bench: str, runs: Mapping[str, Sequence[float]],
                 aims: Mapping[str, tuple[float, float]], **extra: Any) -> Path:
    """Writes the bench's figures to `path` (folders made) and returns it."""
    report = {
        "bench": bench,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": _cpus()},
        "medians": {k: statistics.median(v) for k, v in runs.items()},
        "runs": {k: list(v) for k, v in runs.items()},
        "aims": {name: {"ratio": ratio, "at_least": bound, "met": ratio >= bound}
                 for name, (ratio, bound) in aims.items()},
        **extra,
    }
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return out


def aim_lines(aims: Mapping[str, tuple[float, float]]) -> list[str]:
    """One line per aim: `name: 0.42 (aim >= 0.80) not met`."""
    return [f"{name}: {ratio:.2f} (aim >= {bound:.2f}) {'met' if ratio >= bound else 'not met'}"
            for name, (ratio, bound) in aims.items()]


def trainer_logging(threads: int = 0) -> None:
    """Logs warnings, and the trainer's progress at INFO, with times; `threads` > 0 sets how
    many threads torch uses (0 leaves torch's default)."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("trainer").setLevel(logging.INFO)
    if threads:
        import torch

        torch.set_num_threads(threads)


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
