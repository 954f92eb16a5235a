"""JSON Schema export: one file per event type, for consumers written in other languages."""

from __future__ import annotations

import json
from pathlib import Path

from schemas.registry import EVENT_TYPES

__all__ = ["export_json_schemas"]


def export_json_schemas(directory: str | Path) -> list[Path]:
    """Writes `<type>.schema.json` for every event type into `directory`; returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for type_name, model in sorted(EVENT_TYPES.items()):
        schema = model.model_json_schema(mode="validation")
        schema["$id"] = f"urn:flywheel:event:{type_name}:v{model.current_version}"
        path = out / f"{type_name}.schema.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written
