"""uiautomator XML: strip the dump's trailer, parse nodes into UIElements, render UIElements back."""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from xml.sax.saxutils import quoteattr

from schemas.observations import Bounds, UIElement

__all__ = [
    "DUMP_TRAILER",
    "format_bounds",
    "parse_bounds",
    "parse_hierarchy",
    "render_hierarchy",
    "root_package",
    "strip_dump_trailer",
]

logger = logging.getLogger(__name__)

#: What `uiautomator dump` prints after the XML (its own misspelling, kept verbatim).
DUMP_TRAILER = "UI hierchary dumped to:"

#: The XML declaration a real dump starts with.
XML_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"

_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")

# UIElement boolean field ↔ uiautomator attribute name.
_FLAGS = (
    ("is_checkable", "checkable"), ("is_checked", "checked"), ("is_clickable", "clickable"),
    ("is_enabled", "enabled"), ("is_focusable", "focusable"), ("is_focused", "focused"),
    ("is_scrollable", "scrollable"), ("is_long_clickable", "long-clickable"),
    ("is_selected", "selected"), ("is_visible", "visible-to-user"),
)


def strip_dump_trailer(output: str) -> str:
    """The XML document alone from `uiautomator dump` output (drops the trailing status line)."""
    start = output.find("<?xml")
    if start < 0:
        start = output.find("<hierarchy")
    end = output.rfind("</hierarchy>")
    if start < 0 or end < 0:
        snippet = output.strip().splitlines()[-1][:120] if output.strip() else "nothing"
        raise ValueError(f"uiautomator dump printed no UI hierarchy (it said: {snippet!r})")
    return output[start:end + len("</hierarchy>")]


def parse_bounds(text: str | None) -> Bounds | None:
    """'[x1,y1][x2,y2]' → Bounds; None for missing or empty (zero-area) bounds."""
    if not text:
        return None
    match = _BOUNDS_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"bounds {text!r} are not in the form '[x1,y1][x2,y2]'")
    left, top, right, bottom = (int(v) for v in match.groups())
    if left == top == right == bottom == 0:
        return None
    return Bounds(left=left, top=top, right=right, bottom=bottom)


def format_bounds(bounds: Bounds | None) -> str:
    """Bounds → '[x1,y1][x2,y2]' (zero rectangle for None)."""
    if bounds is None:
        return "[0,0][0,0]"
    return f"[{bounds.left},{bounds.top}][{bounds.right},{bounds.bottom}]"


def _none_if_empty(value: str | None) -> str | None:
    return value if value else None


def _node_to_element(node: ET.Element) -> UIElement:
    attrs = node.attrib
    class_name = _none_if_empty(attrs.get("class"))
    flags = {field: attrs.get(attr, "true" if field in ("is_enabled", "is_visible") else "false")
             == "true" for field, attr in _FLAGS}
    editable_attr = attrs.get("editable")
    editable = (editable_attr == "true" if editable_attr is not None
                else bool(class_name and class_name.endswith("EditText")))
    return UIElement(
        text=_none_if_empty(attrs.get("text")),
        content_description=_none_if_empty(attrs.get("content-desc")),
        class_name=class_name,
        resource_id=_none_if_empty(attrs.get("resource-id")),
        package_name=_none_if_empty(attrs.get("package")),
        hint_text=_none_if_empty(attrs.get("hint")),
        bounds=parse_bounds(attrs.get("bounds")),
        is_editable=editable,
        **flags,
    )


def parse_hierarchy(xml_text: str) -> list[UIElement]:
    """Every node of a uiautomator dump, in document order, as UIElements."""
    try:
        root = ET.fromstring(strip_dump_trailer(xml_text))
    except ET.ParseError as error:
        raise ValueError(f"the UI dump is not well-formed XML ({error})") from None
    return [_node_to_element(node) for node in root.iter("node")]


def root_package(xml_text: str) -> str | None:
    """The package of the first node (the foreground window's app), if any."""
    root = ET.fromstring(strip_dump_trailer(xml_text))
    first = next(root.iter("node"), None)
    return _none_if_empty(first.attrib.get("package")) if first is not None else None


def render_hierarchy(elements: Iterable[UIElement], *, package: str | None = None) -> str:
    """UIElements → a uiautomator dump (one top-level node per element, as a flat window list).

    `package` fills `package` where an element has none, so the window's app is recoverable.
    """
    parts = [XML_DECLARATION, '<hierarchy rotation="0">']
    for index, element in enumerate(elements):
        attrs = {
            "index": str(index),
            "text": element.text or "",
            "resource-id": element.resource_id or "",
            "class": element.class_name or "",
            "package": element.package_name or package or "",
            "content-desc": element.content_description or "",
        }
        for field, attr in _FLAGS:
            attrs[attr] = "true" if getattr(element, field) else "false"
        attrs["password"] = "false"
        if element.hint_text:
            attrs["hint"] = element.hint_text
        inferred = bool(element.class_name and element.class_name.endswith("EditText"))
        if element.is_editable != inferred:
            attrs["editable"] = "true" if element.is_editable else "false"
        attrs["bounds"] = format_bounds(element.bounds)
        body = " ".join(f"{key}={quoteattr(value)}" for key, value in attrs.items())
        parts.append(f"<node {body} />")
    parts.append("</hierarchy>")
    return "".join(parts)
