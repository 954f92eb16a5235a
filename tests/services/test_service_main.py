"""The shared start-up of the evaluator and trainer entry points (services.service_main)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from services.evaluator.__main__ import main as evaluator_main
from services.service_main import run_service
from services.trainer.__main__ import main as trainer_main


@pytest.fixture
def handlers() -> Iterator[None]:
    """Restores the SIGINT/SIGTERM handlers run_service installs."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize(("main", "variable", "value"), [
    (evaluator_main, "FLYWHEEL_EVALUATOR_SPLIT", "train"),
    (trainer_main, "FLYWHEEL_TRAINER_SFT_METHOD", "bogus"),
], ids=["evaluator", "trainer"])
def test_a_bad_setting_exits_with_one_sentence_naming_the_variable(
        main: object, variable: str, value: str, monkeypatch: pytest.MonkeyPatch, handlers: None) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as exit_info:
        main()  # type: ignore[operator]
    message = str(exit_info.value.code)
    assert message.startswith("error: ") and variable in message
    assert "\n" not in message


def test_a_bad_setting_never_reaches_the_loop(monkeypatch: pytest.MonkeyPatch, handlers: None) -> None:
    from schemas.settings import SettingsError

    ran: list[object] = []

    def bad() -> object:
        raise SettingsError("bad evaluator setting 'split' (env FLYWHEEL_EVALUATOR_SPLIT): no",
                            "FLYWHEEL_EVALUATOR_SPLIT")

    with pytest.raises(SystemExit):
        run_service(bad, lambda *args: ran.append(args))
    assert ran == []


def test_the_loop_gets_settings_the_bus_and_a_stop_flag_sigterm_sets(
        bootstrap: str, monkeypatch: pytest.MonkeyPatch, handlers: None) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", bootstrap)
    seen: dict[str, object] = {}

    def loop(settings: str, bus: str, stop: threading.Event) -> str:
        seen.update(settings=settings, bus=bus, set_before=stop.is_set())
        os.kill(os.getpid(), signal.SIGTERM)
        seen["stopped"] = stop.wait(5)
        return "done"

    signal.signal(signal.SIGTERM, lambda *_: None)  # without run_service's own handler, stop stays unset
    assert run_service(lambda: "the settings", loop) == "done"
    assert seen == {"settings": "the settings", "bus": bootstrap, "set_before": False, "stopped": True}


def test_every_service_entry_point_logs_through_the_one_configuration() -> None:
    """Each service's `__main__` calls configure_logging (or run_service, which does): one log
    format, and redaction on every line (the faust services and the rollout had neither)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "services"
    mains = sorted(root.glob("*/__main__.py"))
    assert len(mains) >= 10
    missing = []
    for path in mains:
        if path.parent.name in ("adb_server", "cli"):  # a wrapper around the adb binary; the CLI
            continue
        called = {node.func.id for node in ast.walk(ast.parse(path.read_text()))
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        if not called & {"configure_logging", "run_service"}:
            missing.append(path.parent.name)
    assert not missing, f"these services configure their own logging: {missing}"


def test_configured_logging_masks_secrets_in_every_line(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from services.service_main import configure_logging

    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = []
    try:
        configure_logging()
        logging.getLogger("services.test").warning("connecting to alice:hunter2pass@broker:9092 "
                                                   "with password=s3cr3tValue")
        for handler in root.handlers:
            handler.flush()
    finally:
        root.handlers = saved
    err = capsys.readouterr().err
    assert "broker:9092" in err and "hunter2pass" not in err and "s3cr3tValue" not in err
