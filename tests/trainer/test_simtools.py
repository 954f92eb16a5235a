"""The model-simulated environment: a local LM answers calls to tools whose backend is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from devices.sim import SimPhone
from devices.suite.instances import generate_split
from schemas.actions import ToolCall
from tests.trainer.conftest import tool_call_bias
from trainer.envs import PhoneEnvironment
from trainer.models import load_model
from trainer.simtools import ModelSimulatedPhone, ToolSimulator


def _phone(tiny_model: Path) -> ModelSimulatedPhone:
    loaded = load_model(tiny_model)
    loaded.model.generation_config.sequence_bias = tool_call_bias(loaded.tokenizer, '{"eta_min": 12}')
    return ModelSimulatedPhone(SimPhone(), ToolSimulator(loaded.model, loaded.tokenizer), {"maps.eta"})


def test_simulated_tool_is_answered_by_the_model_and_never_reaches_the_phone(tiny_model: Path) -> None:
    phone = _phone(tiny_model)
    task = generate_split("train", 1, 0)[0]
    phone.reset(task)
    before = phone.device_state()
    observation = phone.act(ToolCall(name="maps.eta", arguments={"destination": "Harbor Gym"}))
    assert observation.result.ok and observation.result.value == {"eta_min": 12}
    assert phone.simulator.calls == 1 and phone.device_state() == before  # the phone never saw it
    real = phone.act(ToolCall(name="contacts.search", arguments={"query": "Sofia"}))
    assert real.result.name == "contacts.search" and phone.simulator.calls == 1


def test_simulated_tools_serve_the_grpo_environment(tiny_model: Path) -> None:
    env = PhoneEnvironment(phone_factory=lambda: _phone(tiny_model))
    env.reset(task=generate_split("train", 1, 0)[0].model_dump_json())
    assert env.tool_call("maps.eta", {"destination": "Harbor Gym"}) == 'ok {"eta_min":12}'
    assert env.actions == 1


def test_unknown_simulated_tool_is_refused(tiny_model: Path) -> None:
    loaded = load_model(tiny_model)
    with pytest.raises(ValueError, match="cannot simulate unknown tools"):
        ModelSimulatedPhone(SimPhone(), ToolSimulator(loaded.model, loaded.tokenizer), {"teleport.now"})
