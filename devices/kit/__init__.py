"""The shared kit: what the simulator, the real (adb) phone, the harness and the suite all speak.

Nothing here imports the simulator (devices.sim), the suite (devices.suite), the harness or the
adb phone; they import it (tests/devices/test_layers.py holds the line).

- `errors`: typed tool failures and ToolResult builders;
- `validators`: JSON-Schema builders and the compiled argument checker;
- `log`: the action log entry (`LogEntry`) and `copy_json`;
- `apps`: the apps, their tables, the settings and their ranges, app names, the default task;
- `final_state`: the checkers' read API over the final-state JSON (`StateView`);
- `specs`: every tool's spec (the contract a sim or real phone serves), from `tool_specs.json`;
- `steps`: the step budget (step, clock, done at the cap) both phones spend.
"""
