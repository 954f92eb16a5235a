"""The devices layers, read from the source: every import of every module, function-level ones
included, resolved to the devices module it loads.

- the harness (devices.harness) and the real phone (devices.adb) import neither the simulator
  (devices.sim) nor the suite (devices.suite);
- the shared kit (devices.kit) imports none of the sim, the suite, the harness and the adb phone;
- no devices module imports itself back through others (no import cycle).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICES = ROOT / "devices"
PROJECT_PACKAGES = ("schemas", "streams", "devices", "trainer", "services")

FORBIDDEN = {
    "devices.harness": ("devices.sim", "devices.suite"),
    "devices.adb": ("devices.sim", "devices.suite"),
    "devices.kit": ("devices.sim", "devices.suite", "devices.harness", "devices.adb"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def devices_modules(root: Path = DEVICES) -> dict[str, Path]:
    """Every module under `root` (packages by their __init__), by dotted name."""
    return {module_name(path): path for path in sorted(root.rglob("*.py"))}


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def imported(module: str, path: Path, known: set[str],
             packages: tuple[str, ...] = ("devices",)) -> Iterator[tuple[str, int]]:
    """(module, line) for every import in the file, wherever it stands; `from P import N` counts
    P.N when that is a module, P otherwise. Imports outside `packages` are left out."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                anchor = parts if is_package else parts[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if any(within(target, package) for package in packages):
                yield target, node.lineno


def import_graph(*roots: Path) -> dict[str, dict[str, int]]:
    """module → {module it imports → first line}, over the packages at `roots` (devices alone by
    default)."""
    roots = roots or (DEVICES,)
    modules = {name: path for root in roots for name, path in devices_modules(root).items()}
    known = set(modules)
    packages = tuple(module_name(root) for root in roots)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for target, line in imported(name, path, known, packages):
            if target != name:
                edges.setdefault(target, line)
    return graph


def layer_violations(graph: dict[str, dict[str, int]]) -> list[str]:
    found = []
    for module, edges in sorted(graph.items()):
        for layer, banned in FORBIDDEN.items():
            if not within(module, layer):
                continue
            for target, line in sorted(edges.items()):
                if any(within(target, b) for b in banned):
                    found.append(f"{module}:{line} imports {target}")
    return found


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_layers_hold() -> None:
    assert layer_violations(import_graph()) == []


def test_no_import_cycle_among_devices_modules() -> None:
    assert cycles(import_graph()) == []


def test_no_import_cycle_anywhere_in_the_project() -> None:
    """Across schemas, streams, devices, trainer and services, function-level imports included
    (trainer.batched and trainer.evaluate were one, hidden inside a function)."""
    assert cycles(import_graph(*(ROOT / p for p in PROJECT_PACKAGES))) == []


def test_the_project_check_sees_a_cycle_across_packages(tmp_path: Path) -> None:
    global ROOT
    saved = ROOT
    ROOT = tmp_path
    try:
        for package in ("trainer", "services"):
            (tmp_path / package).mkdir()
            (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / "trainer" / "t.py").write_text("def f():\n    from services import s\n")
        (tmp_path / "services" / "s.py").write_text("import trainer.t\n")
        graph = import_graph(tmp_path / "trainer", tmp_path / "services")
        assert cycles(graph) == [["services.s", "trainer.t"]]
    finally:
        ROOT = saved


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A planted violation of each kind is found: a function-level import, a relative one,
    `from package import module`, a kit import upwards and a two-module cycle."""
    global ROOT
    saved = ROOT
    ROOT = tmp_path
    try:
        devices = tmp_path / "devices"
        for package in ("", "sim", "harness", "adb", "kit"):
            (devices / package).mkdir(parents=True, exist_ok=True)
            (devices / package / "__init__.py").write_text("")
        (devices / "sim" / "state.py").write_text("X = 1\n")
        (devices / "harness" / "h.py").write_text(
            "def f():\n    from devices.sim.state import X\n    return X\n")
        (devices / "adb" / "a.py").write_text("from devices import sim\n")
        (devices / "adb" / "b.py").write_text("from . import c\n")
        (devices / "adb" / "c.py").write_text("def g():\n    import devices.adb.b\n")
        (devices / "kit" / "k.py").write_text("from ..harness import h\n")
        graph = import_graph(devices)
        assert layer_violations(graph) == [
            "devices.adb.a:1 imports devices.sim",
            "devices.harness.h:2 imports devices.sim.state",
            "devices.kit.k:1 imports devices.harness.h",
        ]
        assert cycles(graph) == [["devices.adb.b", "devices.adb.c"]]
    finally:
        ROOT = saved
