"""Runs the curator as a faust worker until SIGTERM / Ctrl-C.

    python -m services.curator        # FLYWHEEL_CURATOR_SNAPSHOT_EXAMPLES=500 …

A bad FLYWHEEL_CURATOR_* value stops it at start-up with one sentence naming the variable.
"""

from __future__ import annotations

import sys

from schemas.settings import SettingsError
from services.curator.service import CuratorService
from services.curator.settings import load_curator_settings
from services.dataflow.agent import serve
from services.dataflow.tasks import blob_dir
from services.service_main import configure_logging


def main() -> None:
    configure_logging()
    try:  # before any broker connection: a bad setting is one sentence, not a traceback
        settings = load_curator_settings()
    except SettingsError as error:
        print(error, file=sys.stderr)
        raise SystemExit(2) from None

    def build(bus, bootstrap):  # type: ignore[no-untyped-def]
        policy = None
        if settings.admission == "gate":
            from services.dataflow.gate_admission import GateAdmission

            policy = GateAdmission.for_data_dir(bus.data_dir)
        return CuratorService(settings.resolved_snapshot_dir(bus.data_dir),
                              blob_dir(bus.data_dir),
                              snapshot_examples=settings.snapshot_examples, policy=policy,
                              correction_share=settings.correction_share)

    serve(build, "curator")


if __name__ == "__main__":
    main()
