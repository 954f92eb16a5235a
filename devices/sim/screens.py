"""UI-tree helpers: a builder that lays elements out on a 1080x2400 screen, and hit-testing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schemas.observations import Bounds, UIElement

__all__ = [
    "SCREEN_H",
    "SCREEN_W",
    "Builder",
    "Node",
    "Screen",
    "element",
    "hit_test",
    "make_bounds",
]

# A common phone resolution (AndroidWorld's Pixel 6 emulator is 1080x2400).
SCREEN_W, SCREEN_H = 1080, 2400
STATUS_H = 80      # status bar
TOOLBAR_H = 168    # app bar with title and actions
ROW_H = 168        # one form row (field, button, switch)
ITEM_H = 200       # one list item
ACTION_W = 240     # one toolbar action button

Callback = Callable[[Any], "str | None"]


def element(**kw: Any) -> UIElement:
    """A UIElement built without re-validation (every caller passes well-typed values)."""
    return UIElement.model_construct(**kw)


@dataclass(slots=True)
class Node:
    """One UI element plus what touching it does."""

    element: UIElement
    click: Callback | None = None
    long: Callback | None = None
    field: str | None = None
    submit: Callback | None = None
    dialog: bool = False


@dataclass(slots=True)
class Screen:
    nodes: list[Node]
    elements: list[UIElement]
    max_scroll: int = 0
    page: int = 1


def make_bounds(left: int, top: int, right: int, bottom: int) -> Bounds:
    return Bounds.model_construct(left=left, top=top, right=right, bottom=bottom)


@dataclass(slots=True)
class Builder:
    """Stacks rows top to bottom; `items` fills the rest of the screen as a scrollable list."""

    package: str
    nodes: list[Node] = field(default_factory=list)
    y: int = STATUS_H
    max_scroll: int = 0
    page: int = 1
    _actions: int = 0

    def rid(self, name: str) -> str:
        return f"{self.package}:id/{name}"

    def add(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def status_bar(self, clock_text: str) -> None:
        self.add(Node(element(text=clock_text, class_name="android.widget.TextView",
                              resource_id="com.android.systemui:id/clock",
                              package_name="com.android.systemui", bounds=make_bounds(0, 0, SCREEN_W, STATUS_H))))

    def toolbar(self, title: str, back: Callback | None = None) -> None:
        top = self.y
        left = 0
        if back is not None:
            self.add(Node(element(content_description="Navigate up", class_name="android.widget.ImageButton",
                                  resource_id=self.rid("up"), package_name=self.package,
                                  bounds=make_bounds(0, top, 168, top + TOOLBAR_H), is_clickable=True,
                                  is_focusable=True), click=back))
            left = 168
        self.add(Node(element(text=title, class_name="android.widget.TextView", resource_id=self.rid("toolbar_title"),
                              package_name=self.package,
                              bounds=make_bounds(left, top, SCREEN_W - 3 * ACTION_W, top + TOOLBAR_H))))
        self.y = top + TOOLBAR_H

    def action(self, text: str, name: str, click: Callback) -> None:
        """A toolbar button, placed right to left."""
        self._actions += 1
        right = SCREEN_W - (self._actions - 1) * ACTION_W
        top = STATUS_H
        self.add(Node(element(text=text, content_description=text, class_name="android.widget.Button",
                              resource_id=self.rid(name), package_name=self.package,
                              bounds=make_bounds(right - ACTION_W, top, right, top + TOOLBAR_H),
                              is_clickable=True, is_focusable=True), click=click))

    def label(self, text: str, name: str, description: str | None = None) -> None:
        self.add(Node(element(text=text, content_description=description, class_name="android.widget.TextView",
                              resource_id=self.rid(name), package_name=self.package,
                              bounds=make_bounds(48, self.y, SCREEN_W - 48, self.y + ROW_H))))
        self.y += ROW_H

    def field(self, name: str, hint: str, value: str, *, focused: bool = False,
              submit: Callback | None = None) -> None:
        self.add(Node(element(text=value or None, hint_text=hint, class_name="android.widget.EditText",
                              resource_id=self.rid(name), package_name=self.package,
                              bounds=make_bounds(48, self.y, SCREEN_W - 48, self.y + ROW_H),
                              is_clickable=True, is_editable=True, is_focusable=True,
                              is_focused=focused, is_long_clickable=True),
                      field=name, submit=submit))
        self.y += ROW_H

    def button(self, text: str, name: str, click: Callback) -> None:
        self.add(Node(element(text=text, content_description=text, class_name="android.widget.Button",
                              resource_id=self.rid(name), package_name=self.package,
                              bounds=make_bounds(48, self.y, SCREEN_W - 48, self.y + ROW_H),
                              is_clickable=True, is_focusable=True), click=click))
        self.y += ROW_H

    def switch(self, text: str, name: str, checked: bool, click: Callback) -> None:
        self.add(Node(element(text=text, content_description=text, class_name="android.widget.Switch",
                              resource_id=self.rid(name), package_name=self.package,
                              bounds=make_bounds(48, self.y, SCREEN_W - 48, self.y + ROW_H),
                              is_clickable=True, is_focusable=True, is_checkable=True,
                              is_checked=checked), click=click))
        self.y += ROW_H

    def items(self, rows: list[tuple[str, str, Callback | None, Callback | None, bool | None, Callback | None]],
              offset: int, name: str = "list") -> None:
        """A scrollable list: rows are (title, subtitle, click, long_press, checked|None, toggle)."""
        top = self.y
        page = max(1, (SCREEN_H - top) // ITEM_H)
        self.page = page
        self.max_scroll = max(0, len(rows) - page)
        offset = min(max(offset, 0), self.max_scroll)
        self.add(Node(element(class_name="androidx.recyclerview.widget.RecyclerView",
                              resource_id=self.rid(name), package_name=self.package,
                              bounds=make_bounds(0, top, SCREEN_W, SCREEN_H),
                              is_scrollable=len(rows) > page, is_focusable=True)))
        for i, (title, subtitle, click, long, checked, toggle) in enumerate(rows[offset:offset + page]):
            y0 = top + i * ITEM_H
            right = SCREEN_W if checked is None else SCREEN_W - 200
            self.add(Node(element(class_name="android.widget.LinearLayout", resource_id=self.rid("item"),
                                  package_name=self.package, content_description=title,
                                  bounds=make_bounds(0, y0, right, y0 + ITEM_H), is_clickable=click is not None,
                                  is_long_clickable=long is not None, is_focusable=True),
                          click=click, long=long))
            self.add(Node(element(text=title, class_name="android.widget.TextView",
                                  resource_id=self.rid("item_title"), package_name=self.package,
                                  bounds=make_bounds(48, y0 + 20, right - 24, y0 + 110)), click=click, long=long))
            if subtitle:
                self.add(Node(element(text=subtitle, class_name="android.widget.TextView",
                                      resource_id=self.rid("item_subtitle"), package_name=self.package,
                                      bounds=make_bounds(48, y0 + 110, right - 24, y0 + 180)),
                              click=click, long=long))
            if checked is not None:
                self.add(Node(element(content_description=f"{title} switch", class_name="android.widget.Switch",
                                      resource_id=self.rid("item_switch"), package_name=self.package,
                                      bounds=make_bounds(SCREEN_W - 200, y0, SCREEN_W, y0 + ITEM_H),
                                      is_clickable=True, is_checkable=True, is_checked=checked,
                                      is_focusable=True), click=toggle))
        self.y = SCREEN_H

    def build(self) -> Screen:
        return Screen(self.nodes, [n.element for n in self.nodes], self.max_scroll, self.page)


def hit_test(screen: Screen, x: int, y: int) -> int | None:
    """Index of the topmost touchable element containing (x, y), or None."""
    for i in range(len(screen.nodes) - 1, -1, -1):
        node = screen.nodes[i]
        b = node.element.bounds
        if b is not None and b.left <= x < b.right and b.top <= y < b.bottom and (
                node.click is not None or node.field is not None or node.long is not None):
            return i
    return None
