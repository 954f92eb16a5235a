"""Rule-based harness proposals from grouped failure traces and successful trajectories.

Failures are grouped by (category, app, template). A group with enough support gets one
proposal, an incremental delta on the current spec that names every failure event id that
motivated it:

- a **skill** distilled from successful trajectories of the same template (steps = their
  common tool-call sequence; values that vary become parameters, values read from an
  earlier step's result become `{$N.path}` references), or a repaired one when the spec
  already holds a skill of that name with other steps;
- a **clarified tool description** for argument errors (the schema's constraints and a
  value that worked, in words);
- a **memory policy** change for memory misses: when the fact the failing step needed was
  in an earlier tool result the harness did not store, store that tool's results
  (`MemoryPolicy.store`, what to store); otherwise show memory up front, retrieve more;
- a **playbook entry** (the procedure that worked, in one sentence) for the rest;
- and, across groups, a hidden tool that failed episodes kept reaching for is **shown again**.

Pure: the same traces, successes and spec give the same proposals in the same order.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemas.episodes import EpisodeEnded
from schemas.harness import HarnessChange
from schemas.verdicts import ENVIRONMENT_CATEGORIES, FailureTraced
from services.dataflow.evolution.delta import DeltaError, apply_delta, canonical_json, spec_version

__all__ = [
    "DEFAULT_MIN_SUPPORT",
    "Call",
    "Proposal",
    "Success",
    "Trace",
    "arguments_from_calls",
    "distil_skill",
    "group_traces",
    "proposal_id",
    "propose",
    "refused_tools",
    "seen_before",
    "success_from_episode",
    "trace_of",
]

logger = logging.getLogger(__name__)

#: A single failure can be noise; two of the same kind on the same template are a pattern.
DEFAULT_MIN_SUPPORT = 2
#: Successful trajectories a skill is distilled from (two are needed to tell constants from
#: parameters; more only slow the search).
_MAX_EXAMPLES = 5
#: Memory entries shown up front when memory misses recur (MemoryPolicy.context_entries).
_MEMORY_CONTEXT_ENTRIES = 5
# Categories each rule answers (the verifier's taxonomy, with the flywheel's extensions).
_SKILL_CATEGORIES = frozenset({"skill_misroute", "wrong_skill", "wrong_tool", "incomplete",
                               "step_limit", "step_budget", "loop", "missed_lookup",
                               "premature_finish"})
_TOOL_CATEGORIES = frozenset({"bad_arguments", "wrong_arguments"})
_MEMORY_CATEGORIES = frozenset({"memory_miss"})
# Never proposed from: the environment failed, not the harness or the policy.
_ENVIRONMENT = ENVIRONMENT_CATEGORIES
_NAME = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True, slots=True)
class Trace:
    """One failure trace as the evolver groups it."""

    event_id: str
    episode_id: str
    task_id: str
    template: str
    family: str
    category: str
    app: str
    tool: str | None
    summary: str
    refused: tuple[str, ...] = ()  # tools the harness refused as not in the catalogue
    #: tools whose earlier result held a value the failing step needed (seen, not stored)
    seen_in: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of a successful trajectory and the value it returned."""

    name: str
    arguments: dict[str, Any]
    value: Any = None


@dataclass(frozen=True, slots=True)
class Success:
    """A trajectory that solved an instance of `template`: its goal and its tool calls."""

    task_id: str
    template: str
    goal: str
    calls: tuple[Call, ...]
    delegations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Proposal:
    """A delta on `base`, the rule that made it and the failures that motivated it."""

    proposal_id: str
    base: str
    changes: tuple[HarnessChange, ...]
    motivated_by: tuple[str, ...]
    rule: str
    rationale: str
    group: tuple[str, str, str] = field(default=("", "", ""))


def _tool_named(evidence: Mapping[str, Any]) -> str | None:
    """The tool a failure is about: `evidence.tool`, else the tool call the verifier expected
    (or, failing that, the one the policy took) at the first wrong step."""
    if isinstance(evidence.get("tool"), str):
        return evidence["tool"]
    for side in ("expected", "taken"):
        action = evidence.get(side)
        if isinstance(action, Mapping) and action.get("action_type") == "tool_call" \
                and isinstance(action.get("name"), str):
            return action["name"]
    return None


