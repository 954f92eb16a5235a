"""Batched settings reads parse AOSP 14's output: several `[V]` lines before the volume, and a
read that prints something unexpected fails with what the phone printed."""

from __future__ import annotations

import pytest

from devices.adb.stock import STOCK_SETTINGS, read_settings
from devices.protocol import DeviceError


class _Shell:
    """Answers the batched read with one block per command, as a phone's shell would."""

    def __init__(self, blocks: dict[str, str]) -> None:
        self.blocks = blocks

    def check(self, script: str, idempotent: bool = False) -> str:
        out = []
        for part in script.split("; "):
            if part.startswith("echo "):
                out.append(part.removeprefix("echo ") + "\n")
            else:
                key = next(k for k in self.blocks if k in part)
                out.append(self.blocks[key])
        return "".join(out)


def _stock(volume_block: str, **override: str) -> dict[str, str]:
    blocks = {"wifi_on": "1\n", "bluetooth_on": "0\n", "airplane_mode_on": "0\n", "zen_mode": "0\n",
              "ui_night_mode": "1\n", "location_mode": "3\n", "low_power": "0\n", "screen_brightness": "128\n",
              "media_session": volume_block}
    blocks.update(override)
    return blocks


def test_the_volume_is_found_after_the_progress_lines() -> None:
    block = ("[V] will control stream=2 (STREAM_RING)\n[V] will get volume\n"
             "[V] Connecting to AudioService\n[V] volume is 4 in range [0..7]\n")  # AOSP 14 VolumeCtrl
    values = read_settings(_Shell(_stock(block)))
    assert values["volume_ring"] == 4 and set(values) == set(STOCK_SETTINGS)


def test_no_volume_line_fails_with_what_the_phone_printed() -> None:
    with pytest.raises(DeviceError, match=r"media_session printed no volume .*Calling get volume"):
        read_settings(_Shell(_stock("[V] will get volume\n[V] Calling get volume\n")))


def test_a_setting_that_prints_two_lines_fails_naming_it() -> None:
    with pytest.raises(DeviceError, match=r"wifi printed 2 lines"):
        read_settings(_Shell(_stock("volume is 4 in range [0..7]\n", wifi_on="1\nWARNING: something\n")))
