"""The GUI layer of SimPhone: the screen stack, rendering (cached) and the GUI actions.

The UI state lives in `SimState.ui` as plain JSON (so snapshots carry it):
a stack of frames {app, screen, params, fields, scroll, focus} (empty = home)
and an optional dialog. App modules render frames into Builders; callbacks on
nodes change the stack or call tool handlers directly (GUI edits are logged as
"gui" entries, never as tool calls).
"""

from __future__ import annotations

import logging
from functools import cache
from typing import Any

from devices.kit.apps import APP_LABELS, resolve_app
from devices.sim.apps import APP_MODULES
from devices.sim.apps.common import now_iso
from devices.sim.screens import SCREEN_W, Builder, Node, Screen, element, hit_test
from devices.sim.screens import make_bounds as _b
from devices.sim.state import SimState
from devices.sim.tools import REGISTRY, ToolFailure

__all__ = ["APP_LABELS", "LAUNCHER", "Gui", "GuiError", "resolve_app"]

logger = logging.getLogger(__name__)

LAUNCHER = "com.flywheel.launcher"
_ICON_COLUMNS = 4  # a classic launcher grid
_ICON_H = 300


@cache
def _home_icons() -> tuple[Node, ...]:
    """The launcher's app icons, the same on every home screen (built once: a reset shows them)."""
    width = SCREEN_W // _ICON_COLUMNS
    icons = []
    for i, app in enumerate(APP_MODULES):
        row, col = divmod(i, _ICON_COLUMNS)
        top = 300 + row * _ICON_H
        label = APP_LABELS[app]
        icons.append(Node(element(text=label, content_description=label, class_name="android.widget.TextView",
                                  resource_id=f"{LAUNCHER}:id/icon_{app}", package_name=LAUNCHER,
                                  bounds=_b(col * width, top, (col + 1) * width, top + _ICON_H),
                                  is_clickable=True, is_focusable=True, is_long_clickable=True),
                          click=lambda g, app=app: g.launch(app)))
    return tuple(icons)


class GuiError(Exception):
    """A GUI action that cannot be carried out (bad index, nothing editable, blocked by a dialog)."""


def package_of(app: str) -> str:
    return f"com.flywheel.{app}"


