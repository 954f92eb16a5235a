"""`flywheel schemas export` writes one valid JSON Schema per event type."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from schemas.registry import EVENT_TYPES
from services.cli.main import app


def test_schemas_export_writes_one_schema_per_event_type(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["schemas", "export", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == sorted(f"{t}.schema.json" for t in EVENT_TYPES)
    verdict = json.loads((tmp_path / "out" / "verdict.issued.schema.json").read_text())
    assert verdict["$id"].endswith(":v2")
    assert {"event_id", "type", "score", "passed"} <= set(verdict["properties"])
    assert "score" in verdict["required"]


def test_exported_action_schema_keeps_the_android_world_discriminator(tmp_path: Path) -> None:
    CliRunner().invoke(app, ["schemas", "export", str(tmp_path)])
    schema = json.loads((tmp_path / "action.requested.schema.json").read_text())
    assert schema["properties"]["action"]["discriminator"]["propertyName"] == "action_type"
    assert {"click", "tool_call", "delegate", "finish"} <= set(
        schema["properties"]["action"]["discriminator"]["mapping"])