def trace_of(event: FailureTraced, templates: Mapping[str, str] | None = None,
             episode: EpisodeEnded | None = None) -> Trace:
    """The evolver's view of a failure: template from the evidence or the task index
    `templates` (task id → template), the tool and app it failed on when known. A trace the
    verifier blamed on the environment keeps category `environment_fault` (never proposed from)."""
    evidence = event.evidence
    template = evidence.get("template") or (templates or {}).get(event.task_id) or "unknown"
    tool = _tool_named(evidence)
    app = evidence.get("app")
    if not isinstance(app, str):
        app = tool.split(".", 1)[0] if tool else "any"
    category = "environment_fault" if event.environment_fault else event.category
    return Trace(event_id=event.event_id, episode_id=event.episode_id, task_id=event.task_id,
                 template=str(template), family=event.family, category=category,
                 app=app, tool=tool, summary=event.summary,
                 refused=refused_tools(episode) if episode is not None else tuple(
                     str(n) for n in evidence.get("refused") or [] if isinstance(n, str)),
                 seen_in=seen_before(episode, event.step_index, evidence.get("expected"))
                 if episode is not None else ())


#: Values shorter than this say too little to place (a 1, a 'no', an empty string).
_MIN_NEEDED_CHARS = 3


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def seen_before(episode: EpisodeEnded, step_index: int | None, expected: Any) -> tuple[str, ...]:
    """Tools whose successful result, before `step_index`, held a value the expected action
    at that step needed (an argument, or the answer): the fact was seen, then not at hand."""
    if step_index is None or not isinstance(expected, Mapping):
        return ()
    wanted = [v for v in _leaves({k: v for k, v in expected.items() if k != "action_type"})
              if isinstance(v, str) and len(v) >= _MIN_NEEDED_CHARS]
    found: dict[str, None] = {}
    for step in episode.steps[:step_index]:
        result = step.observation.result
        if step.action.action_type != "tool_call" or result is None or not result.ok:
            continue
        if any(_find(result.value, v) is not None for v in wanted):
            found[step.action.name] = None
    return tuple(found)


def refused_tools(episode: EpisodeEnded) -> tuple[str, ...]:
    """Tools the harness refused in `episode` because its catalogue does not show them
    (directly, or inside a skill's steps or a sub-agent's results), in order of first use."""
    names: dict[str, None] = {}
    for step in episode.steps:
        result = step.observation.result
        if result is None:
            continue
        if result.error is not None and result.error.code == "unknown_tool" \
                and step.action.action_type == "tool_call":
            names[step.action.name] = None
        value = result.value if isinstance(result.value, Mapping) else {}
        for inner in [*(value.get("steps") or []), *(value.get("results") or [])]:
            error = inner.get("error") if isinstance(inner, Mapping) else None
            if isinstance(error, Mapping) and error.get("code") == "unknown_tool":
                names[str(inner.get("name"))] = None
    return tuple(names)


def success_from_episode(episode: EpisodeEnded, template: str, goal: str) -> Success:
    """The tool calls (and delegations) of a solved episode, with the values they returned."""
    calls, delegations = [], []
    for step in episode.steps:
        action = step.action
        result = step.observation.result
        if action.action_type == "tool_call" and (result is None or result.ok):
            calls.append(Call(action.name, dict(action.arguments),
                              None if result is None else result.value))
        elif action.action_type == "delegate":
            delegations.append(action.agent)
    return Success(task_id=episode.task_id, template=template, goal=goal, calls=tuple(calls),
                   delegations=tuple(delegations))


def group_traces(traces: Iterable[Trace]) -> dict[tuple[str, str, str], list[Trace]]:
    """Policy failures by (category, app, template), environment faults left out, sorted."""
    groups: dict[tuple[str, str, str], list[Trace]] = defaultdict(list)
    for trace in traces:
        if trace.category in _ENVIRONMENT:
            continue
        groups[(trace.category, trace.app, trace.template)].append(trace)
    return {key: sorted(groups[key], key=lambda t: t.event_id) for key in sorted(groups)}


def proposal_id(base: str, changes: Sequence[HarnessChange]) -> str:
    """Content address of a proposal: the same delta on the same base has the same id."""
    body = canonical_json([base, [c.model_dump(mode="json") for c in changes]])
    return "hp-" + hashlib.sha256(body.encode()).hexdigest()[:16]


