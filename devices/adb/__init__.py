"""The real-device runner: the Device protocol on an Android phone or emulator through adbutils."""
