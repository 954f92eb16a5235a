"""Runs the generator as a faust worker until SIGTERM / Ctrl-C.

    python -m services.generator      # FLYWHEEL_GENERATOR_QUEUE_DEPTH=32 …
"""

from __future__ import annotations

from services.dataflow.agent import serve
from services.generator.service import GeneratorService
from services.generator.settings import load_generator_settings
from services.service_main import configure_logging


def main() -> None:
    configure_logging()
    serve(lambda bus, bootstrap: GeneratorService(load_generator_settings()), "generator")


if __name__ == "__main__":
    main()
