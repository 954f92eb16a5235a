"""Persistent maps: every version reads as the dict it was made as, however versions interleave."""

from __future__ import annotations

import random

import pytest

from services.dataflow.pmap import PMap, PSet


def test_a_new_version_leaves_the_old_one_as_it_was() -> None:
    first = PMap({"a": 1})
    second = first.set("b", 2).set("a", 3)
    third = second.delete("b")
    assert dict(first) == {"a": 1} and dict(second) == {"a": 3, "b": 2} and dict(third) == {"a": 3}
    assert (second["b"], "b" in third, third.get("b", 0), len(first)) == (2, False, 0, 1)
    assert dict(first.update({"x": 9})) == {"a": 1, "x": 9} and dict(third) == {"a": 3}
    with pytest.raises(KeyError):
        third["b"]


def test_versions_read_in_any_order_match_a_copy_made_at_each_step() -> None:
    """A model check against plain dict copies: random writes on random (old and new) versions,
    then every version is read back in a random order, twice."""
    rng = random.Random(7)
    versions: list[tuple[PMap[int, int], dict[int, int]]] = [(PMap(), {})]
    for _ in range(3000):
        pmap, model = versions[rng.randrange(len(versions))] if rng.random() < 0.2 else versions[-1]
        key = rng.randrange(40)
        if rng.random() < 0.25:
            pmap, model = pmap.delete(key), {k: v for k, v in model.items() if k != key}
        else:
            value = rng.randrange(5)
            pmap, model = pmap.set(key, value), {**model, key: value}
        versions.append((pmap, model))
    for _ in range(2):
        for pmap, model in rng.sample(versions, len(versions)):
            assert dict(pmap) == model
            assert all(pmap.get(k, -1) == model.get(k, -1) for k in range(40))


def test_reading_a_very_old_version_does_not_recurse() -> None:
    versions = [PMap[int, int]()]
    for i in range(50_000):
        versions.append(versions[-1].set(i % 100, i))
    assert dict(versions[1]) == {0: 0}
    assert versions[-1][99] == 49_999


def test_insertion_order_is_kept_while_a_map_only_grows() -> None:
    first = PMap({"c": 0})
    grown = first.set("a", 1).set("b", 2).set("c", 5)
    assert list(first) == ["c"] and list(grown) == ["c", "a", "b"]
    assert list(first.set("z", 0)) == ["c", "z"] and list(grown) == ["c", "a", "b"]


def test_the_keys_changed_between_two_versions() -> None:
    base = PMap({"a": 1, "b": 2})
    later = base.set("c", 3).set("a", 0).set("c", 4).delete("b")
    assert later.changed_since(base) == ["c", "a", "b"]
    assert base.changed_since(later) == ["b", "c", "a"]  # the same diffs, walked the other way
    assert later.changed_since(later) == [] and dict(base) == {"a": 1, "b": 2}


def test_a_persistent_set() -> None:
    empty: PSet[str] = PSet()
    one = empty.add("x")
    two = one | {"y", "x"}
    assert (set(empty), set(one), set(two)) == (set(), {"x"}, {"x", "y"})
    assert "y" in two and "y" not in one and two == {"x", "y"} and one.discard("x") == frozenset()
