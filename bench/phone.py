"""Benchmark of the phone: SimPhone tool and GUI steps/s, snapshot and fork cost, AdbPhone actions/s.

Every figure is the median over --reps repetitions and is set against a baseline measured in
the same run (a raw dict-update loop, JSON serialisation of the same observations, a deepcopy
of the same state, raw adbutils shell round trips against the same fake adb server). The
process is pinned to one CPU core, so the sim figures are single-core figures.

How to run (from the repository root; not a test):

    .venv/bin/python bench/phone.py              # 5 repetitions
    .venv/bin/python bench/phone.py --reps 9 --profile   # plus where tool steps spend time
"""

from __future__ import annotations

import copy
import cProfile
import io
import logging
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

if __package__ in (None, ""):  # run as a script: the fake adb server lives under tests/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devices.adb.phone import AdbPhone
from devices.adb.settings import AdbSettings
from devices.protocol import TaskInstance
from devices.sim import SimPhone
from schemas.actions import Click, NavigateBack, NavigateHome, OpenApp, ToolCall
from tests.devices.fake_adb import FakeAdbServer, FakeDevice

__all__ = ["main"]

logger = logging.getLogger(__name__)

#: Loop sizes per repetition: each takes roughly 0.1-0.5 s on a loaded 2-core box, long
#: enough to swamp timer noise, short enough that the whole bench stays under a minute.
TOOL_STEPS = 20_000
GUI_STEPS = 2_000
COPIES = 2_000
ADB_ACTIONS = 20
ADB_ROUND_TRIPS = 100
#: Wide enough for the result table on one line per figure, even when piped to a file.
TABLE_WIDTH = 132
#: The figure the issue asks SimPhone tool steps to reach on one core.
TOOL_STEPS_TARGET = 20_000
#: A task that never hits its step limit during a repetition (the default stops at 30 steps).
BENCH_TASK = TaskInstance(task_id="bench-dev-00000-00000000", template="bench", family="tool",
                          split="dev", index=0, seed=0, goal="Benchmark the phone.",
                          max_steps=10**9)
#: A read, a search, a write and a list: the common shapes of planner tool calls.
TOOL_ACTIONS = (
    ToolCall(name="settings.get", arguments={"key": "wifi"}),
    ToolCall(name="contacts.search", arguments={"query": "an"}),
    ToolCall(name="settings.toggle", arguments={"key": "bluetooth"}),
    ToolCall(name="clock.list_alarms", arguments={}),
)


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


def _rate(n: int, run: Callable[[int], None]) -> float:
    start = time.perf_counter()
    run(n)
    return n / (time.perf_counter() - start)


def _cost_us(n: int, run: Callable[[int], None]) -> float:
    start = time.perf_counter()
    run(n)
    return (time.perf_counter() - start) / n * 1e6


def _median(reps: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(reps))


# ---- SimPhone -------------------------------------------------------------------------------

def _fresh_phone() -> SimPhone:
    phone = SimPhone("bench-0")
    phone.reset(BENCH_TASK)
    return phone


def tool_steps(n: int) -> None:
    phone = _fresh_phone()
    actions = TOOL_ACTIONS
    k = len(actions)
    for i in range(n):
        phone.act(actions[i % k])


def dict_updates(n: int) -> None:
    """The baseline: the bare table write a tool step amounts to, in a plain dict."""
    table = {f"ct{i}": {"id": f"ct{i}", "name": "x", "starred": False} for i in range(12)}
    for i in range(n):
        key = f"ct{i % 12}"
        table[key] = {**table[key], "starred": not table[key]["starred"]}


def _gui_cycle(phone: SimPhone) -> tuple[object, ...]:
    phone.act(OpenApp(app_name="contacts"))
    items = [i for i, e in enumerate(phone.screen())
             if (e.resource_id or "").endswith("/item") and e.is_clickable]
    phone.act(NavigateHome())
    if not items:
        raise RuntimeError("the contacts screen has no clickable item to open; the GUI changed")
    return (OpenApp(app_name="contacts"), Click(index=items[0]), NavigateBack(), NavigateHome())


def gui_steps(n: int) -> None:
    phone = _fresh_phone()
    cycle = _gui_cycle(phone)
    k = len(cycle)
    for i in range(n):
        phone.act(cycle[i % k])


def observation_json(n: int) -> None:
    """The baseline: serialising the same GUI observations, as the runner does to publish them."""
    phone = _fresh_phone()
    cycle = _gui_cycle(phone)
    observations = [phone.act(action) for action in cycle]
    k = len(observations)
    for i in range(n):
        observations[i % k].model_dump_json()


def _busy_phone() -> SimPhone:
    """A phone mid-episode: some writes done, so copy-on-write tables are in play."""
    phone = _fresh_phone()
    for i in range(200):
        phone.act(TOOL_ACTIONS[i % len(TOOL_ACTIONS)])
    phone.act(ToolCall(name="notes.create", arguments={"title": "bench", "body": "x" * 200}))
    return phone


def snapshots(phone: SimPhone) -> Callable[[int], None]:
    def run(n: int) -> None:
        for _ in range(n):
            phone.snapshot()
            phone.act(TOOL_ACTIONS[2])  # a write after each snapshot: the copy-on-write cost
    return run


def forks(phone: SimPhone) -> Callable[[int], None]:
    def run(n: int) -> None:
        for _ in range(n):
            phone.fork()
    return run


