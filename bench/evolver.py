"""Benchmark of the harness evolver: gate cost against a plain evaluation, and how well
distilled skills generalise.

1. Gate cost: one proposal's paired dev gate (base + candidate runs, the paired bootstrap)
   against the same run's baseline, one plain oracle evaluation of the dev split; medians
   over --reps. The bootstrap's own share is reported too.
2. Skill generalisation: for every dev template, a skill distilled from --train oracle
   episodes of train instances is added to the harness and called with the oracle's
   arguments on --dev unseen dev instances; the share of templates whose skill solves every
   one of them (the rest need an answer, a GUI step, a library skill, or a pick the skill
   cannot make from one fixed position).

How to run (from the repository root; not a test):

    .venv/bin/python bench/evolver.py            # 3 repetitions
    .venv/bin/python bench/evolver.py --reps 5 --train 3 --dev 3
"""

from __future__ import annotations

import collections
import logging
import statistics
import time
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.sim import SimPhone
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy
from devices.suite.registry import get_template, templates_for
from devices.suite.scoring import score_final_state
from schemas.actions import Finish, UseSkill
from schemas.harness import HarnessChange, HarnessProposed
from services.dataflow.evolution.delta import apply_delta
from services.dataflow.evolution.paired import compare
from services.dataflow.evolution.propose import (
    arguments_from_calls,
    distil_skill,
    success_from_episode,
)
from services.evolver.gate import evaluate_proposal
from services.evolver.suite_runner import oracle_calls, suite_collector, suite_runner

console = Console()


def _median_s(fn: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def gate_cost(reps: int, n: int) -> Table:
    base = HarnessSpec.default().to_json_dict()
    run = suite_runner(OraclePolicy, n_per_template=n)
    proposal = HarnessProposed(
        source="bench", correlation_id="bench", proposal_id="hp-bench",
        base_harness=base["version"],
        changes=[HarnessChange(component="tool", op="remove", name="messages.send")])
    scores = run(base, "dev")
    plain = _median_s(lambda: run(base, "dev"), reps)
    gate = _median_s(lambda: evaluate_proposal(base, proposal, run), reps)
    boot = _median_s(lambda: compare(scores, scores), reps)
    table = Table(title=f"gate cost (dev, {n} per template, {len(scores)} episodes, median of {reps})")
    for column in ("what", "seconds", "× plain evaluation"):
        table.add_column(column)
    for what, seconds in (("plain oracle evaluation of dev (baseline)", plain),
                          ("one proposal through the dev gate", gate),
                          ("paired bootstrap alone (2,000 resamples)", boot)):
        table.add_row(what, f"{seconds:.3f}", f"{seconds / plain:.2f}")
    return table


def skill_generalisation(train: int, dev: int) -> Table:
    default = HarnessSpec.default().to_json_dict()
    events = suite_collector(OraclePolicy, n_per_template=train)(None, default, 1)
    goals = {e.task_id: e.goal for e in events if e.type == "task.proposed"}
    templates = {e.task_id: e.template for e in events if e.type == "task.proposed"}
    solved: dict[str, list[Any]] = collections.defaultdict(list)
    for e in events:
        if e.type == "episode.ended":
            template = templates[e.task_id]
            solved[template].append(success_from_episode(e, template, goals[e.task_id]))
    dev_templates = [t.name for t in templates_for("dev")]
    per_family: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for name in dev_templates:
        family = get_template(name).family
        per_family[family][0] += 1
        skill = distil_skill(name, solved.get(name, []))
        if skill is None:
            continue
        per_family[family][1] += 1
        skill_name = skill.pop("name")
        spec = HarnessSpec.from_json_dict(apply_delta(default, [HarnessChange(
            component="skill", op="add", name=skill_name, spec=skill)]))
        wins = 0
        for task in generate_split("dev", dev, 0, [get_template(name)]):
            harness = Harness(SimPhone(), spec)
            harness.reset(task)
            harness.act(UseSkill(skill=skill_name,
                                 arguments=arguments_from_calls(skill, oracle_calls(task))))
            harness.act(Finish())
            wins += score_final_state(task, harness.final_state()).score == 1.0
        per_family[family][2] += wins == dev
    table = Table(title=f"distilled skills ({train} train episodes each, {dev} unseen dev "
                        "instances each)")
    for column in ("family", "dev templates", "skill distilled", "solves every dev instance"):
        table.add_column(column)
    totals = [0, 0, 0]
    for family, (count, distilled, general) in sorted(per_family.items()):
        table.add_row(family, str(count), str(distilled), str(general))
        totals = [a + b for a, b in zip(totals, (count, distilled, general), strict=True)]
    table.add_row("all", *map(str, totals))
    return table


def main(reps: Annotated[int, typer.Option(min=1)] = 3,
         n: Annotated[int, typer.Option(min=1, help="Instances per template in the gate.")] = 2,
         train: Annotated[int, typer.Option(min=2)] = 3,
         dev: Annotated[int, typer.Option(min=1)] = 3) -> None:
    logging.basicConfig(level=logging.WARNING)
    console.print(gate_cost(reps, n))
    console.print(skill_generalisation(train, dev))


if __name__ == "__main__":
    typer.run(main)
