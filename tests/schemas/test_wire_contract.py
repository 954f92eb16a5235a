"""The exported JSON Schemas are the wire contract: for generated events and mutations of them,
Draft 2020-12 validation (with format checking) and the runtime's strict decoder give the same
verdict, both ways."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator, FormatChecker

from schemas.export import MAX_LIST_ITEMS, wire_schema
from schemas.registry import EVENT_TYPES, SchemaError
from schemas.topics import TOPICS
from streams import codec
from streams.codec import decode, encode
from tests.schemas.strategies import model_strategy

#: Values each property is replaced with: every JSON kind, the coercions a lax reader takes
#: ("8" for an int, true for a number, "yes" for a bool) and out-of-range numbers.
REPLACEMENTS: list[Any] = ["8", "yes", "", True, False, 8, -1, 1.5, 2**63, None, [], {}, [1], {"x": 1},
                           "2026-12-01T00:00:00", "2026-12-01T00:00:00Z"]
FIGURES: Counter[str] = Counter()


def _topic_of(type_name: str) -> Any:
    return next(t for t in TOPICS.values() if type_name in t.type_names)


def _mutations(data: dict[str, Any], required: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out = [("extra field", {**data, "surprise": 1}), ("future version", {**data, "schema_version": 999}),
           ("alien type", {**data, "type": "alien.kind"})]
    for name in data:
        out.append((f"without {name}", {k: v for k, v in data.items() if k != name}))
        out.extend((f"{name}={value!r}", {**data, name: value}) for value in REPLACEMENTS)
    return out


def _runtime_accepts(payload: dict[str, Any], topic: Any) -> bool:
    try:
        decode(json.dumps(payload).encode(), topic)
    except SchemaError:
        return False
    return True


def test_the_schemas_state_the_runtimes_list_bound() -> None:
    assert MAX_LIST_ITEMS == codec.MAX_LIST_ITEMS


@pytest.mark.parametrize("type_name", sorted(EVENT_TYPES))
def test_schema_and_runtime_agree_on_generated_and_mutated_events(type_name: str) -> None:
    model = EVENT_TYPES[type_name]
    topic = _topic_of(type_name)
    schema = wire_schema(model)
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    Draft202012Validator.check_schema(schema)
    disagreements: list[str] = []

    @settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                    HealthCheck.too_slow])
    @given(model_strategy(model))
    def check(event: Any) -> None:
        data = json.loads(encode(event))
        assert validator.is_valid(data), next(iter(validator.iter_errors(data))).message
        assert _runtime_accepts(data, topic)
        FIGURES["agreed: both accept"] += 1
        for label, payload in _mutations(data, schema["required"]):
            by_schema, by_runtime = validator.is_valid(payload), _runtime_accepts(payload, topic)
            if by_schema != by_runtime:
                disagreements.append(f"{label}: schema {'accepts' if by_schema else 'refuses'}, runtime "
                                     f"{'accepts' if by_runtime else 'refuses'}")
            FIGURES["agreed: both accept" if by_schema and by_runtime else
                    "agreed: both refuse" if by_schema == by_runtime else "disagreed"] += 1

    check()
    assert not disagreements, f"{type_name}: {len(disagreements)} disagreements, e.g. {sorted(set(disagreements))[:8]}"


def test_a_schema_requires_what_the_reader_requires() -> None:
    for model in EVENT_TYPES.values():
        schema = wire_schema(model)
        assert {"type", "schema_version", "event_id", "occurred_at"} <= set(schema["required"])
        assert schema["properties"]["schema_version"] == {**schema["properties"]["schema_version"],
                                                          "const": model.current_version}
