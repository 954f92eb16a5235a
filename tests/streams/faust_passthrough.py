"""A pass-through faust agent for the integration test: IN -> decode -> OUT, bad -> IN.dlq.

Run: python -m tests.streams.faust_passthrough BOOTSTRAP IN_TOPIC OUT_TOPIC DATA_DIR
"""

from __future__ import annotations

import sys

from faust import Worker

from schemas.topics import TOPICS
from streams.codec import encode
from streams.dlq import DeadLetterRouter
from streams.faust_app import decoded_events, make_app, typed_topic
from streams.settings import BusSettings

__all__ = ["main"]


def main(argv: list[str]) -> None:
    bootstrap, in_name, out_name, data_dir = argv
    settings = BusSettings(bootstrap_servers=bootstrap, data_dir=data_dir)
    source = TOPICS["flywheel.verdicts"].renamed(in_name)
    sink = TOPICS["flywheel.verdicts"].renamed(out_name)
    app = make_app(f"passthrough-{in_name}", settings)
    in_topic, out_topic = typed_topic(app, source), typed_topic(app, sink)
    router = DeadLetterRouter(bootstrap)

    @app.agent(in_topic)
    async def passthrough(stream):
        async for event in decoded_events(stream, source, router):
            await out_topic.send(key=sink.key_of(event), value=encode(event))

    Worker(app, loglevel="warning", quiet=True).execute_from_commandline()


if __name__ == "__main__":
    main(sys.argv[1:])
