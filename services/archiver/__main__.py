"""Run the archiver service alone: every topic (and its dead letters) into the Parquet archive.

How to run:  KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:19092 python -m services.archiver
(or with the local broker from `flywheel broker start`). Stops on SIGINT/SIGTERM after a
final flush. `flywheel run` runs the same loop with a live status line.
"""

from __future__ import annotations

import logging
import sys

from aiokafka.errors import KafkaError

from services.archiver.service import StopFlag, build_archiver, loss_bound
from services.archiver.settings import load_archiver_settings
from services.broker_watch import watch_broker
from services.service_main import configure_logging
from streams.broker import LocalBroker, kafka_answers
from streams.dlq import error_sentence
from streams.redact import mask_bootstrap
from streams.settings import load_bus_settings

__all__ = ["main"]

logger = logging.getLogger("services.archiver")


def main() -> int:
    configure_logging()
    try:
        bus, settings = load_bus_settings(), load_archiver_settings()
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    bootstrap = bus.bootstrap_or_none()
    if bootstrap is None:
        broker = LocalBroker.recorded(bus.data_dir)
        if broker is None:
            print("error: no broker to archive from; set KAFKA_BOOTSTRAP_SERVERS or start the "
                  "local broker with `flywheel broker start`", file=sys.stderr)
            return 2
        bootstrap = broker.bootstrap
    if not kafka_answers(bootstrap):
        print(f"error: Kafka at {mask_bootstrap(bootstrap)} does not answer; start it or fix "
              f"KAFKA_BOOTSTRAP_SERVERS", file=sys.stderr)
        return 2
    archive_dir = settings.resolved_archive_dir(bus.data_dir)
    try:
        archiver, source = build_archiver(bootstrap, settings, archive_dir,
                                          data_dir=bus.data_dir)
    except (KafkaError, OSError) as error:
        print(f"error: cannot start archiving from {mask_bootstrap(bootstrap)} into "
              f"{archive_dir} ({error_sentence(error)})", file=sys.stderr)
        return 2
    stop = StopFlag().install()
    watch_broker(bootstrap, "the archiver")
    logger.info("archiving %s into %s; %s", bootstrap, archive_dir, loss_bound(settings))
    try:
        stats = archiver.run(stop)
    finally:
        source.close()
    logger.info("stopped (%s): archived %d events in %d files, skipped %d duplicates",
                stop.reason, stats.archived_total, stats.files, stats.duplicates)
    return 0


if __name__ == "__main__":
    sys.exit(main())
