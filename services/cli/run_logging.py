"""Where `flywheel run`'s log records go: everything to `<data dir>/logs/run.log`, and to the
terminal only the project's own warnings and errors.

A run on a fresh machine used to print some twenty raw trainer dicts, GRPO metric lines, a
DeepSpeed accelerator warning and a TRL `UserWarning` between its status lines. Python warnings
are captured into logging (`py.warnings`), and records from the training libraries stay in the
file, so the terminal shows the run's progress and its summary, and the file keeps the rest.
A library that keeps its own logger apart (transformers sets `propagate = False` on its root
logger and gives it a stderr handler) gets the file handler too, and its terminal handlers are
held silent for the block.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LIBRARIES", "RUN_LOG", "run_logging"]

RUN_LOG = "run.log"
#: Loggers whose records never reach the terminal during a run (the log file has them).
LIBRARIES = ("py.warnings", "transformers", "trl", "deepspeed", "accelerate", "datasets", "torch",
             "peft", "huggingface_hub", "urllib3", "filelock", "matplotlib", "PIL")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _OursOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not any(record.name == name or record.name.startswith(name + ".") for name in LIBRARIES)


def _is_terminal(handler: logging.Handler) -> bool:
    return isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler)


@contextlib.contextmanager
def run_logging(data_dir: Path) -> Iterator[Path]:
    """For the block: every record at INFO and above into `<data_dir>/logs/run.log`; the
    terminal's handlers keep only the project's records; warnings go through logging."""
    folder = Path(data_dir) / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RUN_LOG
    root = logging.getLogger()
    file_handler = logging.FileHandler(path, encoding="utf-8")
    file_handler.setLevel(logging.INFO)
    file_handler.setFormatter(logging.Formatter(FORMAT))
    ours = _OursOnly()
    terminals = [h for h in root.handlers if _is_terminal(h)]
    levels = [h.level for h in terminals]
    for handler in terminals:
        handler.addFilter(ours)
        handler.setLevel(max(handler.level, logging.WARNING))
    level = root.level
    root.setLevel(min(level, logging.INFO) if level else logging.INFO)
    root.addHandler(file_handler)
    apart = [logger for logger in map(logging.getLogger, LIBRARIES) if not logger.propagate]
    muted = [h for logger in apart for h in logger.handlers if _is_terminal(h)]
    muted_levels = [h.level for h in muted]
    for handler in muted:
        handler.setLevel(logging.CRITICAL + 1)
    for logger in apart:
        logger.addHandler(file_handler)
    logging.captureWarnings(True)
    try:
        yield path
    finally:
        logging.captureWarnings(False)
        for logger in apart:
            logger.removeHandler(file_handler)
        for handler, before in zip(muted, muted_levels, strict=True):
            handler.setLevel(before)
        root.removeHandler(file_handler)
        file_handler.close()
        root.setLevel(level)
        for handler, before in zip(terminals, levels, strict=True):
            handler.removeFilter(ours)
            handler.setLevel(before)
