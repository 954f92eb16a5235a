"""One episode loop: `devices.harness.episode.Episode`, which `play` drives one step at a time and
batched evaluation drives many at once. Every other place that steps a policy through a phone (a
loop that asks a policy for actions and acts them) is found by an AST scan of the project and
must be named here with its reason; a new hand-written loop fails this test (issue: "10
hand-written episode loops")."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("devices", "services", "trainer", "bench")
#: The loops allowed besides `play`, and why each stands apart.
ALLOWED = {
    "devices/suite/fingerprint.py": "the behaviour fingerprint's own reference loop, kept "
                                    "independent of `play` so it can check it",
}
_ASKS = {"next_action", "generate_batch"}


def episode_loops(source: str) -> list[int]:
    """Line numbers of the outermost `for`/`while` loops in `source` that both ask a policy for
    actions (`next_action`, `generate_batch`) and act them (`.act`)."""
    found: list[int] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.For, ast.While)):
                attrs = {n.attr for n in ast.walk(child) if isinstance(n, ast.Attribute)}
                if attrs & _ASKS and "act" in attrs:
                    found.append(child.lineno)
                    continue
            visit(child)

    visit(ast.parse(source))
    return found


def test_the_scan_finds_a_hand_written_loop() -> None:
    loop = ("def run(harness, policy, observation):\n"
            "    while not observation.done:\n"
            "        observation = harness.act(policy.next_action(observation))\n")
    assert episode_loops(loop) == [2]
    assert episode_loops("def f(policy, o):\n    return policy.next_action(o)\n") == []


def test_every_episode_loop_is_play_or_named_with_its_reason() -> None:
    where: dict[str, list[int]] = {}
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = episode_loops(path.read_text())
            if lines:
                where[path.relative_to(ROOT).as_posix()] = lines
    extra = {path: lines for path, lines in where.items() if path not in ALLOWED}
    assert not extra, (f"hand-written episode loops {extra}: play the episode with "
                       f"devices.harness.episode.play (hooks on_step / after_step)")
    assert "devices/suite/fingerprint.py" in where, "the scan no longer finds the reference loop"
    gone = set(ALLOWED) - set(where)
    assert not gone, f"{sorted(gone)} no longer loop: take them off ALLOWED"
