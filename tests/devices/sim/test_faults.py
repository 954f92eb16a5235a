"""Injected faults: off by default, reproducible from fault_seed, and each kind observable."""

from __future__ import annotations

from devices.sim.faults import FAULT_KINDS, FaultInjector
from devices.sim.phone import SimPhone
from schemas.actions import Click, NavigateBack, OpenApp, ToolCall
from tests.devices.sim.conftest import make_task

TOOL = ToolCall(name="clock.now")


def drive(phone: SimPhone, rounds: int = 60) -> list:
    """Alternates tool calls and GUI actions inside an app so every fault kind can occur."""
    observations = []
    for _ in range(rounds):
        observations.append(phone.act(TOOL))
        if phone.state.ui.get("dialog"):
            observations.append(phone.act(NavigateBack()))
        observations.append(phone.act(OpenApp(app_name="Notes")))
        observations.append(phone.act(Click(index=2)))
        if phone.state.ui.get("dialog"):
            observations.append(phone.act(NavigateBack()))
        observations.append(phone.act(NavigateBack()))
    return observations


def new_phone(rate: float, seed: int | None) -> SimPhone:
    phone = SimPhone(fault_rate=rate, fault_seed=seed)
    phone.reset(make_task(seed=11, max_steps=10_000))
    return phone


def test_no_faults_by_default() -> None:
    phone = new_phone(0.0, None)
    observations = drive(phone, 30)
    assert phone.state.faults == []
    assert all(o.result is None or o.result.ok or o.result.error.code == "bad_arguments"
               for o in observations)


def test_every_fault_kind_is_observed() -> None:
    phone = new_phone(0.3, 1)
    observations = drive(phone)
    kinds = {k for _, k in phone.state.faults}
    assert kinds == set(FAULT_KINDS)
    codes = {o.result.error.code for o in observations if o.result is not None and o.result.error}
    assert {"timeout", "transient", "app_crashed"} <= codes
    retryable = [o.result.error for o in observations if o.result is not None and o.result.error
                 and o.result.error.code in ("timeout", "transient")]
    assert retryable and all(e.retryable for e in retryable)
    messages = " ".join(o.message or "" for o in observations)
    assert "slow to respond" in messages and "permission dialog" in messages and "has stopped" in messages


def test_faults_are_reproducible_from_the_fault_seed() -> None:
    a, b, c = new_phone(0.3, 42), new_phone(0.3, 42), new_phone(0.3, 43)
    drive(a, 20), drive(b, 20), drive(c, 20)
    assert a.state.faults == b.state.faults
    assert a.state.faults != c.state.faults


def test_fault_seed_defaults_to_the_task_seed() -> None:
    a, b = new_phone(0.3, None), new_phone(0.3, None)
    drive(a, 10), drive(b, 10)
    assert a.state.faults == b.state.faults and a.state.faults


def test_timeout_costs_clock_time_and_does_not_run_the_tool() -> None:
    phone = new_phone(1.0, 0)
    phone.faults = _Fixed("tool_timeout")
    before = phone.observe().clock_ms
    obs = phone.act(ToolCall(name="notes.create", arguments={"title": "x", "body": ""}))
    assert obs.result.error.code == "timeout" and obs.clock_ms == before + 1_000 + 10_000
    assert len(phone.state.rows("notes", "notes")) == 6
    assert phone.state.log[-1].ok is False


def test_permission_popup_blocks_until_dismissed() -> None:
    phone = new_phone(1.0, 0)
    phone.faults = _Fixed("permission_popup")
    obs = phone.act(OpenApp(app_name="Notes"))
    allow = next(i for i, e in enumerate(obs.screen) if e.text == "Allow")
    phone.faults = _Fixed(None)
    blocked = phone.act(Click(index=2))
    assert "dialog is in the way" in blocked.message
    obs = phone.act(Click(index=allow))
    assert obs.message == "Permission granted." and not phone.state.ui["dialog"]
    assert phone.act(Click(index=2)).screen[2].text == "New note"


def test_app_crash_returns_home() -> None:
    phone = new_phone(1.0, 0)
    phone.faults = _Fixed(None)
    phone.act(OpenApp(app_name="Contacts"))
    phone.faults = _Fixed("app_crash")
    obs = phone.act(Click(index=2))
    assert obs.foreground_app == "home" and obs.result.error.code == "app_crashed"
    assert obs.message == "Contacts has stopped."


def test_rate_is_checked() -> None:
    try:
        FaultInjector(rate=1.5)
    except ValueError as exc:
        assert "fault_rate" in str(exc)
    else:
        raise AssertionError("a rate above 1 must be refused")


class _Fixed(FaultInjector):
    """Always draws the same fault (or none), for testing one kind in isolation."""

    def __init__(self, kind: str | None) -> None:
        super().__init__(1.0, 0)
        self.kind = kind

    def draw(self, kinds: tuple[str, ...]) -> str | None:
        return self.kind if self.kind in kinds else None
