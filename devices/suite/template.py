"""The task template: AndroidWorld-style class with params, initial state, checker and oracle."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, Literal

from devices.protocol import TaskInstance
from devices.suite.diff import CheckResult, Expectation, check_change
from devices.suite.pools import Pool
from devices.suite.seeding import instance_index, instance_rng, instance_seed
from schemas.observations import Observation
from schemas.tasks import Family, Split
from schemas.verdicts import CheckerKind

__all__ = ["APPS", "TIERS", "Observe", "OracleScript", "PoolError", "SplitError", "Template", "Tier",
           "catalogue_apps", "tier_for"]

# What the oracle calls to see the observation after its last action.
Observe = Callable[[], Observation]
# An oracle is a generator of actions; it may call `observe()` between yields.
OracleScript = Iterator[Any]

Tier = Literal["easy", "medium", "hard"]
TIERS: tuple[Tier, ...] = ("easy", "medium", "hard")


def tier_for(actions: float, chain: int) -> Tier:
    """easy: at most two oracle actions and one lookup; hard: four or more actions or a chain of
    two or more dependent lookups; medium: the rest."""
    if actions >= 4 or chain >= 2:
        return "hard"
    if actions <= 2 and chain <= 1:
        return "easy"
    return "medium"

# Every app of the simulated phone (devices.sim.apps), the pool distractor apps are drawn from.
APPS = ("bank", "calendar", "clock", "contacts", "email", "files", "health", "maps", "messages",
        "music", "notes", "recipes", "reminders", "settings", "shopping", "travel", "weather")
# How many apps beyond its own a task's catalogue shows (drawn per instance).
DISTRACTORS = (2, 3)


def catalogue_apps(apps: tuple[str, ...] | list[str], seed: int, pool: tuple[str, ...] = APPS) -> list[str]:
    """The apps a task's catalogue shows: the template's own plus 2 or 3 distractors from `pool`,
    drawn from the instance seed on a stream of their own (the parameters stay as they were), in
    name order so nothing tells the two apart. A catalogue then no longer names its template, and
    a policy must still pick the right app (or sub-agent, or skill) among ones it could use."""
    own = set(apps)
    rng = random.Random(f"distractors:{seed}")
    free = [app for app in pool if app not in own]
    count = min(len(free), rng.randint(*DISTRACTORS))
    return sorted(own | set(rng.sample(free, count)))


# Most tasks take a handful of tool calls; 30 steps leaves room for detours and GUI work.
DEFAULT_MAX_STEPS = 30


class SplitError(ValueError):
    """A template was asked for a split it does not serve (a held-out template in train)."""


class PoolError(ValueError):
    """Generated parameters used a value outside the split's pool (a leak by construction)."""


