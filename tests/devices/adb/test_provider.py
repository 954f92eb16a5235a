"""The text formats of `content`: bind arguments, query rows, call bundles, URIs."""

from __future__ import annotations

import pytest

from devices.adb.provider import (
    app_for_package,
    bind_args,
    format_call_output,
    format_query_rows,
    parse_bind,
    parse_call_output,
    parse_query_output,
    parse_uri,
    parse_where_id,
    table_uri,
    where_id,
)


def test_query_output_parses_into_typed_rows() -> None:
    output = ("Row: 0 id=al1, time=07:30, label=Wake up, please, enabled=true, days=[\"mon\"]\n"
              "Row: 1 id=al2, time=22:00, label=NULL, enabled=0, days=[]\n")
    rows = parse_query_output(output, "clock", "alarms")
    assert rows == [
        {"id": "al1", "time": "07:30", "label": "Wake up, please", "enabled": True,
         "days": ["mon"]},
        {"id": "al2", "time": "22:00", "label": None, "enabled": False, "days": []},
    ]


def test_multiline_values_continue_the_previous_row() -> None:
    output = "Row: 0 id=nt1, title=List, body=milk\neggs, pinned=false\n"
    assert parse_query_output(output, "notes", "notes") == [
        {"id": "nt1", "title": "List", "body": "milk\neggs", "pinned": False}]


def test_empty_query_and_garbage() -> None:
    assert parse_query_output("No result found.\n", "notes", "notes") == []
    with pytest.raises(ValueError, match="Row:"):
        parse_query_output("Error while accessing provider:notes", "notes", "notes")


def test_rows_round_trip_through_format_and_bind() -> None:
    row = {"id": "pr1", "name": "Desk lamp", "category": "home", "price": 19.5, "stock": 3}
    assert parse_query_output(format_query_rows([row]), "shopping", "products") == [row]
    args = bind_args({**row, "note": None, "tags": ["a", "b"]})
    binds = dict(parse_bind(args[i + 1], "files", "files") for i in range(0, len(args), 2))
    assert binds["price"] == 19.5 and binds["stock"] == 3 and binds["note"] is None
    assert binds["tags"] == ["a", "b"]


def test_call_bundle_round_trips() -> None:
    payload = {"ok": True, "value": [{"id": "ct1", "name": "Alice, the one}]"}], "error": None}
    assert parse_call_output(format_call_output(payload)) == payload
    with pytest.raises(ValueError, match="no result bundle"):
        parse_call_output("Error: Unknown authority com.flywheel.x.provider")


def test_uris_packages_and_where() -> None:
    assert parse_uri(table_uri("maps", "saved")) == ("maps", "saved")
    assert parse_uri(table_uri("maps")) == ("maps", None)
    with pytest.raises(ValueError):
        parse_uri("content://settings/system")
    assert parse_where_id(where_id("it's")) == "it's"
    assert app_for_package("com.flywheel.notes") == "notes"
    assert app_for_package("com.flywheel.launcher") is None
    assert app_for_package("com.android.chrome") is None
