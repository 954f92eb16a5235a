"""The README's claims are checked: every command its table names answers `--help`, every file it
links to is in the repository (nothing outside it), and its analyst queries run
(`readme_queries`, run against a real run's data dir in tests/services/cli/test_run_loop.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
runner = CliRunner()
_WORD = re.compile(r"^[a-z][a-z0-9-]*$")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _top_level() -> set[str]:
    names = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands}
    return names | {g.name for g in app.registered_groups if g.name}


def documented_commands() -> list[tuple[str, ...]]:
    """Every `flywheel …` command path in the README's command table, alternatives expanded
    (`broker start\\|stop` → broker start, broker stop)."""
    known = _top_level()
    found: list[tuple[str, ...]] = []
    for line in README.splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split(" | ", 1)[0]
        for segment in re.findall(r"`([^`]+)`", first_cell):
            words = segment.removeprefix("flywheel ").split()
            if not words or words[0] not in known:
                continue
            paths: list[tuple[str, ...]] = [()]
            for word in words:
                options = word.split("\\|")
                if not all(_WORD.match(o) for o in options):
                    break
                paths = [(*p, o) for p in paths for o in options]
            found += [p for p in paths if p and p not in found]
    return found


def readme_queries() -> list[str]:
    """The SQL of every `flywheel sql "…"` line in the README's code blocks."""
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL)
    return [query.replace('\\"', '"') for block in blocks
            for query in re.findall(r'flywheel sql "((?:[^"\\]|\\.)*)"', block, flags=re.DOTALL)]


def test_the_readme_names_commands_and_queries() -> None:
    commands = documented_commands()
    assert ("run",) in commands and ("snapshot", "rebuild") in commands and ("broker", "status") in commands
    assert len(readme_queries()) >= 5


@pytest.mark.parametrize("path", documented_commands(), ids=" ".join)
def test_every_documented_command_answers_help(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, f"flywheel {' '.join(path)} --help: {result.output}"
    assert "Usage" in result.output


def test_a_command_that_does_not_exist_fails_help() -> None:
    """The negative case: a path the CLI lacks is not waved through."""
    assert runner.invoke(app, ["snapshot", "unbuild", "--help"]).exit_code != 0


def test_every_link_is_a_file_in_the_repository() -> None:
    targets = [t for t in _LINK.findall(README) if "://" not in t]
    assert targets, "the README links to files"
    for target in targets:
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT), f"the README points outside the repository: {target}"
        assert path.exists(), f"the README links to {target}, which is not in the repository"
    assert "../" not in README and "shared/DESIGN" not in README
