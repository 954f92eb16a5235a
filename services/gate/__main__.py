"""Run the review gate alone: the queue from the topics, the web app, signed decisions.

How to run:  KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:19092 python -m services.gate
(or with the local broker from `flywheel broker start`). It refuses to start without its
signing key (`flywheel gate keygen` creates one; FLYWHEEL_GATE_KEY_PATH points elsewhere),
and issues no tokens (`flywheel gate token NAME`). Stops on SIGINT/SIGTERM. It is the same
as `flywheel gate`.
"""

from __future__ import annotations

import logging
import sys

from services.cli.main import app

__all__ = ["main"]

logger = logging.getLogger("services.gate")


def main() -> int:
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        code = app(["gate", *sys.argv[1:]], standalone_mode=False)
    except SystemExit as done:
        return int(done.code or 0)
    except Exception as error:  # noqa: BLE001 - click reports usage errors this way
        print(f"error: {error}", file=sys.stderr)
        return 2
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
