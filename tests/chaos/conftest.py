"""Chaos fixtures: the figures every chaos test records, printed as one table at the end."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

__all__ = ["ChaosFigures", "chaos_figures"]


@dataclass
class ChaosFigures:
    """Per consumer or sink: acknowledged, lost, duplicated, dead-lettered, and notes."""

    rows: dict[str, dict[str, str]] = field(default_factory=dict)

    def record(self, name: str, **figures: object) -> None:
        self.rows.setdefault(name, {}).update({k: str(v) for k, v in figures.items()})


_FIGURES = ChaosFigures()
COLUMNS = ("acknowledged", "lost", "duplicated", "dead-lettered", "note")


@pytest.fixture(scope="session")
def chaos_figures() -> Iterator[ChaosFigures]:
    yield _FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _FIGURES.rows:
        return
    write = terminalreporter.write_line
    terminalreporter.section("chaos figures")
    width = max(len(n) for n in _FIGURES.rows) + 2
    write("consumer / sink".ljust(width) + "".join(c.ljust(15) for c in COLUMNS[:-1]) + "note")
    for name, figures in sorted(_FIGURES.rows.items()):
        write(name.ljust(width) + "".join(figures.get(c, "-").ljust(15) for c in COLUMNS[:-1])
              + figures.get("note", ""))
