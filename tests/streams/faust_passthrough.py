"""A pass-through faust agent for the integration test: IN -> decode -> OUT, bad -> IN.dlq.

Run: python -m tests.streams.faust_passthrough BOOTSTRAP IN_TOPIC OUT_TOPIC DATA_DIR
"""

from __future__ import annotations

import sys

from schemas.topics import TOPICS
from streams.faust_app import run_relay

__all__ = ["main"]


def main(argv: list[str]) -> None:
    bootstrap, in_name, out_name, data_dir = argv
    source = TOPICS["flywheel.verdicts"].renamed(in_name)
    sink = TOPICS["flywheel.verdicts"].renamed(out_name)
    run_relay(bootstrap, source, sink, data_dir, f"passthrough-{in_name}")


if __name__ == "__main__":
    main(sys.argv[1:])