class Gui:
    """Drives one SimState's UI; the owner clears `cache` whenever the state object is replaced."""

    __slots__ = ("_cache", "_cache_key", "state")

    def __init__(self, state: SimState) -> None:
        self.state = state
        self._cache_key: Any = None
        self._cache: Screen | None = None

    # ---- what callbacks use ------------------------------------------------------------
    @property
    def frame(self) -> dict[str, Any] | None:
        stack = self.state.ui["stack"]
        return stack[-1] if stack else None

    @property
    def fields(self) -> dict[str, Any]:
        return self.frame["fields"]

    def open(self, screen: str, **params: Any) -> None:
        frame = self.frame
        self.state.ui["stack"].append({"app": frame["app"], "screen": screen, "params": params,
                                       "fields": {}, "scroll": 0, "focus": None})
        self.state.touch_ui()

    def back(self) -> None:
        stack = self.state.ui["stack"]
        if stack:
            stack.pop()
        self.state.touch_ui()

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Runs a tool's handler for a GUI edit; raises ToolFailure (shown to the agent as a message)."""
        registered = REGISTRY[name]
        return registered.handler(self.state, registered.check(arguments))

    @property
    def foreground(self) -> str:
        frame = self.frame
        return "home" if frame is None else frame["app"]

    # ---- rendering ---------------------------------------------------------------------
    def screen(self) -> Screen:
        state = self.state
        app = self.foreground
        key = (state.ui_rev, app, state.versions.get(app, 0), state.clock_ms // 60_000)
        if key != self._cache_key or self._cache is None:
            self._cache = self._render()
            self._cache_key = key
        return self._cache

    def invalidate(self) -> None:
        self._cache_key = None

    def _render(self) -> Screen:
        state = self.state
        frame = self.frame
        if frame is None:
            b = Builder(LAUNCHER)
            b.status_bar(now_iso(state)[11:])
            self._home(b)
        else:
            module = APP_MODULES[frame["app"]]
            b = Builder(package_of(frame["app"]))
            b.status_bar(now_iso(state)[11:])
            render = getattr(module, "SCREENS", {}).get(frame["screen"])
            if render is None:
                b.toolbar(APP_LABELS[frame["app"]], back=lambda g: g.back())
                b.label("This screen is not available.", "empty")
            else:
                render(b, state, frame)
        dialog = state.ui.get("dialog")
        if dialog:
            self._dialog(b, dialog)
        return b.build()

    def _home(self, b: Builder) -> None:
        for node in _home_icons():
            b.add(node)

    def _dialog(self, b: Builder, dialog: dict[str, Any]) -> None:
        pkg = "com.android.permissioncontroller"
        b.add(Node(element(text=dialog["text"], class_name="android.widget.TextView",
                           resource_id=f"{pkg}:id/permission_message", package_name=pkg,
                           bounds=_b(90, 900, 990, 1200)), dialog=True))
        for j, (text, name) in enumerate((("Allow", "permission_allow_button"),
                                          ("Don't allow", "permission_deny_button"))):
            b.add(Node(element(text=text, content_description=text, class_name="android.widget.Button",
                               resource_id=f"{pkg}:id/{name}", package_name=pkg,
                               bounds=_b(90, 1200 + j * 170, 990, 1370 + j * 170),
                               is_clickable=True, is_focusable=True),
                       click=lambda g, allowed=(j == 0): g.dismiss_dialog(allowed), dialog=True))

    # ---- navigation ------------------------------------------------------------------------
    def launch(self, app: str) -> str:
        module = APP_MODULES[app]
        self.state.ui["stack"] = [{"app": app, "screen": getattr(module, "ROOT", "list"), "params": {},
                                   "fields": {}, "scroll": 0, "focus": None}]
        self.state.touch_ui()
        return f"Opened {APP_LABELS[app]}."

    def go_home(self) -> None:
        self.state.ui["stack"] = []
        self.state.touch_ui()

    def show_dialog(self, text: str) -> None:
        self.state.ui["dialog"] = {"text": text}
        self.state.touch_ui()

    def dismiss_dialog(self, allowed: bool) -> str:
        self.state.ui["dialog"] = None
        self.state.touch_ui()
        return "Permission granted." if allowed else "Permission denied."

    # ---- GUI actions (each returns a message for the agent or raises GuiError) -------------
    def _node(self, index: int | None, x: int | None, y: int | None) -> tuple[int, Node]:
        screen = self.screen()
        if index is None:
            found = hit_test(screen, x, y)
            if found is None:
                raise GuiError(f"Nothing can be touched at ({x}, {y}).")
            index = found
        if index >= len(screen.nodes):
            raise GuiError(f"There is no element {index}; the screen has {len(screen.nodes)} elements.")
        node = screen.nodes[index]
        if self.state.ui.get("dialog") and not node.dialog:
            raise GuiError("A dialog is in the way; answer it or press back first.")
        return index, node

    def click(self, index: int | None, x: int | None = None, y: int | None = None) -> str | None:
        index, node = self._node(index, x, y)
        if node.field is not None:
            self.frame["focus"] = node.field
            self.state.touch_ui()
            return None
        if node.click is None:
            raise GuiError(f"Element {index} is not clickable.")
        return self._run(node.click)

    def long_press(self, index: int | None, x: int | None = None, y: int | None = None) -> str | None:
        index, node = self._node(index, x, y)
        callback = node.long or node.click
        if callback is None:
            raise GuiError(f"Element {index} does not react to a long press.")
        return self._run(callback)

    def input_text(self, text: str, index: int | None, clear: bool) -> str | None:
        if index is None:
            frame = self.frame
            name = frame and frame["focus"]
            if not name:
                raise GuiError("No text field has focus; give the index of the field to type into.")
        else:
            index, node = self._node(index, None, None)
            if node.field is None:
                raise GuiError(f"Element {index} is not a text field.")
            name = node.field
        frame = self.frame
        frame["fields"][name] = text if clear else f"{frame['fields'].get(name, '')}{text}"
        frame["focus"] = name
        frame["scroll"] = 0
        self.state.touch_ui()
        return None

    def keyboard_enter(self) -> str | None:
        frame = self.frame
        if frame is None or not frame["focus"]:
            return None
        for node in self.screen().nodes:
            if node.field == frame["focus"] and node.submit is not None:
                return self._run(node.submit)
        return None

    def scroll(self, direction: str) -> str | None:
        frame = self.frame
        if frame is None:
            raise GuiError("The home screen does not scroll.")
        screen = self.screen()
        if direction in ("left", "right"):
            raise GuiError("This screen does not scroll sideways.")
        step = max(1, screen.page - 1)
        new = frame["scroll"] + (step if direction == "down" else -step)
        new = min(max(new, 0), screen.max_scroll)
        if new == frame["scroll"]:
            return "Already at the end of the list." if direction == "down" else "Already at the top."
        frame["scroll"] = new
        self.state.touch_ui()
        return None

    def navigate_back(self) -> str | None:
        if self.state.ui.get("dialog"):
            return self.dismiss_dialog(False)
        self.back()
        return None

    def _run(self, callback: Any) -> str | None:
        try:
            message = callback(self)
        except ToolFailure as exc:
            return exc.message
        self.state.touch_ui()
        return message
