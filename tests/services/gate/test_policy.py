"""The admission policy: what it auto-admits, what it sends to a person, and its samples."""

from __future__ import annotations

import pytest

from schemas.settings import SettingsError
from services.dataflow.admission_policy import (
    AdmissionPolicy,
    Candidate,
    PolicySettings,
    PolicyState,
    evolve,
    load_policy_settings,
    route,
    sample_fraction,
)


def settings(**overrides: object) -> PolicySettings:
    return PolicySettings(**{"audit_rate": 0.0, "double_review_rate": 0.0,
                             "new_template_threshold": 0, **overrides})


def success(i: int = 0, **overrides: object) -> Candidate:
    fields = {"item_id": f"ep-{i}", "template": "note_phone_of_relation", "score": 1.0,
              "checker": "final_state"}
    return Candidate(**{**fields, **overrides})


def test_a_verified_success_of_a_deterministic_checker_is_auto_admitted() -> None:
    assert route(settings(), PolicyState(), success()).admit == "auto"


@pytest.mark.parametrize(("overrides", "reason"), [
    ({"score": 0.5}, "partial_score"),
    ({"score": 0.0}, "failed"),
    ({"correction": True}, "correction"),
    ({"composed": True}, "composed"),
    ({"environment": "model"}, "unverified"),
    ({"checker": "llm_judge"}, "unverified"),
])
def test_uncertain_items_go_to_a_person(overrides: dict, reason: str) -> None:
    result = route(settings(), PolicyState(), success(**overrides))
    assert result.admit == "person" and reason in result.reasons


def test_a_new_template_goes_to_a_person_until_enough_were_admitted() -> None:
    policy = AdmissionPolicy(settings(new_template_threshold=2))
    assert policy.route(success()).reasons == ("new_template",)
    policy.admitted("note_phone_of_relation")
    assert policy.route(success()).admit == "person"
    policy.admitted("note_phone_of_relation")
    assert policy.route(success()).admit == "auto"
    assert policy.route(success(template="other")).admit == "person"


def test_environment_faults_are_dropped_not_reviewed() -> None:
    result = route(settings(), PolicyState(), success(environment_fault=True))
    assert result.admit == "drop" and result.reasons == ("environment_fault",)


def test_auto_admit_off_sends_everything_to_a_person() -> None:
    result = route(settings(auto_admit=False), PolicyState(), success())
    assert result.admit == "person" and result.reasons == ("policy",)


def test_the_audit_sample_is_close_to_the_rate_and_stable() -> None:
    config = settings(audit_rate=0.05)
    routes = [route(config, PolicyState(), success(i)) for i in range(10_000)]
    audited = [r for r in routes if r.admit == "person"]
    assert all(r.reasons == ("audit",) for r in audited)
    assert 400 <= len(audited) <= 600  # 5 % of 10,000, binomial sd ≈ 22
    again = [route(config, PolicyState(), success(i)) for i in range(10_000)]
    assert again == routes  # same item, same route, on every replay


def test_the_default_audit_rate_is_five_percent() -> None:
    assert PolicySettings().audit_rate == 0.05


def test_double_review_is_drawn_at_its_rate_among_items_for_a_person() -> None:
    config = settings(double_review_rate=0.2)
    routes = [route(config, PolicyState(), success(i, score=0.5)) for i in range(5_000)]
    doubled = sum(r.double_review for r in routes)
    assert 850 <= doubled <= 1150
    assert not any(r.double_review for r in
                   (route(config, PolicyState(), success(i)) for i in range(200)))


def test_samples_differ_per_salt_and_seed() -> None:
    assert sample_fraction("s", "audit", "x") != sample_fraction("s", "double", "x")
    assert sample_fraction("s", "audit", "x") != sample_fraction("t", "audit", "x")
    assert 0.0 <= sample_fraction("s", "audit", "x") < 1.0


def test_evolve_does_not_touch_the_old_state() -> None:
    start = PolicyState()
    later = evolve(start, "a")
    assert dict(start.admitted) == {} and dict(later.admitted) == {"a": 1}


def test_a_bad_rate_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_GATE_POLICY_AUDIT_RATE", "1.5")
    with pytest.raises(SettingsError, match="FLYWHEEL_GATE_POLICY_AUDIT_RATE"):
        load_policy_settings()