class Template(ABC):
    """One parameterised task. Subclasses set the class attributes and the methods below.

    `pools` maps a parameter name to the pool its value is drawn from; `list_pools` does the
    same for list-valued parameters (each element from the pool). `generate` checks every
    pooled value against the split's pool, so a test instance can never carry a train value.
    """

    name: ClassVar[str]
    family: ClassVar[Family]
    checker: ClassVar[CheckerKind]
    goal_template: ClassVar[str]
    parameters: ClassVar[dict[str, Any]] = {}
    pools: ClassVar[Mapping[str, Pool]] = {}
    list_pools: ClassVar[Mapping[str, Pool]] = {}
    test_only: ClassVar[bool] = False
    max_steps: ClassVar[int] = DEFAULT_MAX_STEPS
    # The apps the task needs; the catalogue shows them plus distractors (`catalogue_apps`).
    apps: ClassVar[tuple[str, ...]] = ()
    # Where the distractor apps are drawn from (sub-agent tasks: apps some helper works in).
    distractor_apps: ClassVar[tuple[str, ...]] = APPS
    tier: ClassVar[Tier] = "easy"
    # Whether the task needs a value the goal does not state, found mid-episode, and the
    # longest chain of dependent lookups its oracle makes (one result decides the next call).
    needs_lookup: ClassVar[bool] = False
    chain: ClassVar[int] = 0
    # Whether memory writes count in the state diff (memory templates set it).
    diff_memory: ClassVar[bool] = False

    # ---- the methods a template writes ------------------------------------------------
    def generate_params(self, rng: random.Random, split: Split) -> dict[str, Any]:
        """Draws the instance's parameters; pooled values come from `pool.pick(rng, split)`.

        By default one value from each of `pools`, in order; a template with derived or
        unpooled parameters overrides this.
        """
        return {key: pool.pick(rng, split) for key, pool in self.pools.items()}

    @abstractmethod
    def initial_state(self, params: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        """The TaskInstance.initial_state overlay that sets the task up."""

    def expect(self, params: dict[str, Any], before: Any) -> list[Expectation] | None:
        """The expected change from `before` (a StateView of the initial state); None when
        the template scores with `is_successful` instead."""
        return None

    def is_successful(self, state: Any, params: dict[str, Any]) -> float:
        """A score in [0, 1] read only from the final state (legacy checkers; prefer `expect`)."""
        raise NotImplementedError(f"{self.name} defines neither expect() nor is_successful()")

    def check(self, params: dict[str, Any], before: Any, after: Any) -> CheckResult:
        """Scores a final state: the whole-state diff against `expect`, else `is_successful`."""
        expected = self.expect(params, before)
        if expected is not None:
            return check_change(before, after, expected, memory=self.diff_memory)
        score = float(self.is_successful(after, params))
        return CheckResult(score=score, progress=score, subgoals=[("legacy checker", score >= 1.0)])

    @abstractmethod
    def oracle(self, params: dict[str, Any], observe: Observe) -> OracleScript:
        """The scripted expert: yields actions that solve the instance."""

    # ---- shared machinery ---------------------------------------------------------------
    def splits(self) -> tuple[Split, ...]:
        return ("test",) if self.test_only else ("train", "dev", "test")

    def goal(self, params: dict[str, Any]) -> str:
        return self.goal_template.format(**params)

    def check_pools(self, params: dict[str, Any], split: Split) -> None:
        """Raises PoolError when a pooled parameter holds a value outside `split`'s pool."""
        for key, pool in self.pools.items():
            if not pool.contains(params[key], split):
                raise PoolError(f"{self.name}: parameter {key}={params[key]!r} is not in the "
                                f"{split} pool")
        for key, pool in self.list_pools.items():
            for value in params[key]:
                if not pool.contains(value, split):
                    raise PoolError(f"{self.name}: {key} element {value!r} is not in the "
                                    f"{split} pool")

    def generate(self, split: Split, i: int, suite_seed: int) -> TaskInstance:
        """The `i`-th instance of this template in `split`, fully fixed by the suite seed."""
        if split not in self.splits():
            raise SplitError(f"template {self.name} is held out for test and has no {split} "
                             "instances; pick a template from the train or dev list")
        index = instance_index(split, i)
        seed = instance_seed(suite_seed, self.name, index)
        rng = instance_rng(seed)
        params = self.generate_params(rng, split)
        self.check_pools(params, split)
        state = self.initial_state(params, rng)
        return TaskInstance(
            task_id=f"{self.name}-{split}-{i:05d}-{seed & 0xFFFFFFFF:08x}",
            template=self.name, family=self.family, split=split, index=index, seed=seed,
            params=params, goal=self.goal(params), initial_state=state,
            max_steps=self.max_steps, apps=catalogue_apps(self.apps, seed, self.distractor_apps),
            tier=self.tier,
        )

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary for `flywheel suite list`."""
        return {"name": self.name, "family": self.family, "checker": self.checker,
                "splits": list(self.splits()), "test_only": self.test_only,
                "tier": self.tier, "apps": list(self.apps), "needs_lookup": self.needs_lookup,
                "chain": self.chain,
                "goal_template": self.goal_template, "parameters": self.parameters}
