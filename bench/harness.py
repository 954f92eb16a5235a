"""Benchmark of the harness: what wrapping a phone costs per step, and what the context costs.

Every figure is the median over --reps repetitions and is set against a baseline measured in
the same run: tool steps through the harness against the same tool steps on the bare SimPhone,
planner steps (memory reads) against the same number of tool steps, one context render against
one JSON dump of the same history, and a whole oracle episode against the bare phone's tool
steps of the same count. The process is pinned to one CPU core.

How to run (from the repository root; not a test):

    .venv/bin/python bench/harness.py              # 5 repetitions
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import Figure, median_of
from devices.harness.harness import Harness
from devices.protocol import TaskInstance
from devices.sim.phone import SimPhone
from devices.suite.episode import run_episode
from devices.suite.policies import OraclePolicy
from devices.suite.registry import get_template
from schemas.actions import MemoryRead, ToolCall

__all__ = ["main"]

logger = logging.getLogger(__name__)

# Steps per timed batch: long enough that timer resolution does not matter.
STEPS = 2_000
# A read and a write, so the copy-on-write path is exercised.
TOOL_ACTIONS = (ToolCall(name="contacts.search", arguments={"query": "Alice"}),
                ToolCall(name="settings.set", arguments={"key": "brightness", "value": 40}))
TASK = TaskInstance(task_id="bench-harness", template="bench", family="tool", split="train",
                    index=0, seed=1, goal="Benchmark the harness.", max_steps=10 * STEPS,
                    initial_state={"memory": {f"fact_{i}": f"value {i} of the user" for i in range(50)}})




def _rate(act: Callable[[object], object], actions: tuple[object, ...], steps: int) -> float:
    start = time.perf_counter()
    for i in range(steps):
        act(actions[i % len(actions)])
    return steps / (time.perf_counter() - start)


def _phone_rate(actions: tuple[object, ...]) -> float:
    phone = SimPhone("bench")
    phone.reset(TASK)
    return _rate(phone.act, actions, STEPS)


def _harness_rate(actions: tuple[object, ...]) -> float:
    harness = Harness(SimPhone("bench"))
    harness.reset(TASK)
    return _rate(harness.act, actions, STEPS)


def _context_us(render: bool) -> float:
    harness = Harness(SimPhone("bench"))
    harness.reset(TASK)
    for i in range(12):
        harness.act(TOOL_ACTIONS[i % 2])
    start = time.perf_counter()
    for _ in range(200):
        if render:
            harness.context()
        else:
            json.dumps([s.observation.model_dump(mode="json") for s in harness.history[-4:]])
    return (time.perf_counter() - start) / 200 * 1e6


def _episode_ms() -> float:
    task = get_template("mem_text_relation").generate("dev", 0, 0)
    harness = Harness(SimPhone("bench"))
    start = time.perf_counter()
    for _ in range(20):
        run_episode(harness, task, OraclePolicy())
    return (time.perf_counter() - start) / 20 * 1e3


def _bare_steps_ms(steps: int) -> float:
    phone = SimPhone("bench")
    phone.reset(TASK)
    start = time.perf_counter()
    for _ in range(20):
        for i in range(steps):
            phone.act(TOOL_ACTIONS[i % 2])
    return (time.perf_counter() - start) / 20 * 1e3


def measure(reps: int) -> list[Figure]:
    harness_steps = median_of(reps, lambda: _harness_rate(TOOL_ACTIONS))
    return [
        Figure("tool steps through the harness", "steps/s", harness_steps,
               "bare SimPhone tool steps", median_of(reps, lambda: _phone_rate(TOOL_ACTIONS))),
        Figure("memory reads (50 entries, lexical)", "steps/s",
               median_of(reps, lambda: _harness_rate((MemoryRead(query="value user"),))),
               "harness tool steps", median_of(reps, lambda: _harness_rate(TOOL_ACTIONS))),
        Figure("context render (2,048-token budget)", "µs", median_of(reps, lambda: _context_us(True)),
               "JSON dump of the last 4 observations", median_of(reps, lambda: _context_us(False))),
        Figure("oracle episode, mem_text_relation", "ms", median_of(reps, _episode_ms),
               "5 bare tool steps (no reset, no scoring)", median_of(reps, lambda: _bare_steps_ms(5))),
    ]


def main(reps: int = typer.Option(5, min=5, help="Repetitions per figure (median reported)."),
         ) -> None:
    """Measure the harness and print a table of medians with their baselines."""
    console = Console(width=max(Console().width, 130))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    logging.basicConfig(level=logging.ERROR)
    figures = measure(reps)
    table = Table("figure", "median", "unit", "baseline", "baseline median", "× baseline",
                  title=f"harness benchmark (medians of {reps} repetitions, one core)")
    for f in figures:
        table.add_row(f.name, f"{f.value:,.1f}", f.unit, f.baseline_name, f"{f.baseline:,.1f}",
                      f"{f.ratio:.3f}")
    console.print(table)


if __name__ == "__main__":
    typer.run(main)