# ---- skill distillation ------------------------------------------------------------------
def _find(value: Any, target: Any, path: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The path of the first place `target` occurs inside `value` (dicts by key, lists by index)."""
    if value == target and path:
        return path
    if isinstance(value, Mapping):
        for key in sorted(value):
            found = _find(value[key], target, (*path, str(key)))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _find(item, target, (*path, str(index)))
            if found is not None:
                return found
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "string"


def skill_name(template: str) -> str:
    """The name of the skill distilled for `template` (stable, so a repair updates it)."""
    return "do_" + _NAME.sub("_", template.lower()).strip("_")


def distil_skill(template: str, successes: Sequence[Success]) -> dict[str, Any] | None:
    """A skill (HarnessSpec's Skill as JSON) from ≥ 2 successes with the same tool-call
    sequence, or None when they disagree or there are fewer than two.

    A step argument that equals a value an earlier step returned, at the same place in every
    example, becomes `{$N.path}` (for equal values only when they are strings, such as ids);
    one equal in every example is a constant; anything else becomes a required parameter
    named after the argument (`arg`, `arg_2`, … on clashes)."""
    examples = [s for s in successes if s.calls][:_MAX_EXAMPLES]
    if len(examples) < 2:
        return None
    sequence = [c.name for c in examples[0].calls]
    if any([c.name for c in s.calls] != sequence for s in examples[1:]):
        return None
    steps: list[dict[str, Any]] = []
    properties: dict[str, Any] = {}
    sources: dict[tuple[Any, ...], str] = {}  # example values → the parameter that holds them
    for index, name in enumerate(sequence):
        keys = sorted(set().union(*(s.calls[index].arguments for s in examples)))
        arguments: dict[str, Any] = {}
        for key in keys:
            values = [s.calls[index].arguments.get(key) for s in examples]
            if any(v is None for v in values):
                return None  # optional in some examples: not one procedure
            same = all(v == values[0] for v in values)
            # Strings (ids, names) read from an earlier result are references even when the
            # examples agree: the next world has other ids. Equal numbers and flags stay
            # constants (a 5 or a true found in a result is more likely coincidence).
            if not same or isinstance(values[0], str):
                reference = _reference(examples, index, values)
                if reference is not None:
                    arguments[key] = reference
                    continue
            if same:
                arguments[key] = values[0]
                continue
            signature = tuple(canonical_json(v) for v in values)
            parameter = sources.get(signature)
            if parameter is None:
                parameter = key if key not in properties else f"{key}_{len(properties) + 1}"
                sources[signature] = parameter
                properties[parameter] = {"type": _json_type(values[0]),
                                         "description": f"{key} for {name}"}
            arguments[key] = "{" + parameter + "}"
        steps.append({"tool": name, "arguments": arguments, "when": None})
    if not properties:
        return None  # nothing varies: a playbook line says the same with less machinery
    return {
        "name": skill_name(template),
        "description": (f"Runs {' then '.join(sequence)} as one procedure (learned from "
                        f"{len(examples)} solved tasks like: {examples[0].goal})"),
        "parameters": {"type": "object", "properties": properties,
                       "required": sorted(properties), "additionalProperties": False},
        "steps": steps, "defaults": {}, "derived": {},
    }


def arguments_from_calls(skill: Mapping[str, Any],
                         calls: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The skill's parameter values that reproduce a tool-call sequence `calls` ((name,
    arguments) per call, in order): each `{param}` takes the value at its step and key."""
    out: dict[str, Any] = {}
    for index, step in enumerate(skill.get("steps", [])):
        if index >= len(calls) or calls[index][0] != step["tool"]:
            break
        for key, value in step["arguments"].items():
            whole = isinstance(value, str) and re.fullmatch(r"\{([a-z_][a-z0-9_]*)\}", value)
            if whole and key in calls[index][1]:
                out.setdefault(whole.group(1), calls[index][1][key])
    return out


def _reference(examples: Sequence[Success], index: int, values: list[Any]) -> str | None:
    """`{$N.path}` when every example's value sits at the same place in step N's result."""
    for earlier in range(index):
        paths = {_find(s.calls[earlier].value, v) for s, v in zip(examples, values, strict=True)}
        if len(paths) == 1:
            (path,) = paths
            if path is not None:
                return "{$" + ".".join((str(earlier), *path)) + "}"
    return None


# ---- the rules ---------------------------------------------------------------------------
def _skill_rule(spec: Mapping[str, Any], key: tuple[str, str, str],
                successes: Sequence[Success]) -> tuple[list[HarnessChange], str] | None:
    skill = distil_skill(key[2], successes)
    if skill is None:
        return None
    name = skill.pop("name")
    existing = next((s for s in spec.get("skills", []) if s.get("name") == name), None)
    if existing is None:
        changes = [HarnessChange(component="skill", op="add", name=name, spec=skill)]
        how = "new skill"
    elif existing.get("steps") != skill["steps"]:
        changes = [HarnessChange(component="skill", op="update", name=name,
                                 spec={"steps": skill["steps"],
                                       "parameters": skill["parameters"]})]
        how = "repaired skill"
    else:
        return None
    note = (f"For tasks like '{successes[0].goal}', use the skill {name} instead of "
            "calling its tools one by one.")
    if note not in spec.get("playbook", []):
        changes.append(HarnessChange(component="prompt", op="add", name=f"use {name}",
                                     spec={"text": note}))
    return changes, f"{how} {name} from {len(successes)} solved tasks of {key[2]}"


def _tool_rule(spec: Mapping[str, Any], key: tuple[str, str, str], traces: Sequence[Trace],
               successes: Sequence[Success], tools: Mapping[str, Any]
               ) -> tuple[list[HarnessChange], str] | None:
    names = sorted({t.tool for t in traces if t.tool})
    if not names:
        return None
    tool = names[0]
    current = dict(spec.get("tools", {}).get("descriptions", {})).get(tool)
    if current is None:
        current = str(_field(tools.get(tool), "description") or "")
    example = next((c.arguments for s in successes for c in s.calls if c.name == tool), None)
    hints = _argument_hints(tools.get(tool))
    parts = [current.rstrip(". ") + "." if current else f"{tool}."]
    if hints:
        parts.append("Arguments: " + "; ".join(hints) + ".")
    if example:
        parts.append(f"Example that worked: {canonical_json(example)}.")
    text = " ".join(parts)
    if text == current or len(parts) == 1:
        return None
    return ([HarnessChange(component="tool", op="update", name=tool,
                           spec={"description": text})],
            f"clarified description of {tool} after {len(traces)} argument errors")


def _field(tool: Any, name: str) -> Any:
    """A field of a device tool spec given as a mapping or an object (None when absent)."""
    return tool.get(name) if isinstance(tool, Mapping) else getattr(tool, name, None)


def _argument_hints(tool: Any) -> list[str]:
    schema = _field(tool, "parameters")
    if not isinstance(schema, Mapping):
        return []
    required = set(schema.get("required", []) or [])
    hints = []
    for name, prop in sorted((schema.get("properties") or {}).items()):
        prop = prop or {}
        words = [name, "(required)" if name in required else "(optional)", prop.get("type", "")]
        if prop.get("enum"):
            words.append("one of " + ", ".join(map(str, prop["enum"])))
        if prop.get("pattern"):
            words.append(f"matching {prop['pattern']}")
        if "minimum" in prop or "maximum" in prop:
            words.append(f"from {prop.get('minimum', '…')} to {prop.get('maximum', '…')}")
        hints.append(" ".join(w for w in words if w))
    return hints


def _store_rule(spec: Mapping[str, Any], traces: Sequence[Trace]
                ) -> tuple[list[HarnessChange], str, list[Trace]] | None:
    """What to store: the tools whose results held the fact memory-family failures needed
    later, when the memory policy does not store them yet; with the traces that say so."""
    memory = dict(spec.get("memory", {}))
    current = [str(p) for p in memory.get("store", []) or []]
    unstored = {tool: [t for t in traces if tool in t.seen_in]
                for t in traces for tool in t.seen_in
                if not any(fnmatch.fnmatchcase(tool, p) for p in current)}
    if not unstored:
        return None
    tools = sorted(unstored)
    motivating = sorted({t.event_id: t for ts in unstored.values() for t in ts}.values(),
                        key=lambda t: t.event_id)
    op = "update" if "store" in memory else "add"
    change = HarnessChange(component="memory", op=op, name="store",
                           spec={"value": sorted({*current, *tools})})
    why = (f"store the results of {', '.join(tools)} in the episode's memory: "
           f"{len(motivating)} failed episodes had seen the fact they needed there and lost it")
    return [change], why, motivating


def _memory_rule(spec: Mapping[str, Any], key: tuple[str, str, str], traces: Sequence[Trace]
                 ) -> tuple[list[HarnessChange], str] | None:
    memory = dict(spec.get("memory", {}))
    if "context_entries" in memory and memory["context_entries"] < _MEMORY_CONTEXT_ENTRIES:
        return ([HarnessChange(component="memory", op="update", name="context_entries",
                               spec={"value": _MEMORY_CONTEXT_ENTRIES})],
                f"show {_MEMORY_CONTEXT_ENTRIES} memory entries up front after {len(traces)} misses")
    if "top_k" in memory and memory["top_k"] < 2 * _MEMORY_CONTEXT_ENTRIES:
        return ([HarnessChange(component="memory", op="update", name="top_k",
                               spec={"value": 2 * _MEMORY_CONTEXT_ENTRIES})],
                f"retrieve more memory hits per query after {len(traces)} memory misses")
    return None


def _playbook_rule(spec: Mapping[str, Any], key: tuple[str, str, str], traces: Sequence[Trace],
                   successes: Sequence[Success]) -> tuple[list[HarnessChange], str] | None:
    example = next((s for s in successes if s.calls or s.delegations), None)
    if example is None:
        return None
    route = " then ".join(dict.fromkeys(c.name for c in example.calls))
    if example.delegations:
        route = (route + "; " if route else "") + "delegate to " + ", ".join(
            dict.fromkeys(example.delegations))
    text = f"For tasks like '{example.goal}': {route}."
    if text in spec.get("playbook", []):
        return None
    return ([HarnessChange(component="prompt", op="add", name=f"playbook {key[2]}",
                           spec={"text": text})],
            f"playbook entry for {key[2]} after {len(traces)} {key[0]} failures")


def _catalogue_proposals(spec: Mapping[str, Any], traces: Sequence[Trace], min_support: int
                         ) -> list[tuple[list[HarnessChange], str, list[Trace]]]:
    """A hidden tool the policy kept reaching for is shown again, one proposal per tool."""
    tools = spec.get("tools", {})
    hidden = set(tools.get("hidden", [])) if isinstance(tools, Mapping) else set()
    wanted: dict[str, list[Trace]] = defaultdict(list)
    for trace in traces:
        if trace.category in _ENVIRONMENT:
            continue
        for name in trace.refused:
            if name in hidden:
                wanted[name].append(trace)
    out = []
    for name, group in sorted(wanted.items()):
        if len(group) >= min_support:
            why = (f"show {name} again: the catalogue hides it and {len(group)} failed "
                   "episodes reached for it")
            out.append(([HarnessChange(component="tool", op="add", name=name)], why,
                        sorted(group, key=lambda t: t.event_id)))
    return out


def propose(spec: Mapping[str, Any], traces: Iterable[Trace],
            successes: Mapping[str, Sequence[Success]], *, tools: Mapping[str, Any] | None = None,
            min_support: int = DEFAULT_MIN_SUPPORT,
            exclude: frozenset[str] = frozenset()) -> list[Proposal]:
    """One proposal per failure group with at least `min_support` traces, each a delta on
    `spec` that applies cleanly, skipping ids in `exclude` (already proposed or decided).

    `successes` maps a template to its solved trajectories; `tools` maps a tool name to its
    device spec (description, parameters) for description clarifications."""
    base = spec_version(spec)
    out: list[Proposal] = []
    seen: set[str] = set()
    traces = list(traces)

    def keep(changes: list[HarnessChange], rule: str, why: str, group: Sequence[Trace],
             key: tuple[str, str, str]) -> bool:
        try:
            apply_delta(spec, changes)
        except DeltaError as error:
            logger.info("dropping a %s proposal for %s: %s", rule, key, error)
            return False
        pid = proposal_id(base, changes)
        if pid in exclude or pid in seen:
            return False
        seen.add(pid)
        out.append(Proposal(
            proposal_id=pid, base=base, changes=tuple(changes),
            motivated_by=tuple(t.event_id for t in group), rule=rule,
            rationale=f"{why} ({key[0]} on {key[1]}/{key[2]}: {len(group)} failures, "
                      f"e.g. {group[0].summary!r})", group=key))
        return True

    used: set[str] = set()
    for changes, why, group in _catalogue_proposals(spec, traces, min_support):
        key = (group[0].category, changes[0].name.split(".", 1)[0], group[0].template)
        if keep(changes, "catalogue", why, group, key):
            used |= {t.event_id for t in group}
    for key, group in group_traces(t for t in traces if t.event_id not in used).items():
        if len(group) < min_support:
            continue
        category, _, template = key
        solved = list(successes.get(template, ()))
        made: tuple[list[HarnessChange], str] | None = None
        rule = ""
        if category in _MEMORY_CATEGORIES or all(t.family == "memory" for t in group):
            stored = _store_rule(spec, group)
            if stored is not None and len(stored[2]) >= min_support:
                changes, why, motivating = stored
                if keep(changes, "memory_store", why, motivating, key):
                    continue
        if category in _TOOL_CATEGORIES:
            made, rule = _tool_rule(spec, key, group, solved, tools or {}), "tool_description"
        elif category in _MEMORY_CATEGORIES:
            made, rule = _memory_rule(spec, key, group), "memory_policy"
        if made is None and category in _SKILL_CATEGORIES | _TOOL_CATEGORIES:
            made, rule = _skill_rule(spec, key, solved), "skill"
        if made is None:
            made, rule = _playbook_rule(spec, key, group, solved), "playbook"
        if made is None:
            continue
        changes, why = made
        keep(changes, rule, why, group, key)
    return out
