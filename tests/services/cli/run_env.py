"""The environment a test gives a `flywheel run` subprocess: its own data folder and broker port."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["run_env"]


def run_env(data_dir: Path, port: int, *, flush_s: float, columns: int) -> dict[str, str]:
    """The environment of a `flywheel run` on its own broker at `port`, archiving into `data_dir`
    (flushing every `flush_s`), printing `columns` wide; no inherited bootstrap servers."""
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    env.update({"FLYWHEEL_DATA_DIR": str(data_dir), "FLYWHEEL_BROKER_PORT": str(port),
                "FLYWHEEL_GATE_PORT": "0",  # the gate the run starts: any free port
                "FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S": str(flush_s), "COLUMNS": str(columns),
                "PYTHONPATH": str(Path.cwd())})
    return env
