"""The phone: device protocol, simulated phone sandbox, adb runner, task suites."""
