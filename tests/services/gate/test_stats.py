"""Cohen's kappa, Krippendorff's alpha and reviewer throughput."""

from __future__ import annotations

import pytest

from services.gate.stats import Opinion, cohens_kappa, krippendorff_alpha, throughput


def test_kappa_matches_the_textbook_example() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 → κ = 0.4
    pairs = ([("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15)
    assert cohens_kappa(pairs) == pytest.approx(0.4)


def test_kappa_of_perfect_and_opposite_raters() -> None:
    assert cohens_kappa([("a", "a"), ("r", "r")] * 5) == pytest.approx(1.0)
    assert cohens_kappa([("a", "r"), ("r", "a")] * 5) == pytest.approx(-1.0)


def test_kappa_is_undefined_with_too_little_or_no_variety() -> None:
    assert cohens_kappa([]) is None
    assert cohens_kappa([("a", "a")]) is None
    assert cohens_kappa([("a", "a")] * 4) is None


def test_throughput_per_reviewer() -> None:
    opinions = [Opinion("r1", "alice", "approved", 10.0, 6.0),
                Opinion("r2", "alice", "rejected", 20.0, 12.0),
                Opinion("r3", "bob", "approved", 30.0, None)]
    alice, bob = throughput(opinions)
    assert (alice.reviewer, alice.decisions, alice.approved, alice.rejected) == ("alice", 2, 1, 1)
    assert alice.per_hour == pytest.approx(2 * 3600 / 18)
    assert alice.median_s == pytest.approx(9.0)
    assert bob.per_hour == 0.0 and bob.median_s is None


def test_alpha_matches_a_hand_count() -> None:
    # coincidences: a-a 2, a-b 1, b-a 1, b-b 4 → n_a 3, n_b 5, n 8; α = 1 - 7·2 / (2·3·5) = 8/15
    units = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"]]
    assert krippendorff_alpha(units) == pytest.approx(8 / 15)


def test_alpha_of_perfect_chance_and_opposite_reviewers() -> None:
    assert krippendorff_alpha([["a", "a"], ["r", "r"]] * 5) == pytest.approx(1.0)
    assert krippendorff_alpha([["a", "r"], ["r", "a"]] * 5) < 0  # systematic disagreement
    # three reviewers on an item count each ordered pair with weight 1/(m-1)
    assert krippendorff_alpha([["a", "a", "a"], ["r", "r", "r"]]) == pytest.approx(1.0)
    assert krippendorff_alpha([["a", "a", "r"], ["r", "r", "a"]]) < 0.5


def test_alpha_is_undefined_without_pairs_or_variety() -> None:
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([["a"], ["r"]]) is None  # single opinions are not pairable
    assert krippendorff_alpha([["a", "a"]] * 4) is None
