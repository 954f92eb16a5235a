"""The harness evolver: failure traces in, incremental harness proposals out, gated promotion."""
