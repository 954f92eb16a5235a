"""No function in services/ is over 80 lines: a longer one is split into named phases, each
with one job (services.gate.app's route groups, services.cli.run_cmd's phases)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICES = Path(__file__).resolve().parents[2] / "services"
#: Lines from a function's `def` line (decorators not counted) to its last line, inclusive.
MAX_LINES = 80


def too_long(root: Path, limit: int = MAX_LINES) -> list[str]:
    """'path:line name (N lines)' for every function under root longer than limit."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > limit:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} "
                                 f"({lines} lines)")
    return found


def test_no_function_in_services_is_over_80_lines() -> None:
    assert len(list(SERVICES.rglob("*.py"))) > 50  # the walk sees the services
    assert too_long(SERVICES) == [], f"split these into phases of at most {MAX_LINES} lines"


def test_the_walk_names_a_long_function_and_its_nested_ones(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text(
        f"def short():\n    return 1\n\n\ndef outer():\n    async def inner():\n{body.replace('    ', '        ')}\n"
        f"    return inner\n\n\ndef exactly():\n" + "\n".join(f"    y{i} = {i}" for i in range(MAX_LINES - 1)) + "\n")
    assert too_long(tmp_path / "pkg") == ["pkg/long.py:5 outer (83 lines)",
                                          "pkg/long.py:6 inner (81 lines)"]
