"""Starting the gate: key (fail closed, or generated on first local run), tokens, the feed and
the web server in background threads. `flywheel gate` and `flywheel run` both use `start_gate`.

Wiring into `flywheel run` is two calls::

    gate = start_gate(bootstrap, bus.data_dir, create_key=True, local_reviewer="local")
    console.print(gate.banner())          # the address, and the local token (printed once)
    ...
    gate.stop(); table rows += gate.summary_rows(auto_admitted=...)
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from devices.blobs import BlobStore
from devices.harness.spec import HarnessSpec
from services.dataflow.evolution.settings import load_evolver_settings
from services.dataflow.registry import HarnessRegistry, RegistryError
from services.dataflow.signing import GateKeyError, create_key, load_private_key
from services.gate.app import create_app
from services.gate.harness import HarnessBoard
from services.gate.service import BrokerPublisher, Gate, GateFeed, GateTopics
from services.gate.settings import GateSettings, load_gate_settings
from services.gate.tokens import ReviewerTokens

__all__ = ["GateHandle", "GateStartError", "harness_board", "load_or_create_key", "start_gate"]

logger = logging.getLogger(__name__)

#: How long the web server may take to bind before start-up is reported as failed.
START_TIMEOUT_S = 15.0


class GateStartError(RuntimeError):
    """The gate cannot start (no key, port taken, …); the message says what to do."""


def load_or_create_key(path: Path, *, create: bool) -> tuple[Ed25519PrivateKey, bool]:
    """The signing key at `path`; with `create`, a new one when none exists (True as the
    second value). Without it a missing key is a GateStartError: the gate fails closed."""
    if not path.exists():
        if not create:
            raise GateStartError(
                f"no gate signing key at {path}: the gate refuses to start without one; create "
                "it with 'flywheel gate keygen' (or set FLYWHEEL_GATE_KEY_PATH)")
        return create_key(path), True
    try:
        return load_private_key(path), False
    except GateKeyError as error:
        raise GateStartError(str(error)) from None


def harness_board(data_dir: Path, veto_window_s: float | None = None) -> HarnessBoard:
    """The board of pending promotions: it starts from the registry's current harness (the
    evolver's base harness while the registry is empty) and shows the evolver's veto window
    (FLYWHEEL_EVOLVER_VETO_WINDOW_S, the variable the evolver reads; a bad value is a
    GateStartError naming it)."""
    try:
        evolver = load_evolver_settings()
    except ValueError as error:
        raise GateStartError(str(error)) from None
    registry = HarnessRegistry.at_data_dir(data_dir)
    try:
        current = registry.current()
        spec = registry.get(current) if current else (
            HarnessSpec.load(evolver.base_spec) if evolver.base_spec
            else HarnessSpec.default()).to_json_dict()
    except (RegistryError, OSError, ValueError) as error:
        raise GateStartError(f"the gate cannot read the current harness ({error})") from None
    window = evolver.veto_window_s if veto_window_s is None else veto_window_s
    return HarnessBoard(spec, veto_window_s=window, registry=registry)


@dataclass
class GateHandle:
    """A running gate: its address, the objects behind it, and how to stop it."""

    url: str
    gate: Gate
    feed: GateFeed
    server: uvicorn.Server
    thread: threading.Thread
    key_path: Path
    key_created: bool
    local_token: str | None = None
    publisher: BrokerPublisher | None = None
    token_reused: bool = False
    _stopped: bool = field(default=False, repr=False)

    def banner(self) -> str:
        """What a person needs to start reviewing: the address and, once, the token."""
        lines = [(f"review gate on {self.url} (signing key {self.gate.signer.key_id}"
                 f"{', created at ' + str(self.key_path) if self.key_created else ''})")]
        if self.local_token:
            how = ("the same as last run; `flywheel run --rotate-token` issues a new one" if self.token_reused
                   else "new; kept for the next run in the data dir, mode 0600")
            lines.append(f"reviewer token for 'local' ({how}): {self.local_token}")
        return "\n".join(lines)

    def summary_rows(self, auto_admitted: int | None = None, *, blocking: bool = True) -> list[tuple[str, str]]:
        """Rows for a run's summary table; `blocking` False (`--admission auto`) says that what
        still waits for a person did not hold back the run's snapshots."""
        counts = self.gate.queue.counts()
        rows = []
        if auto_admitted is not None:
            rows.append(("items auto-admitted by the policy", f"{auto_admitted:,}"))
        reviewed = counts["approved"] + counts["rejected"] + counts["needs_changes"]
        rows += [
            ("items sent to a person", f"{counts['requested']:,}"),
            ("items human-reviewed", f"{reviewed:,}"),
            ("approved / rejected / needs changes",
             f"{counts['approved']:,} / {counts['rejected']:,} / {counts['needs_changes']:,}"),
            ("still waiting for a person" if blocking else
             "still waiting for a person (not blocking: --admission auto)", f"{counts['waiting']:,}"),
        ]
        return rows

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.feed.stop()
        try:
            self.gate.publish_stats()
        except Exception as error:  # noqa: BLE001 - the last report is best effort at shutdown
            logger.warning("could not publish the final review stats: %s", error)
        if self.publisher is not None:
            self.publisher.close()


def start_gate(bootstrap: str, data_dir: Path, settings: GateSettings | None = None, *,
               create_key: bool = False, local_reviewer: str | None = None, rotate_token: bool = False,
               topics: GateTopics | None = None, veto_window_s: float | None = None
               ) -> GateHandle:
    """Starts the feed and the web server; returns once both run. Raises GateStartError
    (one sentence) when the key is missing and `create_key` is False, or the port is taken.
    With `local_reviewer`, that reviewer's token is the one kept from the last run (a fresh one
    when there is none, it was revoked, or `rotate_token`).
    `veto_window_s` overrides the evolver's setting the harness page shows."""
    settings = settings or load_gate_settings()
    data_dir = Path(data_dir)
    key_path = settings.resolved_key_path(data_dir)
    key, created = load_or_create_key(key_path, create=create_key)
    tokens = ReviewerTokens(settings.resolved_reviewers_path(data_dir))
    token, reused = (tokens.kept(local_reviewer, tokens.path.parent / f"{local_reviewer}-reviewer.token",
                                 rotate=rotate_token) if local_reviewer else (None, False))
    topics = topics or GateTopics.registered()
    board = harness_board(data_dir, veto_window_s) if topics.harness is not None else None
    publisher = BrokerPublisher(bootstrap, topics.reviews, settings.publish_timeout_s,
                                harness=topics.harness)
    from services.gate.gold import gold_items
    from services.gate.queue import ReviewQueue

    gate = Gate(key, tokens, publisher, blobs=BlobStore(settings.resolved_blob_dir(data_dir)),
                harness=board, queue=ReviewQueue(gold=gold_items(settings.gold_items)))
    feed = GateFeed(gate, bootstrap, topics, stats_interval_s=settings.stats_interval_s).start()
    config = uvicorn.Config(create_app(gate), host=settings.host, port=settings.port,
                            log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="gate-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            feed.stop()
            publisher.close()
            raise GateStartError(f"the gate could not listen on {settings.host}:{settings.port} "
                                 "(is the port taken?); set FLYWHEEL_GATE_PORT")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    host = settings.host if settings.host not in ("0.0.0.0", "::") else "127.0.0.1"
    return GateHandle(f"http://{host}:{port}", gate, feed, server, thread, key_path, created,
                      token, publisher, token_reused=reused)
