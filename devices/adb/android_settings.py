"""The sandbox's settings keys as Android settings: namespace, key, value encoding, write command."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["ANDROID_SETTINGS", "BRIGHTNESS_MAX", "AndroidSetting", "by_android_key"]

logger = logging.getLogger(__name__)

#: Android's screen_brightness runs 0-255; the sandbox's brightness runs 0-100.
BRIGHTNESS_MAX = 255

#: ui_night_mode values: 1 = light, 2 = dark.
NIGHT_NO, NIGHT_YES = 1, 2

#: location_mode value for "high accuracy" (on); 0 is off.
LOCATION_ON = 3


@dataclass(frozen=True)
class AndroidSetting:
    """How one sandbox setting is read (`settings get`) and written on a device."""

    key: str
    namespace: str  # global | system | secure
    android_key: str
    kind: str  # bool | int

    def to_android(self, value: Any) -> str:
        if self.key == "brightness":
            return str(round(int(value) * BRIGHTNESS_MAX / 100))
        if self.key == "dark_mode":
            return str(NIGHT_YES if value else NIGHT_NO)
        if self.key == "location":
            return str(LOCATION_ON if value else 0)
        if self.kind == "bool":
            return "1" if value else "0"
        return str(int(value))

    def from_android(self, text: str) -> Any:
        text = text.strip()
        number = int(float(text)) if text not in ("", "null") else 0
        if self.key == "brightness":
            return round(number * 100 / BRIGHTNESS_MAX)
        if self.key == "dark_mode":
            return number == NIGHT_YES
        if self.kind == "bool":
            return number != 0
        return number

    def write_commands(self, value: Any) -> list[list[str]]:
        """The shell commands that set this value (svc where Android wants it, else settings put)."""
        if self.key in ("wifi", "bluetooth"):
            return [["svc", self.key, "enable" if value else "disable"]]
        commands = [["settings", "put", self.namespace, self.android_key, self.to_android(value)]]
        if self.key == "airplane_mode":
            commands.append(["am", "broadcast", "-a", "android.intent.action.AIRPLANE_MODE"])
        return commands

    def read_command(self) -> list[str]:
        return ["settings", "get", self.namespace, self.android_key]


ANDROID_SETTINGS: dict[str, AndroidSetting] = {s.key: s for s in (
    AndroidSetting("wifi", "global", "wifi_on", "bool"),
    AndroidSetting("bluetooth", "global", "bluetooth_on", "bool"),
    AndroidSetting("airplane_mode", "global", "airplane_mode_on", "bool"),
    AndroidSetting("do_not_disturb", "global", "zen_mode", "bool"),
    AndroidSetting("dark_mode", "secure", "ui_night_mode", "bool"),
    AndroidSetting("brightness", "system", "screen_brightness", "int"),
    AndroidSetting("volume_ring", "system", "volume_ring", "int"),
    AndroidSetting("location", "secure", "location_mode", "bool"),
    AndroidSetting("battery_saver", "global", "low_power", "bool"),
)}


def by_android_key(namespace: str, android_key: str) -> AndroidSetting | None:
    """The sandbox setting stored under an Android namespace/key, if any."""
    for setting in ANDROID_SETTINGS.values():
        if setting.namespace == namespace and setting.android_key == android_key:
            return setting
    return None
