"""Services are peers on a shared core: a service imports itself, the core (services.dataflow:
registry, signing, admission, vetoes, corrections, blob paths, task params, event store, faust
shell) and the layers below, never another service; the core imports no service. Function-level
imports count too. The CLI may import every service's entry points."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICES = Path(__file__).resolve().parents[2] / "services"
CORE = "dataflow"
SHARED_MODULES = {"service_main", "orphan_guard", "broker_watch"}
# Arrows allowed between services: none (the gate's harness page and the evolver share the
# harness evolution domain through the core, services.dataflow.evolution).
KNOWN: set[tuple[str, str]] = set()


def _imports() -> list[tuple[str, str, str]]:
    packages = {p.name for p in SERVICES.iterdir() if (p / "__init__.py").is_file()}
    found = []
    for path in SERVICES.rglob("*.py"):
        owner = path.relative_to(SERVICES).parts[0]
        if owner not in packages:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("services."):
                found.append((owner, node.module, str(path.relative_to(SERVICES.parent))))
    return found


def test_services_import_only_themselves_and_the_core() -> None:
    bad = [f"{where}: {owner} imports {module}" for owner, module, where in _imports()
           if owner not in ("cli", CORE) and module.split(".")[1] not in (owner, CORE, *SHARED_MODULES)
           and (owner, module) not in KNOWN]
    assert not bad, "\n".join(bad)


def test_the_core_imports_no_service() -> None:
    bad = [f"{where}: the core imports {module}" for owner, module, where in _imports()
           if owner == CORE and module.split(".")[1] not in (CORE, *SHARED_MODULES)]
    assert not bad, "\n".join(bad)


def test_the_known_arrows_still_exist() -> None:
    """An arrow that is gone must leave KNOWN too, so the list never hides a new one."""
    seen = {(owner, module) for owner, module, _ in _imports()}
    assert seen >= KNOWN
