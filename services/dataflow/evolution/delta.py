"""Harness deltas: additive, named edits applied to a harness spec's JSON, giving a new version.

A harness spec is versioned JSON (devices/harness). The evolver never rewrites it: a
proposal is a short list of `HarnessChange`s, each touching one named item of one
section (a tool's description, one skill, one sub-agent, one memory-policy field, one
playbook entry). `apply_changes` returns the new spec with its content address; the
same base and the same changes always give the same version.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from devices.harness.spec import content_version
from schemas.harness import HarnessChange

__all__ = [
    "MAX_CHANGES",
    "SECTIONS",
    "DeltaError",
    "apply_changes",
    "apply_delta",
    "canonical_json",
    "diff_specs",
    "normalise",
    "spec_version",
    "with_version",
]

logger = logging.getLogger(__name__)

#: The spec section each change component edits.
SECTIONS: dict[str, str] = {
    "tool": "tools", "skill": "skills", "subagent": "subagents", "memory": "memory",
    "prompt": "playbook",
}
#: A proposal touching more items than this is a rewrite, not a delta (the largest rule-based
#: proposal is a skill plus its playbook line plus a tool description: 3).
MAX_CHANGES = 8
#: Fields that identify an item; an update may not change them (that would be a remove + add).
_IDENTITY = ("name",)


class DeltaError(ValueError):
    """A change cannot be applied to this spec; the message says which and why."""


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: equal values give equal strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spec_version(spec: Mapping[str, Any]) -> str:
    """The content address of `spec` (devices.harness.spec.content_version, the one hash)."""
    return content_version(spec)


def with_version(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `spec` whose `version` is its content address."""
    out = dict(spec)
    out["version"] = spec_version(out)
    return out


def _item_name(item: Any) -> str | None:
    if isinstance(item, Mapping):
        name = item.get("name")
        return name if isinstance(name, str) else None
    if isinstance(item, str):
        return item
    return None


def _playbook_text(change: HarnessChange) -> str:
    text = change.spec.get("text")
    if not isinstance(text, str) or not text.strip():
        raise DeltaError(f"playbook change {change.name!r} needs a non-empty 'text'")
    return text.strip()


def _apply_playbook(entries: list[Any], change: HarnessChange) -> list[Any]:
    """Playbook entries are either plain strings or {"name", "text"} objects; keep the style."""
    as_objects = any(isinstance(e, Mapping) for e in entries)
    index = next((i for i, e in enumerate(entries)
                  if (_item_name(e) == change.name if as_objects
                      else e == change.spec.get("text", change.name))), None)
    if change.op == "add":
        text = _playbook_text(change)
        if index is not None or any((e.get("text") if isinstance(e, Mapping) else e) == text
                                    for e in entries):
            raise DeltaError(f"playbook already holds {change.name!r}")
        entries.append({"name": change.name, "text": text} if as_objects else text)
    elif index is None:
        raise DeltaError(f"playbook has no entry {change.name!r} to {change.op}")
    elif change.op == "remove":
        del entries[index]
    else:
        text = _playbook_text(change)
        entries[index] = {"name": change.name, "text": text} if as_objects else text
    return entries


def _apply_named(items: Any, section: str, change: HarnessChange) -> Any:
    """Add, update (merge fields) or remove the item called `change.name` in a list or dict."""
    keyed = isinstance(items, Mapping)
    if keyed:
        found: Any = change.name in items
    else:
        found = next((i for i, e in enumerate(items) if _item_name(e) == change.name), None)
        found = found if found is not None else False
    present = found is not False
    if change.op == "add":
        if present:
            raise DeltaError(f"{section} already has {change.name!r}; propose an update instead")
        item = {**change.spec, "name": change.name}
        if keyed:
            items[change.name] = item
        else:
            items.append(item)
        return items
    if not present:
        raise DeltaError(f"{section} has no {change.name!r} to {change.op}")
    if change.op == "remove":
        if keyed:
            del items[change.name]
        else:
            del items[found]
        return items
    for field in _IDENTITY:
        if field in change.spec and change.spec[field] != change.name:
            raise DeltaError(f"an update may not rename {change.name!r}; remove it and add a new one")
    key = change.name if keyed else found
    current = items[key]
    if not isinstance(current, Mapping):
        raise DeltaError(f"{section} item {change.name!r} is not an object and cannot be updated")
    items[key] = {**current, **change.spec}
    return items


