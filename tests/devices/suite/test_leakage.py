"""The leakage check over dev and test, with deliberately leaky templates it must catch."""

from __future__ import annotations

from typing import Any

import pytest

from devices.suite.leakage import check_leakage, foreign_mentions
from devices.suite.pools import Pool
from devices.suite.registry import all_templates, get_template
from devices.suite.templates._vocab import PHRASES3
from devices.suite.templates._world import FIRST, World, WorldTemplate, call


def test_the_suite_has_no_leak_and_a_fifth_held_out() -> None:
    report = check_leakage(suite_seed=0, sample=6)
    assert report.ok, report.problems[:10]
    assert report.held_out_fraction >= 0.2
    assert report.instances > 6 * len(all_templates())


class _Leaky(WorldTemplate):
    """Names its person from train's first names whatever the split: the bug the check is for."""

    name = "leaky_text"
    apps = ("messages",)
    goal_template = "Text {person}: \"{phrase}\""

    def build(self, w: World) -> dict[str, Any]:
        person = w.pick(FIRST.train)
        return {"person": person, "phrase": w.draw(PHRASES3)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return []

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        yield call("messages.send", contact=p["person"], body=p["phrase"])


class _Constant(_Leaky):
    """Draws nothing from any pool: dev and test repeat train's parameters."""

    name = "constant_text"

    def build(self, w: World) -> dict[str, Any]:
        return {"person": "my sister", "phrase": "hello"}


def test_a_template_picking_train_values_in_dev_and_test_is_caught() -> None:
    report = check_leakage(sample=4, templates=[_Leaky(), get_template("text_relation")])
    leaks = [p for p in report.problems if "mentions a train value" in p]
    assert {p.split("-")[1] for p in leaks} == {"dev", "test"}
    assert not [p for p in report.problems if "text_relation" in p]


def test_a_template_without_pools_is_caught() -> None:
    report = check_leakage(sample=3, templates=[_Constant()])
    assert any("draws no pooled value in dev" in p for p in report.problems)
    assert any("has the params of a train instance" in p for p in report.problems)


def test_too_few_held_out_templates_is_reported() -> None:
    report = check_leakage(sample=1, templates=[get_template("text_relation")])
    assert any("held out" in p for p in report.problems)


def test_mentions_inside_a_longer_own_split_value_do_not_count() -> None:
    pool = Pool(("Noor",), ("Noor Haddad",), ("Ines",))
    assert foreign_mentions("Text Noor Haddad now", "test", [pool]) == []
    assert foreign_mentions("Text Noor now", "test", [pool]) == ["train value 'Noor'"]
    assert foreign_mentions("Text Ines now", "test", [pool]) == ["dev value 'Ines'"]
    assert foreign_mentions("Text Ines now", "dev", [pool]) == []


def test_pool_refuses_overlapping_values_between_any_two_splits() -> None:
    with pytest.raises(ValueError, match="both train and test"):
        Pool(("a", "b", "d", "e"), ("B", "c"))
    with pytest.raises(ValueError, match="both dev and test"):
        Pool(("a",), ("c",), ("C",))
    with pytest.raises(ValueError, match="both train and dev"):
        Pool(("a",), ("c",), ("A",))


def test_two_way_pools_give_dev_values_of_its_own() -> None:
    pool = Pool(("a", "b", "c", "d", "e"), ("x",))
    assert pool.dev == ("d",) and "d" not in pool.train
    assert Pool(("a", "b"), ("x",)).values("dev") == ("b",)


def test_test_instances_carry_only_test_values() -> None:
    for template in all_templates():
        trace = getattr(template, "trace", None)
        for i in range(3):
            if trace is not None:
                _, drawn = trace("test", i, 3)
                assert all(pool.contains(v, "test") and not pool.contains(v, "train") for pool, v in drawn)
            else:
                params = template.generate("test", i, 3).params
                for key, pool in template.pools.items():
                    assert pool.contains(params[key], "test") and not pool.contains(params[key], "train")


def test_the_value_pattern_matches_what_a_longest_first_alternation_matches() -> None:
    """The trie-shaped pattern finds the same spans as the plain `longest|long|...` alternation:
    on values that are prefixes of one another, with punctuation, inside longer words and
    next to hyphens."""
    import random
    import re

    from devices.suite.leakage import value_pattern

    values = {"Ana", "Anna", "Anna Lee", "Ann", "Noor Haddad", "Noor", "C++ notes", "a.b", "Rue 9", "Rue 91",
              "St. Ives", "x-ray", "Lee"}
    body = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
    plain = re.compile(rf"(?<![\w-])(?:{body})(?![\w-])")
    trie = value_pattern(values)
    assert trie is not None and value_pattern(set()) is None
    rng = random.Random(7)
    words = sorted(values) + ["Annabel", "Anal", "Noor-Haddad", "Rue 912", "x", "-", "ray", "Leeds"]
    for _ in range(2000):
        text = rng.choice([" ", ", ", "-", "", "."]).join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        assert [m.span() for m in trie.finditer(text)] == [m.span() for m in plain.finditer(text)], text
    assert [m.group(0) for m in trie.finditer("Anna Lee met Annabel and Noor-Haddad")] == ["Anna Lee"]
