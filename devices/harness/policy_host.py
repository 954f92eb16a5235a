"""The far side of the sealed policy boundary: `python -m devices.harness.policy_host MODULE:CLASS`.

It loads the policy in a process of its own and answers JSON lines on stdin with JSON lines on
its stdout, the protocol's messages only (devices.harness.sealed is the near side):

    → {"op": "begin", "goal": "...", "catalogue": {...}}        ← {"ok": true}
    → {"op": "act", "observation": {...}}                        ← {"action": {...}}
    → {"op": "close"}                                            (the host exits)

The first line it writes is `{"ready": NAME}` once the policy loaded, or `{"error": SENTENCE}`.
A policy's own prints go to stderr, so nothing it writes can pose as an answer; an exception in
the policy is answered with `{"error": ...}` and the host carries on with the next message.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

from devices.harness.catalogue import Catalogue
from devices.harness.policy import PolicyLoadError, load_policy
from schemas.observations import Observation

__all__ = ["main", "serve"]


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


def _answer(policy: Any, message: dict[str, Any]) -> dict[str, Any]:
    op = message.get("op")
    if op == "begin":
        policy.begin(str(message["goal"]), Catalogue.model_validate(message["catalogue"]))
        return {"ok": True}
    if op == "act":
        action = policy.next_action(Observation.model_validate(message["observation"]))
        if not hasattr(action, "model_dump"):
            return {"error": f"next_action returned {type(action).__name__}, not a schemas.actions action"}
        return {"action": action.model_dump(mode="json")}
    return {"error": f"unknown op {op!r}"}


def serve(spec: str, inbox: IO[str], out: IO[str]) -> int:
    """Loads `spec` and answers messages from `inbox` until it closes or says close."""
    try:
        policy = load_policy(spec)
    except PolicyLoadError as exc:
        _send(out, {"error": str(exc)})
        return 2
    _send(out, {"ready": policy.name})
    for line in inbox:
        message = json.loads(line)
        if message.get("op") == "close":
            return 0
        try:
            reply = _answer(policy, message)
        except Exception as exc:  # noqa: BLE001 - the policy's own failure: say so, keep serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        _send(out, reply)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m devices.harness.policy_host MODULE:CLASS", file=sys.stderr)
        return 2
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr  # the policy's prints never reach the protocol stream
    os.dup2(sys.stderr.fileno(), 1)
    return serve(args[0], sys.stdin, protocol)


if __name__ == "__main__":
    raise SystemExit(main())
