"""The model-simulated environment: a local LM plays the backend of tools whose real backend is missing.

`ModelSimulatedPhone` wraps a phone; a `tool_call` to one of `simulated` tools is answered by the
simulator model (given the tool's description, argument schema and the call) instead of the
phone, which never sees it. Everything else goes to the phone, so checkers still read the
phone's state. Plug it into GRPO with `PhoneEnvironment(phone_factory=...)` for breadth of tools.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from schemas.observations import Observation, ToolError, ToolResult

__all__ = ["ModelSimulatedPhone", "ToolSimulator"]

logger = logging.getLogger(__name__)

# A simulated result is one short JSON value; longer output is cut.
MAX_RESULT_TOKENS = 64
_PROMPT = ("You are the backend of the phone tool {name} ({description}). Its arguments follow this JSON "
           "schema: {schema}. It returns: {returns}. The call is {arguments}. Reply with only the JSON result.")


class ToolSimulator:
    """Generates a tool's result with a local causal LM (greedy, bounded)."""

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = MAX_RESULT_TOKENS) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.calls = 0

    def __call__(self, spec: Any, arguments: dict[str, Any]) -> ToolResult:
        import torch

        prompt = _PROMPT.format(name=spec.name, description=spec.description,
                                schema=json.dumps(spec.parameters, separators=(",", ":")),
                                returns=getattr(spec, "returns", "a JSON value"),
                                arguments=json.dumps(arguments, separators=(",", ":")))
        rendered = self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                      add_generation_prompt=True)
        ids = self.tokenizer(rendered, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = self.model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                      max_new_tokens=self.max_new_tokens, do_sample=False,
                                      eos_token_id=self.tokenizer.eos_token_id,
                                      pad_token_id=self.tokenizer.pad_token_id)
        self.calls += 1
        text = self.tokenizer.decode(out[0, len(ids):], skip_special_tokens=True).strip()
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError:
            value = text  # a model that cannot write JSON still answers, as text
        return ToolResult(name=spec.name, ok=True, value=value)


class ModelSimulatedPhone:
    """A phone whose `simulated` tools are answered by a ToolSimulator instead of their backend."""

    def __init__(self, phone: Any, simulator: ToolSimulator, simulated: Iterable[str]) -> None:
        self.phone = phone
        self.simulator = simulator
        self.simulated = frozenset(simulated)
        unknown = self.simulated - set(phone.tools)
        if unknown:
            raise ValueError(f"cannot simulate unknown tools {sorted(unknown)}; name tools of the phone's catalogue")
        self.device_id = f"model-sim:{phone.device_id}"
        self.tools = phone.tools
        self.apps = getattr(phone, "apps", ())

    @property
    def state(self) -> Any:
        return self.phone.state

    def device_state(self) -> dict[str, Any]:
        """The wrapped phone's tables and settings (simulated calls never change them)."""
        return self.phone.device_state()

    def reset(self, task: Any) -> Observation:
        return self.phone.reset(task)

    def observe(self) -> Observation:
        return self.phone.observe()

    def act(self, action: Any) -> Observation:
        if getattr(action, "action_type", None) != "tool_call" or action.name not in self.simulated:
            return self.phone.act(action)
        before = self.phone.observe()
        try:
            result = self.simulator(self.tools[action.name], dict(action.arguments))
        except (RuntimeError, ValueError) as error:  # a failing simulator is a tool error, not a crash
            logger.warning("simulated %s failed: %s", action.name, error)
            result = ToolResult(name=action.name, ok=False,
                                error=ToolError(code="transient", message=f"the simulated backend failed: {error}"))
        return before.model_copy(update={"step": before.step + 1, "result": result, "message": None})

    def close(self) -> None:
        self.phone.close()
