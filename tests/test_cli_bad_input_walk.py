"""Every CLI verb, each of its parameters given a bad value (a path nobody can write, a number out
of range or infinite, a name that does not exist), with an unreachable broker: the answer is a
sentence or a usage error, never a traceback. The verbs and parameters are read from the CLI
itself, so a new verb is attacked without editing this test."""

from __future__ import annotations

import enum
import signal
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from services.cli.main import app

#: Guards against a verb that starts real work instead of refusing; not a speed assertion.
CALL_S = 60
BAD_PATH = "/proc/1/no/such/dir"


def _leaves(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in sorted(subs.items()):
            yield from _leaves(sub, path + [name])
    else:
        yield path, command


def _annotation(param: Any) -> Any:
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", str)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return args[0] if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1 \
        else annotation


def _bad_values(param: Any) -> list[str]:
    kind = _annotation(param)
    if getattr(param, "is_flag", False) or kind is bool:
        return []
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return ["no-such-choice"]
    if kind is int:
        return ["-1"]
    if kind is float:
        return ["inf"]
    return [BAD_PATH]


def _is_argument(param: Any) -> bool:
    return type(param).__name__.endswith("Argument")


def _required_args(command: Any) -> list[str]:
    return [BAD_PATH for p in command.params if _is_argument(p) and p.required]


def _cases() -> list[tuple[str, list[str]]]:
    cases = []
    for path, command in _leaves(typer.main.get_command(app), []):
        for param in command.params:
            if param.name == "help":
                continue
            for value in _bad_values(param):
                if _is_argument(param):
                    args = [value if p is param else BAD_PATH for p in command.params
                            if _is_argument(p) and (p.required or p is param)]
                else:
                    args = _required_args(command) + [param.opts[0], value]
                cases.append((" ".join(path + args), path + args))
    return cases


CASES = _cases()


def test_the_walk_covers_every_verb() -> None:
    leaves = list(_leaves(typer.main.get_command(app), []))
    with_values = {" ".join(path) for path, command in leaves
                   if any(p.name != "help" and _bad_values(p) for p in command.params)}
    walked = {case for case, _ in CASES}
    assert len(leaves) >= 30 and len(with_values) >= 25
    for verb in with_values:
        assert any(case.startswith(verb + " ") for case in walked), verb


class _TookTooLong(Exception):
    pass


@pytest.mark.parametrize(("case", "args"), CASES, ids=[c for c, _ in CASES])
def test_a_bad_value_gets_a_sentence_not_a_traceback(case: str, args: list[str], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a verb that writes where it is run litters the test's folder, not the repo
    def alarm(*_: object) -> None:
        raise _TookTooLong(case)

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(CALL_S)
    try:
        result = CliRunner().invoke(app, args, env={"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
                                                    "FLYWHEEL_DATA_DIR": str(tmp_path / "var"),
                                                    "COLUMNS": "200"})
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    error = result.exception
    assert error is None or isinstance(error, SystemExit), (case, type(error).__name__, error, result.output[-1500:])
    assert "Traceback" not in result.output, (case, result.output[-1500:])