def _is_tool_policy(tools: Any) -> bool:
    """HarnessSpec keeps tools as a policy: {"hidden": [...], "descriptions": {name: text}}."""
    return isinstance(tools, Mapping) and set(tools) <= {"hidden", "descriptions"}


def _apply_tool_policy(tools: Mapping[str, Any], change: HarnessChange) -> dict[str, Any]:
    """update: the catalogue describes the tool with `spec.description`; remove: hide it;
    add: show a hidden tool again."""
    hidden = list(tools.get("hidden", []))
    descriptions = dict(tools.get("descriptions", {}))
    if change.op == "update":
        extra = sorted(set(change.spec) - {"description"})
        if extra:
            raise DeltaError(f"a tool change may set its description only, not {extra}")
        text = change.spec.get("description")
        if not isinstance(text, str) or not text.strip():
            raise DeltaError(f"tool change {change.name!r} needs a non-empty 'description'")
        descriptions[change.name] = text.strip()
    elif change.op == "remove":
        if change.name in hidden:
            raise DeltaError(f"tool {change.name!r} is already hidden")
        hidden.append(change.name)
    else:
        if change.name not in hidden:
            raise DeltaError(f"tool {change.name!r} is not hidden, so it cannot be added back")
        hidden.remove(change.name)
    return {**tools, "hidden": hidden, "descriptions": descriptions}


def _apply_memory(memory: Any, change: HarnessChange) -> dict[str, Any]:
    """The memory policy is one object; a change sets (add/update) or drops (remove) one field."""
    if not isinstance(memory, Mapping):
        raise DeltaError("the spec's memory policy is not an object")
    memory = dict(memory)
    if change.op == "remove":
        if change.name not in memory:
            raise DeltaError(f"memory policy has no field {change.name!r} to remove")
        del memory[change.name]
    elif "value" not in change.spec:
        raise DeltaError(f"memory change {change.name!r} needs a 'value'")
    elif change.op == "add" and change.name in memory:
        raise DeltaError(f"memory policy already sets {change.name!r}; propose an update instead")
    elif change.op == "update" and change.name not in memory:
        raise DeltaError(f"memory policy has no field {change.name!r} to update")
    else:
        memory[change.name] = copy.deepcopy(change.spec["value"])
    return memory


def apply_changes(spec: Mapping[str, Any], changes: Sequence[HarnessChange]) -> dict[str, Any]:
    """The spec after `changes`, in order, with `parent` set to the base version and a fresh
    `version`. Raises DeltaError (one sentence) when a change does not fit the spec, when the
    list is empty or longer than MAX_CHANGES, or when the changes leave the spec as it was."""
    if not changes:
        raise DeltaError("a harness delta needs at least one change")
    if len(changes) > MAX_CHANGES:
        raise DeltaError(f"{len(changes)} changes is a rewrite, not a delta (at most {MAX_CHANGES})")
    base_version = spec_version(spec)
    out = copy.deepcopy(dict(spec))
    for change in changes:
        if not change.name.strip():
            raise DeltaError(f"a {change.component} change needs the name of the item it edits")
        section = SECTIONS[change.component]
        if change.component == "memory":
            out[section] = _apply_memory(out.get(section, {}), change)
        elif change.component == "prompt":
            out[section] = _apply_playbook(list(out.get(section, [])), change)
        elif change.component == "tool" and _is_tool_policy(out.get(section)):
            out[section] = _apply_tool_policy(out[section], change)
        else:
            items = out.get(section, [])
            items = dict(items) if isinstance(items, Mapping) else list(items)
            out[section] = _apply_named(items, section, change)
    if spec_version(out) == base_version:
        raise DeltaError("the changes leave the harness as it was")
    out["parent"] = base_version
    return with_version(out)


