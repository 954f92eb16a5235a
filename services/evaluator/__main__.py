"""Runs the evaluator service until Ctrl-C: `python -m services.evaluator`.

    FLYWHEEL_EVALUATOR_SPLIT=dev python -m services.evaluator

It reads `flywheel.checkpoints` and `flywheel.harness`; each new checkpoint (and each promoted
harness, with the newest checkpoint) is run on the split and reported as `eval.reported` on
`flywheel.evals`: overall, per family and tier, success, tokens, tool calls, 95% intervals.
"""

from __future__ import annotations

from services.evaluator.loop import run_evaluator
from services.evaluator.settings import load_evaluator_settings
from services.service_main import run_service

__all__ = ["main"]


def main() -> None:
    run_service(load_evaluator_settings, run_evaluator)


if __name__ == "__main__":
    main()
