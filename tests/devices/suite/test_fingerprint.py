"""The behaviour fingerprint is deterministic and notices a changed template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.fingerprint import main, template_fingerprint
from devices.suite.registry import get_template
from devices.suite.templates import tool_people


def _print(template: Any) -> str:
    record = template_fingerprint(template, Harness(SimPhone()), seeds=(0,), n=2)
    del record["module"]  # the subclasses below live in this test module
    return json.dumps(record, default=str)


def test_the_same_template_fingerprints_the_same_twice() -> None:
    template = get_template("text_relation")
    assert _print(template) == _print(template)


def test_a_reordered_row_field_or_a_different_oracle_changes_the_fingerprint() -> None:
    base = _print(get_template("text_relation"))

    class Reordered(tool_people.TextRelation):
        def build(self, w: Any) -> dict[str, Any]:
            params = super().build(w)
            for rows in w.tables["contacts"].values():
                for row in rows:
                    row["phone"] = row.pop("phone")  # same values, other key order
            return params

    class Lazy(tool_people.TextRelation):
        def solve(self, p: dict[str, Any], observe: Any) -> Any:
            yield from ()

    assert _print(Reordered()) != base
    assert _print(Lazy()) != base


def test_the_command_writes_the_file_and_refuses_bad_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fp.json"
    assert main([str(out), "--seeds", "3", "--n", "1", "--only", "memory_deep"]) == 0
    data = json.loads(out.read_text())
    assert data and all(t["module"].endswith("memory_deep") for t in data.values())
    assert "1 templates" in capsys.readouterr().out
    for bad in (["--seeds", "three"], ["--n", "0"], ["--only", "no_such_module"]):
        with pytest.raises(SystemExit):
            main([str(tmp_path / "x.json"), *bad])
    assert not (tmp_path / "x.json").exists()
