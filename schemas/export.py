"""JSON Schema export: one file per event type, the wire contract for consumers in other languages.

Each schema says what the project's own reader (`streams.codec.decode`) accepts for the type's
current version, so a record valid by the schema is one the runtime accepts and the other way
round: the envelope fields a reader requires (`type`, `event_id`, `occurred_at`) are required even
though the Python models default them when constructing; `schema_version` is the current one
(older versions are upcast by this codebase's readers only and are not part of the contract);
integers are 64-bit; arrays hold at most `MAX_LIST_ITEMS` items; types are strict, as the
runtime's strict JSON mode is (no `"8"` for an integer, no `true` for a number). What JSON Schema
cannot say is in each file's `$comment`: duplicate keys and lone UTF-16 surrogates are refused.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from schemas.envelope import Event
from schemas.registry import EVENT_TYPES

__all__ = ["INT64_MAX", "INT64_MIN", "MAX_LIST_ITEMS", "export_json_schemas", "wire_schema"]

#: Most items a JSON array in an event may hold (the longest real ones, a review's subject ids or
#: a verdict's event ids, are a few hundred); streams.codec.decode enforces it.
MAX_LIST_ITEMS = 10_000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Envelope fields with construction defaults that a reader must find in the payload itself.
REQUIRED_ON_READ = ("type", "schema_version", "event_id", "occurred_at")
COMMENT = ("The reader also refuses duplicate object keys, NaN and Infinity, and strings holding a lone "
           "UTF-16 surrogate; a record's Kafka key must equal its topic's key field.")


#: An integer written where any number may stand must still fit 64 bits (the reader parses it so).
INT64_IF_INTEGER = {"if": {"type": "integer"}, "then": {"minimum": INT64_MIN, "maximum": INT64_MAX}}
#: Pydantic's JsonValue (any JSON) with the reader's bounds, recursively.
JSON_VALUE = {"anyOf": [{"type": ["string", "boolean", "null"]}, {"type": "number", **INT64_IF_INTEGER},
                        {"type": "array", "items": {"$ref": "#/$defs/JsonValue"}, "maxItems": MAX_LIST_ITEMS},
                        {"type": "object", "additionalProperties": {"$ref": "#/$defs/JsonValue"}}]}


def _bound(node: Any) -> None:
    """Adds the runtime's bounds to every integer, number and array in the schema tree."""
    if isinstance(node, dict):
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "integer" in kinds:
            node.setdefault("minimum", INT64_MIN)
            node.setdefault("maximum", INT64_MAX)
        elif "number" in kinds and "if" not in node:
            node.update(copy.deepcopy(INT64_IF_INTEGER))
        if "array" in kinds:
            node["maxItems"] = min(node.get("maxItems", MAX_LIST_ITEMS), MAX_LIST_ITEMS)
        for key, value in node.items():
            if key not in ("if", "then"):  # the conditions above are complete as written
                _bound(value)
    elif isinstance(node, list):
        for value in node:
            _bound(value)


def wire_schema(model: type[Event]) -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of what the runtime reads for `model`'s current version."""
    schema = model.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"urn:flywheel:event:{model.model_fields['type'].default}:v{model.current_version}"
    schema["$comment"] = COMMENT
    props = schema["properties"]
    props["schema_version"] = {"const": model.current_version, "title": "Schema Version",
                               "description": props["schema_version"].get("description", "")}
    schema["required"] = sorted(set(schema.get("required", [])) | set(REQUIRED_ON_READ))
    _bound(schema)
    if "JsonValue" in schema.get("$defs", {}):
        schema["$defs"]["JsonValue"] = copy.deepcopy(JSON_VALUE)
    return schema


def export_json_schemas(directory: str | Path) -> list[Path]:
    """Writes `<type>.schema.json` for every event type into `directory`; returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for type_name, model in sorted(EVENT_TYPES.items()):
        path = out / f"{type_name}.schema.json"
        path.write_text(json.dumps(wire_schema(model), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written
