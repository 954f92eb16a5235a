"""Runs the verifier as a faust worker until SIGTERM / Ctrl-C.

    python -m services.verifier
"""

from __future__ import annotations

from services.dataflow.agent import serve
from services.dataflow.tasks import blob_dir
from services.service_main import configure_logging
from services.verifier.service import VerifierService


def main() -> None:
    configure_logging()
    serve(lambda bus, bootstrap: VerifierService(blob_dir(bus.data_dir)), "verifier")


if __name__ == "__main__":
    main()
