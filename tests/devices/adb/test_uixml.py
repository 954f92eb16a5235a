"""uiautomator XML: trailer stripping, parsing into UIElements, rendering and round trips."""

from __future__ import annotations

import pytest

from devices.adb.uixml import (
    parse_bounds,
    parse_hierarchy,
    render_hierarchy,
    root_package,
    strip_dump_trailer,
)
from schemas.observations import Bounds, UIElement

REAL_DUMP = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
    'package="com.flywheel.contacts" content-desc="" checkable="false" checked="false" '
    'clickable="false" enabled="true" focusable="false" focused="false" scrollable="true" '
    'long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">'
    '<node index="0" text="Alice &amp; Bob" resource-id="com.flywheel.contacts:id/name" '
    'class="android.widget.TextView" package="com.flywheel.contacts" content-desc="" '
    'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" '
    'focused="false" scrollable="false" long-clickable="true" password="false" '
    'selected="false" bounds="[40,300][1040,420]" />'
    '<node index="1" text="" hint="Name" resource-id="com.flywheel.contacts:id/edit" '
    'class="android.widget.EditText" package="com.flywheel.contacts" content-desc="Name field" '
    'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" '
    'focused="true" scrollable="false" long-clickable="false" password="false" '
    'selected="false" bounds="[40,500][1040,600]" /></node></hierarchy>'
)


def test_trailer_line_is_stripped() -> None:
    output = REAL_DUMP + "UI hierchary dumped to: /dev/tty\n"
    assert strip_dump_trailer(output) == REAL_DUMP
    assert len(parse_hierarchy(output)) == 3


def test_output_without_a_hierarchy_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="ERROR: could not get idle state"):
        strip_dump_trailer("ERROR: could not get idle state.\n")


def test_nodes_parse_with_androidworld_fields() -> None:
    root, name, edit = parse_hierarchy(REAL_DUMP)
    assert root.is_scrollable and root.text is None
    assert name.text == "Alice & Bob"
    assert name.resource_id == "com.flywheel.contacts:id/name"
    assert name.bounds == Bounds(left=40, top=300, right=1040, bottom=420)
    assert name.is_clickable and name.is_long_clickable and not name.is_editable
    assert edit.is_editable and edit.is_focused and edit.hint_text == "Name"
    assert edit.content_description == "Name field"
    assert root_package(REAL_DUMP) == "com.flywheel.contacts"


def test_bounds_parse_and_reject_garbage() -> None:
    assert parse_bounds("[0,0][0,0]") is None
    assert parse_bounds("[1,2][3,4]") == Bounds(left=1, top=2, right=3, bottom=4)
    with pytest.raises(ValueError, match="x1,y1"):
        parse_bounds("1,2,3,4")


def test_render_then_parse_round_trips() -> None:
    elements = [
        UIElement(text='Say "hi" <now>\nplease', class_name="android.widget.TextView",
                  resource_id="com.flywheel.notes:id/body", package_name="com.flywheel.notes",
                  bounds=Bounds(left=0, top=10, right=500, bottom=90), is_clickable=True),
        UIElement(content_description="Search", class_name="android.widget.EditText",
                  hint_text="Search notes", is_editable=True, is_focused=True,
                  bounds=Bounds(left=0, top=100, right=1080, bottom=200)),
        UIElement(text="Wifi", class_name="android.widget.Switch", is_checkable=True,
                  is_checked=True, is_editable=True, is_enabled=False,
                  bounds=Bounds(left=0, top=200, right=1080, bottom=300)),
    ]
    xml = render_hierarchy(elements, package="com.flywheel.notes")
    parsed = parse_hierarchy(xml)
    expected = [e if e.package_name else e.model_copy(update={"package_name": "com.flywheel.notes"})
                for e in elements]
    assert parsed == expected