def deepcopies(phone: SimPhone) -> Callable[[int], None]:
    def run(n: int) -> None:
        for _ in range(n):
            copy.deepcopy(phone.state)
    return run


# ---- AdbPhone over the fake adb server ----------------------------------------------------

SERIAL = "emulator-5554"


def _adb_settings(server: FakeAdbServer, blob_dir: Path) -> AdbSettings:
    return AdbSettings(host="127.0.0.1", port=server.port, serial=SERIAL, call_timeout_s=10.0,
                       retries=0, retry_backoff_s=0.0, wait_scale=0.0, screenshots=False,
                       blob_dir=blob_dir)


def adb_actions(phone: AdbPhone, actions: tuple[object, ...]) -> Callable[[int], None]:
    def run(n: int) -> None:
        for i in range(n):
            phone.act(actions[i % len(actions)])
    return run


def adb_phone(server: FakeAdbServer, blob_dir: Path) -> AdbPhone:
    """An AdbPhone on the fake server, reset (outside the timed loops: reset is many calls)."""
    phone = AdbPhone(SERIAL, settings=_adb_settings(server, blob_dir))
    phone.reset(BENCH_TASK)
    return phone


def raw_shell(server: FakeAdbServer) -> Callable[[int], None]:
    """The baseline: bare adbutils shell round trips to the same fake device."""
    import adbutils

    def run(n: int) -> None:
        device = adbutils.AdbClient(host="127.0.0.1", port=server.port).device(serial=SERIAL)
        for _ in range(n):
            device.shell("echo ok")
    return run


# ---- report -------------------------------------------------------------------------------

def measure(reps: int, console: Console) -> list[Figure]:
    figures: list[Figure] = []
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("benchmarking", total=8)

        def step(figure: Figure) -> None:
            figures.append(figure)
            progress.advance(bar)

        step(Figure("SimPhone tool steps", "steps/s",
                    _median(reps, lambda: _rate(TOOL_STEPS, tool_steps)),
                    "raw dict updates", _median(reps, lambda: _rate(TOOL_STEPS, dict_updates))))
        step(Figure("SimPhone GUI steps (with observation)", "steps/s",
                    _median(reps, lambda: _rate(GUI_STEPS, gui_steps)),
                    "observation.model_dump_json",
                    _median(reps, lambda: _rate(GUI_STEPS, observation_json))))
        phone = _busy_phone()
        deep = _median(reps, lambda: _cost_us(COPIES // 10, deepcopies(phone)))
        step(Figure("SimPhone snapshot (+1 write)", "µs", _median(
            reps, lambda: _cost_us(COPIES, snapshots(phone))), "copy.deepcopy(state)", deep))
        step(Figure("SimPhone fork", "µs", _median(reps, lambda: _cost_us(COPIES, forks(phone))),
                    "copy.deepcopy(state)", deep))
        with FakeAdbServer({SERIAL: FakeDevice(SimPhone(SERIAL))}) as server, \
                tempfile.TemporaryDirectory() as tmp:
            blobs = Path(tmp)
            shell = _median(reps, lambda: _rate(ADB_ROUND_TRIPS, raw_shell(server)))
            progress.advance(bar)
            tools = (ToolCall(name="settings.get", arguments={"key": "wifi"}),
                     ToolCall(name="contacts.search", arguments={"query": "an"}))
            device = adb_phone(server, blobs)
            step(Figure("AdbPhone tool actions (fake adb)", "actions/s", _median(
                reps, lambda: _rate(ADB_ACTIONS, adb_actions(device, tools))),
                "raw adbutils shell round trips", shell))
            gui = (OpenApp(app_name="contacts"), NavigateBack(), NavigateHome())
            step(Figure("AdbPhone GUI actions (fake adb)", "actions/s", _median(
                reps, lambda: _rate(ADB_ACTIONS, adb_actions(device, gui))),
                "raw adbutils shell round trips", shell))
            device.close()
        progress.advance(bar)
    return figures


def profile_tool_steps(console: Console, top: int = 15) -> None:
    profiler = cProfile.Profile()
    profiler.runcall(tool_steps, TOOL_STEPS)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    console.print(out.getvalue(), markup=False, highlight=False)


def main(reps: int = typer.Option(5, min=5, help="Repetitions per figure (median reported)."),
         profile: bool = typer.Option(False, help="Also profile SimPhone tool steps (cProfile)."),
         ) -> None:
    """Measure the phone and print a table of medians with their baselines."""
    console = Console(width=max(Console().width, TABLE_WIDTH))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core: single-core figures
    logging.basicConfig(level=logging.ERROR)
    figures = measure(reps, console)
    table = Table("figure", "median", "unit", "baseline", "baseline median", "× baseline",
                  title=f"phone benchmark (medians of {reps} repetitions, one core)")
    for f in figures:
        table.add_row(f.name, f"{f.value:,.1f}", f.unit, f.baseline_name, f"{f.baseline:,.1f}",
                      f"{f.ratio:.3f}")
    console.print(table)
    tool = figures[0].value
    verdict = "meets" if tool >= TOOL_STEPS_TARGET else "misses"
    console.print(f"SimPhone tool steps: {tool:,.0f}/s {verdict} the {TOOL_STEPS_TARGET:,}/s "
                  f"target on one core")
    if profile or tool < TOOL_STEPS_TARGET:
        profile_tool_steps(console)


if __name__ == "__main__":
    typer.run(main)
