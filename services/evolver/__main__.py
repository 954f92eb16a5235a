"""Runs the harness evolver as a faust worker until SIGTERM / Ctrl-C.

    python -m services.evolver      # FLYWHEEL_EVOLVER_* settings, registry under FLYWHEEL_DATA_DIR
"""

from __future__ import annotations

import sys

from schemas.envelope import utc_now
from services.dataflow.agent import serve
from services.dataflow.evolution.settings import load_evolver_settings
from services.dataflow.registry import HarnessRegistry
from services.dataflow.vetoes import VetoVerifier
from services.evolver.service import EvolverService
from services.service_main import configure_logging


def main() -> None:
    configure_logging()
    try:
        settings = load_evolver_settings()
    except ValueError as error:
        print(error, file=sys.stderr)
        raise SystemExit(2) from None
    serve(lambda bus, bootstrap: EvolverService(
        HarnessRegistry.at_data_dir(bus.data_dir), settings, now=utc_now,
        vetoes=VetoVerifier.for_data_dir(bus.data_dir, settings.gate_public_key)), "evolver")


if __name__ == "__main__":
    main()
