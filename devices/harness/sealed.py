"""The sealed policy boundary: `--policy MODULE:CLASS` runs the policy in a process of its own.

A plug-in policy sharing the evaluator's process could read the task (its parameters, its
oracle) from the caller's stack frames; one issue measured such a policy at 1.0. `SealedPolicy`
implements the Policy protocol by starting `python -m devices.harness.policy_host MODULE:CLASS`
and exchanging only the protocol's messages as JSON lines over a pipe: the goal and the
catalogue at `begin`, an observation for every `next_action` and an action back. Nothing else
of the evaluator is reachable from the policy.

Every step has a time limit (`step_timeout_s`): a policy that does not answer in time is killed,
its episode ends with `finish`, the count is kept in `timeouts`, and the next episode starts a
fresh process. A policy that raises or answers something that is not an action ends its episode
the same way (`failures`). The project's own model policies stay in process (`model:PATH`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from devices.harness.policy import PolicyLoadError
from schemas.actions import ACTION_ADAPTER, Finish

__all__ = ["DEFAULT_STEP_TIMEOUT_S", "SealedPolicy"]

logger = logging.getLogger(__name__)

#: A step's time limit: generous for a heuristic or a remote model, short enough to end a hang.
DEFAULT_STEP_TIMEOUT_S = 60.0
#: How long the host may take to import and construct the policy.
START_TIMEOUT_S = 60.0
_ROOT = Path(__file__).resolve().parents[2]


class SealedPolicy:
    """A `MODULE:CLASS` policy in its own process, spoken to through JSON lines only."""

    def __init__(self, spec: str, *, step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S) -> None:
        self.spec = spec
        self.step_timeout_s = step_timeout_s
        self.timeouts = 0
        self.failures = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._pending = b""  # bytes read from the host past the last full line
        self._over = False  # this episode ended on the policy's side (timeout or failure)
        self.name = self._start()

    # -- the Policy protocol ---------------------------------------------------------------------
    def begin(self, goal: str, catalogue: Any) -> None:
        if self._process is None or self._process.poll() is not None:
            self._start()
        self._over = False
        self._ask({"op": "begin", "goal": goal, "catalogue": catalogue.model_dump(mode="json")})

    def next_action(self, observation: Any) -> Any:
        if self._over:
            return Finish()
        reply = self._ask({"op": "act", "observation": observation.model_dump(mode="json")})
        if reply is None:
            return Finish()
        try:
            return ACTION_ADAPTER.validate_python(reply["action"])
        except (KeyError, ValidationError) as exc:
            self._fail(f"answered something that is not an action ({str(exc).splitlines()[0]})")
            return Finish()

    def close(self) -> None:
        """Asks the host to exit, then makes sure it has."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.poll() is None and process.stdin is not None:
                process.stdin.write(json.dumps({"op": "close"}).encode() + b"\n")
                process.stdin.flush()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    def __del__(self) -> None:  # a forgotten policy never leaves its process behind
        with contextlib.suppress(Exception):  # at interpreter shutdown, modules may be gone
            self.close()

    # -- the pipe ---------------------------------------------------------------------------------
    def _start(self) -> str:
        self.close()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(_ROOT), os.getcwd(), os.environ.get("PYTHONPATH", "")) if p)}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "devices.harness.policy_host", self.spec],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=env)
        self._pending = b""
        first = self._read(START_TIMEOUT_S)
        if first is None or "error" in first or "ready" not in first:
            said = (first or {}).get("error") or f"the policy host for {self.spec} did not start"
            self.close()
            raise PolicyLoadError(said)
        return str(first["ready"])

    def _ask(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Sends one message and waits up to the step limit for the reply (None: the episode is
        over on the policy's side)."""
        process = self._process
        if process is None or process.stdin is None or self._over:
            return None
        try:
            process.stdin.write(json.dumps(message, default=str).encode() + b"\n")
            process.stdin.flush()
        except OSError:
            self._fail("exited")
            return None
        reply = self._read(self.step_timeout_s)
        if reply is None:
            if process.poll() is None:
                self.timeouts += 1
                logger.warning("policy %s did not answer within %.0f s; its episode ends and the "
                               "next one starts a fresh process", self.name, self.step_timeout_s)
                process.kill()
                process.wait()
                self._process = None
                self._over = True
            else:
                self._fail(f"exited with status {process.returncode}")
            return None
        if "error" in reply:
            self._fail(f"raised {reply['error']}")
            return None
        return reply

    def _read(self, timeout_s: float) -> dict[str, Any] | None:
        """The host's next JSON line within `timeout_s` (None: none came, or the host exited).
        Bytes are read from the pipe directly, so a second line already read is never left
        waiting in a buffer the selector cannot see."""
        process = self._process
        if process is None or process.stdout is None:
            return None
        fd = process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                while b"\n" in self._pending:
                    line, self._pending = self._pending.split(b"\n", 1)
                    try:
                        return json.loads(line)
                    except json.JSONDecodeError:
                        continue  # not a protocol line; the host sends only JSON
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return None
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None
                self._pending += chunk

    def _fail(self, what: str) -> None:
        self.failures += 1
        self._over = True
        logger.warning("policy %s %s; its episode ends", getattr(self, "name", self.spec), what)
