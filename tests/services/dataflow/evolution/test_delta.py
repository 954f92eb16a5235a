"""Harness deltas: named, additive edits with content-addressed versions."""

from __future__ import annotations

import pytest

from schemas.harness import HarnessChange
from services.dataflow.evolution.delta import (
    MAX_CHANGES,
    DeltaError,
    apply_changes,
    diff_specs,
    spec_version,
    with_version,
)

BASE = with_version({
    "tools": {"hidden": ["files.delete"], "descriptions": {"contacts.search": "Find contacts."}},
    "skills": [{"name": "share_photo", "description": "Share a photo.", "parameters": {},
                "steps": [{"tool": "files.share", "arguments": {"id": "{file_id}"}}]}],
    "subagents": [{"name": "shopper", "description": "Buys.", "tools": ["shopping.search"]}],
    "memory": {"retrieve": "on_request", "store": ["user_facts"]},
    "playbook": ["Read before you write."],
})


def change(component: str, op: str, item: str, **spec: object) -> HarnessChange:
    return HarnessChange(component=component, op=op, name=item, spec=spec)  # type: ignore[arg-type]


def test_version_is_a_content_address_independent_of_key_order_and_lineage() -> None:
    reordered = dict(reversed(list(BASE.items())))
    assert spec_version(reordered) == BASE["version"]
    assert spec_version({**BASE, "parent": "0" * 12}) == BASE["version"]
    assert len(BASE["version"]) == 12
    assert spec_version({**BASE, "playbook": ["Read first."]}) != BASE["version"]


def test_each_component_applies_one_named_item_and_names_the_parent() -> None:
    new = apply_changes(BASE, [
        change("tool", "update", "contacts.search", description="Find contacts by name or nickname."),
        change("skill", "add", "reorder", description="Reorder.", parameters={}, steps=[]),
        change("subagent", "remove", "shopper"),
        change("memory", "update", "retrieve", value="before_first_action"),
        change("prompt", "add", "pb-1", text="Look the contact up before texting."),
    ])
    assert new["tools"] == {"hidden": ["files.delete"], "descriptions": {
        "contacts.search": "Find contacts by name or nickname."}}
    assert [s["name"] for s in new["skills"]] == ["share_photo", "reorder"]
    assert new["subagents"] == []
    assert new["memory"] == {"retrieve": "before_first_action", "store": ["user_facts"]}
    assert new["playbook"] == ["Read before you write.", "Look the contact up before texting."]
    assert new["parent"] == BASE["version"]
    assert new["version"] == spec_version(new) != BASE["version"]
    # the base is not mutated
    assert BASE["playbook"] == ["Read before you write."]


def test_same_base_and_changes_give_the_same_version() -> None:
    changes = [change("prompt", "add", "pb", text="Check the date first.")]
    assert apply_changes(BASE, changes)["version"] == apply_changes(BASE, changes)["version"]


@pytest.mark.parametrize(("changes", "message"), [
    ([], "at least one change"),
    ([change("skill", "add", "share_photo", steps=[])], "already has 'share_photo'"),
    ([change("tool", "update", "contacts.search", name="other")], "description only"),
    ([change("tool", "update", "contacts.search")], "non-empty 'description'"),
    ([change("tool", "remove", "files.delete")], "already hidden"),
    ([change("tool", "add", "contacts.search")], "not hidden"),
    ([change("skill", "update", "share_photo", name="other")], "may not rename"),
    ([change("skill", "update", "nope", description="x")], "no 'nope'"),
    ([change("memory", "update", "forget_after", value=3)], "no field 'forget_after'"),
    ([change("memory", "add", "k")], "needs a 'value'"),
    ([change("prompt", "add", "pb", text=" ")], "non-empty 'text'"),
    ([change("prompt", "add", "pb", text="Read before you write.")], "already holds"),
    ([change("tool", "update", "contacts.search", description="Find contacts.")], "as it was"),
    ([change("skill", "update", " ", description="x")], "needs the name"),
    ([change("prompt", "add", f"p{i}", text=f"t{i}") for i in range(MAX_CHANGES + 1)],
     "rewrite, not a delta"),
])
def test_bad_changes_are_refused_with_one_sentence(changes: list[HarnessChange],
                                                   message: str) -> None:
    with pytest.raises(DeltaError, match=message):
        apply_changes(BASE, changes)


def test_keyed_sections_and_object_playbooks_are_edited_in_place() -> None:
    spec = with_version({"skills": {"a": {"name": "a", "steps": []}},
                         "playbook": [{"name": "p1", "text": "one"}], "memory": {}})
    new = apply_changes(spec, [change("skill", "update", "a", description="A."),
                               change("prompt", "update", "p1", text="uno"),
                               change("memory", "add", "forget_after_episodes", value=5)])
    assert new["skills"] == {"a": {"name": "a", "steps": [], "description": "A."}}
    assert new["playbook"] == [{"name": "p1", "text": "uno"}]
    assert new["memory"] == {"forget_after_episodes": 5}


def test_tools_are_hidden_and_shown_again_through_the_policy() -> None:
    hidden = apply_changes(BASE, [change("tool", "remove", "contacts.search")])
    assert hidden["tools"]["hidden"] == ["files.delete", "contacts.search"]
    shown = apply_changes(hidden, [change("tool", "add", "files.delete")])
    assert shown["tools"]["hidden"] == ["contacts.search"]
    assert diff_specs(BASE, shown) == [change("tool", "remove", "contacts.search"),
                                       change("tool", "add", "files.delete")]


def test_diff_gives_back_the_changes_that_were_applied() -> None:
    changes = [change("tool", "update", "contacts.search", description="Find by nickname."),
               change("skill", "add", "reorder", description="R.", steps=[]),
               change("subagent", "remove", "shopper"),
               change("memory", "update", "retrieve", value="always"),
               change("prompt", "add", "Use the cheaper store.", text="Use the cheaper store.")]
    new = apply_changes(BASE, changes)
    diff = diff_specs(BASE, new)
    assert sorted(diff, key=repr) == sorted(changes, key=repr)
    assert apply_changes(BASE, diff)["version"] == new["version"]
    assert diff_specs(BASE, BASE) == []
