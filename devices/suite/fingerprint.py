"""A byte-exact fingerprint of every template's behaviour, for refactors that must change none.

For each template, split, suite seed and instance number it records the generated instance
(goal, params, initial state, in key order), the pooled values drawn to build it, the checker's
result on the initial state, the oracle's actions, check result and a hash of its final state,
and, on the first instance of each split, the checker's results after a random policy and the
combined attacker. Dump it before and after a change and compare the files byte for byte:

    python -m devices.suite.fingerprint /tmp/before.json
    python -m devices.suite.fingerprint /tmp/after.json && cmp /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from devices.protocol import DeviceError, TaskInstance
from devices.suite.policies import OraclePolicy
from devices.suite.template import Template

__all__ = ["fingerprint", "main", "template_fingerprint"]

logger = logging.getLogger(__name__)


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


class _Oracle(OraclePolicy):
    """OraclePolicy running `template`'s own oracle (OraclePolicy looks the template up by name
    in the registry; this also runs a template object that is not registered)."""

    def __init__(self, template: Template) -> None:
        super().__init__()
        self._template = template

    def begin(self, goal: str, catalogue: Any) -> None:
        if self._task is None:
            raise RuntimeError("the oracle must be prepared with its task before begin()")
        self._last = None
        self._script = iter(self._template.oracle(dict(self._task.params), self._observe))
        self._task = None


def _episode(harness: Any, task: TaskInstance, policy: Any) -> tuple[list[Any], Any, str]:
    """(actions, check result, final-state hash) of one episode; a device error ends it, recorded."""
    from devices.suite.scoring import score_final_state

    observation = harness.reset(task)
    if isinstance(policy, OraclePolicy):
        policy.prepare(task)
    policy.begin(task.goal, harness.catalogue())
    actions: list[Any] = []
    while len(actions) < task.max_steps and not observation.done:
        action = policy.next_action(observation)
        actions.append(_dump(action))
        try:
            observation = harness.act(action)
        except DeviceError as exc:  # recorded, not raised: a changed failure is a changed behaviour
            actions.append(f"error {type(exc).__name__}: {exc}")
            break
    final = harness.final_state()
    digest = hashlib.sha256(json.dumps(final, default=str).encode()).hexdigest()
    return actions, _dump(score_final_state(task, final)), digest


def template_fingerprint(template: Template, harness: Any, seeds: Sequence[int] = (0, 7),
                         n: int = 3) -> dict[str, Any]:
    """One template's record: its description and, per 'split:seed:i', what it generated and did."""
    from devices.suite.baselines import CombinedAttack
    from devices.suite.policies import RandomPolicy
    from devices.suite.scoring import score_final_state

    instances: dict[str, Any] = {}
    for split in template.splits():
        for seed in seeds:
            for i in range(n):
                task = template.generate(split, i, seed)
                record: dict[str, Any] = {"task": _dump(task)}
                trace = getattr(template, "trace", None)
                if trace is not None:
                    record["drawn"] = [repr(value) for _, value in trace(split, i, seed)[1]]
                harness.reset(task)
                record["initial_check"] = _dump(score_final_state(task, harness.final_state()))
                actions, check, final = _episode(harness, task, _Oracle(template))
                record.update(oracle_actions=actions, oracle_check=check, oracle_final_sha=final)
                if i == 0 and seed == seeds[0]:
                    record["random_check"] = _episode(harness, task, RandomPolicy(seed=3))[1]
                    record["attack_check"] = _episode(harness, task, CombinedAttack())[1]
                instances[f"{split}:{seed}:{i}"] = record
    return {"module": type(template).__module__, "describe": template.describe(), "instances": instances}


def fingerprint(seeds: Sequence[int] = (0, 7), n: int = 3, only: Sequence[str] = ()) -> dict[str, Any]:
    """Every registered template's record (or those whose module name ends with one of `only`)."""
    from devices.harness.harness import Harness
    from devices.sim import SimPhone
    from devices.suite.registry import all_templates

    harness = Harness(SimPhone())
    chosen = [t for t in all_templates() if not only or type(t).__module__.endswith(tuple(only))]
    out = {}
    for k, template in enumerate(chosen, 1):
        out[template.name] = template_fingerprint(template, harness, seeds, n)
        if k % 25 == 0:
            logger.info("fingerprinted %d/%d templates", k, len(chosen))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devices.suite.fingerprint", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the JSON file to write")
    parser.add_argument("--seeds", default="0,7", help="comma-separated suite seeds (default 0,7)")
    parser.add_argument("--n", type=int, default=3, help="instances per split and seed (default 3)")
    parser.add_argument("--only", nargs="*", default=(), help="template module names (e.g. tool_people)")
    args = parser.parse_args(argv)
    try:
        seeds = tuple(int(s) for s in args.seeds.split(","))
    except ValueError:
        parser.error(f"--seeds takes whole numbers separated by commas, not {args.seeds!r}")
    if args.n < 1:
        parser.error("--n takes a whole number of at least 1")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    data = fingerprint(seeds, args.n, args.only)
    if not data:
        parser.error(f"no template module ends with any of {list(args.only)}; see devices/suite/registry.py")
    text = json.dumps(data, indent=1, default=str)
    args.out.write_text(text)
    count = sum(len(t["instances"]) for t in data.values())
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    print(f"{len(data)} templates, {count} instances -> {args.out} (sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
