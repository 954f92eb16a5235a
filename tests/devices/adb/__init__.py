"""Tests of the adb runner against the fake adb server (the real adbutils client, no device)."""
