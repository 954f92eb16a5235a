"""Runs the generator as a faust worker until SIGTERM / Ctrl-C.

    python -m services.generator      # FLYWHEEL_GENERATOR_QUEUE_DEPTH=32 …
"""

from __future__ import annotations

import logging

from services.dataflow.agent import serve
from services.generator.service import GeneratorService
from services.generator.settings import load_generator_settings


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s generator %(message)s")
    serve(lambda bus, bootstrap: GeneratorService(load_generator_settings()), "generator")


if __name__ == "__main__":
    main()
