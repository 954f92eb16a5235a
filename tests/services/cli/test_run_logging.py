"""During a run the terminal shows the project's warnings only: library records and Python
warnings go to `<data dir>/logs/run.log`, with everything else at INFO and above."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path

import pytest

from services.cli.run_logging import RUN_LOG, run_logging


def test_libraries_and_warnings_go_to_the_file_and_ours_to_both(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with run_logging(tmp_path) as path:
            logging.getLogger("transformers.trainer").warning("a library warning")
            logging.getLogger("trl.trainer").info("{'loss': 8.07}")
            warnings.warn("a TRL UserWarning", UserWarning, stacklevel=1)
            logging.getLogger("services.cli.train_phase").warning("ours, worth seeing")
            logging.getLogger("trainer.sft").info("SFT step 3: loss 0.5")
        said = capsys.readouterr().err
    finally:
        root.removeHandler(handler)
    assert path == tmp_path / "logs" / RUN_LOG
    logged = path.read_text()
    for text in ("a library warning", "{'loss': 8.07}", "a TRL UserWarning", "ours, worth seeing",
                 "SFT step 3: loss 0.5"):
        assert text in logged
    assert "ours, worth seeing" in said
    assert "a library warning" not in said and "UserWarning" not in said and "loss" not in said


def test_a_library_that_keeps_its_logger_apart_still_goes_to_the_file_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """transformers turns propagation off on its root logger and logs to stderr itself; during a
    run its records still land in the file and not on the terminal, and afterwards its own
    handler speaks again."""
    from transformers.utils import logging as hf_logging

    library = logging.getLogger("transformers")
    propagated = library.propagate
    hf_logging.get_logger("transformers.trainer")  # gives the library root logger its handler
    hf_logging.disable_propagation()  # what transformers does on first use (earlier tests may undo it)
    try:
        assert library.propagate is False and library.handlers
        with run_logging(tmp_path) as path:
            logging.getLogger("transformers.trainer").warning("kept apart, still filed")
        assert "kept apart, still filed" in path.read_text()
        assert "kept apart" not in capsys.readouterr().err
        logging.getLogger("transformers.trainer").warning("after the run")
        assert "after the run" not in path.read_text()
    finally:
        library.propagate = propagated
