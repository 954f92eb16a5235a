"""SimSettings: read from FLYWHEEL_SIM_* variables, bad values named in one sentence."""

from __future__ import annotations

import pytest

from devices.sim.phone import SimPhone
from schemas.actions import ToolCall


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_SIM_STEP_MS", "250")
    phone = SimPhone.from_settings()
    start = phone.observe().clock_ms
    assert phone.act(ToolCall(name="clock.now")).clock_ms == start + 250
    # plain construction ignores the environment, so tests and benches stay reproducible
    plain = SimPhone()
    assert plain.act(ToolCall(name="clock.now")).clock_ms == start + 1000


def test_bad_setting_is_named_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_SIM_FAULT_RATE", "2")
    with pytest.raises(ValueError, match="FLYWHEEL_SIM_FAULT_RATE") as info:
        SimPhone.from_settings()
    assert "\n" not in str(info.value)
