"""The verifier service: scores each episode's stored final state with its task's checker,
publishes `verdict.issued` and, for failures, a `failure.traced` with a taxonomy category."""