def normalise(spec: Mapping[str, Any]) -> dict[str, Any]:
    """`spec` validated as a devices.harness HarnessSpec and dumped back (defaults filled in,
    so the version is the one the harness itself reports); DeltaError when it is not valid."""
    from devices.harness.spec import HarnessSpec, SpecError  # the harness validates its spec

    body = {k: v for k, v in spec.items() if k != "version"}
    try:
        model = HarnessSpec.from_json_dict(body)
    except SpecError as error:
        raise DeltaError(str(error)) from None
    return model.to_json_dict()


def apply_delta(spec: Mapping[str, Any], changes: Sequence[HarnessChange]) -> dict[str, Any]:
    """`apply_changes`, then validated as a HarnessSpec: what the evolver proposes and promotes
    is always a spec the harness can load, and its version is the harness's own."""
    return normalise(apply_changes(spec, changes))


def _index(items: Any) -> dict[str, Any]:
    if isinstance(items, Mapping):
        return dict(items)
    out: dict[str, Any] = {}
    for position, item in enumerate(items or []):
        out[_item_name(item) or f"#{position}"] = item
    return out


def diff_specs(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[HarnessChange]:
    """The changes that turn `old` into `new`, section by section (what `harness diff` prints).

    `apply_changes(old, diff_specs(old, new))` has the same content as `new` for sections the
    evolver edits; other top-level fields are reported as `prompt` changes named 'field:<key>'
    only when they differ, so nothing changes silently."""
    changes: list[HarnessChange] = []
    for component, section in SECTIONS.items():
        before, after = old.get(section), new.get(section)
        if before == after:
            continue
        if component == "memory":
            b, a = dict(before or {}), dict(after or {})
            for key in sorted(set(b) | set(a)):
                if key not in a:
                    changes.append(HarnessChange(component="memory", op="remove", name=key))
                elif key not in b:
                    changes.append(HarnessChange(component="memory", op="add", name=key,
                                                 spec={"value": a[key]}))
                elif a[key] != b[key]:
                    changes.append(HarnessChange(component="memory", op="update", name=key,
                                                 spec={"value": a[key]}))
            continue
        if component == "tool" and _is_tool_policy(before) and _is_tool_policy(after):
            b_desc, a_desc = dict(before.get("descriptions", {})), dict(after.get("descriptions", {}))
            for name in sorted(set(a_desc)):
                if a_desc[name] != b_desc.get(name):
                    changes.append(HarnessChange(component="tool", op="update", name=name,
                                                 spec={"description": a_desc[name]}))
            b_hidden, a_hidden = set(before.get("hidden", [])), set(after.get("hidden", []))
            changes += [HarnessChange(component="tool", op="remove", name=n)
                        for n in sorted(a_hidden - b_hidden)]
            changes += [HarnessChange(component="tool", op="add", name=n)
                        for n in sorted(b_hidden - a_hidden)]
            continue
        if component == "prompt":
            b_texts = [e.get("text") if isinstance(e, Mapping) else e for e in before or []]
            a_items = list(after or [])
            a_texts = [e.get("text") if isinstance(e, Mapping) else e for e in a_items]
            for entry, text in zip(before or [], b_texts, strict=True):
                if text not in a_texts:
                    changes.append(HarnessChange(component="prompt", op="remove",
                                                 name=_item_name(entry) or str(text),
                                                 spec={"text": text}))
            for entry, text in zip(a_items, a_texts, strict=True):
                if text not in b_texts:
                    changes.append(HarnessChange(component="prompt", op="add",
                                                 name=_item_name(entry) or str(text),
                                                 spec={"text": text}))
            continue
        b, a = _index(before), _index(after)
        for name in sorted(set(b) | set(a)):
            if name not in a:
                changes.append(HarnessChange(component=component, op="remove", name=name))
            elif name not in b:
                item = {k: v for k, v in a[name].items() if k != "name"}
                changes.append(HarnessChange(component=component, op="add", name=name, spec=item))
            elif a[name] != b[name]:
                delta = {k: v for k, v in a[name].items() if b[name].get(k) != v}
                changes.append(HarnessChange(component=component, op="update", name=name,
                                             spec=delta))
    return changes
